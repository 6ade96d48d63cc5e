"""Who an attribute reference ``recv.name`` may denote, for renaming a method or class attribute.

The index leaves member references ANCHORED (§7.3.9: bucketed by token and receiver shape). The planner
narrows them with syntactic evidence only, never guessing:

- the receiver is ``self``/``cls``/``super()`` inside a class of the target's family (the defining class
  and its subclasses, found from the references in class headers; a Go type's "bases" are its embedded fields'
  types and embedded interfaces, and a Rust type has none), or Java's ``super`` in a class whose superclass is one
  of the family → ``high``;
- the receiver is a name bound to a class of the family (``Cls.name``), a constructor call of one
  (``Cls().name``), or a local every binding of which is the statement ``x = Cls(...)`` alone → ``high``;
  a local bound otherwise to such a call (``x = Cls().tuned()``), annotated with one, or an attribute so
  declared → ``medium``;
- the receiver is unknown, but no class outside the family defines a member of that name and the name is
  not a method of a builtin type → ``medium`` (the anchor group has one owner);
- Java/C#/PHP, whose members the index links itself: a receiver spelled like a family class that the index
  could not settle → ``medium``; a variable declared with a class from outside the repository → ``low``;
- C/C++: a receiver declared with a class (``Node* n; n->dirty()``) → ``medium`` if it is the family's, ``low`` if
  another class or one from outside the repository (``std::string s; s.size()``);
- anything else → ``low`` with the reason (``other_binding`` when another class owns the name,
  ``unresolved_receiver`` otherwise) — proposed, never applied by default.
"""

from __future__ import annotations

import builtins
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from codeplane.refactor import gocollisions, goimpls, jsstatic, rustimpls
from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.javasig import different_signatures, parameter_types
from codeplane.refactor.library_names import DOTNET_MEMBERS, JVM_MEMBERS, PHP_MEMBERS
from codeplane.refactor.models import Certainty
from codeplane.refactor.modreceivers import receiver_module
from codeplane.refactor.receivers import Receivers, c_family
from codeplane.refactor.spans import SourceText
from codeplane.refactor.targets import java_overloaded, java_signature
from codeplane.repo.content import decode

_LIMIT = 100_000
#: A line of a Go interface body that embeds another (``Sizer``, ``pkg.Sizer``), not a method (``Size() int``).
_GO_EMBEDDED_LINE = re.compile(r"\s*(?:[A-Za-z_]\w*\s*\.\s*)?[A-Za-z_]\w*\s*(?://.*)?$")
_CLASS_KINDS = frozenset({"class", "interface", "struct", "trait", "enum", "record"})


def _python_builtin_members() -> frozenset[str]:
    names: set[str] = set()
    for value in vars(builtins).values():
        if isinstance(value, type):
            names.update(n for n in dir(value) if not n.startswith("__"))
    for cls in (io.IOBase, io.TextIOBase, io.BufferedIOBase, io.RawIOBase):
        names.update(n for n in dir(cls) if not n.startswith("__"))
    return frozenset(names)


#: Method names of builtin types: an unknown receiver may well be a dict/str/file, so never "medium".
PY_BUILTIN_MEMBERS = _python_builtin_members()
JS_BUILTIN_MEMBERS = frozenset(str.split("""
toString valueOf hasOwnProperty length push pop shift unshift slice splice concat join map filter reduce
forEach find findIndex includes indexOf keys values entries get set has delete clear add size then catch
finally replace split trim match test exec apply call bind name constructor prototype next return throw
"""))


