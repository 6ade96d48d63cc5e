"""Rust across files (§7.3.2 STRONG): the module tree of a crate, ``use`` paths and ``a::b::f`` paths.

A crate is the directory (conventionally ``src``) holding ``lib.rs`` or ``main.rs``; below it ``a.rs`` and
``a/mod.rs`` are ``crate::a``, ``a/b.rs`` is ``crate::a::b`` (the ``mod a;`` convention; ``#[path]`` is not
followed), and ``mod m { ... }`` bodies are modules too. Files under ``src/bin/`` are crates of their own and
are not linked; a package's ``tests/``, ``examples/`` and ``benches/`` files are crate roots (sharing the
module ``()``, so ``tests/util/mod.rs`` is ``util``), and every crate names a repository library by its
``Cargo.toml`` name (``use mylib::x``). A module's file-level ``use`` is a path through it (``pub use``
re-exports). A path is resolved from the module that writes it (an inline ``mod tests { }`` is one, with its
own ``use``s; ``a::b::C`` among a macro's tokens, ``assert_eq!(mylib::a::K, 1)``, is a path too): ``crate::``,
``self::``, ``super::``, a name the module's ``use`` binds, a child module, an item of the module, or else the one
item of that name a glob ``use a::*`` of the module brings (``use super::*`` in a test module); then segment by
segment through modules, and one last step from a type to an associated item (``Type::new``, an enum's
variant) when the crate declares that type name once and one ``impl``/enum gives it that member.
What it reaches must be one definition: two candidates (``#[cfg]`` variants) leave the reference alone.
``self.m`` and ``v.f`` link to ``T.m`` / ``T.f`` of this crate where the syntax spells the receiver's type
``T`` (:mod:`rusttypes`); ``v.len()`` only to a method and ``v.len`` (shape ``obj.$``) only to a field.

Incremental: every Rust file of a crate in which a Rust file changed is recomputed from its same-file tiers;
every Rust file when a library crate, a crate root or a ``Cargo.toml`` changed (other crates name libraries).
"""

from __future__ import annotations

import sqlite3
import tomllib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from codeplane.index.structural import rusttypes, schema
from codeplane.index.structural.facts import CERTAIN, PROVEN, STRONG, UNCERTAIN
from codeplane.index.structural.store import BatchEffect, chunked, marks

_ITEM_KINDS = frozenset({"function", "struct", "enum", "trait", "type", "constant", "static", "module", "macro"})
_TYPE_KINDS = frozenset({"struct", "enum", "trait", "type"})
_MAX_DEPTH = 6

Module = tuple[str, ...]


def crate_of(path: str, roots: set[str], flat: frozenset[str] = frozenset()) -> tuple[str, Module] | None:
    """(crate directory, module path) of a Rust file, given the directories holding ``lib.rs``/``main.rs``
    and the ``flat`` ones (a package's ``tests/``, ``examples/``, ``benches/``: each file there is a crate
    root, so they share the module ``()``; a ``tests/util/mod.rs`` is ``util`` of each of them)."""
    directory = path.rpartition("/")[0]
    probe = directory
    while True:
        if probe in roots or probe in flat:
            break
        if not probe:
            return None
        probe = probe.rpartition("/")[0]
    rest = path[len(probe):].lstrip("/")
    parts = rest[:-3].split("/") if rest.endswith(".rs") else []
    if not parts or (parts[0] == "bin" and probe not in flat):
        return None
    if probe in flat and len(parts) == 1:
        return probe, ()
    if probe not in flat and parts in (["lib"], ["main"]):
        return probe, ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return probe, tuple(parts)


def package_names(texts: dict[str, str]) -> dict[str, str]:
    """Crate name (``-`` as ``_``, ``[lib] name`` first) → package directory, from ``Cargo.toml`` texts."""
    out: dict[str, str] = {}
    for path, text in sorted(texts.items()):
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, UnicodeError):
            continue
        lib, package = data.get("lib"), data.get("package")
        name = lib.get("name") if isinstance(lib, dict) else None
        if not isinstance(name, str) and isinstance(package, dict):
            name = package.get("name")
        if isinstance(name, str):
            out.setdefault(name.replace("-", "_"), path.rpartition("/")[0])
    return out


class _Def(NamedTuple):
    uid: str
    kind: str
    lexical: tuple[str, ...]


class _Import(NamedTuple):
    name: str
    alias: str | None
    source: str | None


