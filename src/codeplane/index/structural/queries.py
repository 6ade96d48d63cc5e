"""The bounded query API over structural facts (§7.8). Read-only; every list takes a mandatory ``limit``.

Use through a read connection of the index service (``IndexService.read_connection()``)::

    with services.index.read_connection() as conn:
        q = StructuralQueries(conn)
        q.list_defs_by_name("save", limit=50)

Definitions
    ``get_def(def_uid)``, ``get_defs(uids)``, ``list_defs_by_name(name, limit, unit_id=, kinds=)``,
    ``list_defs_by_qualified_name(qualified_name, limit)``, ``list_defs_in_file(path, limit)``,
    ``defs_at(path, line, limit)`` (innermost last), ``defs_overlapping(path, line_ranges, limit)``
    (mutation: symbols changed by an edit).
References
    ``list_refs_by_def_uid(def_uid, limit, tiers=)`` (refactor rename: refs proven/linked to a def),
    ``list_proven_refs(def_uid, limit)``, ``list_refs_by_token(token, limit, paths=, tiers=, member=)``,
    ``list_refs_in_file(path, limit)``; counted forms for blast radius (``semantic_diff``):
    ``count_refs_by_def_uid(def_uid)``, ``list_referencing_files(def_uid, limit)``,
    ``count_unresolved_refs_by_token(token)``.
Scopes and bindings
    ``get_scope(scope_id)``, ``list_scopes_in_file(path, limit)``, ``get_local_bind(scope_id, name)``,
    ``get_bind(bind_id)``, ``list_binds_in_scope(scope_id, limit)``.
Imports (the import graph)
    ``list_imports(path, limit)``, ``get_import(import_uid)``, ``get_imports(uids)``,
    ``list_imports_by_source(source_literal, limit)`` (exact literal, e.g. ``django.db.models`` or
    ``./util``), ``list_importers(path, limit)`` (reverse graph: imports elsewhere that resolve to ``path``),
    ``list_imported_paths(path, limit)`` (forward graph).
Exports, anchors, telemetry, history, contexts
    ``get_export_surface(path)``, ``list_export_entries(surface_id, limit)``,
    ``get_anchor_group(unit_id, member_token, receiver_shape)``, ``list_anchor_groups(limit, unit_id=,
    member_token=)``, ``list_dynamic_access_sites(limit, path=, unit_id=)``,
    ``list_def_snapshots(path, epoch, limit)`` (a file's definitions as of an epoch),
    ``list_snapshot_paths(after_epoch, upto_epoch, limit)``, ``snapshot_exists(path, epoch)`` and
    ``snapshot_epochs()`` (epoch-mode diff),
    ``file(path)``, ``list_contexts(limit)``.

Deliberately absent (§7.8 "forbidden"): call graphs, callers/callees, impact or transitive closure,
type hierarchy, any query-time resolution, and qualified-name matching as a fallback.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from importlib import resources

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.structural import models as m
from codeplane.index.structural.facts import TIERS

MAX_LIMIT = 100_000

_DEF = ("SELECT d.def_uid, f.path, f.language, f.unit_id, d.kind, d.name, d.qualified_name, d.lexical_path, "
        "d.start_line, d.start_col, d.end_line, d.end_col, d.name_line, d.name_col, d.signature_hash, "
        "d.display_name, d.parent_uid, d.scope_id FROM st_def d JOIN st_file f ON f.file_id = d.file_id ")
_REF = ("SELECT r.ref_id, f.path, f.unit_id, r.scope_id, r.token_text, r.start_line, r.start_col, r.end_line, "
        "r.end_col, r.role, r.ref_tier, r.certainty, r.bind_id, r.target_uid, r.via_import_uid, r.is_member, "
        "r.receiver_shape FROM st_ref r JOIN st_file f ON f.file_id = r.file_id ")
_IMPORT = ("SELECT i.import_uid, f.path, i.scope_id, i.imported_name, i.alias, i.source_literal, i.import_kind, "
           "i.certainty, i.start_line, i.start_col, i.end_line, i.end_col, rf.path, ra.path FROM st_import i "
           "JOIN st_file f ON f.file_id = i.file_id LEFT JOIN st_file rf ON rf.file_id = i.resolved_file_id "
           "LEFT JOIN st_file ra ON ra.file_id = i.resolved_alt_file_id ")
_REF_ORDER = " ORDER BY f.path, r.start_line, r.start_col, r.ref_id LIMIT ?"
_TIER_RANK = "r.tier_code"  # strongest first: the code is the tier's rank (``schema.TIER_CODE``)


def check_limit(limit: int) -> int:
    """Every list query is bounded: ``limit`` must be an int within 1..MAX_LIMIT (else 1003)."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"limit must be an integer within 1..{MAX_LIMIT}",
                             details={"limit": limit})
    return limit


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def _defs(rows: Iterable[tuple[object, ...]]) -> list[m.DefFact]:
    return [m.DefFact(*row) for row in rows]  # type: ignore[arg-type]