#: JavaScript's global objects: in ``Symbol.iterator`` or ``Math.max`` (the name unbound in the file) the receiver is
#: never an instance of a repository class, however unique the member's name is among them.
JS_GLOBAL_OBJECTS = frozenset(str.split("""
Symbol Object Array Math JSON Promise Reflect Proxy Number String Boolean BigInt Date RegExp Error TypeError Map Set
WeakMap WeakSet WeakRef FinalizationRegistry Intl Atomics ArrayBuffer SharedArrayBuffer DataView Int8Array Uint8Array
Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array Float32Array Float64Array BigInt64Array BigUint64Array
AggregateError EvalError RangeError ReferenceError SyntaxError URIError Iterator WebAssembly globalThis self console
process window document navigator location history screen performance crypto localStorage sessionStorage indexedDB
caches customElements Buffer URL URLSearchParams TextEncoder TextDecoder AbortController AbortSignal Blob Response
Request Headers FormData Event EventTarget CustomEvent Deno Bun
"""))


def builtin_member(language: str | None, name: str) -> bool:
    if language == "python":
        return name in PY_BUILTIN_MEMBERS
    if language == "javascript":
        return name in JS_BUILTIN_MEMBERS
    if language in ("jvm", "dotnet", "php"):  # the definition's language family
        return name in {"jvm": JVM_MEMBERS, "dotnet": DOTNET_MEMBERS, "php": PHP_MEMBERS}[language]
    return False


