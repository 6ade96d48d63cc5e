"""The per-file pass of the C/C++ cross-file linker (``clink.py``): each reference linking may settle, in the
context its scope gives (the class of a method, the namespaces around), looked up in the ``Program``."""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from codeplane.index.languages import CPP_SUFFIXES
from codeplane.index.structural import schema
from codeplane.index.structural.classhierarchy import UNSETTLED, parameter_key
from codeplane.index.structural.cprogram import CLASSES, FUNCTIONS, CDef, Program, namespaces_of, one
from codeplane.index.structural.facts import CERTAIN, DEFINITION, PROVEN, REFERENCE, STRONG
from codeplane.index.structural.store import marks

_THIS = "this."
_TEST_MACROS = frozenset({"TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P"})
_TEST_MACRO = re.compile(r"\w+\s*\(\s*([A-Za-z_][\w:]*)\s*,")
#: File-scope bindings that leave a name to linking: a declaration without a definition, several definitions.
_FILE_REASONS = frozenset({"LOCAL_ASSIGN", "LOCAL_ASSIGN?", "DEF_IN_SCOPE?"})
_PROVEN, _STRONG = schema.TIER_CODE[PROVEN], schema.TIER_CODE[STRONG]
_DEFINITION, _REFERENCE = schema.ROLE_CODE[DEFINITION], schema.ROLE_CODE[REFERENCE]


#: What ``settleable`` reads of a reference: (ref_id, scope_id, token, role code, shape, local tier code, local
#: target, tier code, target). Plain rows: a cold index of a big C tree settles millions of them.
Row = tuple[int, int | None, str, int, str | None, int, str | None, int, str | None]


def settleable(conn: sqlite3.Connection, part: Sequence[int], known: Callable[[str], bool]) -> dict[int, list[Row]]:
    """The references linking may settle (file order, not source order: each is settled on its own):
    unresolved names, uses of a file-scope declaration without a definition (and the declaration itself), uses
    of a constructor in its class, the names of definitions, and members of ``this``."""
    q = marks(len(part))
    out: dict[int, list[Row]] = defaultdict(list)
    for file_id, *row in conn.execute(
            "SELECT file_id, ref_id, scope_id, token_text, role_code, receiver_shape, local_tier_code, "
            f"local_target_uid, tier_code, target_uid FROM st_ref WHERE file_id IN ({q}) AND ("
            "(is_member = 1 AND receiver_shape = 'this.') OR "  # ``this->m``
            "is_member = 0 AND (local_tier_code != 0 OR (role_code = 0 AND local_target_uid IS NOT NULL) OR "
            "bind_id IN (SELECT b.bind_id FROM st_bind b JOIN st_scope s ON s.scope_id = b.scope_id WHERE "
            f"b.file_id IN ({q}) AND s.kind = 'file' AND b.reason_code = 'LOCAL_ASSIGN' AND b.target_uid IS NULL) OR "
            "local_target_uid IN (SELECT d.def_uid FROM st_def d JOIN st_def c ON c.def_uid = d.parent_uid WHERE "
            f"d.file_id IN ({q}) AND d.kind = 'method' AND d.name = c.name)))",  # a constructor's uses in its class
            [*part, *part, *part]):
        if row[7] == row[5] and row[8] == row[6] and not known(row[2]):
            continue  # no definition has that name, and nothing was linked before
        out[file_id].append(tuple(row))
    return out



class FileScopes(NamedTuple):
    parents: dict[int, int | None]
    kinds: dict[int, str]
    starts: dict[int, tuple[int, int]]
    #: (scope, name) -> reasons of the bindings
    bound: dict[tuple[int, str], list[str]]


def file_scopes(conn: sqlite3.Connection, part: Sequence[int]) -> FileScopes:
    q = marks(len(part))
    parents: dict[int, int | None] = {}
    kinds: dict[int, str] = {}
    starts: dict[int, tuple[int, int]] = {}
    for scope, parent, kind, line, col in conn.execute(
            f"SELECT scope_id, parent_scope_id, kind, start_line, start_col FROM st_scope WHERE file_id IN ({q})",
            part):
        parents[scope], kinds[scope], starts[scope] = parent, kind, (line, col)
    bound: dict[tuple[int, str], list[str]] = defaultdict(list)
    for scope, name, reason, certainty in conn.execute(
            f"SELECT scope_id, name, reason_code, certainty FROM st_bind WHERE file_id IN ({q})", part):
        # one row per scope and name; an ambiguous one (``#if`` alternatives) is UNCERTAIN
        bound[(scope, name)].append(reason if certainty == CERTAIN else f"{reason}?")
    return FileScopes(parents, kinds, starts, bound)


