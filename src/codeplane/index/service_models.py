"""The index service's request and answer types: a lexical query, a page of hits, a build's summary."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from codeplane.index.pipeline import IndexCounts, ReconcileReport
from codeplane.index.query import Syntax
from codeplane.index.search import LexicalHit, LexicalScope


@dataclass(frozen=True)
class LexicalRequest:
    query: str
    syntax: Syntax = "text"
    case_sensitive: bool | None = None
    scope: LexicalScope = field(default_factory=LexicalScope)
    context_lines: int = 0
    include_snippets: bool = True

    def key(self) -> str:
        raw = json.dumps([self.query, self.syntax, self.case_sensitive, list(self.scope.paths),
                          list(self.scope.languages), list(self.scope.suffixes), self.context_lines,
                          self.include_snippets])
        return hashlib.sha256(raw.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class BuildSummary:
    report: ReconcileReport
    counts: IndexCounts
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class LexicalPage:
    hits: tuple[LexicalHit, ...]
    next_cursor: str | None
    total: int
    truncated: bool
    epoch: int
    #: Files in scope too large to scan (first page only; ``search.LARGE_SCAN_MAX_BYTES``).
    unsearched: tuple[str, ...] = ()


__all__ = ["BuildSummary", "LexicalPage", "LexicalRequest"]