@dataclass
class ClassGraph:
    """Inheritance among the repository's classes, read from the references in class headers (Go: embedding)."""

    reader: FactReader
    root: Path | None = None
    _bases: dict[str, list[Def]] = field(default_factory=dict)
    _subs: dict[str, list[Def]] = field(default_factory=dict)
    _file_refs: dict[str, list[Ref]] = field(default_factory=dict)
    _line_refs: dict[tuple[str, int], list[Ref]] = field(default_factory=dict)
    _file_defs: dict[str, list[Def]] = field(default_factory=dict)
    _texts: dict[str, SourceText | None] = field(default_factory=dict)

    def text(self, path: str) -> SourceText | None:
        if path not in self._texts:
            try:
                data = (self.root / path).read_bytes() if self.root is not None else None
            except OSError:
                data = None
            self._texts[path] = SourceText(path, decode(data)) if data is not None else None
        return self._texts[path]

    @property
    def receivers(self) -> Receivers:
        return Receivers(self.reader, self.refs, self.text, self.enclosing_class, (self.ancestors, self.bases))

    def owns(self, cls: Def, name: str) -> bool:
        """``cls`` or one of its ancestors defines a member ``name``."""
        owners = {cls.def_uid} | {a.def_uid for a in self.ancestors(cls)}
        return any(d.parent_uid in owners for d in self.reader.defs_named(name, _LIMIT))

    def refs(self, path: str) -> list[Ref]:
        if path not in self._file_refs:
            self._file_refs[path] = list(self.reader.refs_in_file(path, _LIMIT))
        return self._file_refs[path]

    def refs_on(self, path: str, line: int) -> list[Ref]:
        """The references starting on one line: read alone unless the file's are here already (a member's 76
        references in 31 files read every reference of those files, ~100 ms on Django, to look at one line each)."""
        if path in self._file_refs:
            return [r for r in self._file_refs[path] if r.line == line]
        key = (path, line)
        if key not in self._line_refs:
            self._line_refs[key] = list(self.reader.refs_on_line(path, line))
        return self._line_refs[key]

    def defs(self, path: str) -> list[Def]:
        if path not in self._file_defs:
            self._file_defs[path] = list(self.reader.defs_in_file(path, _LIMIT))
        return self._file_defs[path]

    @staticmethod
    def in_header(klass: Def, ref: Ref) -> bool:
        """``ref`` is a base-class expression of ``klass`` (after the name, evaluated in the outer scope)."""
        after_name = (ref.line, ref.column) > (klass.name_line, klass.name_column)
        inside = (ref.line, ref.column) < (klass.end_line, klass.end_column)
        return after_name and inside and ref.scope_id == klass.scope_id and ref.line <= klass.name_line + 8

    def bases(self, cls: Def) -> list[Def]:
        if cls.def_uid not in self._bases:
            found: dict[str, Def] = {}
            if cls.language == "go":
                # A Go struct body has no scope of its own: its field types (``src *Item``) sit where a header's
                # bases would. Only an embedded field promotes members, so only its type is a "base".
                found = {d.def_uid: d for d in gocollisions.embedded_types(self.reader, cls)}
                for ref in self.refs(cls.path) if cls.kind == "interface" else []:
                    base = self.reader.get_def(ref.target_uid) if ref.target_uid else None
                    if base is not None and base.kind == "interface" and self._go_embeds(cls, ref):
                        found[base.def_uid] = base
            elif cls.language != "rust":  # a Rust type inherits nothing (a trait it implements is no base)
                for ref in self.refs(cls.path):
                    if ref.target_uid and self.in_header(cls, ref):
                        base = self.reader.get_def(ref.target_uid)
                        if base is not None and base.kind in _CLASS_KINDS:
                            found[base.def_uid] = base
            self._bases[cls.def_uid] = sorted(found.values(), key=lambda d: (d.path, d.line))
        return self._bases[cls.def_uid]

    def subclasses(self, cls: Def) -> list[Def]:
        if cls.def_uid not in self._subs:
            found: dict[str, Def] = {}
            if cls.language == "go":
                found = {d.def_uid: d for d in gocollisions.embedders(self.reader, cls) if d.kind in _CLASS_KINDS}
                for ref in self.reader.refs_to(cls.def_uid, _LIMIT) if cls.kind == "interface" else []:
                    for candidate in self.defs(ref.path):
                        if candidate.kind == "interface" and self._go_embeds(candidate, ref):
                            found[candidate.def_uid] = candidate
            elif cls.language != "rust":
                for ref in self.reader.refs_to(cls.def_uid, _LIMIT):
                    for candidate in self.defs(ref.path):
                        if candidate.kind in _CLASS_KINDS and self.in_header(candidate, ref):
                            found[candidate.def_uid] = candidate
            self._subs[cls.def_uid] = sorted(found.values(), key=lambda d: (d.path, d.line))
        return self._subs[cls.def_uid]

    def _go_embeds(self, interface: Def, ref: Ref) -> bool:
        """``ref`` is an interface embedded in the Go ``interface`` (a line of its body spelling only the name)."""
        src = self.text(ref.path)
        inside = (interface.name_line, interface.name_column) < (ref.line, ref.column) \
            < (interface.end_line, interface.end_column)
        return inside and src is not None and _GO_EMBEDDED_LINE.match(src.line_text(ref.line)) is not None \
            and src.line_text(ref.line).rstrip().split("//")[0].rstrip().endswith(ref.token)

    def descendants(self, cls: Def) -> list[Def]:
        seen: dict[str, Def] = {cls.def_uid: cls}
        queue = [cls]
        while queue:
            for sub in self.subclasses(queue.pop()):
                if sub.def_uid not in seen:
                    seen[sub.def_uid] = sub
                    queue.append(sub)
        return sorted(seen.values(), key=lambda d: (d.path, d.line))

    def ancestors(self, cls: Def) -> list[Def]:
        seen: dict[str, Def] = {}
        queue = [cls]
        while queue:
            for base in self.bases(queue.pop()):
                if base.def_uid not in seen and base.def_uid != cls.def_uid:
                    seen[base.def_uid] = base
                    queue.append(base)
        return sorted(seen.values(), key=lambda d: (d.path, d.line))

    def enclosing_class(self, path: str, line: int, column: int) -> Def | None:
        best: Def | None = None
        for d in self.defs(path):
            if d.kind in _CLASS_KINDS and (d.line, d.column) <= (line, column) <= (d.end_line, d.end_column) \
                    and (best is None or (d.line, d.column) >= (best.line, best.column)):
                best = d
        return best

    def receiver(self, ref: Ref) -> Ref | None:
        """The plain-name reference right before ``.token`` (``recv`` in ``recv.token``, C/C++ ``recv->token``)."""
        arrow = c_family(ref.path) and self._arrow_before(ref)
        for other in self.refs_on(ref.path, ref.line):
            if not other.is_member and (other.end_column == ref.column - 1
                                        or (arrow and other.end_column == ref.column - 2)):
                return other
        return None

    def _arrow_before(self, ref: Ref) -> bool:
        """``recv->token``, not ``Slice(name).token`` (``name`` also ends two characters before the token)."""
        src = self.text(ref.path)
        return src is not None and src.line_text(ref.line)[max(0, ref.column - 2):ref.column] == "->"


