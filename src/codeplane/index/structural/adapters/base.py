"""What a language adapter is: a function from a parsed tree to fact rows.

Adapters are data-driven where possible (a tree-sitter query per language, ``patterns/*.scm``, read by
the generic engine) with a small per-language module for what queries cannot say (import forms, package
names). Python has its own two-pass adapter because its scoping is the deepest we model.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

from tree_sitter import Node

from codeplane.index.structural.facts import (
    BindRow,
    DefRow,
    DynamicRow,
    ExportRow,
    ImportRow,
    RefRow,
    ScopeRow,
    ThunkRow,
)
from codeplane.index.structural.identity import UidAllocator
from codeplane.index.structural.source import SourceText


class Extracted(NamedTuple):
    package: str | None
    defs: list[DefRow]
    scopes: list[ScopeRow]
    binds: list[BindRow]
    imports: list[ImportRow]
    refs: list[RefRow]
    exports: list[ExportRow]
    thunks: list[ThunkRow]
    dynamic: list[DynamicRow]


class Adapter(Protocol):
    def __call__(self, src: SourceText, root: Node, uids: UidAllocator) -> Extracted: ...
