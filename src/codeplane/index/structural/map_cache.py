"""``map_repo``'s sections kept with what they were computed from, so an edit recomputes only what it can change.

The file-table sections (``structure`` per depth, ``languages``, ``test_layout``, conventional entry files) are
kept with a copy of the table's map columns (``repo_map.file_rows``). A new epoch reads only the rows written
since the last one (``st_file.epoch``, which every write of a file row sets) and the row count, which tells
whether a path went away; then the whole table is read again. An edit that keeps the path set patches
the tree's line counts in place of a rebuild, and the other file-table sections are recomputed only when a
path, language, family or parse status changed.

Dependencies, the public API, declared and ``main`` entry points and contexts read facts that linking may
move in files the edit did not touch (an import resolved elsewhere, a re-export): they are recomputed once
per epoch, as any fingerprint of them would cost what their queries cost. The epoch is the one the snapshot
itself carries (``meta``), so a section is never filed under an epoch its data is not from.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar, cast

from codeplane.index.structural import repo_map
from codeplane.index.structural.queries import StructuralQueries
from codeplane.index.structural.repo_map import EntryPoint, FileRow, LanguageShare, TestLayout, TreeNode

T = TypeVar("T")
MAX_TREES = 3


class MapCache:
    """One per ``StructuralService``; callers hold ``lock`` from ``sync`` to the last section they read."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.epoch = -1
        self._files: dict[str, FileRow] = {}
        #: (depth, node budget; 0: none) -> (pre-order nodes, position of each listed file)
        self._trees: dict[tuple[int, int], tuple[list[TreeNode], dict[str, int]]] = {}
        self._languages: list[LanguageShare] | None = None
        self._tests: TestLayout | None = None
        self._entry_files: list[EntryPoint] | None = None
        self._per_epoch: dict[str, object] = {}

    @property
    def file_count(self) -> int:
        return len(self._files)

    def sync(self, conn: sqlite3.Connection) -> int:
        """Bring the cache to the epoch ``conn``'s snapshot holds, and return that epoch."""
        row = conn.execute("SELECT value FROM meta WHERE key = 'epoch'").fetchone()
        epoch = int(row[0]) if row is not None else 0
        if epoch == self.epoch:
            return epoch
        self._per_epoch = {}
        # Rows are read from the last epoch on, not from the newest row seen: a row of an epoch that is
        # not published yet (were one visible) is read again once it is.
        since, self.epoch = self.epoch, epoch
        try:
            if since < 0 or epoch < since or not self._apply_delta(conn, since):
                self._reload(conn)
        except BaseException:
            self.epoch = -1  # half folded in: the next call reads the table again
            raise
        return epoch

    def _reload(self, conn: sqlite3.Connection) -> None:
        self._files = repo_map.file_rows(conn)
        self._trees.clear()
        self._languages = self._tests = self._entry_files = None

    def _apply_delta(self, conn: sqlite3.Connection, since: int) -> bool:
        """Fold in the rows written after epoch ``since``; ``False`` when a path went away (reload instead)."""
        rows = conn.execute("SELECT path, line_count, language, family, status FROM st_file WHERE epoch > ?",
                            (since,)).fetchall()
        count = int(conn.execute("SELECT count(*) FROM st_file").fetchone()[0])
        # Every path present now and not before is among ``rows``: any shortfall is a deletion.
        if count != len(self._files) + sum(1 for r in rows if r[0] not in self._files):
            return False
        added = relabeled = False
        lines: dict[str, int | None] = {}
        for path, line_count, language, family, status in rows:
            new: FileRow = (line_count, language, family, status)
            old = self._files.get(path)
            if old == new:
                continue
            if old is None:
                added = True
            elif old[1:] != new[1:]:
                relabeled = True
            if old is not None and old[0] != line_count:
                lines[path] = line_count
            self._files[path] = new
        if added:
            self._trees.clear()
        elif relabeled:  # a folded tree opens the directories with most code first: a new language may reorder it
            self._trees = {key: tree for key, tree in self._trees.items() if not key[1]}
        if lines and not added:
            self._trees = {key: self._patched(nodes, at, lines) for key, (nodes, at) in self._trees.items()}
        if added or relabeled:
            self._languages = self._tests = self._entry_files = None
        return True

    @staticmethod
    def _patched(nodes: list[TreeNode], at: dict[str, int],
                 lines: dict[str, int | None]) -> tuple[list[TreeNode], dict[str, int]]:
        # A copy: cursors opened at the previous epoch page through the old list.
        patched = list(nodes)
        for path, line_count in lines.items():
            index = at.get(path)
            if index is not None:
                patched[index] = replace(patched[index], line_count=line_count)
        return patched, at

    # -- sections ----------------------------------------------------------------------------------------
    def tree(self, depth: int, budget: int = 0) -> list[TreeNode]:
        """The tree to ``depth``; with a ``budget``, folded to fit it (``repo_map.fitted_structure``), or the
        first level alone when even that is wider."""
        key = (depth, budget)
        if key not in self._trees:
            fitted = repo_map.fitted_structure(self._files, depth, budget) if budget else None
            nodes = fitted if fitted is not None else repo_map.structure_of(self._files, depth if not budget else 1)[0]
            while len(self._trees) >= MAX_TREES:  # a deep tree of a big repository is big: keep the latest few
                del self._trees[next(iter(self._trees))]
            self._trees[key] = (nodes, {n.path: i for i, n in enumerate(nodes) if not n.is_dir})
        return self._trees[key][0]

    def languages(self) -> list[LanguageShare]:
        if self._languages is None:
            self._languages = repo_map.languages_of(self._files)
        return self._languages

    def test_layout(self) -> TestLayout:
        if self._tests is None:
            self._tests = repo_map.test_layout_of(self._files)
        return self._tests

    def entry_points(self, conn: sqlite3.Connection) -> list[EntryPoint]:
        if self._entry_files is None:
            self._entry_files = repo_map.entry_files_of(self._files)
        files = self._entry_files
        return self._once("entry_points", lambda: repo_map.entry_points(conn, files))

    def dependencies(self, conn: sqlite3.Connection) -> repo_map.Dependencies:
        return self._once("dependencies", lambda: repo_map.dependencies(conn))

    def public_api(self, conn: sqlite3.Connection, under: str | None = None) -> repo_map.PublicApi:
        return self._once(f"public_api:{under or ''}", lambda: repo_map.public_api(conn, under))

    def contexts(self, conn: sqlite3.Connection) -> list[dict[str, object]]:
        return self._once("contexts", lambda: StructuralQueries(conn).list_contexts(limit=500))

    def _once(self, name: str, compute: Callable[[], T]) -> T:
        if name not in self._per_epoch:
            self._per_epoch[name] = compute()
        return cast(T, self._per_epoch[name])