@dataclass
class _Crate:
    #: module -> name -> def uids (items, inline modules included)
    items: dict[Module, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    modules: set[Module] = field(default_factory=set)
    #: type name -> every item of a type kind with that name (to know the name is declared once)
    types: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    #: (type name, member) -> defs of impl items / enum variants
    members: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    #: (type name, member) -> the methods and fields ``value.member`` may denote
    values: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    #: the fields among them (``x.len`` is the field, ``x.len()`` the method)
    fields: set[str] = field(default_factory=set)
    #: file id -> module
    file_module: dict[int, Module] = field(default_factory=dict)
    #: module -> local name -> file-level ``use`` bindings (``pub use a::X`` makes ``m::X`` a path to ``a::X``)
    uses: dict[Module, dict[str, list[_Import]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    #: module -> the paths of its file-level glob ``use a::*``
    globs: dict[Module, list[str]] = field(default_factory=lambda: defaultdict(list))


def _load(conn: sqlite3.Connection, files: dict[int, tuple[str, Module]]) -> dict[str, _Crate]:
    crates: dict[str, _Crate] = defaultdict(_Crate)
    for file_id, (root, module) in files.items():
        crate = crates[root]
        crate.file_module[file_id] = module
        for i in range(len(module) + 1):
            crate.modules.add(module[:i])
    ids = sorted(files)
    for part in chunked(ids):
        defs: dict[int, list[_Def]] = defaultdict(list)
        for file_id, uid, kind, lexical in conn.execute(
                f"SELECT file_id, def_uid, kind, lexical_path FROM st_def WHERE file_id IN ({marks(len(part))})",
                part):
            defs[file_id].append(_Def(uid, kind, tuple(lexical.split("."))))
        for file_id, name, alias, source in conn.execute(
                "SELECT i.file_id, i.imported_name, i.alias, i.source_literal FROM st_import i "
                "JOIN st_scope s ON s.scope_id = i.scope_id "
                f"WHERE i.file_id IN ({marks(len(part))}) AND i.import_kind = 'rust_use' "
                "AND s.parent_scope_id IS NULL", part):
            root, module = files[file_id]
            local = alias or name
            if local not in ("*", "self", "_"):
                crates[root].uses[module][local].append(_Import(name, alias, source))
            elif local == "*" and source:
                crates[root].globs[module].append(source)
        for file_id, found in defs.items():
            root, module = files[file_id]
            crate = crates[root]
            inline = {d.lexical for d in found if d.kind == "module"}
            for d in found:
                *prefix, name = d.lexical
                if prefix and tuple(prefix) not in inline:
                    if d.kind in ("method", "enum_member", "constant", "function", "type"):
                        crate.members[(prefix[-1], name)].append(d.uid)  # ``impl T { fn m }``, ``E::V``
                    if d.kind in rusttypes.VALUE_KINDS:
                        crate.values[(prefix[-1], name)].append(d.uid)  # ``struct T { f }`` too
                    if d.kind == "field":
                        crate.fields.add(d.uid)
                    continue
                home = module + tuple(prefix)
                if d.kind in _ITEM_KINDS:
                    crate.items[home][name].append(d.uid)
                if d.kind == "module":
                    crate.modules.add((*home, name))
                if d.kind in _TYPE_KINDS:
                    crate.types[name].append(d.uid)
    return crates


_State = tuple[str, _Crate, Module, str | None]


class _Resolver:
    """Paths as written in one file: ``externs`` are the repository's library crates by name."""

    def __init__(self, crate: _Crate, module: Module, imports: list[_Import], externs: dict[str, _Crate]) -> None:
        self.crate = crate
        self.module = module
        self.externs = externs
        self.bound: dict[str, list[_Import]] = defaultdict(list)
        #: The paths of the module's glob imports (``use super::*``), looked in after its own names.
        self.globs: list[str] = []
        for imp in imports:
            local = imp.alias or imp.name
            if local not in ("*", "self", "_"):
                self.bound[local].append(imp)
            elif local == "*" and imp.source:
                self.globs.append(imp.source)

    @classmethod
    def of_module(cls, crate: _Crate, module: Module, externs: dict[str, _Crate]) -> _Resolver:
        """Paths as the file-level ``use``s of ``module`` resolve them (a re-export read from another module)."""
        resolver = cls(crate, module, [], externs)
        resolver.bound = crate.uses.get(module, defaultdict(list))
        resolver.globs = crate.globs.get(module, [])
        return resolver

    @staticmethod
    def _item(crate: _Crate, module: Module, name: str) -> str | None:
        found = crate.items.get(module, {}).get(name, [])
        return found[0] if len(found) == 1 else None

    def _start(self, head: str, depth: int) -> _State | None:
        """What the first segment of a path denotes: ("mod", crate, module, None) or ("item", crate, module, uid)."""
        crate = self.crate
        if head == "crate":
            return "mod", crate, (), None
        if head == "self":
            return "mod", crate, self.module, None
        if head == "super":
            return ("mod", crate, self.module[:-1], None) if self.module else None
        bound = self.bound.get(head, [])
        if len(bound) > 1:
            return None
        if bound:
            imp = bound[0]
            if not imp.source:
                return None
            segments = [imp.name] if imp.source == imp.name else [*imp.source.split("::"), imp.name]
            return self.walk(segments, depth + 1)
        if (*self.module, head) in crate.modules and self._item(crate, self.module, head) is None:
            return "mod", crate, (*self.module, head), None
        uid = self._item(crate, self.module, head)
        if uid is not None:
            return "item", crate, self.module, uid
        globbed = self._through_globs(head, depth)
        if globbed is not None:
            return globbed
        extern = self.externs.get(head)
        return ("mod", extern, (), None) if extern is not None and extern is not crate else None

    def walk(self, segments: list[str], depth: int = 0) -> _State | None:
        if depth > _MAX_DEPTH or not segments:
            return None
        state = self._start(segments[0], depth)
        for index, segment in enumerate(segments[1:], 1):
            if state is None:
                return None
            kind, crate, module, uid = state
            if kind == "mod":
                if segment == "super":
                    state = ("mod", crate, module[:-1], None) if module else None
                elif (*module, segment) in crate.modules and self._item(crate, module, segment) is None:
                    state = "mod", crate, (*module, segment), None
                else:
                    found = self._item(crate, module, segment)
                    state = ("item", crate, module, found) if found is not None else \
                        self._through_use(crate, module, segment, depth)
                    if found is not None and (*module, segment) in crate.modules:
                        state = "mod", crate, (*module, segment), found  # an inline ``mod`` is both
            else:
                type_name = segments[index - 1]
                if len(crate.types.get(type_name, [])) != 1 or uid not in crate.types[type_name]:
                    return None
                found_members = crate.members.get((type_name, segment), [])
                if len(found_members) != 1 or index != len(segments) - 1:
                    return None
                state = "item", crate, module, found_members[0]
        return state

    def _through_use(self, crate: _Crate, module: Module, name: str, depth: int) -> _State | None:
        """``m::X`` where module ``m`` has ``use a::X`` (a re-export) or ``use a::*``: resolved from ``m``."""
        entries = crate.uses.get(module, {}).get(name, [])
        inner = _Resolver.of_module(crate, module, self.externs)
        if not entries:
            return inner._through_globs(name, depth + 1)
        if len(entries) != 1 or not entries[0].source:
            return None
        imp = entries[0]
        segments = [imp.name] if imp.source == imp.name else [*(imp.source or "").split("::"), imp.name]
        return inner.walk(segments, depth + 1)

    def _through_globs(self, name: str, depth: int) -> _State | None:
        """``name`` that no item or ``use`` of the module binds, brought by one of its glob imports: what the one
        glob whose module has (or re-exports) that name makes of it. Rust's own names shadow glob ones, so this is
        the last place looked before another crate's name; two globs bringing it leave it alone (ambiguous)."""
        found: list[_State] = []
        for source in self.globs:
            if depth > _MAX_DEPTH:
                return None
            state = self.walk(source.split("::"), depth + 1)
            if state is None or state[0] != "mod":
                continue  # ``use Enum::*`` (variants) or a module the crate does not hold
            _, crate, module, _ = state
            if (*module, name) in crate.modules and self._item(crate, module, name) is None:
                found.append(("mod", crate, (*module, name), None))
            elif (uid := self._item(crate, module, name)) is not None:
                found.append(("item", crate, module, uid))
            elif (via := self._through_use(crate, module, name, depth + 1)) is not None:
                found.append(via)
        return found[0] if len(found) == 1 else None

    def target(self, segments: list[str]) -> str | None:
        found = self.walk(segments)
        return found[3] if found is not None else None


def _module_view(place: tuple[str, Module] | None, crates: dict[str, _Crate],
                 externs: dict[str, _Crate]) -> rusttypes.ModuleView | None:
    """Paths as the file-level ``use``s of a module resolve them, and the crates it can name."""
    if place is None or place[0] not in crates:
        return None
    crate = crates[place[0]]
    resolver = _Resolver.of_module(crate, place[1], externs)
    return resolver.target, [(c.types, c.values) for c in (crate, *externs.values())]


class _Ref(NamedTuple):
    ref_id: int
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
    #: Inside an inline ``mod { }`` not placed in the module tree: paths are not resolved there (``self.m`` is).
    nested: bool = False


def _cargo_texts(conn: sqlite3.Connection, effect: BatchEffect) -> dict[str, str]:
    """``Cargo.toml`` texts as of this batch (the batch's own markers are not in ``st_marker`` yet)."""
    texts = {str(p): str(t) for p, t in conn.execute(
        "SELECT path, text FROM st_marker WHERE (path = 'Cargo.toml' OR path LIKE '%/Cargo.toml') "
        "AND text IS NOT NULL")}
    for path, text in effect.markers.items():
        if path.rsplit("/", 1)[-1] == "Cargo.toml":
            if text is None:
                texts.pop(path, None)
            else:
                texts[path] = text
    return texts


class _FileModules:
    """The resolvers of one file's modules, its own and its inline ``mod m { }`` bodies (made when first asked): each
    resolves paths with its own ``use``s, items and child modules."""

    def __init__(self, crate: _Crate, module: Module, imports: dict[str, tuple[Module, _Import]],
                 externs: dict[str, _Crate]) -> None:
        self.crate, self.module, self.imports, self.externs = crate, module, imports, externs
        self._made: dict[Module, _Resolver] = {}

    def at(self, inner: Module) -> _Resolver:
        if inner not in self._made:
            self._made[inner] = _Resolver(self.crate, (*self.module, *inner),
                                          [i for m, i in self.imports.values() if m == inner], self.externs)
        return self._made[inner]


def _inline_modules(conn: sqlite3.Connection, part: Sequence[int]) -> dict[int, Module | None]:
    """Scope id → the inline ``mod m { }`` bodies around it, outermost first (``()`` at the file's own module;
    None inside one whose name the definitions do not give): a path there is resolved from that module, with its
    own ``use``s (``#[cfg(test)] mod tests { use crate::a::S; }``), not the file's."""
    q = marks(len(part))
    names = {(int(f), int(line), int(col)): str(name) for f, line, col, name in conn.execute(
        f"SELECT file_id, start_line, start_col, name FROM st_def WHERE file_id IN ({q}) AND kind = 'module'", part)}
    rows = {int(s): (p, str(kind), (int(f), int(line), int(col))) for s, p, kind, f, line, col in conn.execute(
        f"SELECT scope_id, parent_scope_id, kind, file_id, start_line, start_col FROM st_scope WHERE file_id IN ({q})",
        part)}
    out: dict[int, Module | None] = {}

    def path(scope: int | None) -> Module | None:
        if scope is None or scope not in rows:
            return ()
        if scope not in out:
            parent, kind, start = rows[scope]
            outer = path(parent)
            name = names.get(start) if kind == "module" else ""
            out[scope] = None if outer is None or name is None else (*outer, name) if name else outer
        return out[scope]

    for scope in rows:
        path(scope)
    return out


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute Rust cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    changed = [p for p in (*effect.upserted, *effect.deleted)
               if p.endswith(".rs") or p.rsplit("/", 1)[-1] == "Cargo.toml"]
    if not changed:
        return 0, set()
    paths = {int(i): str(p) for i, p in conn.execute("SELECT file_id, path FROM st_file WHERE language = 'rust'")}
    roots = {p.rpartition("/")[0] for p in paths.values() if p.rsplit("/", 1)[-1] in ("lib.rs", "main.rs")}
    packages = {r.rpartition("/")[0] for r in roots if r.rsplit("/", 1)[-1] == "src"}
    flat = frozenset(f"{p}/{d}" if p else d for p in packages for d in ("tests", "examples", "benches"))
    placed = {i: spot for i, p in paths.items() if (spot := crate_of(p, roots, flat)) is not None}
    present = set(paths.values())
    libs = {r for r in roots if f"{r}/lib.rs" in present}
    touched = {spot[0] for p in changed if (spot := crate_of(p, roots, flat)) is not None}
    if touched & libs or any(p.rsplit("/", 1)[-1] in ("lib.rs", "main.rs", "Cargo.toml") for p in changed):
        # A library is named from other crates (``use mylib::x``): every Rust file may read it.
        targets = set(paths)
    else:
        targets = {i for i, f in placed.items() if f[0] in touched}
    if not targets:
        return 0, set()
    crates = _load(conn, {i: f for i, f in placed.items() if i in targets or f[0] in libs})
    externs = {name: crates[f"{directory}/src" if directory else "src"]
               for name, directory in package_names(_cargo_texts(conn, effect)).items()
               if (f"{directory}/src" if directory else "src") in libs}
    updates: list[tuple[str, str | None, str, int]] = []
    moved: set[tuple[str, str]] = set()
    fields = rusttypes.FieldTypes(conn, lambda file_id: _module_view(placed.get(file_id), crates, externs))
    field_uids: set[str] = set().union(*(c.fields for c in crates.values()))
    for part in chunked(sorted(targets)):
        q = marks(len(part))
        inline = _inline_modules(conn, part)
        imports: dict[int, dict[str, tuple[Module, _Import]]] = defaultdict(dict)
        for file_id, uid, name, alias, source, scope in conn.execute(
                f"SELECT file_id, import_uid, imported_name, alias, source_literal, scope_id FROM st_import "
                f"WHERE file_id IN ({q}) AND import_kind = 'rust_use'", part):
            inner = inline.get(scope)
            if inner is not None:
                imports[file_id][uid] = (inner, _Import(name, alias, source))
        refs: dict[int, list[tuple[Module, _Ref]]] = defaultdict(list)
        for file_id, scope, *row in conn.execute(
                "SELECT file_id, scope_id, ref_id, token_text, start_line, start_col, end_col, is_member, "
                "receiver_shape, via_import_uid, local_tier, local_target_uid, ref_tier, target_uid, certainty "
                f"FROM st_ref WHERE file_id IN ({q}) AND (via_import_uid IS NOT NULL OR receiver_shape LIKE 'path:%' "
                "OR (is_member = 1 AND receiver_shape IN ('self.', 'obj.', 'expr.', 'self.$', 'obj.$', 'expr.$')) "
                "OR receiver_shape LIKE 'struct:%' OR receiver_shape IN ('mself.', 'mobj.') "
                "OR receiver_shape LIKE 'mpath:%') "
                "ORDER BY file_id, start_line, start_col", part):
            ref = _Ref(*row)
            inner = inline.get(scope)
            if inner is None:  # inside a module whose name is not known: only ``self.m`` is followed
                ref = ref._replace(nested=True) if ref.shape in ("self.", "self.$", "mself.") \
                    else ref._replace(shape=None, via=None)
            refs[file_id].append((inner or (), ref))
        typed = rusttypes.load(conn, part)
        for file_id in part:
            place = placed.get(file_id)
            modules = _FileModules(crates[place[0]], place[1], imports[file_id], externs) if place is not None \
                else None
            through: dict[str, str | None] = {}
            typed_at: dict[tuple[int, int], rusttypes.TypeMembers] = {}  # ``x.f`` ending there: ``f``'s type
            for inner, r in refs.get(file_id, []):
                found: str | None = None
                resolver = modules.at(inner) if modules is not None else None
                if resolver is None or place is None:
                    pass
                elif (r.member and (r.shape or "").startswith("path:")) or (r.shape or "").startswith("mpath:"):
                    found = resolver.target([*(r.shape or "").partition(":")[2].split("::"), r.token])
                elif r.member or r.shape in rusttypes.MACRO_SHAPES:
                    reachable = [crates[place[0]], *externs.values()]
                    found = rusttypes.member_target([(c.types, c.values) for c in reachable],
                                                    None if r.nested else resolver.target,
                                                    facts=typed.get(file_id), shape=r.shape, token=r.token,
                                                    line=r.line, col=r.col, typed_at=typed_at,
                                                    fields=field_uids)
                    chained = fields.of(found) if found is not None and r.member else None
                    if chained is not None:
                        typed_at[(r.line, r.end_col)] = chained
                elif not r.member and r.via in imports[file_id]:
                    if r.via not in through:
                        home, imp = imports[file_id][r.via]
                        segments = ([imp.name] if imp.source == imp.name
                                    else [*(imp.source or "").split("::"), imp.name])
                        through[r.via] = modules.at(home).target(segments) \
                            if modules is not None and imp.source and imp.name != "*" else None
                    found = through[r.via]
                new = ((STRONG, found, CERTAIN) if found is not None
                       else (r.local_tier, r.local_target, CERTAIN if r.local_tier == PROVEN else UNCERTAIN))
                if new != (r.tier, r.target, r.certainty):
                    updates.append((*new, r.ref_id))
                    if r.member and file_id not in fresh:
                        moved.add((r.token, r.shape or ""))
    schema.update_links(conn, updates)
    return len(updates), moved
