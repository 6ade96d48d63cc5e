"""What the class-based cross-file linkers share (``javalink``, ``cslink``, ``phplink``): the repository's types
with their members and supertypes, member lookup through the part of a hierarchy the repository declares, and
the loop that rewrites the tiers of one language's references.

A member is found only where the syntax settles it (§7.3.2 STRONG, never a guess):
- a type's own declaration of the name wins (fields and nested types hide inherited ones);
- methods are grouped by their parameter types as written (``add(Item)``/``add(String)`` are overloads,
  a subclass's ``add(Item)`` overrides its base's): the call links when exactly one method remains;
- a supertype outside the repository whose members are not known here (``open``), or a known one that declares
  the name (``java.lang.Exception.getMessage``), leaves the member unsettled (``UNSETTLED``), as do two different
  answers through two supertypes.
A type name left unsettled only because such a supertype could declare a member type of that name keeps the one
candidate the rest of the lookup finds as an ANCHORED target (``ClassLinker.candidate``): probable, not proven.
"""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from codeplane.index.structural import schema
from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.facts import ANCHORED, CERTAIN, PROVEN, STRONG, UNCERTAIN
from codeplane.index.structural.store import chunked, marks

#: A lookup that cannot be settled from the repository's syntax (ambiguous, or open to outside types).
UNSETTLED = "?"
_MAX_DEPTH = 16
_ANNOTATION = re.compile(r"@[\w.]+(?:\s*\([^()]*\))?")
_GENERIC = re.compile(r"<[^<>]*>")


@dataclass
class TypeInfo:
    uid: str
    name: str
    kind: str
    file_id: int
    #: The language's full name of the type (``a.b.Outer.Inner``, ``A\\B\\C``).
    full: str
    #: The enclosing type's uid (a nested type), if any.
    outer: str | None
    span: tuple[int, int, int, int]
    #: Scope in which the type's name is bound (its header's references live there).
    scope: int | None
    #: name -> [(def uid, kind, parameter key of a method)]
    members: dict[str, list[tuple[str, str, str | None]]] = field(default_factory=lambda: defaultdict(list))
    #: Supertypes as written in the header: (written name, file, scope of the header reference).
    written: list[tuple[str, int, int | None]] = field(default_factory=list)


class Lookup(NamedTuple):
    """Resolved supertypes of one type: repository types, whether any is unknown, and known outside names."""

    supers: tuple[TypeInfo, ...]
    open: bool
    external: frozenset[str]


def parameter_key(display: str, name: str) -> str | None:
    """The parameter types of a method header as written, erased (``add(final List<X> a, int b)`` → ``List,int``);
    None when the header is cut off or does not show them."""
    text = _ANNOTATION.sub("", display)
    at = text.find(name + "(")
    if at < 0:
        at = text.find(name + " (")
    start = text.find("(", at) if at >= 0 else -1
    if start < 0:
        return None
    depth, end = 0, -1
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                end = index
                break
    if end < 0:
        return None
    inner = text[start + 1:end]
    while _GENERIC.search(inner):
        inner = _GENERIC.sub("", inner)
    types = []
    for param in (p.strip() for p in inner.split(",") if p.strip()):
        words = [w for w in param.replace("...", "[] ").split() if w not in {
            "final", "ref", "out", "in", "params", "this", "scoped", "readonly"}]
        if param.lstrip().startswith("$") or (words and words[-1].startswith("$")):
            words = words[:-1]  # PHP: ``Type $name``
        elif len(words) > 1:
            words = words[:-1]  # drop the parameter's name
        written = "".join(words).split("=")[0]
        types.append(written.rsplit(".", 1)[-1].rsplit("\\", 1)[-1])
    return ",".join(types)


