"""The Python adapter: two passes (``python_walk``/``python_defs`` then ``python_bind``)."""

from __future__ import annotations

from tree_sitter import Node

from codeplane.index.structural.adapters import (  # noqa: F401  (register pass-1 handlers)
    python_annotations,
    python_defs,
)
from codeplane.index.structural.adapters.base import Extracted
from codeplane.index.structural.adapters.python_bind import build_rows
from codeplane.index.structural.adapters.python_walk import Walk
from codeplane.index.structural.facts import ScopeRow
from codeplane.index.structural.identity import UidAllocator
from codeplane.index.structural.source import SourceText


def extract_python(src: SourceText, root: Node, uids: UidAllocator) -> Extracted:
    walk = Walk(src, uids)
    walk.run(root)
    defs, binds, refs, exports, thunks = build_rows(walk)
    scopes = [ScopeRow(s.parent, s.kind, *s.span) for s in walk.scopes]
    return Extracted(None, defs, scopes, binds, walk.imports, refs, exports, thunks, walk.dynamic)