class Linker:
    def __init__(self, program: Program, fresh: set[int]) -> None:
        self.p = program
        self.fresh = fresh
        #: (tier code, target, ref id) of the references whose tier or target changes.
        self.rows: list[tuple[int, str | None, int]] = []
        #: Member tokens (with their shape) whose tier moved in a file not rewritten this epoch.
        self.moved: set[tuple[str, str]] = set()

    def settle(self, row: Row, found: str | None) -> None:
        """STRONG to what linking found, else back to the per-file tier and target."""
        ref_id, _, _, _, _, local_tier, local_target, tier, target = row
        new = (_STRONG, found) if found is not None and found != UNSETTLED else (local_tier, local_target)
        if new != (tier, target):
            self.rows.append((new[0], new[1], ref_id))

    def file(self, file_id: int, refs: list[Row], scopes: FileScopes) -> None:
        p = self.p
        seen = p.seen(file_id)
        own = p.defs_in(file_id)
        defs = {(d.line, d.col): d for d in own}
        classes = [d for d in own if d.kind in CLASSES]
        context: dict[int | None, tuple[str | None, list[str]]] = {}
        fixtures: set[str] = set()

        def around(scope: int | None) -> tuple[str | None, list[str]]:
            """(class whose members a use sees, namespaces to look in) at a scope."""
            if scope in context:
                return context[scope]
            found: tuple[str | None, list[str]] = (None, [""])
            current = scope
            while current is not None:
                start = scopes.starts.get(current, (-1, -1))
                d = defs.get(start)
                if d is not None and d.kind in FUNCTIONS:
                    cls = self.owner_class(d, seen)
                    if cls is None and (cls := self.fixture(d, seen)) is not None:
                        fixtures.add(cls)
                    cls_def = p.definition(cls) if cls is not None else None
                    found = (cls, namespaces_of(cls_def.owner)) if cls_def is not None else \
                        (None, namespaces_of(d.owner))
                    break
                if scopes.kinds.get(current) == "class":  # a class body: the class's members, then its namespaces
                    holders = [c for c in classes if (c.line, c.col) <= start < c.end]
                    if holders:
                        cls_def = max(holders, key=lambda c: (c.line, c.col))
                        found = (cls_def.uid, namespaces_of(cls_def.owner))
                    break
                current = scopes.parents.get(current)
            context[scope] = found
            return found

        answers: dict[tuple[str, str | None, str | None, tuple[str, ...]], str | None] = {}
        free: dict[tuple[int | None, str], bool] = {}
        for row in refs:  # each settled on its own, so file order will do
            _, scope, token, role, shape, local_tier, local_target, _, _ = row
            if shape == _THIS:  # ``this->m`` in a method: the member its class (or a base the repository defines) has
                cls = around(scope)[0]
                before = len(self.rows)
                self.settle(row, p.member(cls, token) if cls is not None else None)
                if len(self.rows) > before and file_id not in self.fresh:
                    self.moved.add((token, _THIS))  # its anchor group changes
                continue
            if role == _DEFINITION:
                d = p.apart(local_target) if local_tier == _PROVEN and local_target else None
                if d is not None:  # the name of a member defined apart: a use of its declaration
                    self.settle(row, self.declaration(d, seen))
                elif local_tier == _PROVEN and local_target and (cls := self.constructed(local_target)):
                    self.settle(row, cls)  # a constructor written in its class: the class's name
                elif local_target is None and self._declaration(scope, token, scopes):
                    self.settle(row, p.linked(file_id, token))
                continue
            if role != _REFERENCE:
                continue
            if local_tier == _PROVEN and local_target is not None:
                # a definition of the file, settled by the per-file pass; a constructor's name is its class's
                cls = self.constructed(local_target)
                if cls is not None:
                    self.settle(row, cls)
                continue
            place = (scope, token)
            if place not in free:
                free[place] = self._free(scope, token, scopes)
            # ``Shape::Area()`` in ``Square::Area``: a qualified name is looked up where it says, whatever the
            # scope around it binds (the class's own ``Area``).
            if not free[place] and not (shape and shape.startswith("q:")):
                continue
            cls, prefixes = around(scope)
            if shape and shape.startswith("n:"):  # a name in a namespace's body, outside functions
                cls, prefixes = None, namespaces_of(shape[2:].replace("::", "."))
            prefixes = p.widen(file_id, prefixes)
            key = (token, shape, cls, tuple(prefixes))
            if key not in answers:  # a name is used many times in a file, in few contexts
                answers[key] = self.resolve(file_id, token, shape, cls, prefixes, fixture=cls in fixtures)
            self.settle(row, answers[key])

    def owner_class(self, d: CDef, seen: frozenset[int]) -> str | None:
        if d.parent is not None:
            parent = self.p.definition(d.parent)
            return d.parent if parent is not None and parent.kind in CLASSES else None
        if self.p.apart(d.uid) is None:
            return None
        namespace, _, name = d.owner.rpartition(".")
        return self.p.class_named(seen, self.p.widen(d.file_id, namespaces_of(namespace)), name)

    def constructed(self, uid: str) -> str | None:
        """The class a constructor defined in its body belongs to (``Counter(int n) {...}`` in ``Counter``)."""
        d = self.p.definition(uid)
        if d is None or d.parent is None or d.kind not in FUNCTIONS:
            return None
        parent = self.p.definition(d.parent)
        return parent.uid if parent is not None and parent.kind in CLASSES and parent.name == d.name else None

    def declaration(self, d: CDef, seen: frozenset[int]) -> str | None:
        """The in-class declaration a member defined apart is (by parameter types among overloads)."""
        cls = self.owner_class(d, seen)
        if cls is None:
            return None
        cls_def = self.p.definition(cls)
        if cls_def is not None and d.name == cls_def.name:
            return cls  # a constructor defined apart (``K::K(int n)``): its name is the class's
        declared = [m for m in self.p.members(cls, d.name) if m.kind in FUNCTIONS]
        if len(declared) > 1:
            key = parameter_key(d.display, d.name)
            declared = [m for m in declared if key is not None and parameter_key(m.display, m.name) == key]
        return declared[0].uid if len(declared) == 1 else None

    @staticmethod
    def _declaration(scope: int | None, token: str, scopes: FileScopes) -> bool:
        """A file-scope declaration without a definition (``extern int x;``, no def row)."""
        return scope is not None and scopes.kinds.get(scope) == "file" and \
            "LOCAL_ASSIGN" in scopes.bound.get((scope, token), [])

    @staticmethod
    def _free(scope: int | None, token: str, scopes: FileScopes) -> bool:
        """Whether no scope around binds the name (a file-scope declaration without a definition binds nothing
        here: it names the external definition)."""
        while scope is not None:
            reasons = scopes.bound.get((scope, token))
            # At file scope: a declaration without a definition, or several definitions (``#if`` alternatives,
            # which ``one`` takes as one entity); a local or a parameter binds the name for good.
            if reasons and not (scopes.kinds.get(scope) == "file" and set(reasons) <= _FILE_REASONS):
                return False
            scope = scopes.parents.get(scope)
        return True

    def fixture(self, d: CDef, seen: frozenset[int]) -> str | None:
        """The fixture class a test macro's body runs in (``TEST(MemEnvTest, Basics) {...}``, ``TEST_F(BuildTest,
        X)``: the macro makes a class deriving from its first argument, whose members the body uses unqualified), when
        the repository defines a class of that name."""
        match = _TEST_MACRO.match(d.display) if d.name in _TEST_MACROS and d.parent is None else None
        if match is None:
            return None
        return self.p.class_named(seen, self.p.widen(d.file_id, namespaces_of(d.owner)), match.group(1))

    def resolve(self, file_id: int, token: str, shape: str | None, cls: str | None, prefixes: list[str], *,
                fixture: bool = False) -> str | None:
        p = self.p
        seen = p.seen(file_id)
        if shape and shape.startswith("q:"):
            return self.qualified(file_id, token, shape[2:].replace("::", "."), prefixes)
        # The preprocessor runs first: a macro the file sees is what the name is, whatever namespace it was
        # written in (``#define HWY_MAX`` inside ``namespace hwy``) and whatever a scope declares.
        macros = [d for d in p.macros(token) if d.file_id in seen]
        if macros:
            return one(macros)
        if cls is not None:
            found = p.member(cls, token)
            # A fixture deriving from a library's class (``::testing::Test``) leaves its names to the namespaces.
            if found is not None and not (fixture and found == UNSETTLED):
                return found
        found = p.in_scope(seen, prefixes, token, cpp=p.paths[file_id].endswith(CPP_SUFFIXES)) or \
            p.using_declared(file_id, token)
        if found is None:
            found = p.linked(file_id, token)
        return found if found is not None else p.declared_type(file_id, token, prefixes)

    def qualified(self, file_id: int, name: str, qualifier: str, prefixes: list[str]) -> str | None:
        p = self.p
        seen = p.seen(file_id)
        if not qualifier:  # ``::f``
            return p.in_scope(seen, [""], name) or p.linked(file_id, name, qualified=name)
        for prefix in prefixes:
            path = f"{prefix}.{qualifier}" if prefix else qualifier
            cls = p.class_named(seen, [""], path)
            if cls is not None:
                return p.member(cls, name)
            full = f"{path}.{name}"  # a namespace's member
            found = p.in_scope(seen, [""], full) or p.linked(file_id, name, qualified=full)
            if found is not None:
                return found
        return None


