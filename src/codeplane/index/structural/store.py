"""Writing one batch of extraction outcomes into the ``st_`` tables, inside the caller's transaction.

For each changed file the previous facts are replaced, with database ids allocated here (max + 1) so rows can
be inserted in bulk with their cross-links already set (the biggest tables are copied from the extraction's
staged database, ``staging``); a file indexed before keeps the scope, bind and ref rows that came out the same
(``rewrite``). What the
batch changed (files, module keys, member tokens) is returned for linking, anchors and contexts.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from codeplane.index.facts_api import FileChange
from codeplane.index.languages import detect
from codeplane.index.structural import anchors, rewrite, staging, surfaces
from codeplane.index.structural.contexts.discovery import is_marker
from codeplane.index.structural.extract import Outcome
from codeplane.index.structural.facts import FileFacts

_IN_CHUNK = 500
_FACT_TABLES = ("st_def", "st_scope", "st_bind", "st_import", "st_ref", "st_export_entry", "st_export_thunk",
                "st_dynamic_site", "st_export_surface", "st_module_key")
#: What a rewritten file has replaced whole: all but the tables ``rewrite`` matches row by row.
_REPLACED_TABLES = tuple(t for t in _FACT_TABLES if t not in ("st_scope", "st_bind", "st_ref", "st_def"))


@dataclass
class BatchEffect:
    """What one ``apply`` changed, for the steps that follow the write."""

    epoch: int
    upserted: dict[str, int] = field(default_factory=dict)  # path -> file_id
    deleted: dict[str, int] = field(default_factory=dict)  # path -> former file_id
    #: Files added or removed (not just edited): context membership and probes may change.
    membership_changed: bool = False
    #: Paths that did not exist before the batch.
    added: set[str] = field(default_factory=set)
    #: ANCHORED member refs per anchor group that the changed files held before the batch.
    anchors_removed: dict[tuple[int, str, str], int] = field(default_factory=dict)
    #: Where each of those refs was, by ref id (a later batch may give a new ref the same id).
    anchors_gone: dict[int, anchors.Position] = field(default_factory=dict)
    #: What a chase read of the changed files before the batch (``surfaces.chase_inputs``): a rewritten file
    #: whose inputs come out the same is, to its importers, an unchanged file.
    old_inputs: dict[int, surfaces.ChaseInputs] = field(default_factory=dict)
    #: Module keys the changed files held before the batch (importers of those keys must relink).
    old_keys: set[str] = field(default_factory=set)
    #: Directories whose ``__init__.py`` appeared or vanished (Python module names below them change).
    init_dirs_changed: set[str] = field(default_factory=set)
    #: Marker files (§8.4.2) written (text, kept only for markers whose content matters) or deleted (None).
    markers: dict[str, str | None] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    #: Reference rows of rewritten files kept as they were, and written.
    kept: rewrite.RewriteReport = field(default_factory=rewrite.RewriteReport)

    def absorb(self, later: BatchEffect) -> None:
        """Add what a later batch of the same epoch changed (a path appears in at most one of them; the
        outcomes, already written, are not kept)."""
        self.upserted.update(later.upserted)
        self.deleted.update(later.deleted)
        self.membership_changed = self.membership_changed or later.membership_changed
        self.added |= later.added
        for key, count in later.anchors_removed.items():
            self.anchors_removed[key] = self.anchors_removed.get(key, 0) + count
        for ref_id, position in later.anchors_gone.items():
            self.anchors_gone.setdefault(ref_id, position)  # the place before the epoch, not a reused id's
        self.old_keys |= later.old_keys
        self.old_inputs.update(later.old_inputs)
        self.init_dirs_changed |= later.init_dirs_changed
        self.markers.update(later.markers)
        self.kept.refs_kept += later.kept.refs_kept
        self.kept.refs_written += later.kept.refs_written


def chunked(items: Sequence[int], size: int = _IN_CHUNK) -> Iterator[Sequence[int]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def marks(count: int) -> str:
    return ",".join("?" * count)


def _collect_old(conn: sqlite3.Connection, ids: list[int], effect: BatchEffect) -> None:
    effect.anchors_removed, effect.anchors_gone = anchors.removed_refs(conn, ids)
    effect.old_inputs = surfaces.chase_inputs(conn, ids)
    for part in chunked(ids):
        effect.old_keys.update(k for (k,) in conn.execute(
            f"SELECT key FROM st_module_key WHERE file_id IN ({marks(len(part))})", part))


def delete_facts(conn: sqlite3.Connection, ids: list[int], tables: Sequence[str] = _FACT_TABLES) -> None:
    for part in chunked(ids):
        for table in tables:
            conn.execute(f"DELETE FROM {table} WHERE file_id IN ({marks(len(part))})", part)


def _is_init(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")


def write_batch(conn: sqlite3.Connection, changes: Sequence[FileChange], outcomes: Sequence[Outcome | None],
                staged: Sequence[staging.Staged], epoch: int) -> BatchEffect:
    """Replace the facts of ``changes`` (``outcomes[i]`` is ``None`` for deletions and non-text files; the
    outcomes' big tables are in ``staged``, in the order of ``changes``)."""
    effect = BatchEffect(epoch)
    paths = [c.path for c in changes]
    existing: dict[str, int] = {}
    for start in range(0, len(paths), _IN_CHUNK):
        part = paths[start:start + _IN_CHUNK]
        existing.update(conn.execute(f"SELECT path, file_id FROM st_file WHERE path IN ({marks(len(part))})", part))
    old_ids = sorted(existing.values())
    _collect_old(conn, old_ids, effect)
    # A file extracted again keeps its scope, bind and ref rows that did not change (``rewrite.py``).
    staged_paths = {path for batch in staged for path in batch.paths}
    rewritten = {path: file_id for path, file_id in existing.items() if path in staged_paths}
    delete_facts(conn, sorted(set(old_ids) - set(rewritten.values())))
    delete_facts(conn, sorted(rewritten.values()), _REPLACED_TABLES)
    for change, outcome in zip(changes, outcomes, strict=True):
        if is_marker(change.path):
            effect.markers[change.path] = None if change.deleted else (change.text or "")
        if _is_init(change.path) and (change.deleted or change.path not in existing):
            effect.init_dirs_changed.add(change.path.rpartition("/")[0])
        if change.deleted:
            file_id = existing.get(change.path)
            if file_id is not None:
                conn.execute("DELETE FROM st_file WHERE file_id = ?", (file_id,))
                effect.deleted[change.path] = file_id
                effect.membership_changed = True
            continue
        if change.path not in existing:
            effect.membership_changed = True
            effect.added.add(change.path)
        effect.upserted[change.path] = _upsert_file(conn, change, outcome, existing.get(change.path), epoch)
        if outcome is not None:
            effect.outcomes.append(outcome)
    _insert_facts(conn, effect, staged, rewritten)
    return effect


def _upsert_file(conn: sqlite3.Connection, change: FileChange, outcome: Outcome | None, file_id: int | None,
                 epoch: int) -> int:
    info = detect(change.path)
    # The language extraction chose from the text (a C++ header is ``cpp``): read, not decided again here.
    language = outcome.language if outcome is not None else info.language if info else None
    status = outcome.status if outcome is not None else "not_text"
    stats = outcome.stats if outcome is not None else None
    facts = outcome.facts if outcome is not None else None
    row = (change.path, language, info.family if info else None, status,
           outcome.error if outcome is not None else None, facts.package if facts else None,
           stats.node_count if stats else None, stats.error_count if stats else None,
           int(stats.has_named) if stats else None, _line_count(change, facts), change.file_sha256, epoch)
    if file_id is None:
        cursor = conn.execute(
            "INSERT INTO st_file(path, language, family, status, error, package, node_count, error_count, has_named, "
            "line_count, file_sha256, epoch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", row)
        return int(cursor.lastrowid or 0)
    conn.execute("UPDATE st_file SET path=?, language=?, family=?, status=?, error=?, package=?, node_count=?, "
                 "error_count=?, has_named=?, line_count=?, file_sha256=?, epoch=? WHERE file_id=?", (*row, file_id))
    return file_id


def _line_count(change: FileChange, facts: FileFacts | None) -> int | None:
    if facts is not None:
        return facts.line_count
    if change.text is None:
        return None
    return change.text.count("\n") + (0 if not change.text or change.text.endswith("\n") else 1)


def _insert_facts(conn: sqlite3.Connection, effect: BatchEffect, staged: Sequence[staging.Staged],
                  rewritten: dict[str, int]) -> None:
    # Rows are unpacked positionally: from worker processes they arrive as plain tuples (extract.to_wire).
    # Scopes, binds, defs and refs arrive staged (``staging``): a new file's only get their id bases here, a
    # rewritten file's are matched with what it held (``rewrite``).
    counts = staging.counts_by_path(staged)
    counters = rewrite.IdCounters.of(conn)
    ids: dict[str, staging.FileIds] = {}
    for outcome in effect.outcomes:
        facts = outcome.facts
        if facts is None or facts.path in rewritten:
            continue
        ids[facts.path] = staging.FileIds(effect.upserted[facts.path], counters.scope, counters.bind, counters.ref)
        scopes, binds, refs = counts.get(facts.path, (0, 0, 0))
        counters.scope += scopes
        counters.bind += binds
        counters.ref += refs
    scope_ids: dict[str, list[int]] = {}

    def rewrite_batch(conn: sqlite3.Connection, source: str, paths: Sequence[str]) -> None:
        scope_ids.update(rewrite.rewrite(conn, source, paths, files=rewritten, counters=counters, report=effect.kept))

    staging.copy(conn, staged, ids, rewrite_batch if rewritten else None)
    imports: list[tuple[object, ...]] = []
    dynamic: list[tuple[object, ...]] = []
    for outcome in effect.outcomes:
        facts = outcome.facts
        if facts is None:
            continue
        file_id = effect.upserted[facts.path]
        mapped = scope_ids.get(facts.path)
        base = ids[facts.path].scope_base if mapped is None else 0
        for (uid, scope, name, alias, source, kind, certainty, sl, sc, el, ec) in facts.imports:
            scope_id = base + scope if mapped is None else mapped[scope]
            imports.append((uid, file_id, scope_id, name, alias, source, kind, certainty, sl, sc, el, ec))
        for (sl, sc, pattern, literals, non_literal) in facts.dynamic:
            dynamic.append((file_id, sl, sc, pattern, json.dumps(list(literals)), int(non_literal)))
        _insert_exports(conn, file_id, facts)
    conn.executemany("INSERT INTO st_import(import_uid, file_id, scope_id, imported_name, alias, source_literal, "
                     "import_kind, certainty, start_line, start_col, end_line, end_col) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", imports)
    conn.executemany("INSERT INTO st_dynamic_site(file_id, start_line, start_col, pattern_type, extracted_literals, "
                     "has_non_literal_key) VALUES (?,?,?,?,?,?)", dynamic)


def _insert_exports(conn: sqlite3.Connection, file_id: int, facts: FileFacts) -> None:
    if not facts.exports and not facts.thunks:
        return
    cursor = conn.execute("INSERT INTO st_export_surface(file_id, unit_id, surface_hash, epoch_id) "
                          "VALUES (?, 0, '', 0)", (file_id,))
    surface_id = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT INTO st_export_entry(surface_id, exported_name, def_uid, certainty, evidence_kind, file_id, "
        "local_def_uid, import_uid) VALUES (?,?,?,?,?,?,?,?)",
        [(surface_id, name, local, certainty, evidence, file_id, local, imp)
         for (name, local, imp, certainty, evidence) in facts.exports])
    conn.executemany(
        "INSERT INTO st_export_thunk(source_unit, target_unit, mode, explicit_names, alias_map, evidence_kind, "
        "file_id, import_uid, source_literal) VALUES (0, NULL, ?, ?, ?, ?, ?, ?, ?)",
        [(mode, json.dumps(list(names)) if names else None, json.dumps(dict(aliases)) if aliases else None,
          evidence, file_id, imp, source) for (mode, imp, source, names, aliases, evidence) in facts.thunks])


def file_ids(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, int]:
    wanted = list(paths)
    out: dict[str, int] = {}
    for start in range(0, len(wanted), _IN_CHUNK):
        part = wanted[start:start + _IN_CHUNK]
        out.update(conn.execute(f"SELECT path, file_id FROM st_file WHERE path IN ({marks(len(part))})", part))
    return out
