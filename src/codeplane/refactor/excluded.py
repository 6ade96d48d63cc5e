"""Mentions in ``.cplignore``'d files: never indexed, never written, always reported (issue 9 item 7).

A rename must not skip a folder silently. ``.cplignore`` is the only exclusion, so its files are walked
here (bounded) and every whole-identifier mention becomes an ``excluded_path`` candidate; pruned
directories (``node_modules``, ``.venv`` ...) are not walked, and the preview names the ones present.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from codeplane.refactor.lexical import find_offsets, line_starts
from codeplane.refactor.spans import SpanEdit
from codeplane.repo.content import decode, is_binary
from codeplane.repo.ignore import PRUNABLE_DIRS, IgnoreRules

MAX_EXCLUDED_FILES = 2_000
MAX_EXCLUDED_BYTES = 1 << 20
#: Excluded files are only reported, never written, so a slightly old listing is acceptable.
_CACHE_SEC = 30.0


@dataclass(frozen=True)
class ExcludedTree:
    files: tuple[str, ...]
    pruned_dirs: tuple[str, ...]
    truncated: bool


class ExcludedFiles:
    """Lists ``.cplignore``'d files (cached briefly: a preview must stay fast on big trees)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._cached: tuple[float, str, ExcludedTree] | None = None

    def tree(self, rules: IgnoreRules) -> ExcludedTree:
        with self._lock:
            now = time.monotonic()
            if self._cached and self._cached[1] == rules.source_text and now - self._cached[0] < _CACHE_SEC:
                return self._cached[2]
            tree = self._walk(rules)
            self._cached = (now, rules.source_text, tree)
            return tree

    def _walk(self, rules: IgnoreRules) -> ExcludedTree:
        files: list[str] = []
        pruned: set[str] = set()
        truncated = False
        if not rules.source_text.strip():
            return ExcludedTree((), tuple(sorted(self._pruned_top())), False)
        for current, dirs, names in os.walk(self.root):
            rel_dir = Path(current).relative_to(self.root).as_posix()
            rel_dir = "" if rel_dir == "." else rel_dir
            keep = []
            for d in sorted(dirs):
                rel = f"{rel_dir}/{d}" if rel_dir else d
                if d in PRUNABLE_DIRS:
                    if d not in (".git", ".codeplane"):
                        pruned.add(rel)
                    continue
                keep.append(d)
            dirs[:] = keep
            for name in sorted(names):
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if rules.ignores(rel):
                    files.append(rel)
                    if len(files) >= MAX_EXCLUDED_FILES:
                        return ExcludedTree(tuple(files), tuple(sorted(pruned)), True)
        return ExcludedTree(tuple(files), tuple(sorted(pruned)), truncated)

    def _pruned_top(self) -> set[str]:
        try:
            return {e.name for e in os.scandir(self.root)
                    if e.is_dir() and e.name in PRUNABLE_DIRS and e.name not in (".git", ".codeplane")}
        except OSError:
            return set()


def excluded_mentions(root: Path, tree: ExcludedTree, name: str, new_name: str) -> tuple[list[SpanEdit], list[str]]:
    """``excluded_path`` candidates for ``name`` and the files they are in (sorted)."""
    edits: list[SpanEdit] = []
    hit_files: list[str] = []
    for rel in tree.files:
        path = root / rel
        try:
            if path.stat().st_size > MAX_EXCLUDED_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if is_binary(data):
            continue
        text = decode(data)
        offsets = find_offsets(text, name)
        if not offsets:
            continue
        hit_files.append(rel)
        starts = line_starts(text)
        line_idx = 0
        for off in offsets:
            while line_idx + 1 < len(starts) and starts[line_idx + 1] <= off:
                line_idx += 1
            col = off - starts[line_idx]
            edits.append(SpanEdit(rel, line_idx + 1, col, line_idx + 1, col + len(name), name, new_name,
                                  "excluded_path"))
    return edits, hit_files