@dataclass(frozen=True)
class MemberFamily:
    """The target member, every override of it in subclasses, and the classes that own them."""

    target: Def
    classes: dict[str, Def]
    overrides: list[Def]
    #: Ancestor definitions of the same name (renaming only this one breaks the override).
    overridden: list[Def]
    #: Classes outside the family that own a member of the same name (anchor-group twins).
    twins: list[Def]
    #: Builtin base classes of the owner that define the same name (``class D(dict)`` renaming ``get``).
    builtin_bases: list[str] = field(default_factory=list)


_STUB_SUFFIXES = (".pyi", ".d.ts", ".d.mts", ".d.cts")
_RUNTIME_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".jsx")


def is_stub(path: str) -> bool:
    """A type description of runtime code elsewhere: a ``.pyi`` stub or a TypeScript declaration file."""
    return path.endswith(_STUB_SUFFIXES)


def stub_stem(path: str) -> str:
    return next((path[:-len(s)] for s in _STUB_SUFFIXES if path.endswith(s)), path)


def runtime_stem(path: str) -> str:
    return next((path[:-len(s)] for s in _RUNTIME_SUFFIXES if path.endswith(s)), "")


#: Families (``Def.language``) whose classes keep members of different kinds in separate namespaces: a Java or
#: Kotlin field and a method ``size``/``size()``, a Rust field and a method ``len``/``len()``, a PHP ``const LIMIT``
#: and ``static $LIMIT`` share a name (and a qualified name) but are two symbols. (C#, C++, Go and Scala refuse
#: such a pair; in Python and JavaScript the later one replaces the earlier: one name.)
_KINDS_APART = frozenset({"jvm", "php", "rust"})


def apart_by_kind(one: Def, other: Def) -> bool:
    """Whether ``one`` and ``other``, of one name, are two symbols because their kinds live apart."""
    return one.kind != other.kind and one.language in _KINDS_APART and other.language == one.language


