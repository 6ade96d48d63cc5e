"""The class of a receiver in ``recv.name``, from syntax alone (no inference across calls).

Evidence, strongest first:
- ``Cls.name`` — the receiver is a name the index binds to a class → ``class`` (``candidate`` when the index
  left the name ANCHORED with that class as its only candidate);
- ``Cls(...).name`` — a constructor call right before the dot → ``constructed``;
- ``x.name`` where every binding site of ``x`` in its scope is ``x = Cls(...)`` or annotated ``x: Cls`` (a
  parameter annotation included) → ``assigned`` / ``annotated`` (``exact`` when each binding is that
  statement alone: nothing after the call, nothing before the name); a Java/C#/PHP/C/C++ declaration whose class
  the index records as its ``type:`` shape (``Cart c``, ``Item $i``, ``const Node* n``; a C typedef of a struct is
  the struct, ``typedef struct X {...} X_t;``) → ``declared``;
- ``a.m().name`` where the index linked ``m`` to a method declared to return a class → ``returned``; in C/C++,
  whose member uses the index leaves ANCHORED, ``a->m()->name`` and ``a->f->name`` where ``a`` is typed (any of
  these ways, three links deep at most) and its class declares ``m``/``f`` with a class → ``returned``;
  ``(*i)->name`` and ``i->name`` with ``std::vector<Node*>::iterator i`` → ``declared`` (``i.name`` is the
  iterator's own).
The type name is resolved through the index's reference fact at its exact position, never by name lookup — but
a C struct tag the index left unlinked (``typedef struct X X;`` beside ``struct X``) is the one struct so named.
Anything else (``self.x.name``, calls of functions, unions, strings) has no evidence and returns ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from codeplane.index.languages import detect
from codeplane.refactor.cdesignators import initialized_struct
from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.pywith import EnteredCall, entered_call, enters_itself
from codeplane.refactor.spans import SourceText
from codeplane.refactor.subscripts import Subscripts

_CLASS_KINDS = frozenset({"class", "interface", "struct", "trait", "enum", "record"})
#: A type name may be quoted, a forward reference (``Optional["Context"]``): the index links the name inside the quotes.
_ANNOTATION = re.compile(r"\s*:\s*(?:(?:t|typing)\.)?(?:Optional\[\s*)?[\"']?([A-Za-z_][\w.]*)[\"']?\s*(?:\]\s*)?"
                         r"(?:\|\s*None\s*)?(?:[=,)]|$)")
_ASSIGNED = re.compile(r"\s*(?::\s*[^=]+)?=\s*(?:new\s+)?([A-Za-z_$][\w.$]*)\s*\(")
#: C/C++ (``auto n = state->LookupNode(path);``): ``->`` between the names too.
_ASSIGNED_C = re.compile(r"\s*=\s*(?:new\s+)?([A-Za-z_]\w*(?:\s*(?:\.|->|::)\s*[A-Za-z_]\w*)*)\s*\(")
CHAIN = re.compile(r"([A-Za-z_][\w]*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*$")


@dataclass(frozen=True)
class ReceiverType:
    cls: Def
    evidence: str  # class | constructed | assigned | annotated | entered | ...
    #: Every binding is a statement ``x = Cls(...)`` and nothing more: the object is one ``Cls`` made there, as
    #: certain as ``Cls(...).name`` (``x = Cls().build()``, ``a, x = f(), Cls()`` or ``x = Cls() or y`` are not).
    exact: bool = False


#: How many links of a C++ chain (``a->b()->c()->name``) are followed back.
_CHAIN_DEPTH = 3
_CALLED, _FIELDS = frozenset({"method", "function"}), frozenset({"field"})
_DEREFERENCED = re.compile(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*(?:->|\.)\s*$")
#: ``typedef struct X Y;``, ``typedef struct X {...} Y;``, ``typedef struct X *P;``: the struct tag ``X``.
_TYPEDEF_STRUCT = re.compile(r"typedef\s+(?:const\s+)?(?:struct|union|class)\s+([A-Za-z_]\w*)\b")
_SELF_ATTR = re.compile(r"\b(?:self|cls|this)\s*\.\s*(\w+)\s*$")
_TYPE = r"(?:(?:t|typing)\.)?(?:Optional\[\s*)?[\"']?([A-Za-z_][\w.]*)[\"']?(?=\s*(?:\]|\|\s*None|[=,)#]|$))"
_SIGNATURE_END = re.compile(r"\)\s*(?:->.*)?:\s*(?:#.*)?$")
_SIGNATURE_LINES = 40
_JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts")
#: How far back (characters) a multi-line constructor call is followed.
_CALL_LOOKBACK = 4_000


def c_family(path: str) -> bool:
    """A C or C++ file: a value's declared class is its ``type:`` shape there (``Node* n``), as in Java."""
    info = detect(path)
    return info is not None and info.language in ("c", "cpp")


