"""Instance attributes of one certain class: ``self.x.m()`` calls ``K.m`` when ``self.x`` can only be a ``K``.

The symbol-level impact walk (``impact_symbols.py``) follows ``obj.m()`` on an unknown receiver to every method
named ``m``. For ``self.x.m()`` inside a method of class ``A`` the receiver is often plain from the source: every
store of an attribute ``x`` anywhere is ``self.x = K(...)`` in a method of ``A`` (its ``self`` the method's first
parameter), a call of a repository class ``K`` whose construction the source shows whole. Then ``self.x`` is
exactly a ``K`` (or unset), and ``self.x.m()`` runs ``m`` as ``K`` or a repository base of ``K`` defines it,
never a method of an unrelated class. When every store is a dict, list or set display or comprehension
(``self._rules: dict[str, Rule] = {}``) or a call of the builtin ``dict``, ``list``, ``set``, ``frozenset`` or
``tuple``, ``self.x.m()`` is the builtin's ``m``, no repository definition.
Computed from the index's facts (member stores are ``DEFINITION`` refs, the constructor's name resolves to its
class) and the statement's own text, parsed by ``ast``.

Everything not certain leaves the attribute untyped, so the use counts as before (never narrower than is
safe): another store of ``x`` anywhere (another type, another class, a test's ``obj.x = ...``, a tuple target,
``+=``, ``for``/``with`` targets), a definition named ``x`` in a class (a property, a descriptor), ``setattr``/
``__setattr__``/``__dict__``/``vars`` in ``A``'s file, attribute hooks (``__setattr__``, ``__getattribute__``,
``__getattr__``) in ``A``'s hierarchy or a base of ``A`` that does not resolve, a string ``"x"`` near a
``setattr``/``patch.object`` anywhere (``monkeypatch.setattr(obj, "x", ...)``), a constructor that may hand
back something else (a decorated class outside a few that keep the class, a metaclass, ``__new__``,
``__getattr__``, a base from another library or one that does not resolve). And ``k.m`` is ``m`` of ``K``'s
classes only while no code anywhere stores an attribute ``m`` (``self.write = out.write``) or ``__class__`` on
some object and none of them writes attributes by computed names.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Literal

from codeplane.testing.impact_code import PythonCode
from codeplane.testing.impact_reach import Def
from codeplane.testing.impact_text import WORD, builtin_class, header_end

#: ``self.x.`` right before a member's column: (column of ``self``, ``x``).
_SELF_ATTRIBUTE = re.compile(r"\bself\s*\.\s*([A-Za-z_]\w*)\s*\.\s*$")
#: ``self.`` right before a stored attribute's column.
_SELF_STORE = re.compile(r"\bself\s*\.\s*$")
#: Method decorators that keep ``self`` the instance (the last dotted name of each, before any arguments).
_KEEPS_SELF = frozenset({"property", "setter", "getter", "deleter", "cached_property", "abstractmethod", "override",
                         "final", "overload", "contextmanager", "asynccontextmanager", "wraps", "lru_cache", "cache",
                         # pytest binds a test class's fixture method to the instance running the test
                         "fixture"})
#: Dunders whose first parameter is never an instance (implicit static and class methods).
_NOT_INSTANCE = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
#: Dunders on the constructed class that may make it hand back, or look like, something else.
_UNCERTAIN_DUNDERS = frozenset({"__new__", "__getattr__", "__getattribute__", "__class__"})
#: ``pytest.mark.name`` / ``mark.name``: a pytest mark, which hands back the function it decorates, marked.
_MARK = re.compile(r"(?:pytest\.)?mark\.[A-Za-z_]\w*$")
#: A decorator line's dotted name.
_DECORATOR = re.compile(r"\s*@\s*([\w. ]+)")
#: Class decorators that give back the same class with the body's methods (attrs, dataclasses, functools).
_KEEPING = re.compile(r"^@\s*(?:(?:dataclasses|attr|attrs|functools|typing|t)\s*\.\s*)?"
                      r"(?:dataclass|s|attrs|define|frozen|mutable|total_ordering|final)\b")
#: Statements in ``A``'s file that may store any attribute by a computed name (reading ``__dict__`` through one of
#: a dict's reading methods stores none: requests' ``LookupDict.get`` is ``self.__dict__.get(key, default)``).
_DYNAMIC_STORE = re.compile(r"setattr|__dict__(?!\s*\.\s*(?:get|items|keys|values|copy)\s*\()|\bvars\s*\(")
#: Lines looked at for the attribute's name as a string after a ``setattr``/``patch.object`` call opens.
_SETTER_LINES = 4
#: Modules whose base classes define no hooks that hand an instance's attributes elsewhere.
_ABSTRACT_MODULES = frozenset({"abc", "collections.abc", "typing", "typing_extensions"})
#: A ``def name(`` (type parameters allowed) right before a first parameter.
_DEF_OPENED = re.compile(r"\bdef\s+([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?\(\s*$")
#: A string literal spelling a name.
_QUOTED_NAME = re.compile(r"""["']([A-Za-z_]\w*)["']""")
#: A string literal spelling a dotted path: its last name (what ``patch("pkg.mod.X")`` replaces).
_DOTTED_TAIL = re.compile(r"""["'][A-Za-z_][\w.]*\.([A-Za-z_]\w*)["']""")
#: A class-level ``name: T`` or ``name = <literal>``.
_PLAIN_VALUE = re.compile(r"""([A-Za-z_]\w*)\s*(?::[^=]*)?(?:=\s*(?:None|True|False|-?\d[\w.]*|[rbuRBU]?['"].*)"""
                          r"\s*(?:#.*)?)?$")
#: Statement lines parsed at most.
_STATEMENT_LINES = 20
#: What ``attribute_class`` answers for an attribute every store makes a builtin dict, list or set.
CONTAINER = "builtin:container"
#: Builtins whose call makes a container of that builtin class.
_CONTAINER_CALLS = frozenset({"dict", "list", "set", "frozenset", "tuple"})


def self_attribute(text: str, col: int) -> tuple[int, str] | None:
    """(column of ``self``, ``x``) when the member at ``col`` is accessed as ``self.x.<member>`` (``self`` not
    itself an attribute of something)."""
    if "self" not in text:
        return None
    found = _SELF_ATTRIBUTE.search(text, 0, col)
    if found is None:
        return None
    start = found.start()
    before = text[:start].rstrip()
    if before.endswith("."):
        return None
    return start, found.group(1)


class AttributeTypes:
    """Answers for one walk; what every walk of an index epoch computes alike is kept in its ``WalkFacts``."""

    def __init__(self, code: PythonCode) -> None:
        self.code = code
        self.facts = code.facts

    def classify(self, site: tuple[int, int, int], used: Def, owner: Def | None) -> Literal["out", "exact"] | None:
        """For the member use at ``site`` (``self.x.<name>`` there) of ``used``'s name: ``out`` when it certainly
        cannot denote ``used`` (a method of class ``owner``; None: a module-level function), ``exact`` when it can
        only denote ``used``, None otherwise. ``self.x`` is always an instance of one class ``K`` when every store
        of ``x`` is ``self.x = K(...)``; then ``owner`` must be ``K`` or a repository base of it (for a module-level
        function: none of those classes binds the name to a value, which could be that function), and no instance
        stores its own attribute so named (``self.write = out.write`` would make ``k.write`` another object's
        method)."""
        held = self._attribute_holder(site)
        if held == CONTAINER:
            return "out"  # ``self._rules.values()``: a dict's, no repository definition
        k = self.code.get(held)
        if k is None:
            return None
        if self.excludes_instance(k, owner, used.name):
            return "out"
        return "exact" if owner is not None and self.denotes(k, used) else None

    def _attribute_holder(self, site: tuple[int, int, int]) -> str | None:
        """The def uid of the one class ``K`` of ``self.x`` in ``self.x.<member>`` at ``site`` (``CONTAINER``: a
        builtin dict, list or set), when certain."""
        file_id, line, col = site
        text = self.code._line(self.code.path_of.get(file_id, ""), line)
        found = self_attribute(text, col) if text is not None else None
        if found is None:
            return None
        stores = self._stores(found[1])  # what does not depend on the class first: most names end here
        if stores is None:
            return None
        cls = self._instance_class(file_id, line, found[0])
        if cls is None or cls.file_id != stores[0]:
            return None
        return self.attribute_class(cls, found[1], stores[1])

    def excludes_instance(self, k: Def, owner: Def | None, member: str, *, stores_ignored: bool = False) -> bool:
        """Whether ``member`` of an object that is certainly a ``k`` cannot denote ``member`` of ``owner`` (the
        rules of ``classify``, once the receiver's class is known). A base's method is not what the object runs
        when ``k`` itself defines the method, undecorated: a class's own namespace comes first in any MRO.
        ``stores_ignored``: what an instance store puts there cannot be ``member`` (``impact_descriptors``)."""
        ancestors = self._classes_holding(k, member, stores_ignored=stores_ignored)
        if ancestors is None:
            return False
        if owner is None:
            return not any(str(parent) in ancestors and kind not in ("function", "method", "class")
                           for parent, kind in self.code.rows(
                               "SELECT parent_uid, kind FROM st_def WHERE name_lc = ? AND name = ?",
                               (member.lower(), member)))
        if owner.uid in ancestors:
            return owner.uid != k.uid and any(
                d.parent == k.uid and d.name == member and d.kind in ("function", "method")
                and not self.code.decorator_block(d)[1] for d in self.code.defs_of(k.file_id))
        return True

    def denotes(self, k: Def, used: Def) -> bool:
        """Whether ``x.<name>`` on an object that is certainly a ``k`` can only be ``used`` (a method): the one
        definition of its name in ``k``'s classes, while no object stores an attribute so named (the other rules of
        ``excludes_instance``)."""
        ancestors = self._classes_holding(k, used.name)
        return ancestors is not None and used.parent in ancestors and [str(uid) for uid, parent in self.code.rows(
            "SELECT def_uid, parent_uid FROM st_def WHERE name_lc = ? AND name = ?", (used.name.lower(), used.name))
                if parent in ancestors] == [used.uid]

    def _classes_holding(self, k: Def, member: str, *, stores_ignored: bool = False) -> frozenset[str] | None:
        """``k`` and its repository bases when ``<a k>.<member>`` can only be what those classes define: no code
        stores an attribute ``member`` (unless ``stores_ignored``) or ``__class__`` on some object, nor writes
        attributes by computed names in their files; None otherwise."""
        ancestors = self.mro(k)
        if ancestors is None or (not stores_ignored and self.stored_anywhere(member)) or self.stored_anywhere(
                "__class__") or any(
                (d := self.code.get(uid)) is None or self._dynamic_file(d.file_id) for uid in sorted(ancestors)):
            return None
        return ancestors

    def stored_anywhere(self, name: str) -> bool:
        """Whether some code may store an attribute ``name`` on an object: a member store of it, a
        ``setattr``-like call naming it."""
        memo = self.facts.stored_members
        if name not in memo:
            memo[name] = self.code.conn.execute(
                "SELECT 1 FROM st_ref WHERE token_text = ? AND role = 'DEFINITION' AND is_member = 1 LIMIT 1",
                (name,)).fetchone() is not None or self._named_dynamically(name)
        return memo[name]

    def rebindable_global(self, name: str) -> bool:
        """Whether code may rebind a module-level variable ``name`` from outside its module: an attribute store of
        it anywhere (``mod.name = ...``), a ``setattr``-like call naming it, or a patch of a dotted path ending in
        it (``patch("pkg.mod.name", ...)``)."""
        return self.stored_anywhere(name) or f".{name}" in self._setter_strings()

    def _named_dynamically(self, name: str) -> bool:
        if any(pattern not in ("getattr", "hasattr") for *_, pattern in self.facts.dynamic_sites(self.code.conn,
                                                                                                   name)):
            return True
        named = self._setter_strings()
        return name in named or "*" in named

    # -- the receiver --------------------------------------------------------------------------------------
    def _instance_class(self, file_id: int, line: int, col: int) -> Def | None:
        """The class ``A`` when ``self`` at (``line``, ``col``) is the first parameter, never rebound, of a
        method defined directly in ``A`` (no static or class method)."""
        key = (file_id, line, col)
        memo = self.facts.self_classes
        if key not in memo:
            cls = self._self_class(file_id, line, col)
            memo[key] = cls.uid if cls is not None else None
        return self.code.get(memo[key])

    def _self_class(self, file_id: int, line: int, col: int) -> Def | None:
        sites = self.code.conn.execute(
            "SELECT d.start_line, d.start_col FROM st_ref r JOIN st_bind b ON b.bind_id = r.bind_id JOIN st_ref d "
            "ON d.file_id = r.file_id AND d.bind_id = b.bind_id AND d.role = 'DEFINITION' WHERE r.file_id = ? "
            "AND r.start_line = ? AND r.start_col = ? AND b.reason_code = 'PARAM'", (file_id, line, col)).fetchall()
        if len(sites) != 1:
            return None
        param_line, param_col = int(sites[0][0]), int(sites[0][1])
        method = self.code.innermost(file_id, param_line)
        if method is None or method.kind != "method" or method.name in _NOT_INSTANCE:
            return None
        cls = self.code.get(method.parent)
        if cls is None or cls.kind != "class":
            return None
        lines = self.code.read_lines(self.code.path_of.get(file_id, ""))
        top, _ = self.code.decorator_block(method)
        for text in lines[top - 1:method.start - 1]:
            named = _DECORATOR.match(text)
            if named is not None and named.group(1).rsplit(".", 1)[-1].replace(" ", "") not in _KEEPS_SELF and (
                    not _pytest_mark(named.group(1).replace(" ", ""), lines)):
                return None
        if not method.start <= param_line <= len(lines):
            return None
        head = "\n".join(lines[method.start - 1:param_line])
        cut = len(head) - len(lines[param_line - 1]) + param_col
        opened = _DEF_OPENED.search(head, 0, cut)
        return cls if opened is not None and opened.group(1) == method.name else None

    # -- the attribute ---------------------------------------------------------------------------------------
    def _stores(self, name: str) -> tuple[int, tuple[tuple[int, int], ...]] | None:
        """(file id, (line, column) of each) of the stores of attribute ``name``, when every one is a
        ``self.name`` store in one file and nothing else can store in it (a class member so named that is not
        a plain class-level value, a ``setattr``-like call naming it); None otherwise. Once per epoch."""
        memo = self.facts.attribute_stores
        if name not in memo:
            memo[name] = self._find_stores(name)
        return memo[name]

    def _find_stores(self, name: str) -> tuple[int, tuple[tuple[int, int], ...]] | None:
        conn = self.code.conn
        rows = conn.execute("SELECT file_id, start_line, start_col, receiver_shape FROM st_ref WHERE token_text = ? "
                            "AND role = 'DEFINITION' AND is_member = 1", (name,)).fetchall()
        files = {int(f) for f, _, _, _ in rows}
        if len(files) != 1 or any(shape != "self." for _, _, _, shape in rows):
            return None
        file_id = files.pop()
        for def_file, kind, line in conn.execute(
                "SELECT d.file_id, d.kind, d.start_line FROM st_def d JOIN st_def p ON p.def_uid = d.parent_uid "
                "WHERE d.name_lc = ? AND d.name = ? AND p.kind = 'class'", (name.lower(), name)):
            lines = self.code.read_lines(self.code.path_of.get(int(def_file), ""))
            if kind != "variable" or not _plain_class_value(lines, int(line), name):
                return None
        if self._named_dynamically(name):
            return None
        return file_id, tuple(sorted((int(ln), int(c)) for _, ln, c, _ in rows))

    def attribute_class(self, cls: Def, name: str, stores: Sequence[tuple[int, int]]) -> str | None:
        """The def uid of the one class every instance of ``cls`` holds in attribute ``name``, when certain
        (``stores``: every store of ``name``, all in ``cls``'s file)."""
        key = (cls.uid, name)
        memo = self.facts.attribute_types
        if key not in memo:
            memo[key] = self._attribute_class(cls, name, stores)
        return memo[key]

    def _attribute_class(self, cls: Def, name: str, stores: Sequence[tuple[int, int]]) -> str | None:
        if self._dynamic_file(cls.file_id) or self._hooked(cls):
            return None
        for (parent,) in self.code.rows(
                "SELECT d.parent_uid FROM st_def d JOIN st_def p ON p.def_uid = d.parent_uid WHERE d.name_lc = ? "
                "AND d.name = ? AND p.kind = 'class'", (name.lower(), name)):
            if parent != cls.uid:
                return None
        typed = {self._stored_class(cls, line, col, name) for line, col in stores}
        return typed.pop() if len(typed) == 1 else None

    def _hooked(self, cls: Def) -> bool:
        """Whether storing or reading an attribute of an instance of ``cls`` may run code: a base is unknown or
        from another library, or ``cls``, a base or a subclass (or a class whose bases are unknown) defines
        ``__setattr__``, ``__getattribute__`` or ``__getattr__`` (which answers while ``x`` is unset)."""
        mine = self.mro(cls)
        if mine is None:
            return True
        for (uid,) in self.code.rows(
                "SELECT p.def_uid FROM st_def d JOIN st_def p ON p.def_uid = d.parent_uid WHERE d.name_lc IN "
                "('__setattr__', '__getattribute__', '__getattr__') AND p.kind = 'class'", ()):
            other = self.code.get(str(uid))
            theirs = self.mro(other) if other is not None else None
            if other is None or uid in mine or (cls.uid in theirs if theirs is not None else self.may_derive(
                    other, cls, set())):
                return True
        return False

    def may_derive(self, other: Def, cls: Def, seen: set[str]) -> bool:
        """Whether ``other`` may be ``cls`` or a subclass of it: a base that is, or may derive from it, or that
        does not resolve. A base imported from another distribution cannot derive from a repository class
        (werkzeug's ``WSGIRequestHandler(BaseHTTPRequestHandler)`` with its ``__getattr__`` hooks no ``Map``)."""
        if other.uid == cls.uid:
            return True
        if other.uid in seen:
            return False
        seen.add(other.uid)
        code = self.code
        path = code.path_of.get(other.file_id, "")
        lines = code.read_lines(path)
        loose = other.file_id in self.facts.loose_files(code.conn)
        for target, via, resolved, key, line, col in code.rows(
                "SELECT r.target_uid, r.via_import_uid, i.resolved_file_id, i.target_key, r.start_line, r.start_col "
                "FROM st_ref r LEFT JOIN st_import i ON i.import_uid = r.via_import_uid WHERE r.file_id = ? "
                "AND r.start_line BETWEEN ? AND ? AND r.role = 'REFERENCE'",
                (other.file_id, other.start, header_end(lines, other.start))):
            text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
            if text[:int(col)].count("[") > text[:int(col)].count("]"):
                continue  # a type argument is no base
            base = code.get(target)
            if base is not None and base.kind == "class":
                if self.may_derive(base, cls, seen):
                    return True
            elif via is not None and resolved is None and isinstance(key, str) and key.startswith("py:") and (
                    not self.facts.own_package(key[3:].split(".", 1)[0])):
                continue  # another distribution's class
            elif not (target is None and via is None and not loose and builtin_class(lines, int(line), int(col))):
                return True
        return False

    def _dynamic_file(self, file_id: int) -> bool:
        """Whether the file may store attributes by computed names (``setattr``, ``__dict__``, ``vars()``)."""
        memo = self.facts.dynamic_files
        if file_id not in memo:
            lines = self.code.read_lines(self.code.path_of.get(file_id, ""))
            memo[file_id] = not lines or _DYNAMIC_STORE.search("\n".join(lines)) is not None
        return memo[file_id]

    def _stored_class(self, cls: Def, line: int, col: int, name: str) -> str | None:
        """The class ``K`` when the store of ``name`` at (``line``, ``col``) is ``self.name = K(...)`` in a method
        of ``cls`` whose ``self`` is its instance."""
        code = self.code
        path = code.path_of.get(cls.file_id, "")
        text = code._line(path, line)
        found = _SELF_STORE.search(text, 0, col) if text is not None else None
        if found is None or text is None or text[:found.start()].rstrip().endswith(".") or (
                self._instance_class(cls.file_id, line, found.start()) != cls):
            return None
        lines = code.read_lines(path)
        if assigned_container(lines, line, found.start(), name):
            return CONTAINER
        callee = assigned_call(lines, line, found.start(), name)
        if callee is not None and self._builtin_container(cls.file_id, lines, callee):
            return CONTAINER
        k = self.constructed_class(cls.file_id, callee) if callee is not None else None
        return k.uid if k is not None else None

    def _builtin_container(self, file_id: int, lines: Sequence[str], callee: tuple[int, int]) -> bool:
        """Whether the callee at (line, column) is the builtin ``dict``/``list``/``set``/``frozenset``/``tuple``
        (``self.mapping = dict(default_exceptions)``): the name alone, bound to nothing in the file."""
        line, col = callee
        word = WORD.match(lines[line - 1], col) if 0 < line <= len(lines) else None
        return word is not None and word.group(0) in _CONTAINER_CALLS and (
            col == 0 or lines[line - 1][col - 1] != ".") and not self.code.rows(
            "SELECT 1 FROM st_ref WHERE file_id = ? AND start_line = ? AND start_col = ? AND (target_uid IS NOT NULL "
            "OR bind_id IS NOT NULL)", (file_id, line, col))

    def constructed_class(self, file_id: int, callee: tuple[int, int]) -> Def | None:
        """The repository class the callee at (line, column) of ``file_id`` names, when calling it certainly
        makes an instance of it (``_constructs_itself``)."""
        targets = self.code.rows("SELECT target_uid FROM st_ref WHERE file_id = ? AND start_line = ? AND start_col = ? "
                                 "AND role = 'REFERENCE'", (file_id, *callee))
        if len(targets) != 1 or targets[0][0] is None:
            return None
        k = self.code.get(str(targets[0][0]))
        return k if k is not None and k.kind == "class" and self._constructs_itself(k) else None

    def _setter_strings(self) -> frozenset[str]:
        """The names written as a string right after a ``setattr``/``__setattr__``/``setitem``/``patch.object``
        call opens anywhere (``monkeypatch.setattr(ctx, "name", fake)``): any of them may be stored anything; and,
        marked ``.name``, the last name of a dotted string after any ``patch`` or ``setattr`` (``patch("pkg.mod.name",
        fake)``).
        Once per epoch, and only when some attribute got this far; per file, so that after an edit only the
        changed files are read again (``WalkFacts.carry``)."""
        facts = self.facts
        if facts.setter_strings is None:
            by_file, pending = facts.setter_strings_of, facts.setter_files_pending
            if by_file is None or pending is None:
                by_file, wanted = {}, ""
            else:
                by_file, wanted = dict(by_file), f"AND file_id IN ({','.join(str(f) for f in sorted(pending))})"
            found: dict[int, set[str]] = {}
            for file_id, line, token in self.code.conn.execute(
                    "SELECT DISTINCT file_id, start_line, token_text FROM st_ref WHERE ((token_text IN ('setattr', "
                    "'__setattr__', 'object', 'setitem') AND is_member = 1) OR token_text = 'patch') AND role = "
                    f"'REFERENCE' {wanted}"):
                names = found.setdefault(int(file_id), set())
                lines = self.code.read_lines(self.code.path_of.get(int(file_id), ""))
                if not lines:
                    names.add("*")  # unreadable: it may name any attribute
                window = lines[int(line) - 1:int(line) - 1 + _SETTER_LINES]
                if token != "patch":  # ``patch("x")``'s plain strings are targets' paths or its other arguments
                    names.update(m.group(1) for t in window for m in _QUOTED_NAME.finditer(t))
                # ``patch("pkg.mod.X", ...)``, ``monkeypatch.setattr("pkg.mod.X", ...)``: the target's last name,
                # marked (``.X``): it rebinds a module's global (``rebindable_global``); an attribute patched so holds
                # a stand-in whose methods are no repository definition, which ``stored_anywhere`` need not count.
                names.update("." + m.group(1) for t in window for m in _DOTTED_TAIL.finditer(t))
            by_file.update((f, frozenset(names)) for f, names in found.items())
            facts.setter_strings_of, facts.setter_files_pending = by_file, frozenset()
            facts.setter_strings = frozenset().union(*by_file.values())
        return facts.setter_strings

    # -- the constructed class ---------------------------------------------------------------------------------
    def _constructs_itself(self, k: Def) -> bool:
        """Whether calling ``k`` certainly makes a ``k``, whose attributes its classes' bodies define: no
        ``__new__`` or attribute hooks, metaclass, unknown decorator, or base from elsewhere. Once per epoch."""
        memo = self.facts.constructs_itself
        if k.uid not in memo:
            memo[k.uid] = self._find_constructs_itself(k)
        return memo[k.uid]

    def _find_constructs_itself(self, k: Def) -> bool:
        ancestors = self.mro(k)
        if ancestors is None:
            return False
        for uid in sorted(ancestors):
            d = self.code.get(uid)
            if d is None:
                return False
            lines = self.code.read_lines(self.code.path_of.get(d.file_id, ""))
            header = " ".join(lines[d.start - 1:header_end(lines, d.start)])
            if not lines or "metaclass" in header:
                return False
            top, _ = self.code.decorator_block(d)
            if any(t.strip().startswith("@") and not _KEEPING.match(t.strip()) for t in lines[top - 1:d.start - 1]):
                return False
            if any(m.parent == d.uid and m.name in _UNCERTAIN_DUNDERS for m in self.code.defs_of(d.file_id)):
                return False
        return True

    def mro(self, k: Def) -> frozenset[str] | None:
        """``k`` and its repository base classes, transitively, when every base is a repository class or a
        builtin class (``object``, ``Exception``...: none holds a repository method); None otherwise."""
        memo = self.facts.class_ancestors
        if k.uid in memo:
            return memo[k.uid]
        memo[k.uid] = None  # cycles
        code = self.code
        path = code.path_of.get(k.file_id, "")
        lines = code.read_lines(path)
        last = header_end(lines, k.start)
        found = {k.uid}
        loose = k.file_id in self.facts.loose_files(code.conn)
        for target, via, source, line, col in code.rows(
                "SELECT r.target_uid, r.via_import_uid, i.source_literal, r.start_line, r.start_col FROM st_ref r "
                "LEFT JOIN st_import i ON i.import_uid = r.via_import_uid WHERE r.file_id = ? "
                "AND r.start_line BETWEEN ? AND ? AND r.role = 'REFERENCE'", (k.file_id, k.start, last)):
            if code._is_keyword(path, int(line), int(col)):
                return None  # ``metaclass=``, ``**kwargs`` to ``__init_subclass__``
            text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
            if text[:int(col)].count("[") > text[:int(col)].count("]"):
                continue  # a type argument (``Generic[T]``, ``Mapping[str, V]``) is no base
            base = code.get(target)
            word = WORD.match(text, int(col))
            if via is not None and source in _ABSTRACT_MODULES and word is not None and (
                    not word.group(0).endswith("Meta")):  # ``ABCMeta``: its instances are classes
                continue  # ``MutableMapping``, ``Generic``, ``ABC``: mixins calling only the instance's own methods
            if base is not None and base.kind == "class":
                above = self.mro(base)
                if above is None:
                    return None
                found |= above
            elif target is None and via is None and not loose and builtin_class(lines, int(line), int(col)):
                continue
            else:
                return None
        result = frozenset(found)
        memo[k.uid] = result
        return result


def _plain_class_value(lines: Sequence[str], line: int, name: str) -> bool:
    """A class-level ``name: T``/``name = <literal>`` (no descriptor that could intercept the instance's own)."""
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    found = _PLAIN_VALUE.match(text)
    return found is not None and found.group(1) == name


def assigned_call(lines: Sequence[str], line: int, col: int, name: str, *, local: bool = False
                  ) -> tuple[int, int] | None:
    """(line, column) of the callee's last name when the statement starting at ``line`` is an assignment whose
    targets include ``self.<name>`` (``local``: the plain name ``<name>``) at column ``col`` (never inside a tuple)
    and whose value is a call of a plain dotted name: ``self.x = K(...)``, ``self.x: K = mod.K(...)``; None
    otherwise."""
    found = _assigned(lines, line, col, name, local=local)
    if found is None:
        return None
    value, rows, shifts = found
    if not isinstance(value, ast.Call):
        return None
    root: ast.expr = value.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None  # ``f().K(...)``, ``x[0](...)``: not a plain dotted name
    last = value.func
    if isinstance(last, ast.Attribute):
        if last.end_lineno is None or last.end_col_offset is None:
            return None
        row = last.end_lineno
        return line + row - 1, _chars(rows, row, last.end_col_offset) - len(last.attr) + shifts[row - 1]
    return line + root.lineno - 1, _chars(rows, root.lineno, root.col_offset) + shifts[root.lineno - 1]


#: Values that make a builtin container whatever names the file binds: displays and comprehensions.
_CONTAINERS = (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)


def assigned_container(lines: Sequence[str], line: int, col: int, name: str) -> bool:
    """Whether the statement starting at ``line`` stores a dict, list or set display or comprehension into
    ``self.<name>`` at column ``col`` (``self._rules: dict[str, Rule] = {}``)."""
    found = _assigned(lines, line, col, name, local=False)
    return found is not None and isinstance(found[0], _CONTAINERS)


def _assigned(lines: Sequence[str], line: int, col: int, name: str, *, local: bool
              ) -> tuple[ast.expr, list[str], list[int]] | None:
    """The value of the one-statement assignment at ``line`` whose targets include the name at ``col``, with the
    statement's rows and their removed indentation."""
    if not 0 < line <= len(lines):
        return None
    first = lines[line - 1]
    indent = len(first) - len(first.lstrip())
    if col < indent:
        return None
    rows: list[str] = []
    shifts: list[int] = []
    for text in lines[line - 1:line - 1 + _STATEMENT_LINES]:
        shift = indent if text[:indent].isspace() else 0
        rows.append(text[shift:])
        shifts.append(shift)
        try:
            tree = ast.parse("\n".join(rows))
        except SyntaxError:
            continue
        value = _value(tree, rows, shifts, (line, col), name=name, local=local)
        return (value, rows, shifts) if value is not None else None
    return None


def _value(tree: ast.Module, rows: Sequence[str], shifts: Sequence[int], site: tuple[int, int], *,
           name: str, local: bool) -> ast.expr | None:
    col = site[1]
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.Assign):
        targets, value = stmt.targets, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        targets, value = [stmt.target], stmt.value
    else:
        return None
    mine = [t for t in targets if (isinstance(t, ast.Name) and t.id == name if local else isinstance(
        t, ast.Attribute) and t.attr == name and isinstance(t.value, ast.Name) and t.value.id == "self")
            and t.lineno == 1 and _chars(rows, 1, t.col_offset) + shifts[0] == col]
    return value if mine else None


def _chars(rows: Sequence[str], lineno: int, offset: int) -> int:
    """``ast``'s UTF-8 byte offset on a row as a character column."""
    row = rows[lineno - 1] if 0 < lineno <= len(rows) else ""
    return len(row.encode("utf-8")[:offset].decode("utf-8", errors="replace"))


def _pytest_mark(name: str, lines: Sequence[str]) -> bool:
    """Whether the decorator ``name`` is a pytest mark (``pytest.mark.parametrize``, or a name the file binds only
    to one: ``params = pytest.mark.parametrize(...)``, then ``@params``): applying it hands back the method itself,
    so ``self`` stays the instance."""
    if _MARK.match(name):
        return True
    if not WORD.fullmatch(name):
        return False
    binding = re.compile(rf"\s*{re.escape(name)}\s*(?::[^=]*)?=(?!=)\s*(.*)")
    values = [found.group(1) for text in lines if (found := binding.match(text)) is not None]
    return bool(values) and all(re.match(r"(?:pytest\s*\.\s*)?mark\s*\.\s*[A-Za-z_]\w*\s*[(\n]?", v) for v in values)