def member_family(graph: ClassGraph, target: Def) -> MemberFamily | None:
    """The family of ``target`` if it is a class member, else ``None``."""
    owner = graph.reader.get_def(target.parent_uid) if target.parent_uid else None
    if owner is None or owner.kind not in _CLASS_KINDS:
        return None
    classes = _promoted_into(graph, owner, target.name) if target.language == "go" \
        else {c.def_uid: c for c in graph.descendants(owner)}
    if is_stub(owner.path):
        # A member of a stub's class (``index.d.ts`` describing ``index.js``): the runtime class it describes, of
        # the same name in the file of the same stem, is the family too (its ``this.opts`` are the member's).
        stem = stub_stem(owner.path)
        for runtime in graph.reader.defs_named(owner.name, _LIMIT):
            if runtime.kind in _CLASS_KINDS and not is_stub(runtime.path) and runtime_stem(runtime.path) == stem:
                classes.update({c.def_uid: c for c in graph.descendants(runtime)})
    named = [d for d in graph.reader.defs_named(target.name, _LIMIT)
             if not apart_by_kind(d, target) and not jsstatic.apart(graph.text, d, target)
             and not _other_overload(graph, d, target)]
    # A stub (``.pyi``, ``.d.ts``) describes a runtime class elsewhere: a stub class named like a family class is
    # the family's type description (renamed with it), and other stub classes are not runtime twins.
    family_names = {c.name for c in classes.values()}
    stub_owners = {d.parent_uid for d in named if is_stub(d.path) and d.parent_uid
                   and (graph.reader.get_def(d.parent_uid) or target).name in family_names}
    classes.update({uid: c for uid in stub_owners if uid and (c := graph.reader.get_def(uid)) is not None})
    overrides = [d for d in named if d.parent_uid in classes and d.def_uid != target.def_uid]
    if owner.kind == "trait" and target.path.endswith(".rs"):
        # ``impl Counted for Stock { fn count .. }``: Stock's method (an impl block owns no definition) is the
        # trait method's implementation, and Stock a class of the family (its receivers are the trait method's).
        for implementor, method in rustimpls.implementations(graph.reader, graph.text, owner, target.name):
            overrides.append(method)
            if implementor is not None:
                classes[implementor.def_uid] = implementor
    if owner.kind == "interface" and target.path.endswith(".go"):
        # A Go type implements an interface by its method set alone: its method goes with the interface's.
        for implementor, method in goimpls.implementations(graph.reader, graph.text, owner, target):
            overrides.append(method)
            classes[implementor.def_uid] = implementor
    # Go has no overriding: a member of an embedded type that the owner also declares is hidden, not overridden
    # (renaming one leaves the other, as gopls does).
    ancestor_ids = {a.def_uid for a in graph.ancestors(owner)} if target.language != "go" else set()
    overridden = [d for d in named if d.parent_uid in ancestor_ids]
    twin_ids = {d.parent_uid for d in named
                if d.parent_uid and d.parent_uid not in classes and not is_stub(d.path)}
    for ref in graph.reader.refs_named(target.name, None, _LIMIT):
        if ref.is_member and ref.role == "DEFINITION":
            holder = graph.enclosing_class(ref.path, ref.line, ref.column)
            if holder is not None and holder.def_uid not in classes and not is_stub(holder.path):
                twin_ids.add(holder.def_uid)
    twins = [d for d in (graph.reader.get_def(uid) for uid in sorted(t for t in twin_ids if t)) if d is not None]
    return MemberFamily(target, classes, sorted(overrides, key=lambda d: (d.path, d.line)),
                        overridden, [t for t in twins if t.kind in _CLASS_KINDS],
                        _builtin_bases(graph, owner, target.name))


def _other_overload(graph: ClassGraph, d: Def, target: Def) -> bool:
    """``d`` is a Java method of another signature than ``target`` (by parameter count, or by a parameter type both
    name and that differs: ``javasig.py``): an overload, which neither overrides it nor is overridden by it, so no
    member of its family (``targets.py``)."""
    if not (java_overloaded(target) and java_overloaded(d)) or d.def_uid == target.def_uid:
        return False
    if d.parent_uid == target.parent_uid:
        return True  # one class's two methods of one name are two signatures
    mine_text, theirs_text = graph.text(target.path), graph.text(d.path)
    mine, theirs = java_signature(mine_text, target), java_signature(theirs_text, d)
    if mine is None or theirs is None:
        return False
    return mine != theirs or different_signatures(parameter_types(mine_text, target), parameter_types(theirs_text, d))


def _promoted_into(graph: ClassGraph, owner: Def, name: str) -> dict[str, Def]:
    """The Go type ``owner`` and the types its member ``name`` is promoted into: those embedding it, at any depth,
    but not through a type that declares ``name`` itself (its own member hides the promoted one there)."""
    found = {owner.def_uid: owner}
    queue = [owner]
    while queue:
        for sub in graph.subclasses(queue.pop()):
            if sub.def_uid not in found and not gocollisions.members_named(graph.reader, sub, name):
                found[sub.def_uid] = sub
                queue.append(sub)
    return found


