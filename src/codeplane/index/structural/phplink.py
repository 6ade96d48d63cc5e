"""PHP across files (§7.3.2 STRONG): namespaces, ``use`` imports, classes, functions and constants, and members
through the hierarchy the repository declares.

Names follow PHP's resolution rules, read from the shapes the adapter gives each name (``class:``, ``fn:``,
``const:``, ``super:``, ``use...:`` with the qualifier as written):
- a class name: ``\\A\\B`` is absolute; ``namespace\\B`` and ``B\\C`` are relative to the namespace in effect
  (``B`` may be a ``use`` alias); a plain ``B`` is a ``use`` alias or ``<namespace>\\B``, never a global
  fallback. Class and function names are case-insensitive, as in PHP;
- a function or constant: ``use function``/``use const``, else ``<namespace>\\f`` when the repository declares
  it, else the global ``f`` the repository declares (PHP's run-time fallback), one declaration either way;
- a ``use`` clause names the class, function or constant it imports.
Members: ``$this->m()``, ``self::``/``static::``/``parent::`` inside a class, ``C::m()``/``C::X`` and
``$x->m()`` where every definition of ``$x`` in its function is a type-hinted parameter or ``new C``, or
``$this->p`` of a typed property, and static properties the same ways (``self::$p``, ``C::$p``) — linked when the
class or its repository ancestors (classes, interfaces, traits) declare exactly one such member (PHP has no
overloading; a subclass's method overrides). A parent
outside the repository (other than the PHP builtins listed below) leaves members unsettled, as do ``__call``
magic, variable class names, ``?->`` and anything a hint does not settle (PHP types are checked at run time).

Incremental: the PHP files ``classdeps.py`` finds (names compared case-folded, declarations by qualified name)
are recomputed from their same-file tiers.
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
    type_defs,
)
from codeplane.index.structural.classhierarchy import UNSETTLED, Hierarchy
from codeplane.index.structural.classlink import ClassLinker, Updates, Value
from codeplane.index.structural.store import BatchEffect

_TYPES = frozenset({"class", "interface", "trait", "enum"})
#: PHP keeps a class's constants and its properties apart (``K::N`` and ``K::$n``/``$x->n`` may name different members
#: of one class), so an access links only to the kind its form names.
_CONSTANTS = frozenset({"constant"})
_PROPERTIES = frozenset({"field"})
_METHODS = frozenset({"method"})

_THROWABLE = "__toString getCode getFile getLine getMessage getPrevious getTrace getTraceAsString"
_EXCEPTION = f"{_THROWABLE} __construct __wakeup code file line message"
#: Members of PHP's builtin classes and interfaces that code extends, as PHP 8.2's reflection reports them.
PHP_MEMBERS = {name.lower(): frozenset(text.split()) for name, text in {
    **{e: _EXCEPTION for e in (
        "Exception", "Error", "RuntimeException", "LogicException", "InvalidArgumentException", "DomainException",
        "UnexpectedValueException", "OutOfBoundsException", "OutOfRangeException", "LengthException",
        "RangeException", "OverflowException", "UnderflowException", "BadMethodCallException",
        "BadFunctionCallException")},
    "Throwable": _THROWABLE, "Countable": "count", "IteratorAggregate": "getIterator",
    "Iterator": "current key next rewind valid", "ArrayAccess": "offsetExists offsetGet offsetSet offsetUnset",
    "JsonSerializable": "jsonSerialize", "Stringable": "__toString", "Traversable": "",
}.items()}


class _Use:
    def __init__(self, kind: str, source: str, alias: str | None, line: int) -> None:
        self.kind, self.source, self.line, self.alias = kind, source.lstrip("\\"), line, alias
        self.local = (alias or self.source.rsplit("\\", 1)[-1]).lower()


class PhpNames(ClassLinker):
    gap = 2  # ``->`` and ``::``

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.package: dict[int, str] = {int(i): str(p or "") for i, p in conn.execute(
            "SELECT file_id, package FROM st_file WHERE language = 'php'")}
        types, self.spans = type_defs(conn, "php", _TYPES, self._full_name)
        attach_supers(conn, "php", types, self.spans)
        self.functions: dict[str, list[str]] = defaultdict(list)
        self.constants: dict[str, list[str]] = defaultdict(list)
        self.namespaces: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for file_id, line, token in conn.execute(
                "SELECT r.file_id, r.start_line, r.token_text FROM st_ref r JOIN st_file f ON f.file_id = r.file_id "
                "WHERE f.language = 'php' AND r.receiver_shape = 'namespace' ORDER BY r.start_line"):
            self.namespaces[file_id].append((line, token))
        for file_id, uid, kind, name, line in conn.execute(
                "SELECT d.file_id, d.def_uid, d.kind, d.name, d.start_line FROM st_def d JOIN st_file f "
                "ON f.file_id = d.file_id WHERE f.language = 'php' AND d.parent_uid IS NULL "
                "AND d.kind IN ('function', 'constant')"):
            full = self._qualify(self.namespace_at(file_id, line), name)
            if kind == "function":
                self.functions[full.lower()].append(uid)
            else:
                self.constants[full].append(uid)
        self.uses: dict[int, list[_Use]] = defaultdict(list)
        for file_id, kind, source, alias, line in conn.execute(
                "SELECT i.file_id, i.import_kind, i.source_literal, i.alias, i.start_line FROM st_import i "
                "JOIN st_file f ON f.file_id = i.file_id WHERE f.language = 'php' AND i.import_kind LIKE 'php_use%' "
                "AND i.source_literal IS NOT NULL ORDER BY i.start_line"):
            self.uses[file_id].append(_Use(kind, source, alias, line))
        self.top = {}
        self.packages = set()
        self.facts = FileFacts(conn)
        self.h = Hierarchy(types.values(), self.type_text, self._external, lambda _: None, overloads=False)
        self.declared = DeclaredTypes(conn, self.type_text, "php")
        self._bodies: dict[int, dict[int, str | None]] = {}
        self._scope_lines: dict[int, int] = {}

    def _full_name(self, file_id: int, lexical: str, name: str, parent: str | None) -> str:
        return self._qualify(self.package.get(file_id, ""), lexical).lower()

    @staticmethod
    def _qualify(namespace: str, name: str) -> str:
        return f"{namespace}\\{name}" if namespace else name

    def namespace_at(self, file_id: int, line: int) -> str:
        """The namespace in effect at a line (files may hold several ``namespace`` statements)."""
        found = self.package.get(file_id, "")
        for start, name in self.namespaces.get(file_id, []):
            if start > line:
                break
            found = name
        return found

    def _uses_at(self, file_id: int, line: int) -> list[_Use]:
        """``use`` imports of the namespace statement in effect at ``line``."""
        starts = [start for start, _ in self.namespaces.get(file_id, [])]
        begin = max((s for s in starts if s <= line), default=0)
        end = min((s for s in starts if s > line), default=1 << 30)
        return [u for u in self.uses.get(file_id, []) if begin <= u.line < end]

    def _external(self, written: str, file_id: int) -> frozenset[str] | None:
        full = self.class_name(file_id, self._first_line(file_id), written)
        return PHP_MEMBERS.get(full) if full is not None else None

    def _first_line(self, file_id: int) -> int:
        starts = self.namespaces.get(file_id, [])
        return starts[0][0] if len(starts) == 1 else 1

    def body(self, file_id: int, scope: int) -> str | None:
        bodies = self._bodies.get(file_id)
        if bodies is None:
            bodies = body_types(self.conn, file_id, self.h.types, self.spans.get(file_id, []))
            self._bodies[file_id] = bodies
        return bodies.get(scope)

    # -- names -------------------------------------------------------------------------------------------
    def class_name(self, file_id: int, line: int, written: str) -> str | None:
        """The lower-case full name a written class name denotes at ``line`` (None: ``self``/``static``)."""
        if written.lower() in ("self", "static", "parent"):
            return None
        return self._qualified(file_id, line, written).lower()

    def _qualified(self, file_id: int, line: int, written: str) -> str:
        """A written (qualified) name made absolute: a leading ``\\``, ``namespace\\``, a ``use`` alias of its first
        segment, else the namespace in effect."""
        if written.startswith("\\"):
            return written[1:]
        namespace = self.namespace_at(file_id, line)
        if written.lower().startswith("namespace\\"):
            return self._qualify(namespace, written[10:])
        head, _, rest = written.partition("\\")
        for use in self._uses_at(file_id, line):
            if use.kind == "php_use" and use.local == head.lower():
                return f"{use.source}\\{rest}" if rest else use.source
        return self._qualify(namespace, written)

    def _callable(self, file_id: int, line: int, qualifier: str, name: str, *, function: bool) -> str | None:
        table = self.functions if function else self.constants

        def key(full: str) -> str:
            return full.lower() if function else full

        if qualifier:
            return _one(table.get(key(self._qualified(file_id, line, f"{qualifier}{name}")), []))
        kind = "php_use_function" if function else "php_use_const"
        for use in self._uses_at(file_id, line):
            local = use.local if function else (use.alias or use.source.rsplit("\\", 1)[-1])
            if use.kind == kind and key(local) == key(name):
                return _one(table.get(key(use.source), []))
        namespace = self.namespace_at(file_id, line)
        inside = table.get(key(self._qualify(namespace, name)), [])
        if inside or not namespace:
            return _one(inside)
        return _one(table.get(key(name), []))  # PHP falls back to the global function or constant

    def type_text(self, written: str, file_id: int, scope: int | None) -> str | None:
        full = self.class_name(file_id, self._scope_line(scope), written)
        return self.h.full(full) if full is not None else None

    def _scope_line(self, scope: int | None) -> int:
        if scope is None:
            return 1
        if scope not in self._scope_lines:
            row = self.conn.execute("SELECT start_line FROM st_scope WHERE scope_id = ?", (scope,)).fetchone()
            self._scope_lines[scope] = int(row[0]) if row else 1
        return self._scope_lines[scope]

    # -- references of one file --------------------------------------------------------------------------
    def plain(self, file_id: int, ref: Ref) -> str | None:
        shape = ref.shape or ""
        kind, _, qualifier = shape.partition(":")
        if kind in ("class", "super"):
            written = qualifier if kind == "super" else f"{qualifier}{ref.token}"
            full = self.class_name(file_id, ref.line, written)
            return self.h.full(full) if full is not None else None
        if kind in ("fn", "const"):
            return self._callable(file_id, ref.line, qualifier, ref.token, function=kind == "fn")
        if kind in ("useclass", "usefn", "useconst"):
            full = qualifier.lstrip("\\") + ref.token
            if kind == "useclass":
                return self.h.full(full.lower())
            return _one((self.functions if kind == "usefn" else self.constants).get(
                full.lower() if kind == "usefn" else full, []))
        return None

    def operator_width(self, ref: Ref) -> int:
        return self.gap + 1 if (ref.shape or "").endswith("$$") else self.gap  # ``K::$n``

    def member(self, file_id: int, ref: Ref, receiver: Value | None) -> str | None:
        shape = ref.shape or ""
        data = shape.endswith("$")  # a property or constant, not a call
        # ``K::$n`` a static property, ``K::N`` a constant, ``$x->n`` a property
        kinds = _PROPERTIES if shape.endswith("$$") or "::" not in shape else _CONSTANTS
        if shape.rstrip("$") in ("this.", "this::", "self::", "static::", "parent::"):
            around = [self.body(file_id, s) for s, kind in self.facts.chain(file_id, ref.scope) if kind == "class"]
            if not around or around[0] is None:
                return None
            info, own = self.h.types[around[0]], not shape.startswith("parent::")
        elif receiver is None or receiver[0] == "package":
            return None
        else:
            info, own = self.h.types[receiver[1]], True
        return self.h.member(info, ref.token, kinds, own=own) if data else \
            self.h.method(info, ref.token, _METHODS, own=own)


def _one(uids: list[str]) -> str | None:
    if not uids:
        return None
    return uids[0] if len(uids) == 1 else UNSETTLED


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute PHP cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    targets = classdeps.affected(conn, effect, "php", (".php", ".phtml"), fold=True)
    if targets is not None and not targets:
        return 0, set()
    names = PhpNames(conn)
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
