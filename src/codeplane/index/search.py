"""Lexical search (spec §7.2, §23.7 ``search`` mode ``lexical``): Tantivy narrows, scanning proves.

1. The query's fragments select candidate files from Tantivy (complete by construction, see
   :mod:`codeplane.index.query`); with no fragment every text file in scope is a candidate.
2. Each candidate is read from disk *now* and scanned, so every hit is a real, current occurrence.
3. Hits are ordered by file score (Tantivy BM25, higher first), then path, line, column, and the whole
   ordered list backs the cursor chain (snapshot pagination).
Work is bounded: at most :data:`MAX_HITS` hits are kept (the count continues) and scanning stops after
:data:`SCAN_BUDGET_SEC`, reporting ``truncated``.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pathspec

from codeplane.index.languages import family_of
from codeplane.index.lexical import LexicalIndex
from codeplane.index.query import CompiledQuery
from codeplane.index.scan import count_matches, find_matches, snippet
from codeplane.repo.textcache import TextCache

MAX_HITS = 5_000
SCAN_BUDGET_SEC = 10.0
MAX_CONTEXT_LINES = 10


@dataclass(frozen=True)
class LexicalScope:
    #: Gitignore-style globs (``*.py`` matches at any depth, ``/src/`` anchors at the root); empty = all.
    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LexicalHit:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    snippet: str | None
    context_before: tuple[str, ...]
    context_after: tuple[str, ...]
    score: float
    language: str | None


@dataclass(frozen=True)
class LexicalOutcome:
    hits: tuple[LexicalHit, ...]
    total: int
    truncated: bool
    files_scanned: int


def scope_spec(globs: Sequence[str]) -> pathspec.PathSpec[Any] | None:
    return pathspec.PathSpec.from_lines("gitignore", globs) if globs else None


def _text_rows(conn: sqlite3.Connection, scope: LexicalScope) -> list[str]:
    """Text files in scope, from the file table (only needed when Tantivy cannot narrow)."""
    rows = conn.execute("SELECT path, language FROM files WHERE kind = 'text' ORDER BY path")
    languages = set(scope.languages)
    return [path for path, lang in rows if not languages or lang in languages]


def run_lexical(conn: sqlite3.Connection, texts: TextCache, lexical: LexicalIndex, query: CompiledQuery,
                scope: LexicalScope, *, context_lines: int = 0, include_snippets: bool = True,
                max_hits: int = MAX_HITS, budget_sec: float = SCAN_BUDGET_SEC) -> LexicalOutcome:
    """Every occurrence of ``query`` in scope (up to ``max_hits`` kept), ordered for pagination."""
    deadline = time.monotonic() + budget_sec
    spec = scope_spec(scope.paths)
    if query.fragments:
        scored = lexical.candidates(query.fragments, scope.languages)
    else:  # no fragment (e.g. a regex without a required literal): every text file in scope
        scored = dict.fromkeys(_text_rows(conn, scope), 0.0)
    candidates = sorted((p for p in scored if spec is None or spec.match_file(p)), key=lambda p: (-scored[p], p))
    hits: list[LexicalHit] = []
    total = 0
    truncated = False
    scanned = 0
    context = max(0, min(context_lines, MAX_CONTEXT_LINES))
    for path in candidates:
        if time.monotonic() > deadline:
            truncated = True
            break
        text = texts.read(path)
        scanned += 1
        if text is None:
            continue
        room = max_hits - len(hits)
        if room <= 0:  # enough hits kept: only the total still needs counting
            total += count_matches(text, query)
            truncated = True
            continue
        lines, matches = find_matches(text, query)
        total += len(matches)
        if len(matches) > room:
            truncated = True
        language = family_of(path)
        for match in matches[:room]:
            body: str | None = None
            before: tuple[str, ...] = ()
            after: tuple[str, ...] = ()
            if include_snippets:
                body = snippet(lines.line_at(match.line_start), match.column, match.end_column)
                if context:
                    before = tuple(snippet(t, 1, 1) for t in lines.before(match.line_start, context))
                    after = tuple(snippet(t, 1, 1) for t in lines.after(match.line_start, context))
            hits.append(LexicalHit(
                path=path, line=match.line, column=match.column, end_line=match.end_line,
                end_column=match.end_column, snippet=body, context_before=before, context_after=after,
                score=scored[path], language=language,
            ))
    return LexicalOutcome(tuple(hits), total, truncated, scanned)