def overridden_root(graph: ClassGraph, target: Def) -> Def | None:
    """The one repository definition at the top of the methods ``target`` overrides (``Shape::area`` for
    ``Square::area``), or ``None``: ``target`` overrides nothing the repository defines, or several methods none of
    which overrides the others (two bases, each with its own). Renaming an override alone breaks it (``override``
    no longer compiles in C++, C#, Kotlin or TypeScript; Java's ``@Override`` fails; Python silently calls the
    base's), so a rename starts from here: the root and every override of it, ``target`` among them."""
    implemented = rustimpls.implemented(graph.reader, graph.text, target)
    if implemented is not None:
        return implemented  # a trait's methods override nothing: the trait's is the root
    family = member_family(graph, target)
    if family is None or not family.overridden:
        return None
    tops = [d for d in family.overridden if not ((f := member_family(graph, d)) is not None and f.overridden)]
    return tops[0] if len(tops) == 1 else None


def _builtin_bases(graph: ClassGraph, owner: Def, name: str) -> list[str]:
    """Builtin types named in ``owner``'s header that define ``name`` (Python only; syntax of the header)."""
    src = graph.text(owner.path)
    if owner.language != "python" or src is None:
        return []
    match = re.search(r"class\s+" + re.escape(owner.name) + r"\s*\(([^)]*)\)", src.line_text(owner.name_line))
    if match is None:
        return []
    found = []
    for base in (b.strip().split(".")[-1] for b in match.group(1).split(",") if "=" not in b):
        kind = getattr(builtins, base, None)
        if isinstance(kind, type) and hasattr(kind, name):
            found.append(base)
    return found


#: Files of the languages whose members the index links across files itself (``javalink``, ``cslink``,
#: ``phplink``): there a receiver declared with a class from outside the repository is not ours.
CLASS_LINKED = (".java", ".cs", ".php")
#: Receivers that are the enclosing object: ``this.f``/``self::m()``; Java's ``m()`` (shape ``bare.``) too. A
#: trailing ``$`` marks a field/property access rather than a call (Java, PHP).
_SELF_SHAPES = frozenset({"self.", "cls.", "this.", "bare.", "self::", "static::"})


def classify_member_ref(graph: ClassGraph, family: MemberFamily, ref: Ref) -> tuple[Certainty, str]:
    """Certainty and reason for a member reference ``recv.<name>`` of the family's name."""
    certainty, reason = _classify(graph, family, ref)
    if certainty != "low" and family.target.language == "javascript" and _other_side(graph, family, ref, reason):
        return "low", "other_binding"  # ``A.count`` of a ``static count`` when ``count`` is renamed, or the reverse
    return certainty, reason


_USE_EVIDENCE = {"class_receiver": "class", "constructed_receiver": "constructed", "assigned_receiver": "assigned",
                 "annotated_receiver": "annotated", "declared_receiver": "declared"}


def _other_side(graph: ClassGraph, family: MemberFamily, ref: Ref, reason: str) -> bool:
    """A JS/TS use that reaches the static side of the family's name when the renamed member is an instance one,
    or the reverse (``jsstatic.py``)."""
    static = jsstatic.static_member(graph.text, family.target)
    if static is None:
        return False
    method = None
    if reason == "self_member":
        method = next((d for d in sorted(graph.defs(ref.path), key=lambda d: (d.line, d.column), reverse=True)
                       if d.kind == "method" and (d.line, d.column) <= (ref.line, ref.column)
                       <= (d.end_line, d.end_column)), None)
    side = jsstatic.use_side(graph.text, ref, _USE_EVIDENCE.get(reason), method)
    return side is not None and side != static


