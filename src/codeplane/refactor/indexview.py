"""The planner's :class:`~codeplane.refactor.facts.FactReader` over the index's ``st_*`` tables.

Reads happen inside one ``IndexService.read_connection()`` transaction, so a plan sees one consistent
epoch (§7.6) that is no older than the disk. Every query is bounded by an explicit ``LIMIT``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from codeplane.refactor.facts import Bind, Def, DynamicSite, FactReader, FileInfo, Import, Ref, Scope

_CHUNK = 500

_DEF_COLS = ("d.def_uid, f.path, f.family, d.kind, d.name, d.qualified_name, d.lexical_path, d.start_line, "
             "d.start_col, d.end_line, d.end_col, d.name_line, d.name_col, d.parent_uid, d.scope_id")
_REF_COLS = ("f.path, r.start_line, r.start_col, r.end_line, r.end_col, r.token_text, r.role, r.ref_tier, "
             "r.target_uid, r.via_import_uid, r.is_member, r.receiver_shape, r.scope_id, r.bind_id")
_ORDER = "ORDER BY f.path, 2, 3"
_IMPORT_COLS = ("i.import_uid, f.path, i.scope_id, i.imported_name, i.alias, i.source_literal, i.import_kind, "
                "i.start_line, i.start_col, r.path")


def _marks(count: int) -> str:
    return ",".join("?" * count)


def _def(row: Sequence[object]) -> Def:
    return Def(*row)  # type: ignore[arg-type]


def _ref(row: Sequence[object]) -> Ref:
    path, line, col, end_line, end_col, token, role, tier, target, via, member, shape, scope, bind = row
    return Ref(str(path), int(line), int(col), int(end_line), int(end_col), str(token), str(role),  # type: ignore[call-overload]
               str(tier), target, via, bool(member), shape, scope, bind)  # type: ignore[arg-type]


class SqlFacts(FactReader):
    """Facts from one open read transaction. Cheap to create; caches per-path file ids."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._file_ids: dict[str, int | None] = {}
        self._files: list[FileInfo] | None = None

    def _file_id(self, path: str) -> int | None:
        if path not in self._file_ids:
            row = self.conn.execute("SELECT file_id FROM st_file WHERE path = ?", (path,)).fetchone()
            self._file_ids[path] = int(row[0]) if row else None
        return self._file_ids[path]

    def files(self) -> Sequence[FileInfo]:
        if self._files is None:
            rows = self.conn.execute("SELECT path, family, file_sha256, status FROM st_file "
                                     "WHERE status != 'not_text' ORDER BY path")
            self._files = [FileInfo(p, fam, sha, status == "parsed") for p, fam, sha, status in rows]
        return self._files

    def get_def(self, def_uid: str) -> Def | None:
        row = self.conn.execute(f"SELECT {_DEF_COLS} FROM st_def d JOIN st_file f USING(file_id) "
                                "WHERE d.def_uid = ?", (def_uid,)).fetchone()
        return _def(row) if row else None

    def defs_named(self, name: str, limit: int) -> Sequence[Def]:
        rows = self.conn.execute(f"SELECT {_DEF_COLS} FROM st_def d JOIN st_file f USING(file_id) "
                                 "WHERE d.name_lc = ? AND d.name = ? ORDER BY f.path, d.start_line, d.start_col "
                                 "LIMIT ?", (name.lower(), name, limit))
        return [_def(r) for r in rows]

    def defs_in_file(self, path: str, limit: int) -> Sequence[Def]:
        file_id = self._file_id(path)
        if file_id is None:
            return []
        rows = self.conn.execute(f"SELECT {_DEF_COLS} FROM st_def d JOIN st_file f USING(file_id) "
                                 "WHERE d.file_id = ? ORDER BY d.start_line, d.start_col LIMIT ?", (file_id, limit))
        return [_def(r) for r in rows]

    def defs_at(self, path: str, line: int) -> Sequence[Def]:
        file_id = self._file_id(path)
        if file_id is None:
            return []
        rows = self.conn.execute(f"SELECT {_DEF_COLS} FROM st_def d JOIN st_file f USING(file_id) "
                                 "WHERE d.file_id = ? AND d.start_line <= ? AND d.end_line >= ? "
                                 "ORDER BY d.start_line, d.start_col LIMIT 100", (file_id, line, line))
        return [_def(r) for r in rows]

    def refs_to(self, def_uid: str, limit: int) -> Sequence[Ref]:
        rows = self.conn.execute(f"SELECT {_REF_COLS} FROM st_ref r JOIN st_file f USING(file_id) "
                                 f"WHERE r.target_uid = ? {_ORDER} LIMIT ?", (def_uid, limit))
        return [_ref(r) for r in rows]

    def refs_named(self, token: str, paths: Sequence[str] | None, limit: int) -> Sequence[Ref]:
        if paths is None:
            rows = self.conn.execute(f"SELECT {_REF_COLS} FROM st_ref r JOIN st_file f USING(file_id) "
                                     f"WHERE r.token_text = ? {_ORDER} LIMIT ?", (token, limit)).fetchall()
            return [_ref(r) for r in rows]
        ids = [i for i in (self._file_id(p) for p in sorted(set(paths))) if i is not None]
        out: list[Ref] = []
        for start in range(0, len(ids), _CHUNK):
            part = ids[start:start + _CHUNK]
            chunk = self.conn.execute(f"SELECT {_REF_COLS} FROM st_ref r JOIN st_file f USING(file_id) "
                                      f"WHERE r.token_text = ? AND r.file_id IN ({_marks(len(part))}) LIMIT ?",
                                      (token, *part, limit))
            out += [_ref(r) for r in chunk]
        out.sort(key=lambda r: (r.path, r.line, r.column))
        return out[:limit]

    def import_refs_named(self, token: str, limit: int) -> Sequence[Ref]:
        # Filtered here, not by the caller: a name's IMPORT rows are a few dozen where its uses (or the rest of
        # each importing file's refs) run to thousands of Python objects (qa48 F2/F3).
        rows = self.conn.execute(f"SELECT {_REF_COLS} FROM st_ref r JOIN st_file f USING(file_id) "
                                 f"WHERE r.token_text = ? AND r.role = 'IMPORT' {_ORDER} LIMIT ?", (token, limit))
        return [_ref(r) for r in rows]

    def refs_in_file(self, path: str, limit: int) -> Sequence[Ref]:
        file_id = self._file_id(path)
        if file_id is None:
            return []
        rows = self.conn.execute(f"SELECT {_REF_COLS} FROM st_ref r JOIN st_file f USING(file_id) "
                                 "WHERE r.file_id = ? ORDER BY r.start_line, r.start_col LIMIT ?", (file_id, limit))
        return [_ref(r) for r in rows]

    def refs_on_line(self, path: str, line: int) -> Sequence[Ref]:
        file_id = self._file_id(path)
        if file_id is None:
            return []
        rows = self.conn.execute(f"SELECT {_REF_COLS} FROM st_ref r JOIN st_file f USING(file_id) "
                                 "WHERE r.file_id = ? AND r.start_line = ? ORDER BY r.start_col", (file_id, line))
        return [_ref(r) for r in rows]

    def scope(self, scope_id: int) -> Scope | None:
        row = self.conn.execute("SELECT s.scope_id, f.path, s.parent_scope_id, s.kind, s.start_line, s.start_col, "
                                "s.end_line, s.end_col FROM st_scope s JOIN st_file f USING(file_id) "
                                "WHERE s.scope_id = ?", (scope_id,)).fetchone()
        return Scope(*row) if row else None

    def binds_named(self, scope_ids: Sequence[int], name: str) -> Sequence[Bind]:
        out: list[Bind] = []
        ids = sorted(set(scope_ids))
        for start in range(0, len(ids), _CHUNK):
            part = ids[start:start + _CHUNK]
            rows = self.conn.execute("SELECT scope_id, name, target_kind, target_uid, certainty, reason_code "
                                     f"FROM st_bind WHERE name = ? AND scope_id IN ({_marks(len(part))})",
                                     (name, *part))
            out += [Bind(*r) for r in rows]
        return sorted(out, key=lambda b: (b.scope_id, b.name))

    def imports_of(self, import_uids: Sequence[str]) -> Sequence[Import]:
        out: list[Import] = []
        uids = sorted(set(import_uids))
        for start in range(0, len(uids), _CHUNK):
            part = uids[start:start + _CHUNK]
            rows = self.conn.execute(
                f"SELECT {_IMPORT_COLS} FROM st_import i JOIN st_file f USING(file_id) "
                "LEFT JOIN st_file r ON r.file_id = i.resolved_file_id "
                f"WHERE i.import_uid IN ({_marks(len(part))})", part)
            out += [Import(*r) for r in rows]
        return sorted(out, key=lambda i: (i.path, i.line, i.column))

    def imports_in_file(self, path: str, limit: int) -> Sequence[Import]:
        file_id = self._file_id(path)
        if file_id is None:
            return []
        rows = self.conn.execute(
            f"SELECT {_IMPORT_COLS} FROM st_import i JOIN st_file f USING(file_id) "
            "LEFT JOIN st_file r ON r.file_id = i.resolved_file_id WHERE i.file_id = ? "
            "ORDER BY i.start_line, i.start_col LIMIT ?", (file_id, limit))
        return [Import(*r) for r in rows]

    def dynamic_sites(self, paths: Sequence[str], limit: int) -> Sequence[DynamicSite]:
        ids = {i: p for p in sorted(set(paths)) if (i := self._file_id(p)) is not None}
        out: list[DynamicSite] = []
        keys = sorted(ids)
        for start in range(0, len(keys), _CHUNK):
            part = keys[start:start + _CHUNK]
            rows = self.conn.execute("SELECT file_id, start_line, start_col, pattern_type, extracted_literals "
                                     f"FROM st_dynamic_site WHERE file_id IN ({_marks(len(part))}) LIMIT ?",
                                     (*part, limit))
            out += [DynamicSite(ids[f], line, col, kind, tuple(json.loads(lits)))
                    for f, line, col, kind, lits in rows]
        return sorted(out, key=lambda d: (d.path, d.line, d.column))[:limit]

    def module_file(self, module: str) -> str | None:
        row = self.conn.execute("SELECT f.path FROM st_module_key k JOIN st_file f USING(file_id) WHERE k.key = ? "
                                "ORDER BY k.rank, f.path LIMIT 1", (f"py:{module}",)).fetchone()
        return str(row[0]) if row else None


def facts_source(index: IndexService) -> Callable[[], AbstractContextManager[FactReader]]:
    """Open one consistent, fresh snapshot of the structural facts per call."""

    @contextmanager
    def open_snapshot() -> Iterator[FactReader]:
        with index.read_connection() as conn:
            yield SqlFacts(conn)

    return open_snapshot


#: Lexical hits fetched per page while collecting candidate files.
_PAGE = 5_000


def lexical_paths(index: IndexService) -> Callable[[str], tuple[set[str], bool]]:
    """Files holding a whole-identifier occurrence (complete: Tantivy narrows, a scan proves)."""

    def find(name: str) -> tuple[set[str], bool]:
        request = LexicalRequest(query=name, syntax="identifier", case_sensitive=True, include_snippets=False)
        page = index.search_lexical(request, limit=_PAGE)
        paths = {h.path for h in page.hits}
        truncated = page.truncated
        while page.next_cursor is not None:
            page = index.search_lexical(request, limit=_PAGE, cursor=page.next_cursor)
            paths |= {h.path for h in page.hits}
            truncated = truncated or page.truncated
        return paths, truncated

    return find