def _refs(rows: Iterable[tuple[object, ...]]) -> list[m.RefFact]:
    out = []
    for row in rows:
        values = list(row)
        values[15] = bool(values[15])
        out.append(m.RefFact(*values))  # type: ignore[arg-type]
    return out


def _imports(rows: Iterable[tuple[object, ...]]) -> list[m.ImportFact]:
    return [m.ImportFact(*row) for row in rows]  # type: ignore[arg-type]


class StructuralQueries:
    """Read-only lookups over one connection (ideally inside one read transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # -- files -------------------------------------------------------------------------------------
    def file(self, path: str) -> m.FileStructure | None:
        row = self.conn.execute("SELECT path, language, family, status, error, unit_id, line_count, epoch "
                                "FROM st_file WHERE path = ?", (path,)).fetchone()
        return m.FileStructure(*row) if row else None

    def list_files(self, *, limit: int, after: str = "") -> list[m.FileStructure]:
        rows = self.conn.execute("SELECT path, language, family, status, error, unit_id, line_count, epoch FROM "
                                 "st_file WHERE path > ? ORDER BY path LIMIT ?", (after, check_limit(limit)))
        return [m.FileStructure(*r) for r in rows]

    # -- definitions -------------------------------------------------------------------------------
    def kinds(self) -> list[str]:
        """Every kind of definition an extractor can write or the index holds, sorted (a full scan: for explaining
        an empty answer)."""
        held = {str(k) for (k,) in self.conn.execute("SELECT DISTINCT kind FROM st_def")}
        return sorted(held | _extractor_kinds())

    def get_def(self, def_uid: str) -> m.DefFact | None:
        found = _defs(self.conn.execute(_DEF + "WHERE d.def_uid = ?", (def_uid,)))
        return found[0] if found else None

    def get_defs(self, def_uids: Sequence[str]) -> list[m.DefFact]:
        uids = list(dict.fromkeys(def_uids))[:MAX_LIMIT]
        out: list[m.DefFact] = []
        for start in range(0, len(uids), 500):
            part = uids[start:start + 500]
            out += _defs(self.conn.execute(_DEF + f"WHERE d.def_uid IN ({_marks(part)})", part))
        return sorted(out, key=lambda d: (d.path, d.start_line, d.start_col, d.def_uid))

    def list_defs_by_name(self, name: str, *, limit: int, unit_id: int | None = None,
                          kinds: Sequence[str] = ()) -> list[m.DefFact]:
        """Exact (case-sensitive) simple-name match, ordered by path and position."""
        sql = _DEF + "WHERE d.name_lc = ? AND d.name = ?"
        args: list[object] = [name.lower(), name]
        if unit_id is not None:
            sql += " AND f.unit_id = ?"
            args.append(unit_id)
        if kinds:
            sql += f" AND d.kind IN ({_marks(kinds)})"
            args += list(kinds)
        return _defs(self.conn.execute(sql + " ORDER BY f.path, d.start_line, d.start_col LIMIT ?",
                                       (*args, check_limit(limit))))

    def list_defs_by_qualified_name(self, qualified_name: str, *, limit: int) -> list[m.DefFact]:
        return _defs(self.conn.execute(_DEF + "WHERE d.qualified_name = ? ORDER BY f.path, d.start_line LIMIT ?",
                                       (qualified_name, check_limit(limit))))

    def list_defs_in_file(self, path: str, *, limit: int) -> list[m.DefFact]:
        return _defs(self.conn.execute(_DEF + "WHERE f.path = ? ORDER BY d.start_line, d.start_col, d.def_uid "
                                       "LIMIT ?", (path, check_limit(limit))))

    def defs_at(self, path: str, line: int, *, limit: int = 50) -> list[m.DefFact]:
        """Definitions whose span contains ``line``, outermost first (innermost last)."""
        return _defs(self.conn.execute(
            _DEF + "WHERE f.path = ? AND d.start_line <= ? AND d.end_line >= ? "
            "ORDER BY d.start_line, d.start_col, -d.end_line, d.def_uid LIMIT ?",
            (path, line, line, check_limit(limit))))

    def defs_overlapping(self, path: str, line_ranges: Sequence[tuple[int, int]], *, limit: int) -> list[m.DefFact]:
        """Definitions in ``path`` whose span intersects any inclusive (start, end) line range."""
        check_limit(limit)
        ranges = [(min(a, b), max(a, b)) for a, b in line_ranges]
        if not ranges:
            return []
        clause = " OR ".join("(d.start_line <= ? AND d.end_line >= ?)" for _ in ranges)
        args: list[object] = [path]
        for start, end in ranges:
            args += [end, start]
        return _defs(self.conn.execute(_DEF + f"WHERE f.path = ? AND ({clause}) "
                                       "ORDER BY d.start_line, d.start_col, d.def_uid LIMIT ?", (*args, limit)))

    # -- references --------------------------------------------------------------------------------
    def list_refs_by_def_uid(self, def_uid: str, *, limit: int, tiers: Sequence[str] = ()) -> list[m.RefFact]:
        """References proven (same file) or linked (STRONG) to ``def_uid``, strongest tier first."""
        sql = _REF + "WHERE r.target_uid = ?"
        args: list[object] = [def_uid]
        if tiers:
            unknown = sorted(set(tiers) - set(TIERS))
            if unknown:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"unknown tier(s) {unknown}",
                                     details={"tiers": list(TIERS)})
            sql += f" AND r.ref_tier IN ({_marks(tiers)})"
            args += list(tiers)
        return _refs(self.conn.execute(
            sql + f" ORDER BY {_TIER_RANK}, f.path, r.start_line, r.start_col LIMIT ?", (*args, check_limit(limit))))

    def list_proven_refs(self, def_uid: str, *, limit: int) -> list[m.RefFact]:
        return self.list_refs_by_def_uid(def_uid, limit=limit, tiers=("PROVEN",))

    def list_refs_by_token(self, token: str, *, limit: int, paths: Sequence[str] | None = None,
                           tiers: Sequence[str] = (), member: bool | None = None) -> list[m.RefFact]:
        """Every reference whose text is ``token`` (optionally only in ``paths``, tiers, member or not)."""
        sql = _REF + "WHERE r.token_text = ?"
        args: list[object] = [token]
        if paths is not None:
            if not paths:
                return []
            sql += f" AND f.path IN ({_marks(paths)})"
            args += list(paths)
        if tiers:
            sql += f" AND r.ref_tier IN ({_marks(tiers)})"
            args += list(tiers)
        if member is not None:
            sql += " AND r.is_member = ?"
            args.append(int(member))
        return _refs(self.conn.execute(sql + _REF_ORDER, (*args, check_limit(limit))))

    def list_refs_in_file(self, path: str, *, limit: int) -> list[m.RefFact]:
        return _refs(self.conn.execute(_REF + "WHERE f.path = ?" + _REF_ORDER, (path, check_limit(limit))))

    def count_refs_by_def_uid(self, def_uid: str) -> dict[str, int]:
        """How many REFERENCE-role occurrences resolve to ``def_uid``, by tier (imports are counted apart)."""
        rows = self.conn.execute("SELECT ref_tier, count(*) FROM st_ref WHERE target_uid = ? AND role = 'REFERENCE' "
                                 "GROUP BY ref_tier", (def_uid,))
        return {str(tier): int(n) for tier, n in rows}

    def list_referencing_files(self, def_uid: str, *, limit: int) -> list[str]:
        """Files holding a REFERENCE-role occurrence resolved to ``def_uid``, by path."""
        rows = self.conn.execute("SELECT DISTINCT f.path FROM st_ref r JOIN st_file f ON f.file_id = r.file_id "
                                 "WHERE r.target_uid = ? AND r.role = 'REFERENCE' ORDER BY f.path LIMIT ?",
                                 (def_uid, check_limit(limit)))
        return [p for (p,) in rows]

    def count_unresolved_refs_by_token(self, token: str) -> dict[str, int]:
        """References spelled ``token`` that resolve to nothing (ANCHORED/UNKNOWN tiers): candidates only."""
        rows = self.conn.execute("SELECT ref_tier, count(*) FROM st_ref WHERE token_text = ? AND target_uid IS NULL "
                                 "AND role = 'REFERENCE' AND ref_tier IN ('ANCHORED', 'UNKNOWN') GROUP BY ref_tier",
                                 (token,))
        return {str(tier): int(n) for tier, n in rows}

    # -- scopes and bindings -----------------------------------------------------------------------
    def get_scope(self, scope_id: int) -> m.ScopeFact | None:
        row = self.conn.execute("SELECT s.scope_id, f.path, s.parent_scope_id, s.kind, s.start_line, s.start_col, "
                                "s.end_line, s.end_col FROM st_scope s JOIN st_file f ON f.file_id = s.file_id "
                                "WHERE s.scope_id = ?", (scope_id,)).fetchone()
        return m.ScopeFact(*row) if row else None

    def list_scopes_in_file(self, path: str, *, limit: int) -> list[m.ScopeFact]:
        rows = self.conn.execute("SELECT s.scope_id, f.path, s.parent_scope_id, s.kind, s.start_line, s.start_col, "
                                 "s.end_line, s.end_col FROM st_scope s JOIN st_file f ON f.file_id = s.file_id "
                                 "WHERE f.path = ? ORDER BY s.scope_id LIMIT ?", (path, check_limit(limit)))
        return [m.ScopeFact(*r) for r in rows]

    def _binds(self, where: str, args: Sequence[object]) -> list[m.LocalBindFact]:
        rows = self.conn.execute("SELECT b.bind_id, f.path, b.scope_id, b.name, b.target_kind, b.target_uid, "
                                 "b.certainty, b.reason_code FROM st_bind b JOIN st_file f ON f.file_id = b.file_id "
                                 f"WHERE {where}", args)
        return [m.LocalBindFact(*r) for r in rows]

    def get_local_bind(self, scope_id: int, name: str) -> m.LocalBindFact | None:
        found = self._binds("b.scope_id = ? AND b.name = ?", (scope_id, name))
        return found[0] if found else None

    def get_bind(self, bind_id: int) -> m.LocalBindFact | None:
        found = self._binds("b.bind_id = ?", (bind_id,))
        return found[0] if found else None

    def list_binds_in_scope(self, scope_id: int, *, limit: int) -> list[m.LocalBindFact]:
        return self._binds("b.scope_id = ? ORDER BY b.name LIMIT ?", (scope_id, check_limit(limit)))

    # -- imports -----------------------------------------------------------------------------------
    def list_imports(self, path: str, *, limit: int) -> list[m.ImportFact]:
        return _imports(self.conn.execute(_IMPORT + "WHERE f.path = ? ORDER BY i.start_line, i.start_col, "
                                          "i.import_uid LIMIT ?", (path, check_limit(limit))))

    def get_import(self, import_uid: str) -> m.ImportFact | None:
        found = _imports(self.conn.execute(_IMPORT + "WHERE i.import_uid = ?", (import_uid,)))
        return found[0] if found else None

    def get_imports(self, import_uids: Sequence[str]) -> list[m.ImportFact]:
        uids = list(dict.fromkeys(import_uids))[:MAX_LIMIT]
        out: list[m.ImportFact] = []
        for start in range(0, len(uids), 500):
            part = uids[start:start + 500]
            out += _imports(self.conn.execute(_IMPORT + f"WHERE i.import_uid IN ({_marks(part)})", part))
        return sorted(out, key=lambda i: (i.path, i.start_line, i.start_col, i.import_uid))

    def list_imports_by_source(self, source_literal: str, *, limit: int) -> list[m.ImportFact]:
        return _imports(self.conn.execute(_IMPORT + "WHERE i.source_literal = ? ORDER BY f.path, i.start_line, "
                                          "i.import_uid LIMIT ?", (source_literal, check_limit(limit))))

    def list_importers(self, path: str, *, limit: int) -> list[m.ImportFact]:
        """Imports in any file that resolve to ``path`` (as the module, or as ``from pkg import mod``)."""
        return _imports(self.conn.execute(
            _IMPORT + "WHERE i.resolved_file_id = (SELECT file_id FROM st_file WHERE path = ?) "
            "OR i.resolved_alt_file_id = (SELECT file_id FROM st_file WHERE path = ?) "
            "ORDER BY f.path, i.start_line, i.import_uid LIMIT ?", (path, path, check_limit(limit))))

    def list_imported_paths(self, path: str, *, limit: int) -> list[str]:
        rows = self.conn.execute(
            "SELECT DISTINCT t.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
            "JOIN st_file t ON t.file_id = coalesce(i.resolved_alt_file_id, i.resolved_file_id) "
            "WHERE f.path = ? ORDER BY t.path LIMIT ?", (path, check_limit(limit)))
        return [p for (p,) in rows]

    # -- exports -----------------------------------------------------------------------------------
    def get_export_surface(self, path: str) -> m.ExportSurface | None:
        row = self.conn.execute("SELECT s.surface_id, f.path, s.unit_id, s.surface_hash, s.epoch_id FROM "
                                "st_export_surface s JOIN st_file f ON f.file_id = s.file_id WHERE f.path = ?",
                                (path,)).fetchone()
        return m.ExportSurface(*row) if row else None

    def list_export_entries(self, surface_id: int, *, limit: int) -> list[m.ExportEntry]:
        rows = self.conn.execute("SELECT e.entry_id, e.surface_id, f.path, e.exported_name, e.def_uid, e.certainty, "
                                 "e.evidence_kind FROM st_export_entry e JOIN st_file f ON f.file_id = e.file_id "
                                 "WHERE e.surface_id = ? ORDER BY e.exported_name, e.entry_id LIMIT ?",
                                 (surface_id, check_limit(limit)))
        return [m.ExportEntry(*r) for r in rows]

    # -- anchors, dynamic sites, snapshots, contexts -------------------------------------------------
    def _groups(self, where: str, args: Sequence[object]) -> list[m.AnchorGroup]:
        rows = self.conn.execute("SELECT group_id, unit_id, member_token, receiver_shape, total_count, exemplar_ids "
                                 f"FROM st_anchor_group WHERE {where}", args)
        return [m.AnchorGroup(g, u, t, s, c, tuple(json.loads(e))) for g, u, t, s, c, e in rows]

    def get_anchor_group(self, unit_id: int, member_token: str, receiver_shape: str) -> m.AnchorGroup | None:
        found = self._groups("unit_id = ? AND member_token = ? AND receiver_shape = ?",
                             (unit_id, member_token, receiver_shape))
        return found[0] if found else None

    def list_anchor_groups(self, *, limit: int, unit_id: int | None = None,
                           member_token: str | None = None) -> list[m.AnchorGroup]:
        where = "1 = 1"
        args: list[object] = []
        if unit_id is not None:
            where += " AND unit_id = ?"
            args.append(unit_id)
        if member_token is not None:
            where += " AND member_token = ?"
            args.append(member_token)
        return self._groups(where + " ORDER BY member_token, receiver_shape, unit_id LIMIT ?",
                            (*args, check_limit(limit)))

    def list_dynamic_access_sites(self, *, limit: int, path: str | None = None,
                                  unit_id: int | None = None) -> list[m.DynamicAccessSite]:
        sql = ("SELECT s.site_id, f.path, s.start_line, s.start_col, s.pattern_type, s.extracted_literals, "
               "s.has_non_literal_key FROM st_dynamic_site s JOIN st_file f ON f.file_id = s.file_id WHERE 1 = 1")
        args: list[object] = []
        if path is not None:
            sql += " AND f.path = ?"
            args.append(path)
        if unit_id is not None:
            sql += " AND f.unit_id = ?"
            args.append(unit_id)
        rows = self.conn.execute(sql + " ORDER BY f.path, s.start_line, s.start_col LIMIT ?",
                                 (*args, check_limit(limit)))
        return [m.DynamicAccessSite(i, p, ln, c, t, tuple(json.loads(lit)), bool(n)) for i, p, ln, c, t, lit, n in rows]

    def list_def_snapshots(self, path: str, epoch: int, *, limit: int) -> list[m.DefSnapshot]:
        """``path``'s definitions as of ``epoch`` (its latest snapshot at or before it; [] if absent/deleted)."""
        row = self.conn.execute("SELECT epoch_id, deleted FROM st_snapshot_file WHERE file_path = ? AND epoch_id <= ? "
                                "ORDER BY epoch_id DESC LIMIT 1", (path, epoch)).fetchone()
        if row is None or row[1]:
            return []
        rows = self.conn.execute("SELECT epoch_id, file_path, kind, name, lexical_path, signature_hash, display_name, "
                                 "start_line, end_line, def_uid FROM st_def_snapshot WHERE file_path = ? AND "
                                 "epoch_id = ? ORDER BY start_line, id LIMIT ?", (path, row[0], check_limit(limit)))
        return [m.DefSnapshot(*r) for r in rows]

    def list_snapshot_paths(self, after_epoch: int, upto_epoch: int, *, limit: int) -> list[str]:
        """Paths snapshotted at an epoch in ``(after_epoch, upto_epoch]``: the files that changed between them."""
        rows = self.conn.execute("SELECT DISTINCT file_path FROM st_snapshot_file WHERE epoch_id > ? AND epoch_id <= ? "
                                 "ORDER BY file_path LIMIT ?", (after_epoch, upto_epoch, check_limit(limit)))
        return [p for (p,) in rows]

    def snapshot_exists(self, path: str, epoch: int) -> bool:
        """Whether ``path`` existed as of ``epoch`` (its latest snapshot at or before it is not a deletion)."""
        row = self.conn.execute("SELECT deleted FROM st_snapshot_file WHERE file_path = ? AND epoch_id <= ? "
                                "ORDER BY epoch_id DESC LIMIT 1", (path, epoch)).fetchone()
        return row is not None and not row[0]

    def snapshot_epochs(self) -> tuple[int, int] | None:
        """(first, last) epoch with any snapshot, or None when there is none (snapshots start at the build)."""
        row = self.conn.execute("SELECT min(epoch_id), max(epoch_id) FROM st_snapshot_file").fetchone()
        if row is None or row[0] is None:
            return None
        # Before a pruned history's floor, a file's state may be gone: the floor is the first epoch answered.
        floor = self.conn.execute("SELECT value FROM st_state WHERE key = 'snapshots_from'").fetchone()
        return max(int(row[0]), int(floor[0]) if floor is not None else 0), int(row[1])

    def list_contexts(self, *, limit: int) -> list[dict[str, object]]:
        rows = self.conn.execute("SELECT context_id, family, root_path, tier, probe_status, markers FROM st_context "
                                 "ORDER BY family, root_path LIMIT ?", (check_limit(limit),))
        return [{"context_id": c, "family": f, "root_path": r, "tier": t, "probe_status": s,
                 "markers": json.loads(mk)} for c, f, r, t, s, mk in rows]


@functools.cache
def _extractor_kinds() -> frozenset[str]:
    """The kinds the query patterns capture (``@definition.<kind>``) and the Python adapter's own."""
    base = resources.files("codeplane.index.structural") / "patterns"
    found = {"function", "method", "class", "variable", "module"}
    for entry in base.iterdir():
        if entry.name.endswith(".scm"):
            found |= set(re.findall(r"@definition\.([a-z_]+)", entry.read_text(encoding="utf-8")))
    return frozenset(found)