def _classify(graph: ClassGraph, family: MemberFamily, ref: Ref) -> tuple[Certainty, str]:
    if ref.target_uid is not None:
        if ref.target_uid == family.target.def_uid or any(o.def_uid == ref.target_uid for o in family.overrides):
            return "high", "proven"
        return "low", "other_binding"
    shape = ref.receiver_shape or ""
    if shape.rstrip("$") in _SELF_SHAPES or _after_super(graph, ref):
        holder = graph.enclosing_class(ref.path, ref.line, ref.column)
        if holder is not None and holder.def_uid in family.classes:
            return "high", "self_member"
        if holder is not None and (graph.owns(holder, family.target.name)
                                   or any(t.def_uid == holder.def_uid for t in family.twins)):
            return "low", "other_binding"  # (a twin: a class that assigns ``self.<name>`` itself)
        if holder is not None and _mixin_reaches_family(graph, family, holder):
            return "medium", "mixin_self"
    if shape.rstrip("$") == "super." and family.target.path.endswith(".java"):
        # Java's ``super.m()`` is the superclass's ``m``: the family's when that class is one of the family.
        holder = graph.enclosing_class(ref.path, ref.line, ref.column)
        above = [b for b in graph.bases(holder) if b.kind == "class"] if holder is not None else []
        if above and all(b.def_uid in family.classes for b in above):
            return "high", "super_member"
    recv = graph.receiver(ref)
    # Rust's ``self.$`` (``self.f`` not called) is ``self.`` here: the receivers module reads no Rust ``self``.
    bare = shape[:-1] if shape == "self.$" and ref.path.endswith(".rs") else shape
    typed = graph.receivers.of(ref, recv) if bare not in ("self.", "cls.", "this.") else None
    if typed is not None:
        if typed.cls.def_uid in family.classes:
            strong = typed.evidence in ("class", "constructed") or typed.exact
            return ("high" if strong else "medium"), f"{typed.evidence}_receiver"
        return "low", "other_binding" if graph.owns(typed.cls, family.target.name) else "unresolved_receiver"
    if recv is not None and recv.via_import_uid is not None:
        # A module attribute (``mod.name``) is not a class member of ours.
        return "low", "other_binding"
    module = receiver_module(graph.reader, graph, ref) if family.target.language == "python" else None
    if module is not None and graph.reader.module_file(module) is not None:
        return "low", "other_binding"  # ``pkg.core.TIMEOUT`` through ``import pkg.core``: the module's own name
    if module is not None:  # ``pkg.core.Widget.TIMEOUT``: a class of the family, named through its module
        owner, _, cls = module.rpartition(".")
        path = graph.reader.module_file(owner) if owner else None
        if path is not None and any(c.name == cls and c.path == path and "." not in c.lexical_path
                                    for c in family.classes.values()):
            return "high", "class_receiver"
    if recv is not None and family.target.language in ("javascript", "typescript") and (
            _object_literal(graph, recv) or _inline_object_typed(graph, recv)):
        # ``const obj = { area: ... }`` or ``(props: { label: string })``: its members are that literal's keys
        return "low", "other_binding"
    if family.target.language in ("javascript", "typescript") and (
            _global_object(recv) or (recv is None and _global_in_parentheses(graph, ref))):
        return "low", "builtin_receiver"
    if family.target.path.endswith(CLASS_LINKED):
        # ``Cart.make()`` where the index could not settle the name ``Cart`` (a supertype outside the repository
        # might declare a member type of that name): spelled like a class of the family, so likely ours.
        if recv is not None and not recv.is_member and recv.tier == "UNKNOWN" and \
                recv.token in {c.name for c in family.classes.values()}:
            return "medium", "class_name_receiver"
        if graph.receivers.declared_outside(recv):  # ``List<Item> items; items.add(...)``
            return "low", "other_binding"
    if c_family(family.target.path) and (graph.receivers.declared_outside(recv)
                                         or graph.receivers.wrapper_member(ref, recv)
                                         or (recv is None and graph.receivers.subscripted_container(ref))):
        return "low", "other_binding"  # ``std::string path; path.size()``: a class outside the repository
    if family.target.path.endswith(".go") and graph.receivers.declared_in_other_package(recv):
        return "low", "other_binding"  # ``file *modfile.File; file.Syntax``: a type outside the repository
    if family.twins or family.overridden:
        return "low", "unresolved_receiver"
    if builtin_member(family.target.language, family.target.name):
        return "low", "unresolved_receiver"
    return "medium", "anchored"