class Hierarchy:
    """Types of one language by uid and full name; supertypes are resolved lazily through ``resolve_super``
    (written name, file, scope) → TypeInfo uid, ``UNSETTLED`` or None (outside the repository), and
    ``external(written, file)`` → member names of a known outside type, or None when it is not known."""

    def __init__(self, types: Iterable[TypeInfo], resolve_super: Callable[[str, int, int | None], str | None],
                 external: Callable[[str, int], frozenset[str] | None], implicit: Callable[[TypeInfo], str | None],
                 *, partial: bool = False, overloads: bool = True) -> None:
        self.types = {t.uid: t for t in types}
        self.partial = partial
        #: Without overloading (PHP) a type's own method is the one called, whatever its parents declare.
        self.overloads = overloads
        self.by_full: dict[str, list[TypeInfo]] = defaultdict(list)
        for t in self.types.values():
            self.by_full[t.full].append(t)
        self._resolve_super = resolve_super
        self._external = external
        self._implicit = implicit
        self._lookups: dict[str, Lookup] = {}
        self._busy: set[str] = set()
        #: Answers of one linking pass (the model does not change during it).
        self._members: dict[tuple[str, str, frozenset[str], bool], str | None] = {}

    def full(self, name: str) -> str | None:
        """The uid of the one type with this full name. Partial declarations (C#) are one type, named by the
        smallest uid of its parts (uids do not depend on the order files were indexed in)."""
        found = self.by_full.get(name, [])
        if not found:
            return None
        if self.partial:
            return min(t.uid for t in found)
        return found[0].uid if len(found) == 1 else UNSETTLED

    def parts(self, info: TypeInfo) -> list[TypeInfo]:
        """Every declaration of the type (C# ``partial``): they share members and supertypes."""
        found = self.by_full.get(info.full, [info])
        return found if info in found else [info]

    def lookup(self, info: TypeInfo) -> Lookup:
        known = self._lookups.get(info.uid)
        if known is not None:
            return known
        if info.uid in self._busy:  # a cycle in the supertypes: nothing to settle there
            return Lookup((), True, frozenset())
        self._busy.add(info.uid)
        supers: dict[str, TypeInfo] = {}
        is_open = False
        external: set[str] = set()
        written = [w for part in self.parts(info) for w in part.written]
        root = self._implicit(info)
        for name, file_id, scope in written:
            uid = self._resolve_super(name, file_id, scope)
            if uid is not None and uid != UNSETTLED and uid in self.types:
                supers.setdefault(uid, self.types[uid])
                continue
            names = self._external(name, file_id) if uid is None else None
            if names is None:
                is_open = True
            else:
                external |= names
        if root is not None:
            names = self._external(root, info.file_id)
            if names is None:
                is_open = True
            else:
                external |= names
        self._busy.discard(info.uid)
        found = Lookup(tuple(sorted(supers.values(), key=lambda t: t.uid)), is_open, frozenset(external))
        self._lookups[info.uid] = found
        return found

    def _own(self, info: TypeInfo, name: str, kinds: frozenset[str]) -> list[tuple[str, str, str | None]]:
        return [m for part in self.parts(info) for m in part.members.get(name, ()) if m[1] in kinds]

    def member(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool = True,
               depth: int = 0) -> str | None:
        """A field/type/constant ``name`` of ``info`` (own first, else inherited): uid, None or ``UNSETTLED``."""
        key = (info.uid, name, kinds, own)
        if key not in self._members:
            self._members[key] = self._member(info, name, kinds, own=own, depth=depth)
        return self._members[key]

    def _member(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return UNSETTLED
        if own:
            found = self._own(info, name, kinds)
            if found:
                return found[0][0] if len(found) == 1 else UNSETTLED
        inherited = self.lookup(info)
        if inherited.open or name in inherited.external:
            return UNSETTLED
        answers = {self.member(s, name, kinds, depth=depth + 1) for s in inherited.supers}
        answers.discard(None)
        if not answers:
            return None
        return answers.pop() if len(answers) == 1 else UNSETTLED

    def visible_methods(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool = True,
                        depth: int = 0) -> dict[str | None, set[str]] | None:
        """Methods ``name`` of ``info`` by parameter key, overridden ones removed; None when unsettled."""
        if depth > _MAX_DEPTH:
            return None
        found: dict[str | None, set[str]] = defaultdict(set)
        if own:
            for uid, _, key in self._own(info, name, kinds):
                found[key].add(uid)
        mine = set(found)
        inherited = self.lookup(info)
        if inherited.open or name in inherited.external:
            return None
        for sup in inherited.supers:
            theirs = self.visible_methods(sup, name, kinds, depth=depth + 1)
            if theirs is None:
                return None
            for key, uids in theirs.items():
                if key in mine:
                    continue  # overridden here
                if key is None or None in mine:
                    return None  # a header cut short: an override cannot be told from an overload
                found[key] |= uids  # two supertypes declaring one signature: two uids, so unsettled
        return found

    def method(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool = True) -> str | None:
        """The one method ``name`` a call on ``info`` can reach: uid, None (none declared) or ``UNSETTLED``."""
        if not self.overloads:
            mine = self._own(info, name, kinds) if own else []
            if mine:
                return mine[0][0] if len(mine) == 1 else UNSETTLED
            inherited = self.lookup(info)
            if inherited.open or name in inherited.external:
                return UNSETTLED
            return either(*(self.method(s, name, kinds) for s in inherited.supers))
        found = self.visible_methods(info, name, kinds, own=own)
        if found is None:
            return UNSETTLED
        if not found:
            return None
        if len(found) != 1:
            return UNSETTLED
        uids = next(iter(found.values()))
        return next(iter(uids)) if len(uids) == 1 else UNSETTLED


    def named(self, info: TypeInfo, name: str, data: frozenset[str], methods: frozenset[str], *,
              own: bool = True, depth: int = 0) -> str | None:
        """A member of a language where fields, properties and methods share one namespace (C#): the nearest
        type declaring ``name`` decides; its methods are resolved with their inherited overloads."""
        if depth > _MAX_DEPTH:
            return UNSETTLED
        if own:
            found = self._own(info, name, data | methods)
            if found:
                if all(kind in methods for _, kind, _ in found):
                    return self.method(info, name, methods)
                return found[0][0] if len(found) == 1 else UNSETTLED
        inherited = self.lookup(info)
        if inherited.open or name in inherited.external:
            return UNSETTLED
        return either(*(self.named(s, name, data, methods, depth=depth + 1) for s in inherited.supers))


def either(*answers: str | None) -> str | None:
    """One answer from lookups in separate namespaces (a field and a method of one name: unsettled)."""
    if UNSETTLED in answers:
        return UNSETTLED
    found = {a for a in answers if a is not None}
    if not found:
        return None
    return found.pop() if len(found) == 1 else UNSETTLED


class Ref(NamedTuple):
    ref_id: int
    scope: int | None
    token: str
    role: str
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


_REF_COLUMNS = ("ref_id, scope_id, token_text, role, start_line, start_col, end_col, is_member, receiver_shape, "
                "via_import_uid, local_tier, local_target_uid, ref_tier, target_uid, certainty, bind_id")


def file_refs(conn: sqlite3.Connection, file_ids: list[int]) -> dict[int, list[Ref]]:
    """Every reference row of the files, in source order (definitions included: they carry declared types)."""
    out: dict[int, list[Ref]] = defaultdict(list)
    for part in chunked(file_ids):
        for file_id, *row in conn.execute(
                f"SELECT file_id, {_REF_COLUMNS} FROM st_ref WHERE file_id IN ({marks(len(part))}) "
                "ORDER BY file_id, start_line, start_col", part):
            out[file_id].append(Ref(*row))
    return out


def type_defs(conn: sqlite3.Connection, language: str, type_kinds: frozenset[str],
              full_name: Callable[[int, str, str, str | None], str]) -> tuple[dict[str, TypeInfo], dict[int, list[tuple[
                  str, str, str | None, tuple[int, int, int, int]]]]]:
    """The language's types (with their members) and, per file, every def as (uid, kind, parent, span) in
    source order. ``full_name(file_id, lexical_path, name, parent_uid)`` spells a type's full name."""
    types: dict[str, TypeInfo] = {}
    members: list[tuple[str, str, str, str, str]] = []
    spans: dict[int, list[tuple[str, str, str | None, tuple[int, int, int, int]]]] = defaultdict(list)
    for (file_id, uid, kind, name, lexical, line, col, end_line, end_col, parent, scope,
         display) in conn.execute(
            "SELECT d.file_id, d.def_uid, d.kind, d.name, d.lexical_path, d.start_line, d.start_col, d.end_line, "
            "d.end_col, d.parent_uid, d.scope_id, d.display_name FROM st_def d JOIN st_file f "
            "ON f.file_id = d.file_id WHERE f.language = ? ORDER BY d.file_id, d.start_line, d.start_col", (language,)):
        span = (line, col, end_line, end_col)
        spans[file_id].append((uid, kind, parent, span))
        if kind in type_kinds:
            types[uid] = TypeInfo(uid, name, kind, file_id, full_name(file_id, lexical, name, parent), parent, span,
                                  scope)
        if parent is not None:
            members.append((parent, name, uid, kind, display))
    for parent, name, uid, kind, display in members:
        owner = types.get(parent)
        if owner is not None:
            key = parameter_key(display, name) if kind in ("method", "function", "constructor") else None
            owner.members[name].append((uid, kind, key))
    return types, spans


def innermost_def(spans: list[tuple[str, str, str | None, tuple[int, int, int, int]]],
                  line: int, col: int) -> tuple[str, str] | None:
    """(uid, kind) of the innermost definition of a file whose extent holds the position."""
    best: tuple[str, str] | None = None
    for uid, kind, _, (start_line, start_col, end_line, end_col) in spans:
        if (start_line, start_col) > (line, col):
            break
        if (line, col) < (end_line, end_col):
            best = (uid, kind)
    return best


def attach_supers(conn: sqlite3.Connection, language: str, types: dict[str, TypeInfo],
                  spans: dict[int, list[tuple[str, str, str | None, tuple[int, int, int, int]]]]) -> None:
    """Header references of shape ``super:<written>`` become the written supertypes of the innermost type whose
    extent holds them (an anonymous class's header sits inside a method, so it is nobody's)."""
    for file_id, scope, line, col, shape in conn.execute(
            "SELECT r.file_id, r.scope_id, r.start_line, r.start_col, r.receiver_shape FROM st_ref r JOIN st_file f "
            "ON f.file_id = r.file_id WHERE f.language = ? AND r.receiver_shape LIKE 'super:%' "
            "ORDER BY r.file_id, r.start_line, r.start_col", (language,)):
        holder = innermost_def(spans.get(file_id, []), line, col)
        if holder is not None and holder[0] in types:
            types[holder[0]].written.append((shape[6:], file_id, scope))


def body_types(conn: sqlite3.Connection, file_id: int, types: dict[str, TypeInfo],
               spans: list[tuple[str, str, str | None, tuple[int, int, int, int]]]) -> dict[int, str | None]:
    """Class-body scope → the type it belongs to (None: an anonymous class body)."""
    out: dict[int, str | None] = {}
    for scope_id, line, col in conn.execute(
            "SELECT scope_id, start_line, start_col FROM st_scope WHERE file_id = ? AND kind = 'class'", (file_id,)):
        holder = innermost_def(spans, line, col)
        out[scope_id] = holder[0] if holder is not None and holder[0] in types else None
    return out


class Updates:
    """Tier rewrites of one pass: STRONG where a linker found the definition, else the same-file tier (or, for a
    reference through an import that the generic surfaces resolve, their answer)."""

    def __init__(self, fresh: set[int]) -> None:
        self.rows: list[tuple[str, str | None, str, int]] = []
        self.moved: set[tuple[str, str]] = set()
        self._fresh = fresh

    def settle(self, file_id: int, ref: Ref, found: str | None, fallback: str | None = None, *,
               anchored: str | None = None) -> None:
        new: tuple[str, str | None, str]
        if found is not None and found != UNSETTLED:
            new = (STRONG, found, CERTAIN)
        elif fallback is not None:
            new = (STRONG, fallback, CERTAIN)
        elif anchored is not None and ref.local_tier != PROVEN:
            new = (ANCHORED, anchored, UNCERTAIN)  # the one candidate, not proven
        else:
            new = (ref.local_tier, ref.local_target, CERTAIN if ref.local_tier == PROVEN else UNCERTAIN)
        if new != (ref.tier, ref.target, ref.certainty):
            self.rows.append((*new, ref.ref_id))
            if ref.member and file_id not in self._fresh:
                self.moved.add((ref.token, ref.shape or ""))

    def write(self, conn: sqlite3.Connection) -> tuple[int, set[tuple[str, str]]]:
        schema.update_links(conn, self.rows)
        return len(self.rows), self.moved


class Bind(NamedTuple):
    """A same-file binding of a name in a scope (``st_bind``)."""

    kind: str
    uid: str | None
    single: bool
    reason: str


class FileFacts:
    """Scopes and bindings of files, read on demand (declared types are resolved where they are written)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._scopes: dict[int, dict[int, tuple[int | None, str]]] = {}
        self._binds: dict[int, dict[tuple[int, str], Bind]] = {}

    def scopes(self, file_id: int) -> dict[int, tuple[int | None, str]]:
        found = self._scopes.get(file_id)
        if found is None:
            found = {s: (p, k) for s, p, k in self._conn.execute(
                "SELECT scope_id, parent_scope_id, kind FROM st_scope WHERE file_id = ?", (file_id,))}
            self._scopes[file_id] = found
        return found

    def binds(self, file_id: int) -> dict[tuple[int, str], Bind]:
        found = self._binds.get(file_id)
        if found is None:
            found = {(s, n): Bind(k, u, c == CERTAIN, r) for s, n, k, u, c, r in self._conn.execute(
                "SELECT scope_id, name, target_kind, target_uid, certainty, reason_code FROM st_bind WHERE file_id = ?",
                (file_id,))}
            self._binds[file_id] = found
        return found

    def chain(self, file_id: int, scope: int | None) -> list[tuple[int, str]]:
        """(scope, kind) from ``scope`` outwards to the file scope."""
        scopes = self.scopes(file_id)
        out: list[tuple[int, str]] = []
        while scope is not None and scope in scopes and len(out) < 256:
            parent, kind = scopes[scope]
            out.append((scope, kind))
            scope = parent
        return out


class DeclaredTypes:
    """The declared class of a variable, field or parameter, from the ``type:<written>`` shape its definition
    carries, resolved where it is written by ``resolve(written, file, scope)``. The definition sites of the
    language's defs are read in one pass: ``st_ref.target_uid`` has no index while a cold build links."""

    def __init__(self, conn: sqlite3.Connection, resolve: Callable[[str, int, int | None], str | None],
                 language: str) -> None:
        self._resolve = resolve
        self._of_def: dict[str, str | None] = {}
        self._sites: dict[str, list[tuple[int, int | None, str | None]]] = defaultdict(list)
        for uid, file_id, scope, shape in conn.execute(
                "SELECT r.target_uid, r.file_id, r.scope_id, r.receiver_shape FROM st_ref r JOIN st_file f "
                "ON f.file_id = r.file_id WHERE f.language = ? AND r.role = 'DEFINITION' "
                "AND r.target_uid IS NOT NULL", (language,)):
            self._sites[uid].append((file_id, scope, shape))

    def of_def(self, uid: str) -> str | None:
        """Declared type uid of a field/property definition (every definition site agreeing), else None."""
        if uid not in self._of_def:
            self._of_def[uid] = self._agree(self._sites.get(uid, []))
        return self._of_def[uid]

    def of_sites(self, file_id: int, sites: list[Ref]) -> str | None:
        return self._agree([(file_id, r.scope, r.shape) for r in sites])

    def _agree(self, sites: list[tuple[int, int | None, str | None]]) -> str | None:
        if not sites or any(not (shape or "").startswith("type:") for _, _, shape in sites):
            return None
        found = {self._resolve(str(shape)[5:], file_id, scope) for file_id, scope, shape in sites}
        if len(found) != 1:
            return None
        uid = found.pop()
        return uid if uid != UNSETTLED else None


#: What a receiver evaluates to: ("type" | "value" | "package", a type uid or a package/namespace name).
Value = tuple[str, str]


class ClassLinker:
    """The pass over one file's references shared by the class-based linkers. A language supplies ``h``,
    ``declared``, its package (or namespace) names and the top-level types in each, and three hooks: names in
    import statements, plain names and members. ``gap`` is the width of the member operator (``.``, ``->``)."""

    gap = 1
    h: Hierarchy
    declared: DeclaredTypes
    packages: set[str]
    top: dict[tuple[str, str], list[str]]

    def statements(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> set[int]:
        """Settle the references inside import statements; returns their ids."""
        return set()

    def plain(self, file_id: int, ref: Ref) -> str | None:
        raise NotImplementedError

    def member(self, file_id: int, ref: Ref, receiver: Value | None) -> str | None:
        raise NotImplementedError

    def candidate(self, file_id: int, ref: Ref) -> str | None:
        """For a name left unsettled: the type it denotes unless a supertype from outside the repository declares
        a member type of that name (kept ANCHORED with this target; never STRONG)."""
        return None

    def link_file(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> None:
        sites: dict[int, list[Ref]] = defaultdict(list)
        for r in refs:
            if r.role == "DEFINITION" and r.bind is not None and not r.member:
                sites[r.bind].append(r)
        values: dict[tuple[int, int], Value] = {}
        done = self.statements(file_id, refs, chaser, updates)
        for r in refs:
            if r.role == "DEFINITION" or r.ref_id in done:
                continue
            if not r.member and r.local_tier == PROVEN and r.via is None:
                declared = self.declared.of_sites(file_id, sites[r.bind]) if r.bind in sites else \
                    self.declared.of_def(r.local_target) if r.local_target else None
                if declared is not None:
                    values[(r.line, r.end_col)] = ("value", declared)
                continue
            receiver = values.get((r.line, r.col - self.gap)) if r.member else None
            found = self.member(file_id, r, receiver) if r.member else self.plain(file_id, r)
            if found is not None and found != UNSETTLED:
                if found in self.h.types:
                    values[(r.line, r.end_col)] = ("type", found)
                else:
                    declared = self.declared.of_def(found)
                    if declared is not None:
                        values[(r.line, r.end_col)] = ("value", declared)
            elif found is None:
                package = f"{receiver[1]}.{r.token}" if receiver is not None and receiver[0] == "package" else \
                    r.token if not r.member else None
                if package is not None and any(p == package or p.startswith(package + ".") for p in self.packages):
                    values[(r.line, r.end_col)] = ("package", package)
            anchored = self.candidate(file_id, r) if found == UNSETTLED else None
            updates.settle(file_id, r, found, chaser.via(r.via) if r.via else None, anchored=anchored)

    def in_package(self, package: str, name: str) -> str | None:
        """``pkg.Name`` written out: the one top-level type ``Name`` of that package or namespace."""
        top = self.top.get((package, name), [])
        return (top[0] if len(top) == 1 else UNSETTLED) if top else None
