"""Following an import to the definition it names, through re-exports (``ExportEntry`` bound to imports and
``ExportThunk`` star re-exports), with a depth bound and cycle guard.

Reads only same-file facts and import resolutions (never the derived ``def_uid`` columns), so the answer
does not depend on the order in which linking visits files. Caches per file; one instance per linking pass.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import NamedTuple

MAX_DEPTH = 8
_JS_KINDS = frozenset({"js_import", "ts_import_type", "js_require", "js_reexport"})


class ImportInfo(NamedTuple):
    kind: str
    imported_name: str
    alias: str | None
    resolved_file_id: int | None
    resolved_alt_file_id: int | None


_MISSING = ImportInfo("", "", None, None, None)


class Chaser:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._entries: dict[int, dict[str, tuple[str | None, str | None]]] = {}
        self._thunks: dict[int, list[str]] = {}
        self._listed: dict[int, set[str]] = {}
        self._imports: dict[str, ImportInfo] = {}
        self._memo: dict[tuple[int, str], str | None] = {}
        self._prefetched: set[int] = set()
        self._preloaded = False

    def preload(self) -> None:
        """Read every import and export entry now, in one pass over each table: a relink that reaches most files
        (a cold index) would otherwise look them up one by one, thousands of point queries. Only linking writes
        the columns read here, and it resolves imports before making a chaser, so the answers do not change."""
        self._imports = {uid: ImportInfo(*info) for uid, *info in self._conn.execute(
            "SELECT import_uid, import_kind, imported_name, alias, resolved_file_id, resolved_alt_file_id "
            "FROM st_import")}
        self._preloaded = True
        entries: dict[int, dict[str, tuple[str | None, str | None]]] = {}
        listed: dict[int, set[str]] = {}
        for file_id, name, local, imp, evidence in self._conn.execute(
                "SELECT file_id, exported_name, local_def_uid, import_uid, evidence_kind FROM st_export_entry "
                "ORDER BY file_id, entry_id"):
            entries.setdefault(file_id, {})[name] = (local, imp)
            if evidence == "__all__literal":
                listed.setdefault(file_id, set()).add(name)
        thunks: dict[int, list[str]] = {}
        for file_id, uid in self._conn.execute("SELECT file_id, import_uid FROM st_export_thunk "
                                               "ORDER BY file_id, thunk_id"):
            thunks.setdefault(file_id, []).append(uid)
        for file_id in {f for (f,) in self._conn.execute("SELECT file_id FROM st_file")}:
            self._entries[file_id] = entries.get(file_id, {})
            self._listed[file_id] = listed.get(file_id, set())
            self._thunks[file_id] = thunks.get(file_id, [])

    def prefetch(self, file_ids: Iterable[int]) -> None:
        """Read the imports held by ``file_ids`` in one query per 500 files: a relink of a few hundred changed files
        chases through most of their imports, and one point query each costs more than the chase. Same rows
        ``import_row`` would read (linking resolves imports before making a chaser), so only the cost changes."""
        if self._preloaded:
            return
        ids = sorted(set(file_ids) - self._prefetched)
        self._prefetched.update(ids)
        self._read_imports("file_id", ids)

    def prefetch_uids(self, import_uids: Iterable[str]) -> None:
        """``prefetch`` for these imports (those a relink of unchanged files re-chases)."""
        if self._preloaded:
            return
        self._read_imports("import_uid", sorted({u for u in import_uids if u not in self._imports}))

    def _read_imports(self, column: str, keys: Sequence[int] | Sequence[str]) -> None:
        """The imports whose ``column`` is one of ``keys``, 500 keys per query."""
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            for uid, *info in self._conn.execute(
                    "SELECT import_uid, import_kind, imported_name, alias, resolved_file_id, resolved_alt_file_id "
                    f"FROM st_import WHERE {column} IN ({','.join('?' * len(part))})", part):
                self._imports.setdefault(uid, ImportInfo(*info))

    def forget(self, file_id: int) -> None:
        self._memo = {k: v for k, v in self._memo.items() if k[0] != file_id}

    def import_row(self, import_uid: str) -> ImportInfo:
        found = self._imports.get(import_uid)
        if found is None:
            row = self._conn.execute(
                "SELECT import_kind, imported_name, alias, resolved_file_id, resolved_alt_file_id FROM st_import "
                "WHERE import_uid = ?", (import_uid,)).fetchone()
            found = ImportInfo(*row) if row else _MISSING
            self._imports[import_uid] = found
        return found

    def _file_entries(self, file_id: int) -> dict[str, tuple[str | None, str | None]]:
        found = self._entries.get(file_id)
        if found is None:
            rows = self._conn.execute(
                "SELECT exported_name, local_def_uid, import_uid, evidence_kind FROM st_export_entry "
                "WHERE file_id = ? ORDER BY entry_id", (file_id,)).fetchall()
            found = {name: (local, imp) for name, local, imp, _ in rows}
            self._listed[file_id] = {name for name, _, _, evidence in rows if evidence == "__all__literal"}
            self._entries[file_id] = found
            self._thunks[file_id] = [u for (u,) in self._conn.execute(
                "SELECT import_uid FROM st_export_thunk WHERE file_id = ? ORDER BY thunk_id", (file_id,))]
        return found

    def name_in(self, file_id: int, name: str, depth: int = 0) -> str | None:
        """The def_uid that ``name`` denotes in module ``file_id`` (None: not a definition, or unknown)."""
        key = (file_id, name)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # cycle guard while computing
        result = self._name_in(file_id, name, depth) if depth <= MAX_DEPTH else None
        self._memo[key] = result
        return result

    def _name_in(self, file_id: int, name: str, depth: int) -> str | None:
        entry = self._file_entries(file_id).get(name)
        if entry is not None:
            local, imp = entry
            if local is not None:
                return local
            return self.via(imp, depth + 1) if imp is not None else None
        for thunk_import in self._thunks.get(file_id, []):
            thunk = self.import_row(thunk_import)
            target = thunk.resolved_file_id
            if target is not None and name in self._star_names(target, thunk.kind in _JS_KINDS):
                found = self.name_in(target, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _star_names(self, file_id: int, ecmascript: bool = False) -> set[str]:
        """Names a star import takes. Python's ``from m import *``: ``__all__`` when it is a literal, else the
        public names. ES ``export * from``: every name but ``default`` (``_under`` too: the underscore is only
        Python's convention)."""
        entries = self._file_entries(file_id)
        if ecmascript:
            return {n for n in entries if n != "default"}
        listed = self._listed.get(file_id, set())
        return listed if listed else {n for n in entries if not n.startswith("_")}

    def via(self, import_uid: str | None, depth: int = 0) -> str | None:
        """The definition a name bound by this import denotes, if it is one."""
        if import_uid is None:
            return None
        info = self.import_row(import_uid)
        if info.resolved_file_id is None:
            return None
        if info.kind == "python_from" or info.kind in _JS_KINDS:
            if info.imported_name in ("*", ""):
                return None
            return self.name_in(info.resolved_file_id, info.imported_name, depth)
        if info.kind in ("java_import", "kotlin_import"):
            simple = info.imported_name.rsplit(".", 1)[-1]
            return self.name_in(info.resolved_file_id, simple, depth)
        return None

    def module_of(self, import_uid: str) -> int | None:
        """The module file a name bound by this import denotes (for ``name.member`` lookups)."""
        info = self.import_row(import_uid)
        if info.kind == "python_import":
            if info.alias is None and info.resolved_alt_file_id is not None:
                return info.resolved_alt_file_id  # ``import a.b`` binds the package ``a``
            return info.resolved_file_id if info.alias is not None or "." not in info.imported_name else None
        if info.kind == "python_from":
            return info.resolved_alt_file_id
        if info.kind in _JS_KINDS and info.imported_name == "*":
            return info.resolved_file_id
        return None

    def member(self, import_uid: str, token: str) -> str | None:
        module = self.module_of(import_uid)
        return self.name_in(module, token) if module is not None else None