#: ``const name = {`` (``export`` allowed) with no type written: the value is an object literal of its own type.
_LITERAL_BINDING = re.compile(r"\s*=\s*\{")
#: ``props: {`` or ``opts?: {`` right after the bound name: an object type literal as its annotation.
_INLINE_OBJECT_TYPE = re.compile(r"\s*\??\s*:\s*\{")


def _object_literal(graph: ClassGraph, recv: Ref) -> bool:
    """Whether a JS/TS receiver names a ``const`` bound to an untyped object literal (its one binding)."""
    if recv.is_member or recv.bind_id is None:
        return False
    sites = [r for r in graph.refs(recv.path) if r.bind_id == recv.bind_id and r.role == "DEFINITION"]
    src = graph.text(recv.path)
    if len(sites) != 1 or src is None:
        return False
    line = src.line_text(sites[0].line)
    before, after = line[:sites[0].column].strip(), line[sites[0].column + len(recv.token):]
    return before in ("const", "export const") and _LITERAL_BINDING.match(after) is not None


def _inline_object_typed(graph: ClassGraph, recv: Ref) -> bool:
    """Whether every binding of a JS/TS local or parameter is annotated with an object type written in place
    (``props: { label: string }``): a type of its own, never the renamed class's or interface's."""
    if recv.is_member or recv.bind_id is None:
        return False
    sites = [r for r in graph.refs(recv.path) if r.bind_id == recv.bind_id and r.role == "DEFINITION"]
    src = graph.text(recv.path)
    if not sites or src is None:
        return False
    return all(_INLINE_OBJECT_TYPE.match(src.line_text(s.line)[s.column + len(recv.token):]) for s in sites)


def _global_object(ref: Ref | None) -> bool:
    """A JavaScript global object named by a name the file does not bind (``performance`` in ``performance.now``)."""
    return ref is not None and ref.token in JS_GLOBAL_OBJECTS and not ref.is_member and ref.bind_id is None \
        and ref.target_uid is None


def _global_in_parentheses(graph: ClassGraph, ref: Ref) -> bool:
    """``(override || Date).now()``: one of the values the parenthesised receiver may be is a global object."""
    src = graph.text(ref.path)
    line = src.line_text(ref.line) if src is not None else ""
    before = line[:ref.column].rstrip().removesuffix(".").removesuffix("?").rstrip()
    if not before.endswith(")"):
        return False
    depth, start = 0, -1
    for at in range(len(before) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(before[at], 0)
        if depth == 0:
            start = at
            break
    return start >= 0 and any(start < r.column < len(before) and _global_object(r)
                              for r in graph.refs_on(ref.path, ref.line))


def _mixin_reaches_family(graph: ClassGraph, family: MemberFamily, holder: Def) -> bool:
    """``self.name`` in a base class (mixin) that does not define ``name``: it runs a subclass's method, and
    every subclass of the mixin that defines ``name`` is in the target's family."""
    owner = graph.reader.get_def(family.target.parent_uid) if family.target.parent_uid else None
    if owner is None or holder.def_uid not in {a.def_uid for a in graph.ancestors(owner)}:
        return False
    implementers = [d for d in graph.descendants(holder) if d.def_uid != holder.def_uid
                    and any(m.parent_uid == d.def_uid for m in graph.reader.defs_named(family.target.name, _LIMIT))]
    return bool(implementers) and all(d.def_uid in family.classes for d in implementers)


def _after_super(graph: ClassGraph, ref: Ref) -> bool:
    # ``super().name``: the member follows a ``super()`` call; read the exact source before the token.
    return any(r.token == "super" and r.end_column == ref.column - 3 for r in graph.refs_on(ref.path, ref.line))


def owner_names(defs: Iterable[Def]) -> list[str]:
    return sorted({d.qualified_name for d in defs})
