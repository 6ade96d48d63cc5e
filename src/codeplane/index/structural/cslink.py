"""C# across files (§7.3.2 STRONG): namespaces, ``using`` directives, partial types and members through the
hierarchy the repository declares.

A type's full name is its namespace (a block ``namespace A.B { }`` is a container of the lexical path, a
file-scoped ``namespace A.B;`` the file's package) plus its nesting. A simple name is looked up as the C#
compiler does, stopping at the first place that could answer:
- a local, local function or type parameter (never resolved across files);
- a class body: own and inherited members of every ``partial`` part (``classhierarchy.Hierarchy``; a base type
  outside the repository leaves the name unsettled unless it is one of the few .NET types listed below);
- the namespaces from the innermost enclosing one out to the global namespace (types the repository declares
  there, one full name), then the file's ``using`` aliases, ``using`` namespaces, ``using static`` types and
  the repository's ``global using`` directives, when exactly one of them offers the name. A ``using`` inside a
  namespace block would come between two of those steps: such a file is linked at its own namespace only.
Members: ``this.M``/``base.M``, ``Type.M`` and ``x.M`` where ``x`` is declared with a class type (``Cart c``,
``var c = new Cart()``, a property's or field's type) — linked when one field/property or one method
(overloads by written parameter types) answers. Extension methods, ``dynamic``, calls on call results and
names an outside base type might supply stay ANCHORED (a type name only such a base could shadow keeps its one
candidate as its target). C# is linked from syntax only here: no compiler judges it.

Incremental: the files a batch can affect (``classdeps``) are recomputed from their same-file tiers.
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
from codeplane.index.structural.classhierarchy import UNSETTLED, Hierarchy, TypeInfo
from codeplane.index.structural.classlink import ClassLinker, Updates, Value
from codeplane.index.structural.facts import PARAM
from codeplane.index.structural.store import BatchEffect

_TYPES = frozenset({"class", "struct", "interface", "enum", "record", "delegate"})
_DATA = frozenset({"field", "property", "constant"}) | _TYPES
_METHODS = frozenset({"method"})

_OBJECT = "Equals Finalize GetHashCode GetType MemberwiseClone ReferenceEquals ToString"
_EXCEPTION = "Data GetBaseException GetObjectData HResult HelpLink InnerException Message Source StackTrace TargetSite"
#: Members of .NET types often derived from (``System.Object``'s included), from the .NET API reference.
NET_MEMBERS = {f"System.{name}": frozenset(f"{_OBJECT} {text}".split()) for name, text in {
    "Object": "", "ValueType": "",
    "Enum": "CompareTo Format GetName GetNames GetTypeCode GetUnderlyingType GetValues HasFlag IsDefined Parse "
            "ToObject TryParse",
    "Exception": _EXCEPTION, "ApplicationException": _EXCEPTION, "InvalidOperationException": _EXCEPTION,
    "NotSupportedException": _EXCEPTION, "NotImplementedException": _EXCEPTION,
    "ArgumentException": f"{_EXCEPTION} ParamName ThrowIfNullOrEmpty",
    "IDisposable": "Dispose", "IAsyncDisposable": "DisposeAsync", "IComparable": "CompareTo",
    "IEquatable": "Equals",
}.items()}


class _Using:
    def __init__(self, uid: str, kind: str, source: str, alias: str | None, span: tuple[int, int, int, int]) -> None:
        self.uid, self.kind, self.source, self.alias, self.span = uid, kind, source, alias, span


class CSharpNames(ClassLinker):
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.package: dict[int, str] = {int(i): str(p or "") for i, p in conn.execute(
            "SELECT file_id, package FROM st_file WHERE language = 'csharp'")}
        types, self.spans = type_defs(conn, "csharp", _TYPES, self._full_name)
        attach_supers(conn, "csharp", types, self.spans)
        self.top = defaultdict(list)
        for t in types.values():
            if t.outer is None:
                namespace = t.full[:-len(t.name) - 1] if t.full != t.name else ""
                self.top[(namespace, t.name)].append(t.uid)
        self.packages = {n for n, _ in self.top for n in _prefixes(n)}
        self.usings: dict[int, list[_Using]] = defaultdict(list)
        self.global_usings: list[_Using] = []
        for file_id, uid, kind, source, alias, *span in conn.execute(
                "SELECT i.file_id, i.import_uid, i.import_kind, i.source_literal, i.alias, i.start_line, "
                "i.start_col, i.end_line, i.end_col FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                "WHERE f.language = 'csharp' AND i.source_literal IS NOT NULL ORDER BY i.start_line"):
            using = _Using(uid, kind, source, alias, (span[0], span[1], span[2], span[3]))
            self.usings[file_id].append(using)
            if kind == "csharp_global_using":
                self.global_usings.append(using)  # in effect in every file of the project
        self.by_uid = {u.uid: u for found in self.usings.values() for u in found}
        self.facts = FileFacts(conn)
        self.h = Hierarchy(types.values(), self.type_text, self._external, self._implicit, partial=True)
        self.declared = DeclaredTypes(conn, self.type_text, "csharp")
        self._bodies: dict[int, dict[int, str | None]] = {}
        self._scope_starts: dict[int, tuple[int, int]] = {}
        self._simple: dict[tuple[int, int | None, str, frozenset[str], bool, str | None], str | None] = {}
        by_file: dict[int, set[str]] = defaultdict(set)
        for t in types.values():
            if t.outer is None:
                by_file[t.file_id].add(t.full[:-len(t.name) - 1] if t.full != t.name else "")
        #: file → its one namespace when all its top-level types share it ("" marks several: look per position)
        self._single_namespace: dict[int, str | None] = {
            f: (next(iter(n)) or None) if len(n) == 1 else "" for f, n in by_file.items()}

    def _full_name(self, file_id: int, lexical: str, name: str, parent: str | None) -> str:
        package = self.package.get(file_id, "")
        return f"{package}.{lexical}" if package else lexical

    @staticmethod
    def _implicit(info: TypeInfo) -> str:
        return {"struct": "System.ValueType", "enum": "System.Enum"}.get(info.kind, "System.Object")

    def _external(self, written: str, file_id: int) -> frozenset[str] | None:
        if "." in written:
            return NET_MEMBERS.get(written)
        full = f"System.{written}"
        if full == "System.Object" or (full in NET_MEMBERS and any(
                u.source == "System" and u.kind in ("csharp_using", "csharp_global_using")
                for u in (*self.usings.get(file_id, []), *self.global_usings))):
            return NET_MEMBERS.get(full)
        return None

    def body(self, file_id: int, scope: int) -> str | None:
        bodies = self._bodies.get(file_id)
        if bodies is None:
            bodies = body_types(self.conn, file_id, self.h.types, self.spans.get(file_id, []))
            self._bodies[file_id] = bodies
        return bodies.get(scope)

    def _namespace_at(self, file_id: int, line: int, col: int) -> str | None:
        """The namespace around a position: that of the outermost type holding it, else the file-scoped one."""
        single = self._single_namespace.get(file_id, "")
        if single != "":
            return single  # the usual file: every type in one namespace
        holder = innermost_def(self.spans.get(file_id, []), line, col)
        uid = holder[0] if holder is not None else None
        while uid is not None and uid not in self.h.types:
            uid = next((p for u, _, p, _ in self.spans.get(file_id, []) if u == uid), None)
        info = self.h.types.get(uid) if uid is not None else None
        while info is not None and info.outer is not None and info.outer in self.h.types:
            info = self.h.types[info.outer]
        if info is None:
            return self.package.get(file_id) or None
        return info.full[:-len(info.name) - 1] if info.full != info.name else ""

    def in_package(self, package: str, name: str) -> str | None:
        """The top-level type ``name`` of a namespace; its ``partial`` parts are one type."""
        if not self.top.get((package, name)):
            return None
        return self.h.full(f"{package}.{name}" if package else name)

    # -- names -------------------------------------------------------------------------------------------
    def _member(self, owner: str | None, name: str, data: frozenset[str] = _DATA) -> str | None:
        if owner is None or owner == UNSETTLED:
            return owner
        return self.h.named(self.h.types[owner], name, data, _METHODS)

    def simple(self, file_id: int, scope: int | None, name: str, at: tuple[int, int],
               data: frozenset[str] = _DATA, *, tentative: bool = False) -> str | None:
        """``tentative``: pass over class bodies whose inherited members cannot be settled (see javalink)."""
        namespace = self._namespace_at(file_id, *at)
        key = (file_id, scope, name, data, tentative, namespace)
        if key not in self._simple:
            self._simple[key] = self._lookup(file_id, scope, name, namespace, data, tentative=tentative)
        return self._simple[key]

    def _lookup(self, file_id: int, scope: int | None, name: str, namespace: str | None, data: frozenset[str], *,
                tentative: bool) -> str | None:
        binds = self.facts.binds(file_id)
        file_scope = None
        for s, kind in self.facts.chain(file_id, scope):
            if kind == "class":
                owner = self.body(file_id, s)
                if owner is None:
                    if tentative:
                        continue
                    return UNSETTLED
                found = self._member(owner, name, data)
                if found is not None and not (tentative and found == UNSETTLED):
                    return found
            elif kind == "file":
                file_scope = s
            elif (s, name) in binds:
                return UNSETTLED  # a local, local function or type parameter of a method
        bound = binds.get((file_scope, name)) if file_scope is not None else None
        if bound is not None and (not bound.single or bound.reason == PARAM):
            return UNSETTLED  # a type parameter of a class, or a name bound twice in the file
        usings = [u for u in self.usings.get(file_id, []) if u.kind != "csharp_global_using"]
        scoped = any(u.kind.endswith("_scoped") for u in usings)
        steps = list(_prefixes(namespace)) if namespace else []
        for index, step in enumerate([*steps, ""]):
            found = self.in_package(step, name) if data & _TYPES else None
            if found is not None:
                return found
            if scoped and index == 0:
                return UNSETTLED  # a ``using`` inside this namespace block comes next
        answers: set[str] = set()
        for using in (*usings, *self.global_usings):
            if using.kind == "csharp_using_alias" and using.alias == name:
                found = self.h.full(using.source)
            elif using.kind in ("csharp_using", "csharp_global_using"):
                found = self.in_package(using.source, name) if data & _TYPES else None
            elif using.kind == "csharp_using_static":
                found = self._member(self.h.full(using.source), name, data)
            else:
                found = None
            if found is not None:
                answers.add(found)
        if not answers:
            return None
        return answers.pop() if len(answers) == 1 else UNSETTLED

    def type_text(self, written: str, file_id: int, scope: int | None) -> str | None:
        parts = written.split(".")
        position = self._scope_start(file_id, scope)
        found = self.simple(file_id, scope, parts[0], position, _TYPES)
        rest = parts[1:]
        if found is None and rest:
            for cut in range(len(parts) - 1, 0, -1):
                namespace = ".".join(parts[:cut])
                if namespace in self.packages:
                    found, rest = self.in_package(namespace, parts[cut]), parts[cut + 1:]
                    break
        for segment in rest:
            if found is None or found == UNSETTLED:
                return found
            found = self.h.member(self.h.types[found], segment, _TYPES)
        return found

    def _scope_start(self, file_id: int, scope: int | None) -> tuple[int, int]:
        if scope is None:
            return (0, 0)
        if scope not in self._scope_starts:
            row = self.conn.execute("SELECT start_line, start_col FROM st_scope WHERE scope_id = ?",
                                    (scope,)).fetchone()
            self._scope_starts[scope] = (int(row[0]), int(row[1])) if row else (0, 0)
        return self._scope_starts[scope]

    # -- references of one file --------------------------------------------------------------------------
    def statements(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> set[int]:
        """``using M = A.B.Cart;`` / ``using static A.B.Util;``: the last segment names a type."""
        done: set[int] = set()
        for using in self.usings.get(file_id, []):
            line, col, end_line, end_col = using.span
            inside = [r for r in refs if (line, col) <= (r.line, r.col) and (r.line, r.end_col) <= (end_line, end_col)]
            done.update(r.ref_id for r in inside)
            last = using.source.rsplit(".", 1)[-1]
            for r in inside:
                typed = using.kind.startswith(("csharp_using_alias", "csharp_using_static"))
                target = self.h.full(using.source) if typed and r.token == last and r.ref_id == inside[-1].ref_id \
                    else None
                updates.settle(file_id, r, target)
        return done

    def plain(self, file_id: int, ref: Ref) -> str | None:
        data = _TYPES if (ref.shape or "").startswith("super:") else _DATA
        return self.simple(file_id, ref.scope, ref.token, (ref.line, ref.col), data)

    def candidate(self, file_id: int, ref: Ref) -> str | None:
        if ref.member:
            return None
        found = self.simple(file_id, ref.scope, ref.token, (ref.line, ref.col), _TYPES, tentative=True)
        return found if found in self.h.types else None

    def member(self, file_id: int, ref: Ref, receiver: Value | None) -> str | None:
        shape = ref.shape or ""
        if shape in ("this.", "base."):
            around = [self.body(file_id, s) for s, kind in self.facts.chain(file_id, ref.scope) if kind == "class"]
            if not around or around[0] is None:
                return None
            return self.h.named(self.h.types[around[0]], ref.token, _DATA, _METHODS, own=shape == "this.")
        if receiver is None:
            return None
        kind, what = receiver
        if kind == "package":
            return self.in_package(what, ref.token)
        return self._member(what, ref.token)


def _prefixes(namespace: str) -> list[str]:
    """``A.B.C`` → ``A.B.C``, ``A.B``, ``A``."""
    parts = namespace.split(".") if namespace else []
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute C# cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    targets = classdeps.affected(conn, effect, "csharp", (".cs",))
    if targets is not None and not targets:
        return 0, set()
    names = CSharpNames(conn)
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
