"""What every symbol-level impact walk over one index epoch reads the same way (``impact_symbols.SymbolWalk``).

Definitions per file, the references by name that resolve to nothing, which files can hold a module object or
bind a bare name, and query answers: ``ImpactIndex`` keeps one ``WalkFacts`` per epoch, so the selections made
between two index updates read them once. Filled lazily, from the read transaction of the walk that first asks.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from codeplane.testing.impact_dynamic import DynamicSites
from codeplane.testing.impact_reach import Def

K = TypeVar("K")
V = TypeVar("V")

#: Query answers kept per epoch (``WalkFacts.rows``) before they are dropped all at once.
MAX_QUERIES = 200_000
#: Files whose imported names are re-read per query after an edit (``importers_of_name``).
_NAME_CHUNK = 500
#: Files with a star import, or that run strings as code (``loose_files``).
_STARS = "SELECT file_id FROM st_import WHERE imported_name = '*'"
_EXECS = "SELECT file_id FROM st_dynamic_site WHERE pattern_type IN ('exec', 'eval')"
#: Test files' scans kept across epochs (``CodeStringScans``) before they are dropped all at once.
MAX_SCANS = 50_000


class CodeStringScans:
    """Which lines of a test file look like code importing a package written into a string (``WalkFacts.
    code_strings``), kept across epochs: an edit makes a new epoch, and scanning every test file's text again
    cost each write on Django ~70 ms. A scan is reused while the file's lines are the same list object, which
    the caller's line cache (``testing.line_cache``) hands out until the file's stat changes; it holds the list,
    so an identity can never be that of another text."""

    def __init__(self) -> None:
        self._scans: dict[tuple[str, str], tuple[Sequence[str], list[int], list[int]]] = {}

    def lines_of(self, top: str, test: str, lines: Sequence[str], quoted: re.Pattern[str],
                 bare: re.Pattern[str]) -> tuple[list[int], list[int]]:
        """Line numbers of ``test`` matching ``quoted`` (anywhere) and ``bare`` (a line's start)."""
        known = self._scans.get((top, test))
        if known is not None and known[0] is lines:
            return known[1], known[2]
        text = "\n".join(lines)  # one scan of the whole text; lines only where it matches
        quoted_at = [n for n, line in enumerate(lines, 1) if quoted.search(line)] if quoted.search(text) else []
        bare_at = [n for n, line in enumerate(lines, 1) if bare.match(line)] if bare.search(text) else []
        if len(self._scans) >= MAX_SCANS:
            self._scans.clear()
        self._scans[(top, test)] = (lines, quoted_at, bare_at)
        return quoted_at, bare_at


def _without(found: dict[K, V], keys: Iterable[K], *, take: bool = False) -> dict[K, V]:
    """``found`` less ``keys``: a copy, or ``found`` itself when it may be ``take``n (see ``WalkFacts.carry``)."""
    kept = found if take else dict(found)
    for key in keys:
        kept.pop(key, None)
    return kept


def _bound_names(rows: Iterable[tuple[Any, ...]]) -> dict[int, frozenset[str]]:
    """file id → the names its imports bind (the last dotted part, or the alias) from ``st_import`` rows."""
    found: dict[int, set[str]] = {}
    for file_id, imported, alias in rows:
        found.setdefault(int(file_id), set()).update({str(imported).rpartition(".")[2], str(alias or "")} - {""})
    return {f: frozenset(bound) for f, bound in found.items() if bound}


def _inverted(bound_by: Mapping[int, frozenset[str]]) -> dict[str, frozenset[int]]:
    names: dict[str, set[int]] = {}
    for file_id, bound in bound_by.items():
        for name in bound:
            names.setdefault(name, set()).add(file_id)
    return {k: frozenset(v) for k, v in names.items()}


class Use(NamedTuple):
    """A reference by name that resolves to nothing (``WalkFacts.uses_by_name``)."""

    file_id: int
    line: int
    col: int
    receiver: str | None
    member: bool
    #: Reached through an import of another distribution's module (``os.path.join``: the ``os`` import).
    foreign: bool


class WalkFacts:
    """What every walk over one index epoch reads the same way: definitions per file, and which files can bind
    a bare name they neither define nor import by name. Kept by ``ImpactIndex`` until the next epoch (a fresh
    one per walk without an epoch); filled lazily, from the read transaction of the walk that first asks."""

    def __init__(self, epoch: int | None = None, keys_of: Mapping[int, Sequence[str]] | None = None,
                 scans: CodeStringScans | None = None) -> None:
        self.epoch = epoch
        self._scans = scans if scans is not None else CodeStringScans()
        #: file id → its module keys (``ImportGraph.keys_of``); None: member uses are not narrowed.
        self.keys_of = keys_of
        self._holders: dict[tuple[int, str], frozenset[int]] = {}
        self._uses: dict[str, list[Use]] = {}
        self._rows: dict[tuple[str, tuple[object, ...]], list[tuple[Any, ...]]] = {}
        self._tops: frozenset[str] | None = None
        #: test file → the repository files it imports directly (``impact_modules.ModuleWalk.source_dirs``).
        self.sources: dict[str, tuple[str, ...]] = {}
        #: test file id → its imports when one is inside a function, else None (``impact_local.import_rows``).
        self.local_imports: dict[int, list[tuple[int, str | None, str | None, str | None]] | None] = {}
        #: file id → the names its imports bind (``importers_of_name``, kept so an edit re-reads only its files).
        self._names_of: dict[int, frozenset[str]] | None = None
        self.defs: dict[int, list[Def]] = {}
        self.starts: dict[int, list[int]] = {}
        self.by_uid: dict[str, Def] = {}
        self._loose: frozenset[int] | None = None
        self._names: dict[str, frozenset[int]] | None = None
        #: file id → (query, parameters) → rows, for queries reading only that file's facts (``file_rows``).
        self._file_rows: dict[int, dict[tuple[str, tuple[object, ...]], list[tuple[Any, ...]]]] = {}
        self._dynamic: DynamicSites | None = None
        #: An earlier epoch's dynamic sites and star/exec files, and the files changed since (``carry``).
        self._carried_dynamic: DynamicSites | None = None
        self._carried_loose: frozenset[int] | None = None
        self._changed: frozenset[int] = frozenset()
        #: Files whose imported names are still to be read into a carried ``_names`` (``carry``).
        self._pending_names: list[int] = []
        #: bind id → whether every assignment of that local binds a literal (``impact_names.literal_receiver``).
        self.literal_binds: dict[int, bool] = {}
        self._code_strings: dict[tuple[str, tuple[str, ...]], list[tuple[str, int]]] = {}
        #: file id → (line, column) of a use of a function's local → its assignments' callees (``impact_locals``).
        self.local_constructions: dict[int, dict[tuple[int, int], tuple[tuple[int, int], ...]]] = {}
        #: (file id, callees) → the one repository class they all construct, if certain (``impact_locals``).
        self.local_classes: dict[tuple[int, tuple[tuple[int, int], ...]], str | None] = {}
        #: file id → the names it assigns something literal-looking to (``impact_names.literal_receiver``).
        self.literal_names: dict[int, frozenset[str]] = {}
        #: file id → the names it writes as ``*name``/``**name`` (``impact_names.literal_receiver``).
        self.packed_names: dict[int, frozenset[str]] = {}
        #: file id → the names its ``global``/``nonlocal`` statements declare.
        self.rebound: dict[int, frozenset[str]] = {}
        #: (class uid, attribute) → the one class its instances hold there, if certain (``impact_attrs``).
        self.attribute_types: dict[tuple[str, str], str | None] = {}
        #: attribute → (file id, its stores) when every store is ``self.<attribute>`` in that file (``impact_attrs``).
        self.attribute_stores: dict[str, tuple[int, tuple[tuple[int, int], ...]] | None] = {}
        #: (file id, line, column) of a ``self`` → the class it is an instance of, if certain (``impact_attrs``).
        self.self_classes: dict[tuple[int, int, int], str | None] = {}
        #: file id → whether it may store attributes by computed names (``impact_attrs``).
        self.dynamic_files: dict[int, bool] = {}
        #: member name → whether some code stores an attribute so named (``impact_attrs``).
        self.stored_members: dict[str, bool] = {}
        #: class attribute uid → whether it holds a plain descriptor; member name → whether every store of it is an
        #: instance's or a literal (``impact_descriptors``).
        self.plain_descriptors: dict[str, bool] = {}
        self.instance_stores: dict[str, bool] = {}
        #: names written as a string right after a ``setattr``-like call anywhere (``impact_attrs``).
        self.setter_strings: frozenset[str] | None = None
        #: file id → its part of ``setter_strings`` (files with no such call: none), and the files changed since
        #: they were read (None: read every file).
        self.setter_strings_of: dict[int, frozenset[str]] | None = None
        self.setter_files_pending: frozenset[int] | None = None
        #: class uid → whether calling it certainly makes an instance of it (``impact_attrs``).
        self.constructs_itself: dict[str, bool] = {}
        #: class uid → it and its repository bases, None when a base is unknown (``impact_attrs``).
        self.class_ancestors: dict[str, frozenset[str] | None] = {}
        #: (file id, ``def`` line) → (line, column) of its signature's annotation names (``impact_text``).
        self.signatures: dict[tuple[int, int], frozenset[tuple[int, int]]] = {}
        #: pytest fixture name → whether the repository may define a fixture so named (``impact_names``).
        self.pytest_overrides: dict[str, bool] = {}

    def carry(self, old: WalkFacts, changed: frozenset[int], path_of: Mapping[int, str], *,
              take: bool = False) -> None:
        """Take from ``old`` (the facts of the epoch the import graph was carried from, ``impact_graph``: the same
        files and module keys) what depends only on a file's own facts and text, for every file not in
        ``changed``: its definitions, the files a test file imports, and what its text says (literal assignments,
        packed and rebound names, computed stores, signatures). What reads across files (references by name,
        holders, importers by name, query answers) is read again: an edit elsewhere changes what it resolves to.

        ``take``: no walk uses ``old`` any more, nor ever will (``ImpactIndex``), so its maps are taken over rather
        than copied: copying touches every entry's objects (~55k on Django), ~6 ms of each epoch's first walk."""
        gone = {path_of[f] for f in changed if f in path_of}
        # Less the changed files' entries: an edit changes one file or a few, and filtering every entry cost more
        # than the copy (14 ms per epoch on Django).
        self.by_uid = _without(old.by_uid, [d.uid for f in changed for d in old.defs.get(f, ())], take=take)
        self.defs = _without(old.defs, changed, take=take)
        self.starts = _without(old.starts, changed, take=take)
        self.sources = _without(old.sources, gone, take=take)
        self.literal_names = _without(old.literal_names, changed, take=take)
        self.local_constructions = _without(old.local_constructions, changed, take=take)
        self.packed_names = _without(old.packed_names, changed, take=take)
        self.rebound = _without(old.rebound, changed, take=take)
        self.dynamic_files = _without(old.dynamic_files, changed, take=take)
        self.local_imports = _without(old.local_imports, changed, take=take)
        self._file_rows = _without(old._file_rows, changed, take=take)
        self.signatures = {k: v for k, v in old.signatures.items() if k[0] not in changed}
        # Which strings of test files hold code importing a package: their own text and import lines.
        self._code_strings = {k: v for k, v in old._code_strings.items() if not gone.intersection(k[1])}
        # Brought up to date when first asked. What ``old`` was never asked for is carried from further back: the
        # files changed since then count too (re-reading an unchanged file's rows gives the same rows).
        self._carried_dynamic = old._dynamic if old._dynamic is not None else old._carried_dynamic
        self._carried_loose = old._loose if old._loose is not None else old._carried_loose
        self._tops = old._tops  # from the module keys, which a carried graph keeps
        if old.setter_strings_of is not None and old.setter_files_pending is not None:
            self.setter_strings_of = _without(old.setter_strings_of, changed, take=take)
            self.setter_files_pending = old.setter_files_pending | changed
        self._changed = changed if old._dynamic is not None and old._loose is not None else changed | old._changed
        if old._names is not None and old._names_of is not None:
            self._carry_names(old._names, old._names_of, changed, take=take)
        if take:  # emptied, not shared: a walk given ``old`` by mistake would read everything again, never stale
            WalkFacts.__init__(old, old.epoch, old.keys_of, old._scans)

    def _carry_names(self, names: dict[str, frozenset[int]], names_of: dict[int, frozenset[str]],
                     changed: frozenset[int], *, take: bool) -> None:
        """``importers_of_name``'s index without the ``changed`` files; ``_pending_names`` re-reads theirs."""
        leaving = [(f, names_of.get(f, frozenset())) for f in changed]
        self._names = names if take else dict(names)
        self._names_of = _without(names_of, changed, take=take)
        for file_id, bound in leaving:
            for name in bound:
                rest = self._names.get(name, frozenset()) - {file_id}
                if rest:
                    self._names[name] = rest
                else:
                    self._names.pop(name, None)
        self._pending_names = sorted(changed)

    def loose_files(self, conn: sqlite3.Connection) -> frozenset[int]:
        """Files with a star import, or that run strings as code (``exec``/``eval`` may bind any global)."""
        if self._loose is None:
            carried, files = self._carried_loose, sorted(self._changed)
            if carried is None:
                self._loose = frozenset(int(f) for (f,) in conn.execute(f"{_STARS} UNION {_EXECS}"))
            else:  # only the changed files can have gained or lost a star import or an ``exec``
                found = set(carried.difference(files))
                for start in range(0, len(files), _NAME_CHUNK):
                    chunk = files[start:start + _NAME_CHUNK]
                    marks = ",".join("?" * len(chunk))
                    found.update(int(f) for (f,) in conn.execute(
                        f"{_STARS} AND file_id IN ({marks}) UNION {_EXECS} AND file_id IN ({marks})", [*chunk, *chunk]))
                self._loose = frozenset(found)
        return self._loose

    def module_holders(self, conn: sqlite3.Connection, file_id: int, name: str) -> frozenset[int] | None:
        """Files that can hold the module object of ``file_id`` under some name, or of a module re-exporting its
        ``name`` (``from m import name`` there, one hop), so that ``x.name`` there may denote ``file_id``'s
        ``name``: ``import m`` (or of a parent package: ``import pkg`` then ``pkg.m.name``), ``from pkg import
        m``; files importing a dynamic importer (``import_module``, ``import_string``), with a star import or
        that run strings as code. None when the file's module keys are unknown."""
        if self.keys_of is None:
            return None
        known = self._holders.get((file_id, name))
        if known is not None:
            return known
        found = set(self.loose_files(conn)) | self.importers_of_name(conn, "import_module") | \
            self.importers_of_name(conn, "import_string")
        found.add(file_id)
        found |= self._holding(conn, file_id)
        for (other,) in conn.execute(
                "SELECT DISTINCT file_id FROM st_import WHERE (resolved_file_id = ? OR resolved_alt_file_id = ?) "
                "AND import_kind = 'python_from' AND imported_name IN (?, '*')", (file_id, file_id, name)):
            found |= self._holding(conn, int(other))
        result = frozenset(found)
        self._holders[(file_id, name)] = result
        return result

    def _holding(self, conn: sqlite3.Connection, file_id: int) -> set[int]:
        assert self.keys_of is not None
        keys = {k[3:] for k in self.keys_of.get(file_id, ()) if k.startswith("py:")}
        own = {f"py:{k}" for k in keys}
        above = own | {f"py:{'.'.join(k.split('.')[:i])}" for k in keys for i in range(1, k.count(".") + 1)}
        if not own:
            return set()
        marks = ",".join("?" * len(above))
        found: set[int] = set()
        for user, kind, target, alt in conn.execute(
                f"SELECT file_id, import_kind, target_key, alt_key FROM st_import WHERE target_key IN ({marks}) "
                f"UNION SELECT file_id, import_kind, target_key, alt_key FROM st_import WHERE alt_key IN ({marks})",
                [*sorted(above), *sorted(above)]):
            # ``from m import name`` binds ``name``, never ``m`` itself (``from . import certs`` in requests'
            # utils.py made every ``headers.get`` there a use of ``requests.get``), except in ``m``'s parent
            # package, whose namespace the import machinery gives the submodule (``from .api import get`` in
            # ``pkg/__init__.py`` binds ``api`` there too).
            if alt in above or (kind != "python_from" and target in above) or (
                    target in own and self._parent_of(int(user), str(target))):
                found.add(int(user))
        return found

    def _parent_of(self, file_id: int, target: str) -> bool:
        """Whether ``file_id`` is the package holding the module ``target`` (``py:pkg.mod`` → ``pkg``)."""
        assert self.keys_of is not None
        parent = target.rpartition(".")[0]
        return bool(parent) and parent in self.keys_of.get(file_id, ())

    def code_strings(self, conn: sqlite3.Connection, top: str, tests: Sequence[str],
                     read_lines: Callable[[str], Sequence[str]]) -> list[tuple[str, int]]:
        """(test file, line) of each string literal in ``tests`` that holds code importing ``top``: one that starts
        with it, or a line of a multi-line string that does (``import click`` on a line of its own that is no
        import statement of the file: click's ``test_light_imports`` runs such a string in a subprocess)."""
        key = (top, tuple(tests))
        found = self._code_strings.get(key)
        if found is None:
            quoted = re.compile(rf"""["']\s*(?:import|from)\s+{re.escape(top)}\b""")
            bare = re.compile(rf"""^\s*(?:import|from)\s+{re.escape(top)}\b""", re.MULTILINE)
            found = []
            spelled: dict[str, list[int]] = {}
            for test in tests:
                quoted_at, bare_at = self._scans.lines_of(top, test, read_lines(test), quoted, bare)
                found += [(test, n) for n in quoted_at]
                if bare_at:
                    spelled[test] = bare_at
            statements = self._import_lines(conn, sorted(spelled))
            found += [(test, n) for test, numbers in sorted(spelled.items()) for n in numbers
                      if (test, n) not in statements]
            found = self._code_strings[key] = sorted(set(found))
        return found

    @staticmethod
    def _import_lines(conn: sqlite3.Connection, paths: Sequence[str]) -> set[tuple[str, int]]:
        """(path, line) of every import statement the index holds for ``paths``."""
        found: set[tuple[str, int]] = set()
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            found |= {(str(p), int(n)) for p, n in conn.execute(
                "SELECT f.path, i.start_line FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                f"WHERE f.path IN ({','.join('?' * len(chunk))})", chunk)}
        return found

    def rows(self, conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        key = (sql, params)
        found = self._rows.get(key)
        if found is None:
            if len(self._rows) >= MAX_QUERIES:
                self._rows.clear()
            found = self._rows[key] = conn.execute(sql, params).fetchall()
        return found

    def file_rows(self, conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
        """``rows`` for a query that reads only the file ``params[0]``'s own facts (its references, bindings,
        scopes, and its imports with their resolution): carried to the next epoch while the file is unchanged
        (``carry``: no module key moved, so no import of it resolves elsewhere). A query whose answer linking
        decides (a reference's ``target_uid``) is no such query: it goes through ``rows``."""
        file_id = params[0]
        assert isinstance(file_id, int)
        memo = self._file_rows.setdefault(file_id, {})
        found = memo.get((sql, params))
        if found is None:
            found = memo[(sql, params)] = conn.execute(sql, params).fetchall()
        return found

    def own_package(self, top: str) -> bool:
        """Whether ``top`` names a top-level module or package of the repository (unknown layout: yes)."""
        if self.keys_of is None:
            return True
        if self._tops is None:
            self._tops = frozenset(k[3:].split(".", 1)[0] for keys in self.keys_of.values() for k in keys
                                   if k.startswith("py:"))
        return not top or top in self._tops

    def uses_by_name(self, conn: sqlite3.Connection, name: str) -> list[Use]:
        """The references spelled ``name`` that resolve to nothing: ANCHORED member accesses, UNKNOWN names, and
        PROVEN ones bound to several definitions; each with whether the import it goes through (its dotted
        root's) names another distribution's module."""
        found = self._uses.get(name)
        if found is None:
            found = self._uses[name] = [
                Use(int(f), int(ln), int(c), None if r is None else str(r), bool(m),
                    bool(outside) and isinstance(key, str) and key.startswith("py:")
                    and not self.own_package(key[3:].split(".", 1)[0]))
                for f, ln, c, r, m, outside, key in conn.execute(
                    "SELECT r.file_id, r.start_line, r.start_col, r.receiver_shape, r.is_member, "
                    "i.resolved_file_id IS NULL AND i.resolved_alt_file_id IS NULL "
                    "AND i.import_kind IN ('python_import', 'python_from'), i.target_key FROM st_ref r "
                    "LEFT JOIN st_bind b ON b.bind_id = r.bind_id LEFT JOIN st_import i ON i.import_uid = "
                    "r.via_import_uid WHERE r.token_text = ? AND r.target_uid IS NULL AND r.role = 'REFERENCE' "
                    "AND (r.ref_tier IN ('ANCHORED', 'UNKNOWN') OR b.target_kind = 'DEF' "
                    "OR b.reason_code = 'DEF_IN_SCOPE')", (name,))]
        return found

    def dynamic_sites(self, conn: sqlite3.Connection, name: str) -> list[tuple[int, int, int, str]]:
        """(file id, line, column, pattern) of the dynamic accesses (``getattr``, ``hasattr``, ``setattr``...)
        spelling ``name`` as a literal, in the index's order (``impact_dynamic``). Case-insensitive, as the ``LIKE``
        this replaces was; a literal equals the name, where ``LIKE``'s ``_`` also matched any character."""
        if self._dynamic is None:
            carried = self._carried_dynamic
            self._dynamic = DynamicSites.read(conn) if carried is None else carried.carried(conn, self._changed)
        return self._dynamic.spelling(name)

    def importers_of_name(self, conn: sqlite3.Connection, name: str) -> frozenset[int]:
        """Files importing something named, or aliased, ``name``."""
        if self._names is None or self._pending_names:
            self._read_names(conn)
        assert self._names is not None
        return self._names.get(name, frozenset())

    def _read_names(self, conn: sqlite3.Connection) -> None:
        """Every file's imported names, or only the files an edit changed since the carried index."""
        pending, self._pending_names = self._pending_names, []
        if self._names is None or self._names_of is None:
            bound_by = _bound_names(conn.execute("SELECT file_id, imported_name, alias FROM st_import"))
            self._names = _inverted(bound_by)
            self._names_of = bound_by
            return
        bound_by = {}
        for start in range(0, len(pending), _NAME_CHUNK):
            chunk = pending[start:start + _NAME_CHUNK]
            bound_by.update(_bound_names(conn.execute(
                f"SELECT file_id, imported_name, alias FROM st_import WHERE file_id IN ({','.join('?' * len(chunk))})",
                chunk)))
        for name, files in _inverted(bound_by).items():
            self._names[name] = self._names.get(name, frozenset()) | files
        self._names_of.update(bound_by)
