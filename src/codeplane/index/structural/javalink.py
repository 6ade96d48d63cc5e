"""Java across files (§7.3.2 STRONG): packages, imports and members through the hierarchy the repository declares.

A type's full name is its ``package`` plus its nesting (``a.b.Outer.Inner``). A simple name is looked up as
javac does, from the innermost scope out, and stops at the first scope that could answer:
- a local variable, local class or type parameter of a block or method (never resolved across files);
- a class body: the class's own and inherited fields and member types (``classhierarchy.Hierarchy``: a supertype
  outside the repository leaves the name unsettled unless it is one of the few JDK types whose members are
  listed below); an anonymous class body settles nothing;
- the file: a single-type import (``import a.b.C``) or static import (``import static a.b.C.m``), a type of
  the file, the types of the same package (one declaration in the repository), then on-demand imports
  (``a.b.*``, ``static a.b.C.*``) when exactly one of them offers the name.
Members: ``this.m``/``super.m``, ``m()`` (the enclosing classes, then static imports), ``Type.m``, ``((C) x).m``,
method references (``Type::m``, ``x::m``, ``this::m``) and ``x.m``
where ``x`` is declared with a class type (``Cart c``, ``var c = new Cart()``; the ``type:`` shape of its
definition), with a type variable bounded by one (``T x`` in ``<T extends Priced>``: the bound's members) or is
a field with a declared type — linked when exactly one field or one method (overloads
counted by their written parameter types, overrides removed) answers. A type name that only a supertype from
outside could shadow (a class implementing Swing listeners naming ``Cart``) stays ANCHORED with the one
candidate as its target. Calls on call results, unbounded type
variables, arrays and lambdas' parameters stay ANCHORED; so do overloaded methods and names a JDK supertype
might supply.
The name of a method declared in an anonymous class (``new Priced() { public int price() {...} }``) is linked to
the method of the type it extends with the same parameter types, as a C++ member defined apart is to its
declaration: the syntax settles that it overrides it (a rename of one is a rename of the other).

Incremental: the files a batch can affect (``classdeps``: the changed files and every file spelling a name they
declare, or the whole language when a hierarchy or package changed) are recomputed from their same-file tiers.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from codeplane.index.structural import classdeps
from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.classfacts import (
    DeclaredTypes,
    FileFacts,
    Ref,
    attach_supers,
    body_types,
    file_refs,
    innermost_def,
    type_defs,
)
from codeplane.index.structural.classhierarchy import UNSETTLED, Hierarchy, TypeInfo, either, parameter_key
from codeplane.index.structural.classlink import ClassLinker, Updates, Value
from codeplane.index.structural.facts import TARGET_DEF, TARGET_IMPORT
from codeplane.index.structural.store import BatchEffect

_TYPES = frozenset({"class", "interface", "enum", "record"})
_FIELDS = frozenset({"field", "constant"})
_METHODS = frozenset({"method"})
_VALUES = _FIELDS | _TYPES
_STATIC = _FIELDS | _TYPES | _METHODS

_THROWABLE = ("addSuppressed fillInStackTrace getCause getLocalizedMessage getMessage getStackTrace getSuppressed "
              "initCause printStackTrace serialVersionUID setCause setStackTrace")
#: Members (declared or inherited, non-private) of JDK types often extended, as javac 17 reports them.
_JDK_TEXT_OBJECT = "clone equals finalize getClass hashCode notify notifyAll toString wait"
_JDK_TEXT = {
    "java.lang.Object": "",
    "java.lang.Enum": "EnumDesc compareTo describeConstable getDeclaringClass name ordinal valueOf values",
    "java.lang.Record": "",
    "java.lang.Throwable": _THROWABLE,
    "java.lang.Exception": _THROWABLE,
    "java.lang.RuntimeException": _THROWABLE,
    "java.lang.Error": _THROWABLE,
    "java.lang.IllegalArgumentException": _THROWABLE,
    "java.lang.IllegalStateException": _THROWABLE,
    "java.lang.UnsupportedOperationException": _THROWABLE,
    "java.io.IOException": _THROWABLE,
    "java.lang.Comparable": "compareTo",
    "java.lang.Runnable": "run",
    "java.lang.Cloneable": "",
    "java.lang.AutoCloseable": "close",
    "java.io.Closeable": "close",
    "java.lang.Iterable": "forEach iterator spliterator",
    "java.io.Serializable": "",
}
_OBJECT = frozenset(_JDK_TEXT_OBJECT.split())
JDK_MEMBERS = {name: frozenset(text.split()) | _OBJECT for name, text in _JDK_TEXT.items()}
_JAVA_LANG = {name.rsplit(".", 1)[1]: name for name in JDK_MEMBERS if name.startswith("java.lang.")}

class _Import:
    def __init__(self, uid: str, kind: str, source: str, span: tuple[int, int, int, int]) -> None:
        self.uid, self.kind, self.source, self.span = uid, kind, source, span

    def holds(self, ref: Ref) -> bool:
        line, col, end_line, end_col = self.span
        return (line, col) <= (ref.line, ref.col) and (ref.line, ref.end_col) <= (end_line, end_col)


class JavaNames(ClassLinker):
    """The repository's Java types and how a name written in one file resolves."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.package: dict[int, str] = {int(i): str(p or "") for i, p in conn.execute(
            "SELECT file_id, package FROM st_file WHERE language = 'java'")}
        types, self.spans = type_defs(conn, "java", _TYPES, self._full_name)
        attach_supers(conn, "java", types, self.spans)
        self.packages = set(self.package.values())
        self.top: dict[tuple[str, str], list[str]] = defaultdict(list)
        for t in types.values():
            if t.outer is None:
                self.top[(self.package.get(t.file_id, ""), t.name)].append(t.uid)
        self.imports: dict[int, list[_Import]] = defaultdict(list)
        for file_id, uid, kind, source, *span in conn.execute(
                "SELECT i.file_id, i.import_uid, i.import_kind, i.source_literal, i.start_line, i.start_col, "
                "i.end_line, i.end_col FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                "WHERE f.language = 'java' AND i.source_literal IS NOT NULL ORDER BY i.start_line"):
            self.imports[file_id].append(_Import(uid, kind, source, (span[0], span[1], span[2], span[3])))
        self.by_uid = {i.uid: i for found in self.imports.values() for i in found}
        self.facts = FileFacts(conn)
        self.h = Hierarchy(types.values(), self.type_text, self._external, self._implicit)
        self.declared = DeclaredTypes(conn, self._value_type, "java")
        self._bodies: dict[int, dict[int, str | None]] = {}
        self._simple: dict[tuple[int, int | None, str, frozenset[str], bool], str | None] = {}
        self._texts: dict[tuple[str, int, int | None], str | None] = {}
        self._params: dict[int, list[tuple[str, str, int | None, tuple[int, int, int, int]]]] = {}
        self._starts: dict[int, dict[int, tuple[int, int]]] = {}

    def _full_name(self, file_id: int, lexical: str, name: str, parent: str | None) -> str:
        package = self.package.get(file_id, "")
        return f"{package}.{lexical}" if package else lexical

    @staticmethod
    def _implicit(info: TypeInfo) -> str:
        return {"enum": "java.lang.Enum", "record": "java.lang.Record"}.get(info.kind, "java.lang.Object")

    def _external(self, written: str, file_id: int) -> frozenset[str] | None:
        """Members of a JDK type named ``written`` in ``file_id`` when it is one of the listed ones."""
        if "." in written:
            return JDK_MEMBERS.get(written)
        imports = self.imports.get(file_id, [])
        for imp in imports:
            if imp.kind == "java_import" and imp.source.rsplit(".", 1)[-1] == written:
                return JDK_MEMBERS.get(imp.source)
        # ``import java.io.*`` then ``implements Serializable``: an on-demand import or java.lang offers it
        offered = {f"{imp.source[:-2]}.{written}" for imp in imports if imp.kind == "java_import"
                   and imp.source.endswith(".*")} | ({_JAVA_LANG[written]} if written in _JAVA_LANG else set())
        known = [JDK_MEMBERS[f] for f in offered if f in JDK_MEMBERS]
        return known[0] if len(known) == 1 else None

    def body(self, file_id: int, scope: int) -> str | None:
        bodies = self._bodies.get(file_id)
        if bodies is None:
            bodies = body_types(self.conn, file_id, self.h.types, self.spans.get(file_id, []))
            self._bodies[file_id] = bodies
        return bodies.get(scope)

    def enclosing(self, file_id: int, scope: int | None) -> list[str | None]:
        """Types of the class bodies around ``scope``, innermost first (None: an anonymous class)."""
        return [self.body(file_id, s) for s, kind in self.facts.chain(file_id, scope) if kind == "class"]

    # -- names -------------------------------------------------------------------------------------------
    def simple(self, file_id: int, scope: int | None, name: str, kinds: frozenset[str], *,
               tentative: bool = False) -> str | None:
        """What a simple name of ``kinds`` denotes at ``scope``: a uid, None (no repository definition) or
        ``UNSETTLED``. ``tentative`` passes over class bodies whose inherited members cannot be settled (the
        answer is then only the one candidate the rest of the syntax leaves)."""
        key = (file_id, scope, name, kinds, tentative)
        if key not in self._simple:
            self._simple[key] = self._lookup(file_id, scope, name, kinds, tentative=tentative)
        return self._simple[key]

    def _lookup(self, file_id: int, scope: int | None, name: str, kinds: frozenset[str], *,
                tentative: bool) -> str | None:
        binds = self.facts.binds(file_id)
        for s, kind in self.facts.chain(file_id, scope):
            if kind == "class":
                owner = self.body(file_id, s)
                if owner is None:
                    if tentative:
                        continue
                    return UNSETTLED  # an anonymous class inherits from a type this file does not declare
                found = self.h.member(self.h.types[owner], name, kinds)
                if found is not None and not (tentative and found == UNSETTLED):
                    return found
            elif kind == "file":
                return self._file_level(file_id, s, name, kinds)
            elif (s, name) in binds:
                bound = binds[(s, name)]
                local = bound.uid if bound.kind == TARGET_DEF and bound.single else None
                return local if local in self.h.types and self.h.types[local].kind in kinds else UNSETTLED
        return None

    def _file_level(self, file_id: int, scope: int, name: str, kinds: frozenset[str]) -> str | None:
        bound = self.facts.binds(file_id).get((scope, name))
        if bound is not None:
            uid = bound.uid
            if not bound.single or uid is None:
                return UNSETTLED
            if bound.kind == TARGET_DEF:
                return uid if uid in self.h.types and kinds & _TYPES else UNSETTLED
            if bound.kind == TARGET_IMPORT and uid in self.by_uid:
                return self._through_import(self.by_uid[uid], kinds)
            return UNSETTLED  # a type parameter of a top-level class
        if kinds & _TYPES:
            same = self.top.get((self.package.get(file_id, ""), name), [])
            if same:
                return same[0] if len(same) == 1 else UNSETTLED
        answers: set[str] = set()
        for imp in self.imports.get(file_id, []):
            if not imp.source.endswith(".*"):
                continue
            prefix = imp.source[:-2]
            if imp.kind == "java_import_static":
                owner = self.h.full(prefix)
                found = self._member(owner, name, kinds) if owner not in (None, UNSETTLED) else None
            elif prefix in self.packages and kinds & _TYPES:
                top = self.top.get((prefix, name), [])
                found = (top[0] if len(top) == 1 else UNSETTLED) if top else None
            else:
                owner = self.h.full(prefix)
                found = self.h.member(self.h.types[owner], name, _TYPES & kinds) \
                    if owner not in (None, UNSETTLED) and kinds & _TYPES else None
            if found is not None:
                answers.add(found)
        if not answers:
            return None
        return answers.pop() if len(answers) == 1 else UNSETTLED

    def _through_import(self, imp: _Import, kinds: frozenset[str]) -> str | None:
        if imp.kind == "java_import":
            found = self.h.full(imp.source)
            return found if kinds & _TYPES or found in (None, UNSETTLED) else UNSETTLED
        owner_name, _, member = imp.source.rpartition(".")
        owner = self.h.full(owner_name)
        return self._member(owner, member, kinds) if owner not in (None, UNSETTLED) else None

    def _member(self, owner: str | None, name: str, kinds: frozenset[str]) -> str | None:
        if owner is None or owner == UNSETTLED:
            return owner
        info = self.h.types[owner]
        return either(self.h.member(info, name, kinds - _METHODS) if kinds - _METHODS else None,
                      self.h.method(info, name, _METHODS) if kinds & _METHODS else None)

    def type_text(self, written: str, file_id: int, scope: int | None) -> str | None:
        """The type a written (possibly dotted) type name denotes where it is written."""
        key = (written, file_id, scope)
        if key not in self._texts:
            self._texts[key] = self._type_text(written, file_id, scope)
        return self._texts[key]

    def _type_text(self, written: str, file_id: int, scope: int | None) -> str | None:
        parts = written.split(".")
        found = self.simple(file_id, scope, parts[0], _TYPES)
        rest = parts[1:]
        if found is None and rest:
            for cut in range(len(parts) - 1, 0, -1):
                package = ".".join(parts[:cut])
                if package in self.packages:
                    top = self.top.get((package, parts[cut]), [])
                    found = (top[0] if len(top) == 1 else UNSETTLED) if top else None
                    rest = parts[cut + 1:]
                    break
        for segment in rest:
            if found is None or found == UNSETTLED:
                return found
            found = self.h.member(self.h.types[found], segment, _TYPES)
        return found

    # -- references of one file --------------------------------------------------------------------------
    def statements(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> set[int]:
        imports = self.imports.get(file_id, [])
        if not imports:
            return set()
        inside: dict[str, list[Ref]] = defaultdict(list)
        last = imports[-1].span[2]
        for r in refs:
            if r.line > last:
                break
            holder = next((i for i in imports if i.holds(r)), None)
            if holder is not None:
                inside[holder.uid].append(r)
        for uid, found in inside.items():
            self._import_statement(file_id, self.by_uid[uid], found, chaser, updates)
        return {r.ref_id for found in inside.values() for r in found}

    def plain(self, file_id: int, ref: Ref) -> str | None:
        if ref.shape is None:
            return self.simple(file_id, ref.scope, ref.token, _VALUES)
        if _type_position(ref.shape):
            return self.simple(file_id, ref.scope, ref.token, _TYPES)
        return None  # a label, an annotation key, a type parameter

    def candidate(self, file_id: int, ref: Ref) -> str | None:
        if ref.member or not (ref.shape is None or _type_position(ref.shape)):
            return None
        found = self.simple(file_id, ref.scope, ref.token, _TYPES, tentative=True)
        return found if found in self.h.types else None

    def operator_width(self, ref: Ref) -> int:
        return 2 if (ref.shape or "").endswith("::") else 1

    def member(self, file_id: int, ref: Ref, receiver: Value | None) -> str | None:
        shape = ref.shape or ""
        if shape.endswith("::"):  # a method reference names a method, as a call does: ``this::m`` is ``this.m()``
            shape = shape[:-2] + "."
        data = shape.endswith("$")  # a field or nested type, not a call
        if shape.rstrip("$") in ("this.", "super."):
            around = self.enclosing(file_id, ref.scope)
            if not around or around[0] is None:
                return None
            info = self.h.types[around[0]]
            own = not shape.startswith("super.")
            return self.h.member(info, ref.token, _FIELDS, own=own) if data else \
                self.h.method(info, ref.token, _METHODS, own=own)
        if shape == "bare.":
            return self._bare_call(file_id, ref)
        if shape.startswith("cast:"):  # ``((Cart) x).m()``: the cast's class, resolved where it is written
            cast = self.type_text(shape[5:].rstrip("$").removesuffix("."), file_id, ref.scope)
            receiver = ("value", cast) if cast is not None and cast != UNSETTLED else None
        if receiver is None:
            return None
        kind, what = receiver
        if kind == "package":
            return self.in_package(what, ref.token)
        if not data:
            return self._member(what, ref.token, _METHODS)
        return self._member(what, ref.token, _FIELDS | _TYPES if kind == "type" else _FIELDS)

    def _bare_call(self, file_id: int, r: Ref) -> str | None:
        """``m()``: the innermost enclosing class with a method ``m`` (declared or inherited), else a static import."""
        for owner in self.enclosing(file_id, r.scope):
            if owner is None:
                return UNSETTLED
            found = self.h.method(self.h.types[owner], r.token, _METHODS)
            if found is not None:
                return found
        answers = set()
        for imp in self.imports.get(file_id, []):
            if imp.kind != "java_import_static":
                continue
            owner_name, _, member = imp.source.rpartition(".")
            if member in (r.token, "*"):
                found = self._member(self.h.full(owner_name), r.token, _METHODS)
                if found is not None:
                    answers.add(found)
        return answers.pop() if len(answers) == 1 else UNSETTLED if answers else None

    # -- type variables and anonymous classes --------------------------------------------------------------
    def _value_type(self, written: str, file_id: int, scope: int | None) -> str | None:
        """The class whose members a value declared as ``written`` has: the type it names, or the bound of the
        type variable it names (``T`` of ``<T extends Priced>``), which only a value's type may stand for."""
        found = self.type_text(written, file_id, scope)
        if found is not None or "." in written:
            return found
        bound = self._bound(file_id, scope, written)
        return self.type_text(bound[0], file_id, bound[1]) if bound is not None and bound[0] else None

    def _bound(self, file_id: int, scope: int | None, name: str) -> tuple[str, int | None] | None:
        """(written bound, its scope) of the innermost type parameter ``name`` of a class or method around
        ``scope``; an unbounded one has the bound ``""`` (its members are Object's)."""
        params = self._params.get(file_id)
        if params is None:
            spans = self.spans.get(file_id, [])
            params = []
            for param_scope, line, col, token, shape in self.conn.execute(
                    "SELECT scope_id, start_line, start_col, token_text, receiver_shape FROM st_ref "
                    "WHERE file_id = ? AND receiver_shape LIKE 'bound:%'", (file_id,)):
                holder = innermost_def(spans, line, col)
                span = next((sp for uid, _, _, sp in spans if holder is not None and uid == holder[0]), None)
                if span is not None:
                    params.append((token, str(shape)[6:], param_scope, span))
            self._params[file_id] = params
        start = self._scope_starts(file_id).get(scope) if scope is not None else None
        if start is None:
            return None
        around = [(span, bound, param_scope) for token, bound, param_scope, span in params if token == name
                  and span[:2] <= start < span[2:]]
        if not around:
            return None
        _, bound, param_scope = max(around, key=lambda a: a[0][:2])
        return bound, param_scope

    def _scope_starts(self, file_id: int) -> dict[int, tuple[int, int]]:
        starts = self._starts.get(file_id)
        if starts is None:
            starts = {s: (line, col) for s, line, col in self.conn.execute(
                "SELECT scope_id, start_line, start_col FROM st_scope WHERE file_id = ?", (file_id,))}
            self._starts[file_id] = starts
        return starts

    def link_file(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> None:
        super().link_file(file_id, refs, chaser, updates)
        anonymous = self._anonymous_types(file_id, refs)
        if not anonymous:
            return
        methods = {uid: parameter_key(str(display or ""), name) for uid, name, display in self.conn.execute(
            "SELECT def_uid, name, display_name FROM st_def WHERE file_id = ? AND kind = 'method'", (file_id,))}
        scopes = self.facts.scopes(file_id)
        for r in refs:
            # A method's name lies in the method's own scope, whose parent is the class body.
            body = scopes.get(r.scope, (None, ""))[0] if r.scope is not None else None
            if r.role != "DEFINITION" or r.member or body not in anonymous or r.local_target not in methods:
                continue
            extended = anonymous[body]
            key = methods[str(r.local_target)]
            found = self.h.visible_methods(self.h.types[extended], r.token, _METHODS) \
                if extended is not None and key is not None else None
            overridden = found.get(key, set()) if found is not None else set()
            updates.settle(file_id, r, next(iter(overridden)) if len(overridden) == 1 else None)

    def _anonymous_types(self, file_id: int, refs: list[Ref]) -> dict[int, str | None]:
        """Anonymous class body scope → the repository type it extends or implements (None: not settled). The
        ``anon:`` type of ``new C(args) {`` comes before its body, and bodies of classes created in ``args`` open
        and close in between: the last type not yet paired is the one a body belongs to."""
        bodies = {s for s, (_, kind) in self.facts.scopes(file_id).items()
                  if kind == "class" and self.body(file_id, s) is None}
        if not bodies:
            return {}
        starts = self._scope_starts(file_id)
        events: list[tuple[tuple[int, int], int, str | None]] = [(starts[s], s, None) for s in bodies if s in starts]
        for r in refs:
            if not r.member and (r.shape or "").startswith("anon:"):
                written = str(r.shape)[5:]
                found = self.type_text(written, file_id, r.scope)
                events.append(((r.line, r.col), -1, found if found in self.h.types else None))
        pending: list[str | None] = []
        out: dict[int, str | None] = {}
        for _, scope, extended in sorted(events, key=lambda e: e[0]):
            if scope < 0:
                pending.append(extended)
            elif pending:  # (an enum constant's body has no ``new`` before it)
                out[scope] = pending.pop()
        return out

    def _import_statement(self, file_id: int, imp: _Import, refs: list[Ref], chaser: Chaser,
                          updates: Updates) -> None:
        """``import a.b.Outer.Inner;`` / ``import static a.b.C.m;``: each segment that names a type or member."""
        segments = [s for s in imp.source.split(".") if s != "*"]
        named = [r for r in refs if not r.member and r.token in segments]
        found: list[str | None] = [None] * len(segments)
        for cut in range(len(segments) - 1, 0, -1):
            package = ".".join(segments[:cut])
            top = self.top.get((package, segments[cut]), [])
            if package in self.packages and len(top) == 1:
                found[cut] = top[0]
                for index in range(cut + 1, len(segments)):
                    owner = found[index - 1]
                    if owner is None or owner == UNSETTLED:
                        break
                    last = index == len(segments) - 1 and imp.kind == "java_import_static"
                    found[index] = self._member(owner, segments[index], _STATIC) if last else \
                        self.h.member(self.h.types[owner], segments[index], _TYPES)
                break
        for index, r in enumerate(named[:len(segments)]):
            target = found[index] if r.token == segments[index] else None
            updates.settle(file_id, r, target, chaser.via(r.via) if r.via else None)


def _type_position(shape: str) -> bool:
    """A reference in a type position: a type, a supertype, the type an anonymous class extends."""
    return shape == "type" or shape.startswith(("super:", "anon:"))


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute Java cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    targets = classdeps.affected(conn, effect, "java", (".java",))
    if targets is not None and not targets:
        return 0, set()
    names = JavaNames(conn)
    if not names.package:
        return 0, set()
    updates = Updates(fresh)
    chaser = Chaser(conn)
    ids = sorted(names.package) if targets is None else sorted(targets & names.package.keys())
    for start in range(0, len(ids), 200):
        part = ids[start:start + 200]
        refs = file_refs(conn, part)
        for file_id in part:
            names.link_file(file_id, refs.get(file_id, []), chaser, updates)
    return updates.write(conn)
