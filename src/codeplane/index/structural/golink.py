"""Go across files (§7.3.2 STRONG): a package is a directory, and imports name directories.

Go has no per-file module a generic import can resolve to, so Go is linked here rather than through module
keys and export surfaces:
- **Same package**: the files of one directory with the same ``package`` clause share one package block. A
  plain name that no scope of its own file binds (and that is not an import's name) denotes the package-level
  declaration of that name in a sibling file — when exactly one sibling declares it (build-tag variants such
  as ``x_linux.go``/``x_windows.go`` both declaring ``f`` stay unresolved). Non-test files never see
  ``_test.go`` declarations.
- **Imports**: ``import "mod/path/pkg"`` where ``module mod/path`` is a ``go.mod`` of the repository names
  the directory ``pkg`` below that ``go.mod``; the file refers to it by its alias or by the package clause
  of that directory's files. ``pkg.Name`` (a selector or a qualified type) then denotes the exported
  package-level ``Name`` there.
A ref whose own file binds its name (even ambiguously) is never touched: nothing falls through an
ambiguous scope.
- **Members by declared type**: methods and fields keep their type in their lexical path (``T.M``). ``x.M``
  denotes ``T.M`` when ``x`` is a method's receiver or a name whose declaration spells ``T`` (a parameter,
  ``var x T``, ``x := T{...}``/``&T{...}``/``new(T)``), and ``x.f.M`` follows the declared type of field
  ``f`` (:mod:`gotypes`, an embedded field's type being its own); ``T{Key: v}``'s key is ``T.Key``, and
  ``T{...}.M()`` / ``(&T{...}).M()`` / ``new(T).M()`` / ``x.(T).M()`` is ``T.M``. Other receivers (a call's
  result, ``range`` values) stay ANCHORED; a member ``T`` lacks is looked for in its embedded fields' types
  (promotion: the shallowest one, ambiguous when two are at that depth).

Incremental: Go files in directories where a Go file changed, plus the files importing those directories,
are recomputed (every Go file when a ``go.mod`` changed). Tiers are set from the same-file tier each time.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from codeplane.index.structural import schema
from codeplane.index.structural.facts import CERTAIN, PROVEN, STRONG, UNCERTAIN
from codeplane.index.structural.gotypes import DeclaredTypes, GoType, Named
from codeplane.index.structural.store import BatchEffect, chunked, marks

_PACKAGE_KINDS = ("function", "struct", "interface", "type", "variable", "constant")


def module_path(text: str) -> str | None:
    """The ``module`` directive of a ``go.mod`` text."""
    for line in text.splitlines():
        words = line.split("//", 1)[0].split()
        if len(words) == 2 and words[0] == "module":
            return words[1].strip('"`')
    return None


def _modules(conn: sqlite3.Connection, effect: BatchEffect) -> tuple[dict[str, str], bool]:
    """Directory → module path of every ``go.mod``, kept in ``st_state``; (modules, whether they changed)."""
    row = conn.execute("SELECT value FROM st_state WHERE key = 'go_modules'").fetchone()
    touched = {p: t for p, t in effect.markers.items() if p.rsplit("/", 1)[-1] == "go.mod"}
    if row is not None and not touched:
        return dict(json.loads(row[0])), False
    texts = {str(p): str(t) for p, t in conn.execute(
        "SELECT path, text FROM st_marker WHERE (path = 'go.mod' OR path LIKE '%/go.mod') AND text IS NOT NULL")}
    for path, text in touched.items():
        if text is None:
            texts.pop(path, None)
        else:
            texts[path] = text
    found: dict[str, str] = {}
    for path, text in sorted(texts.items()):
        name = module_path(text)
        if name:
            found[path.rpartition("/")[0]] = name
    old = dict(json.loads(row[0])) if row is not None else None
    conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES ('go_modules', ?)",
                 (json.dumps(sorted(found.items())),))
    return found, old != found


def import_dir(source: str, modules: dict[str, str]) -> str | None:
    """The repository directory an import path names (the longest matching module path wins)."""
    best: tuple[int, str] | None = None
    for directory, module in modules.items():
        if source == module or source.startswith(module + "/"):
            rest = source[len(module):].strip("/")
            target = "/".join(p for p in (directory, rest) if p)
            if best is None or len(module) > best[0]:
                best = (len(module), target)
    return best[1] if best is not None else None


def _import_paths(directory: str, modules: dict[str, str]) -> set[str]:
    out = set()
    for root, module in modules.items():
        if root == directory:
            out.add(module)
        elif not root or directory.startswith(root + "/"):
            out.add(f"{module}/{directory[len(root):].strip('/')}")
    return out


def _is_test(path: str) -> bool:
    return path.endswith("_test.go")


@dataclass
class _GoFile:
    file_id: int
    path: str
    package: str | None

    @property
    def directory(self) -> str:
        return self.path.rpartition("/")[0]


class _Packages:
    """Package-level declarations per (directory, package), read once per directory."""

    def __init__(self, conn: sqlite3.Connection, files: dict[int, _GoFile]) -> None:
        self._conn = conn
        self._by_dir: dict[str, list[_GoFile]] = defaultdict(list)
        for f in files.values():
            self._by_dir[f.directory].append(f)
        self._decls: dict[str, dict[tuple[str | None, str], list[tuple[str, bool]]]] = {}

    def decls(self, directory: str) -> dict[tuple[str | None, str], list[tuple[str, bool]]]:
        """(package, name or ``T.member``) → [(def_uid, declared in a _test.go file)]."""
        found = self._decls.get(directory)
        if found is None:
            found = defaultdict(list)
            members = {f.file_id: f for f in self._by_dir.get(directory, [])}
            ids = sorted(members)
            for part in chunked(ids):
                for file_id, name, lexical, kind, parent, uid in self._conn.execute(
                        "SELECT file_id, name, lexical_path, kind, parent_uid, def_uid FROM st_def "
                        f"WHERE file_id IN ({marks(len(part))}) AND kind IN ({marks(len(_PACKAGE_KINDS) + 2)})",
                        [*part, *_PACKAGE_KINDS, "method", "field"]):
                    f = members[file_id]
                    if kind in ("method", "field"):
                        if lexical.count(".") == 1:  # ``T.M`` / ``T.F``: keyed by the dotted path
                            found[(f.package, lexical)].append((uid, _is_test(f.path)))
                    elif parent is None and lexical == name and name not in {"_", "init"}:
                        found[(f.package, name)].append((uid, _is_test(f.path)))
            self._decls[directory] = found
        return found

    def package_name(self, directory: str) -> str | None:
        """The package clause the non-test files of ``directory`` agree on (``main`` packages are not importable)."""
        names = {f.package for f in self._by_dir.get(directory, []) if not _is_test(f.path)}
        name = next(iter(names)) if len(names) == 1 else None
        return name if name and name != "main" else None

    def lookup(self, directory: str, package: str | None, name: str, *, from_test: bool) -> str | None:
        """The single declaration ``name`` has in that package, as seen from a test file or not."""
        entries = [uid for uid, test in self.decls(directory).get((package, name), []) if from_test or not test]
        return entries[0] if len(entries) == 1 else None


def _files(conn: sqlite3.Connection) -> dict[int, _GoFile]:
    return {i: _GoFile(i, p, pkg) for i, p, pkg in conn.execute(
        "SELECT file_id, path, package FROM st_file WHERE language = 'go'")}


def _affected(conn: sqlite3.Connection, effect: BatchEffect, files: dict[int, _GoFile], modules: dict[str, str],
              *, everything: bool) -> set[int]:
    if everything:
        return set(files)
    dirs = {p.rpartition("/")[0] for p in (*effect.upserted, *effect.deleted) if p.endswith(".go")}
    if not dirs:
        return set()
    out = {f.file_id for f in files.values() if f.directory in dirs}
    sources = sorted({s for d in dirs for s in _import_paths(d, modules)})
    for start in range(0, len(sources), 400):
        part = sources[start:start + 400]
        out.update(i for (i,) in conn.execute(
            f"SELECT file_id FROM st_import WHERE import_kind = 'go_import' AND source_literal IN ({marks(len(part))})",
            part) if i in files)
    return out


class _Ref(NamedTuple):
    ref_id: int
    scope: int | None
    token: str
    line: int
    col: int
    end_col: int
    member: int
    shape: str | None
    via: str | None
    local_tier: str
    local_target: str | None
    tier: str
    target: str | None
    certainty: str
    bind: int | None


class _Receiver(NamedTuple):
    text: str
    #: No scope of the file binds it (so it can only be an import's package name).
    free: bool
    via: str | None
    bind: int | None


def _unbound(parents: dict[int, int | None], bound: set[tuple[int, str]], scope: int | None, name: str) -> bool:
    """Whether no scope from ``scope`` outwards binds ``name`` (ambiguously or not)."""
    while scope is not None:
        if (scope, name) in bound:
            return False
        scope = parents.get(scope)
    return True


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute Go cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    modules, modules_changed = _modules(conn, effect)
    if not modules_changed and not any(p.endswith(".go") for p in (*effect.upserted, *effect.deleted)):
        return 0, set()  # most batches: nothing Go to redo, not even the file list
    files = _files(conn)
    if not files:
        return 0, set()
    targets = _affected(conn, effect, files, modules, everything=modules_changed)
    packages = _Packages(conn, files)
    updates: list[tuple[str, str | None, str, int]] = []
    moved: set[tuple[str, str]] = set()
    named_of = _ImportNames(conn, files, modules, packages)
    types = DeclaredTypes(conn, lambda d, p, n, t: packages.lookup(d, p, n, from_test=t), packages.package_name,
                          named_of.context)
    for part in chunked(sorted(targets)):
        q = marks(len(part))
        parents: dict[int, int | None] = dict(conn.execute(
            f"SELECT scope_id, parent_scope_id FROM st_scope WHERE file_id IN ({q})", part))
        bound: set[tuple[int, str]] = set(conn.execute(
            f"SELECT scope_id, name FROM st_bind WHERE file_id IN ({q})", part))
        named_of.preload(part)
        refs: dict[int, list[_Ref]] = defaultdict(list)
        for file_id, *row in conn.execute(
                "SELECT file_id, ref_id, scope_id, token_text, start_line, start_col, end_col, is_member, "
                "receiver_shape, via_import_uid, local_tier, local_target_uid, ref_tier, target_uid, certainty, "
                f"bind_id FROM st_ref WHERE file_id IN ({q}) AND role = 'REFERENCE' "
                "ORDER BY file_id, start_line, start_col", part):
            refs[file_id].append(_Ref(*row))
        receiver_types = _receiver_types(conn, part)
        spelled = types.bindings(part)
        for file_id in part:
            f = files[file_id]
            test = _is_test(f.path)
            named = named_of.named(file_id)
            # A type is followed only into this file's own package or one it imports (see gotypes).
            reachable = {f.directory} | {d for choices in named.values() for _, d in choices if d is not None}
            rows = refs.get(file_id, [])
            receivers = {(r.line, r.end_col): _Receiver(r.token, r.local_tier != PROVEN and _unbound(
                parents, bound, r.scope, r.token), r.via, r.bind) for r in rows if not r.member}
            # Where a member ending at (line, column) is a field of a known type: ``s.f.M``'s ``s.f``.
            typed_at: dict[tuple[int, int], GoType] = {}
            local = _LocalTypes(f, named, types, receiver_types=receiver_types, spelled=spelled, receivers=receivers,
                                typed_at=typed_at)

            for r in rows:
                found: str | None = None
                owner: GoType | None = None
                if not r.member:
                    if r.local_tier != PROVEN and r.token not in named and _unbound(parents, bound, r.scope, r.token):
                        found = packages.lookup(f.directory, f.package, r.token, from_test=test)
                elif r.shape == "obj.":
                    receiver = receivers.get((r.line, r.col - 1))  # ``x.Name`` on one line
                    owner = local.of_bind(receiver.bind) if receiver is not None else None
                    if owner is None and receiver is not None and r.token[:1].isupper():
                        found = _through_import(receiver, r.token, named, packages)
                elif r.shape == "expr.":
                    owner = typed_at.get((r.line, r.col - 1))
                elif r.shape is not None and r.shape.startswith(("struct:", "lit:")) and r.shape[-1] != ":":
                    # ``T{Key: v}``'s key; ``T{...}.M()``
                    owner = types.resolve(r.shape.partition(":")[2], f.directory, f.package, test, named)
                if owner is not None and not owner.slice and owner.directory in reachable:
                    found = packages.lookup(owner.directory, owner.package, f"{owner.name}.{r.token}",
                                            from_test=test and owner.directory == f.directory)
                    if found is None:
                        found = _promoted(packages, types, owner, r.token, reachable=reachable, test=test,
                                          here=f.directory)
                    field = types.field_type(found) if found is not None else None
                    if field is not None and field.directory in reachable:
                        typed_at[(r.line, r.end_col)] = field
                new = ((STRONG, found, CERTAIN) if found is not None
                       else (r.local_tier, r.local_target, CERTAIN if r.local_tier == PROVEN else UNCERTAIN))
                if new != (r.tier, r.target, r.certainty):
                    updates.append((*new, r.ref_id))
                    if r.member and file_id not in fresh:
                        moved.add((r.token, r.shape or ""))
    schema.update_links(conn, updates)
    return len(updates), moved


class _LocalTypes:
    """The types of one file's local names (a method's receiver, or what a declaration spells) and of what ends at
    a position (``range xs``' operand: a local, or a field chain through ``typed_at``)."""

    def __init__(self, f: _GoFile, named: Named, types: DeclaredTypes, *, receiver_types: dict[int, str],
                 spelled: dict[int, str], receivers: dict[tuple[int, int], _Receiver],
                 typed_at: dict[tuple[int, int], GoType]) -> None:
        self.f, self.named, self.types = f, named, types
        self.receiver_types, self.spelled, self.receivers, self.typed_at = receiver_types, spelled, receivers, typed_at

    def of_bind(self, bind: int | None, depth: int = 0) -> GoType | None:
        if bind is None or depth > 4:
            return None
        if bind in self.receiver_types:  # ``func (t *T) M() { t.N }``
            return GoType(self.f.directory, self.f.package, self.receiver_types[bind])
        written = self.spelled.get(bind)
        if written is not None and written.startswith("range@"):  # ``for _, v := range xs``: an element of xs
            line, _, column = written[6:].partition(":")
            ranged = self.ending_at((int(line), int(column)), depth + 1)
            return ranged._replace(slice=False) if ranged is not None and ranged.slice else None
        f = self.f
        return self.types.resolve(written, f.directory, f.package, _is_test(f.path), self.named) if written else None

    def ending_at(self, position: tuple[int, int], depth: int) -> GoType | None:
        if position in self.typed_at:
            return self.typed_at[position]
        receiver = self.receivers.get(position)
        return self.of_bind(receiver.bind, depth) if receiver is not None else None


class _ImportNames:
    """Each Go file's imports by local name (``pkg`` → [(import uid, repository directory)]); a name two imports
    bind is nobody's. Read per pass for the files relinked, and on demand for a field's declaring file."""

    def __init__(self, conn: sqlite3.Connection, files: dict[int, _GoFile], modules: dict[str, str],
                 packages: _Packages) -> None:
        self._conn, self._files, self._modules, self._packages = conn, files, modules, packages
        self._named: dict[int, Named] = {}

    def preload(self, part: Sequence[int]) -> None:
        missing = [i for i in part if i not in self._named]
        imports: dict[int, list[tuple[str, str | None, str | None]]] = defaultdict(list)
        for start in range(0, len(missing), 500):
            chunk = missing[start:start + 500]
            for file_id, uid, alias, source in self._conn.execute(
                    f"SELECT file_id, import_uid, alias, source_literal FROM st_import WHERE file_id IN "
                    f"({marks(len(chunk))}) AND import_kind = 'go_import'", chunk):
                imports[file_id].append((uid, alias, source))
        for file_id in missing:
            named: Named = defaultdict(list)
            for uid, alias, source in imports.get(file_id, []):
                directory = import_dir(source, self._modules) if source else None
                local = alias if alias is not None else (
                    self._packages.package_name(directory) if directory is not None
                    else (source or "").rsplit("/", 1)[-1])
                if local not in (None, "", "_", "."):
                    named[str(local)].append((uid, directory))
            self._named[file_id] = named

    def named(self, file_id: int) -> Named:
        if file_id not in self._named:
            self.preload([file_id])
        return self._named[file_id]

    def context(self, file_id: int) -> tuple[str, str | None, bool, Named] | None:
        f = self._files.get(file_id)
        return (f.directory, f.package, _is_test(f.path), self.named(file_id)) if f is not None else None


def _receiver_types(conn: sqlite3.Connection, part: Sequence[int]) -> dict[int, str]:
    """Binding id of a method's receiver variable → the receiver's type name (``func (c *Cart) M``: c → Cart).
    The receiver is the one parameter declared between ``func`` and the method's name."""
    q = marks(len(part))
    methods: dict[int, list[tuple[tuple[int, int], tuple[int, int], str]]] = defaultdict(list)
    for file_id, lexical, line, col, name_line, name_col in conn.execute(
            "SELECT file_id, lexical_path, start_line, start_col, name_line, name_col FROM st_def "
            f"WHERE file_id IN ({q}) AND kind = 'method' AND parent_uid IS NULL", list(part)):
        if lexical.count(".") == 1:
            methods[file_id].append(((line, col), (name_line, name_col), lexical.split(".", 1)[0]))
    if not methods:
        return {}
    found: dict[tuple[int, tuple[int, int]], list[tuple[int, str]]] = defaultdict(list)
    for file_id, bind, line, col in conn.execute(
            f"SELECT file_id, bind_id, start_line, start_col FROM st_ref WHERE file_id IN ({q}) "
            "AND role = 'DEFINITION' AND bind_id IS NOT NULL", list(part)):
        for start, name_at, owner in methods.get(file_id, []):
            if start <= (line, col) < name_at:
                found[(file_id, start)].append((bind, owner))
    return {entries[0][0]: entries[0][1] for entries in found.values() if len(entries) == 1}


def _promoted(packages: _Packages, types: DeclaredTypes, owner: GoType, name: str, *, reachable: set[str],
              test: bool, here: str) -> str | None:
    """The member ``name`` that ``owner`` gets from its embedded fields: the one at the shallowest depth (two there
    is Go's ambiguous selector: nothing). Only through types of the packages the file reaches (see gotypes)."""
    level = [owner]
    for _ in range(4):
        embedded: list[GoType] = []
        for holder in level:
            prefix = f"{holder.name}."
            for (package, key), entries in packages.decls(holder.directory).items():
                if package != holder.package or not key.startswith(prefix) or len(entries) != 1:
                    continue
                field = types.field_type(entries[0][0])
                # An embedded field is named after its type (``struct { Sq }``, ``struct { *shape.Sq }``).
                if field is not None and not field.slice and field.name == key[len(prefix):]:
                    embedded.append(field)
        if any(e.directory not in reachable for e in embedded):
            return None
        found = {uid for e in embedded if (uid := packages.lookup(
            e.directory, e.package, f"{e.name}.{name}", from_test=test and e.directory == here)) is not None}
        if found:
            return found.pop() if len(found) == 1 else None
        level = embedded
    return None


def _through_import(receiver: _Receiver, name: str, named: dict[str, list[tuple[str, str | None]]],
                    packages: _Packages) -> str | None:
    """What ``pkg.Name`` denotes when ``pkg`` is the name of exactly one import of a repository package."""
    choices = named.get(receiver.text, [])
    if len(choices) != 1:
        return None
    uid, directory = choices[0]
    if directory is None or not (receiver.free or receiver.via == uid):
        return None  # shadowed by a local, or an import outside the repository
    package = packages.package_name(directory)
    if package is None:
        return None
    return packages.lookup(directory, package, name, from_test=False)