class Receivers:
    def __init__(self, reader: FactReader, refs: Callable[[str], list[Ref]],
                 text: Callable[[str], SourceText | None],
                 enclosing_class: Callable[[str, int, int], Def | None] | None = None,
                 lineage: tuple[Callable[[Def], list[Def]], Callable[[Def], list[Def]]] | None = None) -> None:
        self.reader = reader
        self.refs = refs
        self.text = text
        self.enclosing_class = enclosing_class
        #: A class's ancestors and its bases (``ClassGraph``), for what ``with Cls() as x`` binds.
        self.lineage = lineage
        self._chain_depth = 0
        self.subscripts = Subscripts(reader, refs, text, self._bound)

    def _typed(self, path: str, line: int, column: int, dotted: str, evidence: str) -> ReceiverType | None:
        cls = self._class_at(path, line, column, dotted)
        return ReceiverType(cls, evidence) if cls is not None else None

    def _param_type(self, src: SourceText, line: int, name: str) -> ReceiverType | None:
        """The annotation of parameter ``name`` of the function enclosing ``line``."""
        functions = [d for d in self.reader.defs_at(src.path, line) if d.kind in ("function", "method")]
        if not functions:
            return None
        fn = functions[-1]
        pattern = re.compile(r"[(,\s]" + re.escape(name) + r"\s*:\s*" + _TYPE)
        for number in range(fn.line, min(fn.end_line, fn.line + _SIGNATURE_LINES) + 1):
            text = src.line_text(number)
            match = pattern.search(text)
            if match:
                return self._typed(src.path, number, match.start(1), match.group(1), "annotated")
            if _SIGNATURE_END.search(text):
                return None
        return None

    def _attribute(self, src: SourceText, ref: Ref) -> ReceiverType | None:
        """``self.attr.name``: the class's own declarations of ``attr`` (annotation, constructor, typed param)."""
        match = _SELF_ATTR.search(src.line_text(ref.line)[: max(0, ref.column - 1)])
        if match is None or self.enclosing_class is None:
            return None
        klass = self.enclosing_class(ref.path, ref.line, ref.column)
        if klass is None:
            return None
        attr = re.escape(match.group(1))
        declared = re.compile(r"\b(?:self|this)\.(" + attr + r")\s*(?::\s*" + _TYPE + r")?\s*=\s*(.*)$")
        body_indent = None
        found: list[ReceiverType | None] = []
        for number in range(klass.line + 1, klass.end_line + 1):
            text = src.line_text(number)
            if body_indent is None and text.strip():
                body_indent = len(text) - len(text.lstrip())
            at_class_level = body_indent is not None and len(text) - len(text.lstrip()) == body_indent
            if at_class_level and (m := re.match(r"\s*" + attr + r"\s*:\s*" + _TYPE, text)):
                found.append(self._typed(src.path, number, m.start(1), m.group(1), "annotated"))
                continue
            m = declared.search(text)
            if m is None:
                continue
            if m.group(2):
                found.append(self._typed(src.path, number, m.start(2), m.group(2), "annotated"))
            elif (call := re.match(r"(?:new\s+)?([A-Za-z_$][\w.$]*)\s*\(", m.group(3))):
                found.append(self._typed(src.path, number, m.start(3) + call.start(1), call.group(1), "assigned"))
            elif (param := re.fullmatch(r"([A-Za-z_]\w*)\s*(?:#.*)?", m.group(3).strip())):
                found.append(self._param_type(src, number, param.group(1)))
            else:
                return None
        if not found or any(f is None for f in found):
            return None
        classes = {f.cls.def_uid for f in found if f is not None}
        first = found[0]
        return ReceiverType(first.cls, "attribute") if len(classes) == 1 and first is not None else None

    def _class_at(self, path: str, line: int, column: int, dotted: str) -> Def | None:
        """The class a type name written at (line, column) denotes, via the reference fact on its last part."""
        last = dotted.rsplit(".", 1)[-1].strip()
        end = column + len(dotted)
        for ref in self.refs(path):
            if ref.line == line and ref.token == last and ref.end_column == end and ref.target_uid:
                found = self.reader.get_def(ref.target_uid)
                return found if found is not None and found.kind in _CLASS_KINDS else None
        return None

    def _declared(self, site: Ref) -> ReceiverType | None:
        """A Java/C#/PHP/C/C++ declaration's class (its ``type:C`` shape: ``Cart c``, ``var c = new Cart()``,
        ``Item $i``, ``Node* n``): the index's reference on the written class name, on the same line, nearest the
        declared name. ``type:*C`` is a C++ iterator over ``C``s (evidence ``iterated``)."""
        written = (site.receiver_shape or "")[5:]
        # C++: ``*C`` an iterator over a container of ``C``s, ``[]C`` a container of them
        held = "iterated" if written.startswith("*") else "contained" if written.startswith("[]") else None
        last = re.split(r"[.\\]", written.lstrip("*[]"))[-1]
        named = [r for r in self.refs(site.path) if r.line == site.line and r.token == last and r.target_uid]
        named.sort(key=lambda r: (r.end_column > site.column, abs(r.column - site.column)))
        if c_family(site.path):
            # The type is written right before the name, maybe unlinked (``std::string s; util::string u;``: ``s``
            # is not ``u``'s class).
            named = self._written_type(site, last)
        cls = self.reader.get_def(named[0].target_uid) if named and named[0].target_uid else None
        if cls is None and (info := detect(site.path)) is not None and info.language == "c":
            # C: ``typedef struct X X;`` beside ``struct X {...}`` leaves the name ``X`` two definitions, so the
            # index did not link it; a struct tag is one type in the program: the one struct so named.
            tags = [d for d in self.reader.defs_named(last, 50) if d.kind in _CLASS_KINDS]
            cls = tags[0] if len(tags) == 1 and any(r.line == site.line and r.token == last
                                                    for r in self.refs(site.path)) else None
        if cls is not None and cls.kind == "type":
            cls = self._typedef_struct(cls)
        if cls is None or cls.kind not in _CLASS_KINDS:
            return None
        return ReceiverType(cls, held or "declared")

    def _declared_class(self, site: Ref) -> Def | None:
        typed = self._declared(site)
        return typed.cls if typed is not None else None

    def _written_type(self, site: Ref, name: str) -> list[Ref]:
        """C/C++: the reference to the type ``name`` nearest before the declared name (none or one)."""
        return sorted((r for r in self.refs(site.path) if r.line == site.line and r.token == name
                       and r.end_column <= site.column), key=lambda r: -r.end_column)[:1]

    def _typedef_struct(self, alias: Def) -> Def | None:
        """C's ``typedef struct X Y;`` (``Y`` may be ``X``): the one struct ``X`` the repository defines."""
        src = self.text(alias.path)
        if src is None:
            return None
        head = " ".join(src.line_text(n) for n in range(alias.line, min(alias.end_line, alias.line + 1) + 1))
        match = _TYPEDEF_STRUCT.match(head.lstrip())
        if match is None:
            return None
        found = [d for d in self.reader.defs_named(match.group(1), 50) if d.kind in _CLASS_KINDS]
        return found[0] if len(found) == 1 else None

    def declared_outside(self, receiver: Ref | None) -> bool:
        """A variable or field every declaration of which names a class the repository does not declare (a
        ``java.util.List``): its members are not the repository's."""
        if receiver is None or receiver.is_member:
            return False
        if receiver.target_uid is not None:
            owner = self.reader.get_def(receiver.target_uid)
            sites = [r for r in self.refs(owner.path) if owner is not None and r.line == owner.name_line
                     and r.column == owner.name_column and r.role == "DEFINITION"] if owner is not None else []
        elif receiver.bind_id is not None:
            sites = [r for r in self.refs(receiver.path)
                     if r.bind_id == receiver.bind_id and r.role == "DEFINITION" and not r.is_member]
        else:
            return False
        return bool(sites) and all(self._outside(s) for s in sites)

    def _outside(self, site: Ref) -> bool:
        shape = site.receiver_shape or ""
        if not shape.startswith("type:"):
            return False
        found = self._declared(site)
        if found is not None:
            return found.evidence == "contained"  # C++ ``std::vector<Node*> nodes``: ``nodes.size()`` is std's
        return not self._repository_class(shape) or self._qualified_elsewhere(site)

    def _qualified_elsewhere(self, site: Ref) -> bool:
        """C++: the declaration's type is written qualified (``std::string s``) and the index found no class there,
        though the repository has a class of that name in another namespace."""
        if not c_family(site.path):
            return False
        written = self._written_type(site, (site.receiver_shape or "")[5:].lstrip("*[]"))
        return bool(written) and written[0].target_uid is None and (written[0].receiver_shape or "").startswith("q:")

    def declared_in_other_package(self, receiver: Ref | None) -> bool:
        """Go: a local every declaration of which spells ``pkg.T`` where the index could not resolve ``T`` (a
        package outside the repository: ``file *modfile.File``): its members are not the repository's."""
        if receiver is None or receiver.is_member or receiver.bind_id is None:
            return False
        sites = [r for r in self.refs(receiver.path)
                 if r.bind_id == receiver.bind_id and r.role == "DEFINITION" and not r.is_member]

        def outside(site: Ref) -> bool:
            written = (site.receiver_shape or "")[5:]
            if not (site.receiver_shape or "").startswith("type:") or "." not in written or written.endswith("()"):
                return False
            last = written.rsplit(".", 1)[-1]
            spelled = sorted((r for r in self.refs(site.path) if r.line == site.line and r.token == last
                              and r.column > site.end_column), key=lambda r: r.column)
            return bool(spelled) and spelled[0].target_uid is None

        return bool(sites) and all(outside(s) for s in sites)

    def _repository_class(self, shape: str) -> bool:
        last = re.split(r"[.\\]", shape[5:].lstrip("*[]"))[-1]
        return any(d.kind in _CLASS_KINDS for d in self.reader.defs_named(last, 50))

    def _from_site(self, src: SourceText, site: Ref) -> ReceiverType | None:
        if (site.receiver_shape or "").startswith("type:"):
            return self._declared(site)
        if (site.receiver_shape or "").startswith("each:"):
            return self._each(src, site)
        if src.path.endswith((".py", ".pyi")) and (call := entered_call(src, site.line, site.column)) is not None:
            return self._entered(src, call)
        rest = src.line_text(site.line)[site.end_column:]
        assigned = _ASSIGNED_C if c_family(src.path) else _ASSIGNED
        for pattern, evidence in ((assigned, "assigned"), (_ANNOTATION, "annotated")):
            match = pattern.match(rest)
            if match:
                dotted = match.group(1)
                column = site.end_column + match.start(1)
                cls = self._class_at(src.path, site.line, column, dotted)
                if cls is None and c_family(src.path):  # C++ ``auto n = state.LookupNode(path);``
                    return self._call_result(src, _closing(src.text, src.offset(site.line, site.end_column
                                                                                 + match.end() - 1)))
                if cls is None:
                    return None
                exact = evidence == "assigned" and _whole_statement(src, site, site.end_column + match.end())
                return ReceiverType(cls, evidence, exact)
        return None

    def _entered(self, src: SourceText, call: EnteredCall) -> ReceiverType | None:
        """``with Cls(...) as x``: a ``Cls`` when its ``__enter__`` returns ``self`` (``pywith.py``); exact, like a
        statement ``x = Cls(...)``, when ``Cls`` is the whole context expression and defines that ``__enter__``."""
        cls = self._class_at(src.path, call.line, call.column, call.dotted)
        if cls is None or self.lineage is None:
            return None
        itself = enters_itself(self.reader, self.text, *self.lineage, cls, is_async=call.is_async)
        return ReceiverType(cls, "entered", call.whole and itself is True) if itself is not None else None

    def _constructed(self, src: SourceText, ref: Ref) -> ReceiverType | None:
        """``Cls(...).name``, the call possibly spanning lines (bounded look-back); C++ ``a.m()->name`` too."""
        dot = src.offset(ref.line, ref.column) - 1
        if dot > 0 and src.text[dot - 1:dot + 1] == "->" and c_family(ref.path):
            dot -= 1
        end = dot
        while end > 0 and src.text[end - 1].isspace():
            end -= 1
        return self._call_result(src, end)

    def _call_result(self, src: SourceText, end: int) -> ReceiverType | None:
        """What the call whose ``)`` ends right before ``end`` gives: an instance of the class called, or what the
        function or method called returns."""
        if end <= 0 or src.text[end - 1] != ")":
            return None
        floor = max(0, end - _CALL_LOOKBACK)
        depth = 0
        for index in range(end - 1, floor - 1, -1):
            char = src.text[index]
            depth += char == ")"
            depth -= char == "("
            if depth == 0:
                line, column = src.position(index)
                match = CHAIN.search(src.text[index - column:index])
                if match is None:
                    return None
                cls = self._class_at(src.path, line, match.start(1), match.group(1))
                if cls is not None:
                    return ReceiverType(cls, "constructed")
                returned = self._returned(src.path, line, match.start(1), match.group(1))
                if returned is None and c_family(src.path):  # ``a.m()->name``, ``a->m()->name``: ``m`` is a member
                    called = match.group(1).rsplit(".", 1)[-1].strip()
                    return self._member_type(src, line, match.end(1) - len(called), called, _CALLED)
                return returned
        return None

    def _this_class(self, ref: Ref) -> ReceiverType | None:
        """C++ ``this->m``: the class of the method it is in, written in the class or apart (``int K::f() {...}``,
        whose name the index links to ``K``'s declaration of ``f``)."""
        cls = self.enclosing_class(ref.path, ref.line, ref.column) if self.enclosing_class is not None else None
        if cls is None:
            methods = [d for d in self.reader.defs_at(ref.path, ref.line) if d.kind in ("method", "function")]
            site = next((r for r in self.refs(ref.path) if methods and r.line == methods[-1].name_line
                         and r.column == methods[-1].name_column and r.role == "DEFINITION"), None)
            declared = self.reader.get_def(site.target_uid) if site is not None and site.target_uid else None
            cls = self.reader.get_def(declared.parent_uid) if declared is not None and declared.parent_uid else None
        return ReceiverType(cls, "self") if cls is not None and cls.kind in _CLASS_KINDS else None

    def _field(self, src: SourceText, ref: Ref) -> ReceiverType | None:
        """C++ ``a->f->name`` / ``a.f.name``: the class member ``f`` of ``a``'s class is declared with."""
        for member in self.refs(ref.path):
            if member.line == ref.line and member.is_member and member.end_column in (ref.column - 1, ref.column - 2) \
                    and src.line_text(ref.line)[member.end_column:ref.column] in (".", "->"):
                return self._member_type(src, member.line, member.column, member.token, _FIELDS)
        return None

    def _member_type(self, src: SourceText, line: int, column: int, name: str,
                     kinds: frozenset[str]) -> ReceiverType | None:
        """C++ ``a->m()->name`` (``node->in_edge()->outputs_ready()``) or ``a->f->name``: the class the member's
        declaration names (its return type, its type), the member being of ``a``'s class (typed the same ways, a
        few links deep at most)."""
        if self._chain_depth >= _CHAIN_DEPTH:
            return None
        member = next((r for r in self.refs(src.path) if r.line == line and r.column == column and r.is_member
                       and r.token == name), None)
        if member is None:
            return None
        written = src.line_text(line)
        receiver = next((r for r in self.refs(src.path) if r.line == line and not r.is_member
                         and r.end_column in (column - 1, column - 2)
                         and written[r.end_column:column] in (".", "->")), None)
        self._chain_depth += 1
        try:
            owner = self.of(member, receiver)
        finally:
            self._chain_depth -= 1
        if owner is None:
            return None
        found = set()
        for d in self.reader.defs_named(name, 50):
            if d.parent_uid != owner.cls.def_uid or d.kind not in kinds:
                continue
            site = next((r for r in self.refs(d.path) if r.line == d.name_line and r.column == d.name_column
                         and r.role == "DEFINITION"), None)
            typed = self._declared(site) if site is not None and (site.receiver_shape or "").startswith("type:") \
                else None
            if typed is None or typed.evidence != "declared":
                return None  # a declaration of ``m`` whose return type says nothing: no answer
            found.add(typed.cls)
        return ReceiverType(found.pop(), "returned") if len(found) == 1 else None

    def _returned(self, path: str, line: int, column: int, dotted: str) -> ReceiverType | None:
        """``a.m().name`` where the index linked ``m`` to a Java/C#/PHP method whose declared return type is a
        class (its definition's ``type:`` shape): the class it returns."""
        last = dotted.rsplit(".", 1)[-1].strip()
        end = column + len(dotted)
        call = next((r for r in self.refs(path) if r.line == line and r.token == last and r.end_column == end
                     and r.target_uid), None)
        method = self.reader.get_def(call.target_uid) if call is not None and call.target_uid else None
        if method is None or method.kind not in ("method", "function"):
            return None
        site = next((r for r in self.refs(method.path) if r.line == method.name_line
                     and r.column == method.name_column and r.role == "DEFINITION"), None)
        found = self._declared(site) if site is not None and (site.receiver_shape or "").startswith("type:") else None
        if found is None and c_family(method.path):
            return self._written_return(method)
        return ReceiverType(found.cls, "returned") if found is not None else None

    def _written_return(self, function: Def) -> ReceiverType | None:
        """A C/C++ function defined at namespace scope (its name's shape is the namespace's): the class written
        right before its name on that line (``Status ReadBlock(...)``; not a qualifier, ``Status DBImpl::Get``)."""
        src = self.text(function.path)
        if src is None:
            return None
        text = src.line_text(function.name_line)
        written = [r for r in self.refs(function.path) if r.line == function.name_line and not r.is_member
                   and r.target_uid and r.end_column <= function.name_column
                   and not text[r.end_column:].lstrip().startswith("::")]
        cls = self.reader.get_def(max(written, key=lambda r: r.end_column).target_uid or "") if written else None
        return ReceiverType(cls, "returned") if cls is not None and cls.kind in _CLASS_KINDS else None

    def of(self, ref: Ref, receiver: Ref | None) -> ReceiverType | None:
        src = self.text(ref.path)
        if src is None:
            return None
        if receiver is None:
            if c_family(ref.path):
                if ref.receiver_shape == "this.":
                    return self._this_class(ref)
                if (ref.receiver_shape or "").startswith("init:"):  # ``{.x = 1}`` (``cdesignators.py``)
                    cls = initialized_struct(self.reader, ref, self._typedef_struct, self._declared_class)
                    return ReceiverType(cls, "initialized") if cls is not None else None
                return self._dereferenced(src, ref) or self._subscripted(src, ref) or self._constructed(src, ref) \
                    or self._field(src, ref)
            return self._constructed(src, ref) or self._attribute(src, ref)
        if receiver.target_uid is not None:
            owner = self.reader.get_def(receiver.target_uid)
            if owner is not None and owner.kind in _CLASS_KINDS:
                # An ANCHORED name keeps the one class the syntax leaves, not a proven one.
                return ReceiverType(owner, "candidate" if receiver.tier == "ANCHORED" else "class")
        found = self._bound(src, receiver)
        if found is not None and (found.evidence == "contained" or (found.evidence == "iterated" and src.line_text(
                ref.line)[receiver.end_column:ref.column].strip() != "->")):
            return None  # ``nodes.size()``, ``i.m``: the container's or the iterator's own member
        return found

    def _bound(self, src: SourceText, receiver: Ref) -> ReceiverType | None:
        """The class every binding site of a local or parameter gives it, or the one definition site of the
        module-level variable or field it names (``x = Cls(...)``, ``const x = new Cls()``, ``Edge* in_edge_;``)."""
        if receiver.target_uid is not None:
            owner = self.reader.get_def(receiver.target_uid)
            if owner is None or owner.kind not in ("variable", "constant", "field", "property"):
                return None
            owner_src = self.text(owner.path)
            site = next((r for r in self.refs(owner.path) if r.line == owner.name_line
                         and r.column == owner.name_column and r.role == "DEFINITION"), None)
            return self._from_site(owner_src, site) if owner_src is not None and site is not None else None
        if receiver.bind_id is None:
            return None
        sites = [r for r in self.refs(receiver.path)
                 if r.bind_id == receiver.bind_id and r.role == "DEFINITION" and not r.is_member]
        if not sites:
            return None
        found = [self._from_site(src, s) for s in sites]
        if any(f is None for f in found):
            return None
        classes = {f.cls.def_uid for f in found if f is not None}
        first = found[0]
        if len(classes) != 1 or first is None:
            return None
        return ReceiverType(first.cls, first.evidence, all(f is not None and f.exact for f in found))

    def _each(self, src: SourceText, site: Ref) -> ReceiverType | None:
        """C++ ``for (auto* n : nodes)``: the class of what ``nodes``, a standard container, holds."""
        name = (site.receiver_shape or "")[5:]
        ranged = next((r for r in self.refs(site.path) if r.line == site.line and r.column > site.column
                       and r.token == name and not r.is_member), None)
        found = self._bound(src, ranged) if ranged is not None else None
        return ReceiverType(found.cls, "declared") if found is not None and found.evidence == "contained" else None

    def _dereferenced(self, src: SourceText, ref: Ref) -> ReceiverType | None:
        """C++ ``(*i)->m`` or ``(*p).m``: the class ``i`` iterates over (``std::vector<Node*>::iterator i``) or ``p``
        points at (``Node** p``, ``Node* p``)."""
        match = _DEREFERENCED.search(src.line_text(ref.line)[:ref.column])
        if match is None:
            return None
        name = next((r for r in self.refs(ref.path) if r.line == ref.line and r.column == match.start(1)
                     and not r.is_member), None)
        found = self._bound(src, name) if name is not None else None
        return ReceiverType(found.cls, "declared") if found is not None else None

    def _subscripted(self, src: SourceText, ref: Ref) -> ReceiverType | None:
        """C++ ``files[i]->m``, ``(*flist_)[i]->m``, ``keys[i].size()``: the element class (``subscripts.py``)."""
        cls = self.subscripts.element(src, ref)
        return ReceiverType(cls, "declared") if cls is not None else None

    def wrapper_member(self, ref: Ref, receiver: Ref | None) -> bool:
        return self.subscripts.wrapper_member(ref, receiver)

    def subscripted_container(self, ref: Ref) -> bool:
        return self.subscripts.container(ref)

def _closing(text: str, opening: int) -> int:
    """The offset right after the ``)`` matching the ``(`` at ``opening`` (0 if none within the look-back)."""
    depth = 0
    for index in range(opening, min(len(text), opening + _CALL_LOOKBACK)):
        depth += text[index] == "("
        depth -= text[index] == ")"
        if depth == 0:
            return index + 1
    return 0


def _whole_statement(src: SourceText, site: Ref, call_open: int) -> bool:
    """Whether the binding at ``site`` is a statement of its own, ``name = Cls(...)``: only indentation (JS/TS:
    ``const``) before the name, and nothing after the call's closing parenthesis but a comment or ``;``. Strings
    on one line inside the call are skipped; anything unusual (a comment or a string spanning lines inside it, no
    closing parenthesis within the look-back) answers False, the cautious answer."""
    before = src.line_text(site.line)[:site.column].strip()
    # JS/TS: ``const`` is the one binding there is (``let``/``var`` may be assigned again elsewhere).
    if before and not (before in ("const", "export const") and src.path.endswith(_JS_SUFFIXES)):
        return False
    text, depth, quote = src.text, 1, ""
    index = src.offset(site.line, call_open)  # just after ``(``
    limit = min(len(text), index + _CALL_LOOKBACK)
    while index < limit:
        char = text[index]
        if quote:
            if char == "\n":
                return False
            if char == "\\":
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            return False
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                line, column = src.position(index)
                return re.fullmatch(r"\s*(?:;.*|#.*)?", src.line_text(line)[column + 1:]) is not None
        index += 1
    return False
