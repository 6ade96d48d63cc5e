"""C and C++ across files (§7.3.2 STRONG): what a file sees through its ``#include`` lines, names with external
linkage, and C++ members defined apart from their class.

A C or C++ file sees its own definitions and those of the headers it includes, transitively. An include is the
file the generic resolution found (``#include "x.h"`` relative to the including file), else the one repository
file whose path ends with ``/x.h`` (a project's include root; ``<x.h>`` the same way). The per-file pass
(``adapters/c_family.py``) left unresolved what it cannot see; here:

- **Names seen**: a plain name no scope of its file binds denotes the macro of that name the file sees (the
  preprocessor runs first, namespaces mean nothing to it), else the one definition of that name the file sees,
  looked up from the namespace around the use outwards; in a method, the members of its class come first, then
  those of its base classes (as its header spells them; a base outside the repository or a template's may declare
  the name, so then nothing is settled). ``ns::K::x`` (shape ``q:ns::K``) looks where the qualifier says. Two
  candidates settle nothing (overloads, two headers defining one name), but definitions of one name and kind in one
  file are ``#if`` alternatives of one entity (the last stands for them; the rename planner renames them all).
- **External linkage**: a function or variable declared in a header and defined in a source file (``int
  util_add(int, int);`` in ``util.h``, the body in ``util.c``) is one entity. A use in a file that includes a
  header mentioning the name at file scope, a header the defining file includes too, denotes that definition when
  it is the only non-``static`` one that qualifies; the prototype and an ``extern`` declaration are such uses.
- **Forward declarations**: a class the file knows only as ``struct BuildLog;`` is the one the repository defines
  under that name (the one-definition rule), when exactly one does.
- **Members defined apart**: ``int K::size() const {...}`` is the member ``size`` that class ``K`` declares (seen
  through ``k.h``, or in the same file): its name is a use of that declaration (one symbol, renamed together),
  told apart from overloads by its parameter types, and its body sees ``K``'s members.
- **``this->m``** in a method is the member its class (or a base the repository defines) declares.
- **Constructors**: a constructor's name (written in its class, ``K::K`` apart, ``~K``) is its class's, so a class
  rename renames them. ``using namespace ns;`` opens ``ns`` to the rest of the file and to its includers.
Not modelled (left as the per-file pass left them): overload resolution by argument types, argument-dependent
lookup, using-declarations (``using std::vector;``), the types of values (``Widget w; w.size()`` stays ANCHORED),
declarations a macro expands to.

Incremental: the C/C++ files a batch changed, those holding a reference into a definition that came or went (a
definition keeping its uid keeps its links) or spelling a name a changed file started or stopped defining or
declaring, and every file including a changed file whose includes, names, class headers or function headers
changed (what it sees changed); every C/C++ file when no record of the last pass exists.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from codeplane.index.structural import schema
from codeplane.index.structural.classhierarchy import UNSETTLED, parameter_key
from codeplane.index.structural.facts import CERTAIN, DEFINITION, PROVEN, REFERENCE, STRONG
from codeplane.index.structural.store import BatchEffect, chunked, marks

LANGUAGES = ("c", "cpp")
SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".inc")
_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++")
_CLASSES = frozenset({"class", "struct"})
#: What has external linkage (``int ns::f()`` defined apart from its namespace is a ``method`` with no class).
_EXTERNAL = frozenset({"function", "variable", "method"})
_FUNCTIONS = frozenset({"function", "method"})
_STATE = "c_family_decls"
#: File-scope bindings that leave a name to linking: a declaration without a definition, several definitions.
_THIS = "this."
_FILE_REASONS = frozenset({"LOCAL_ASSIGN", "LOCAL_ASSIGN?", "DEF_IN_SCOPE?"})
_PROVEN, _STRONG = schema.TIER_CODE[PROVEN], schema.TIER_CODE[STRONG]
_DEFINITION, _REFERENCE = schema.ROLE_CODE[DEFINITION], schema.ROLE_CODE[REFERENCE]
#: Relinking at least 1/_BULK_SHARE of the C/C++ files reads every definition at once (a cold index has no name
#: indexes yet); fewer read them by name.
_BULK_SHARE = 4


class _Def(NamedTuple):
    uid: str
    file_id: int
    kind: str
    name: str
    lexical: str
    parent: str | None
    display: str
    line: int
    col: int
    end: tuple[int, int]

    @property
    def owner(self) -> str:
        return self.lexical.rpartition(".")[0]


class _ByName(NamedTuple):
    levels: dict[str, list[_Def]]  # lexical path -> namespace-level definitions
    members: dict[str, list[_Def]]  # class uid -> its members of the name
    external: list[_Def]
    macros: list[_Def]


class _Program:
    """Definitions, classes and include graph of the C/C++ files. ``bulk`` (a cold index, a big checkout) reads
    every definition and every file's file-scope names once; otherwise they are read by name as the relinked files
    ask (through the name indexes), so an edit does not read a whole C code base."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.bulk = False
        self.paths: dict[int, str] = {int(i): str(p) for i, p in conn.execute(
            f"SELECT file_id, path FROM st_file WHERE language IN ({marks(len(LANGUAGES))})", LANGUAGES)}
        self.includes = self._includes()
        self._using: dict[int, list[str]] = defaultdict(list)  # ``using namespace a::b;`` -> a.b, per file
        for file_id, source in conn.execute(
                "SELECT file_id, source_literal FROM st_import WHERE import_kind = 'cpp_using' "
                "AND source_literal LIKE 'namespace %' ORDER BY file_id, start_line"):
            if file_id in self.paths:
                self._using[int(file_id)].append(str(source)[10:].strip().lstrip(":").replace("::", "."))
        self._usings: dict[int, list[str]] = {}
        self._indexed: dict[str, _ByName] = {}
        self._named: dict[str, list[_Def]] = {}
        self._uids: dict[str, _Def] = {}
        self._files: dict[int, list[_Def]] = {}
        self._class_paths: dict[str, bool] = {}
        self._closures: dict[int, frozenset[int]] = {}
        self._declared: dict[int, frozenset[str]] = {}
        self._declarers: dict[str, frozenset[int]] = {}
        self._by_name: dict[str, frozenset[int]] | None = None

    def read_all(self) -> None:
        """Read every definition now: most files are relinked."""
        self.bulk = True
        rows: dict[str, list[_Def]] = defaultdict(list)
        for part in chunked(sorted(self.paths)):
            for d in self._rows(f"file_id IN ({marks(len(part))})", part):
                rows[d.name].append(d)
                self._files.setdefault(d.file_id, []).append(d)
        self._named = dict(rows)
        self._class_paths = {d.lexical: True for defs in rows.values() for d in defs if d.kind in _CLASSES}
        for file_id in self.paths:
            self._files.setdefault(file_id, [])

    def _rows(self, where: str, args: Sequence[object]) -> list[_Def]:
        out = []
        # Sorted here: ``ORDER BY def_uid`` would have SQLite walk the uid index over the whole table.
        rows = self.conn.execute(
            "SELECT def_uid, file_id, kind, name, lexical_path, parent_uid, display_name, start_line, start_col, "
            f"end_line, end_col FROM st_def WHERE {where}", args)
        for uid, file_id, kind, name, lexical, parent, display, line, col, end_line, end_col in sorted(rows):
            if file_id in self.paths:
                d = _Def(uid, file_id, kind, name, lexical, parent, display, line, col, (end_line, end_col))
                out.append(d)
                self._uids[uid] = d
        return out

    def definition(self, uid: str) -> _Def | None:
        found = self._uids.get(uid)
        if found is None and not self.bulk:
            rows = self._rows("def_uid = ?", (uid,))
            found = rows[0] if rows else None
        return found

    def named(self, name: str) -> list[_Def]:
        """Every C/C++ definition with this simple name."""
        found = self._named.get(name)
        if found is None:
            if self.bulk:  # every definition is read: none has this name
                return []
            found = self._named[name] = self._rows("name_lc = ? AND name = ?", (name.lower(), name))
        return found

    def defs_in(self, file_id: int) -> list[_Def]:
        found = self._files.get(file_id)
        if found is None:
            found = self._files[file_id] = self._rows("file_id = ?", (file_id,))
        return found

    def is_class(self, path: str) -> bool:
        found = self._class_paths.get(path)
        if found is None:
            found = self._class_paths[path] = any(
                d.kind in _CLASSES and d.lexical == path for d in self.named(path.rpartition(".")[2]))
        return found

    def apart(self, uid: str) -> _Def | None:
        """The member defined outside its class that ``uid`` names, if it is one."""
        d = self._uids.get(uid)
        return d if d is not None and self._is_apart(d) else None

    def _is_apart(self, d: _Def) -> bool:
        if d.parent is not None or d.kind != "method":
            return False
        return any(self.is_class(owner) for owner in (d.owner, *(f"{u}.{d.owner}" for u in self.usings(d.file_id))))

    def usings(self, file_id: int) -> list[str]:
        """The namespaces ``using namespace`` directives of the file and the headers it sees open."""
        if not self._using:
            return []
        found = self._usings.get(file_id)
        if found is None:
            found = self._usings[file_id] = sorted({u for f in self.seen(file_id) for u in self._using.get(f, ())})
        return found

    def widen(self, file_id: int, prefixes: list[str]) -> list[str]:
        """Where an unqualified name is looked for: the namespaces around it, then those ``using`` opens (if the
        program compiles, one of them at most declares it)."""
        opened = [u for u in self.usings(file_id) if u not in prefixes]
        return prefixes + opened if opened else prefixes

    def _index(self, name: str) -> _ByName:
        """The definitions of one name, sorted the ways lookups ask (each list short, even with many copies of a
        library in the tree)."""
        found = self._indexed.get(name)
        if found is None:
            levels: dict[str, list[_Def]] = defaultdict(list)
            members: dict[str, list[_Def]] = defaultdict(list)
            external, macros = [], []
            for d in self.named(name):
                if d.kind == "macro":
                    macros.append(d)
                if d.parent is not None:
                    members[d.parent].append(d)
                elif not self._is_apart(d):
                    levels[d.lexical].append(d)
                    if d.kind in _EXTERNAL and self.paths[d.file_id].endswith(_SOURCES) and not _static(d):
                        external.append(d)
            found = self._indexed[name] = _ByName(dict(levels), dict(members), external, macros)
        return found

    def namespace_level(self, lexical: str) -> list[_Def]:
        """Namespace-level definitions with this lexical path (not members, not members defined apart)."""
        return self._index(lexical.rpartition(".")[2]).levels.get(lexical, [])

    def external(self, name: str) -> list[_Def]:
        """Definitions of ``name`` with external linkage: functions and variables of source files, not static."""
        return self._index(name).external

    def macros(self, name: str) -> list[_Def]:
        return self._index(name).macros

    def members(self, class_uid: str, name: str) -> list[_Def]:
        return self._index(name).members.get(class_uid, [])

    def known(self, name: str) -> bool:
        """Whether any C/C++ definition has this name (a reference spelled otherwise cannot be linked)."""
        if self.bulk:
            return name in self._named
        return bool(self.named(name))

    def _includes(self) -> dict[int, list[int]]:
        by_name: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for file_id, path in self.paths.items():
            by_name[posixpath.basename(path)].append((path, file_id))
        out: dict[int, list[int]] = defaultdict(list)
        self.include_sources: dict[int, set[str]] = defaultdict(set)
        for part in chunked(sorted(self.paths)):
            for file_id, source, found_id in self.conn.execute(
                    "SELECT file_id, source_literal, resolved_file_id FROM st_import WHERE import_kind IN "
                    f"('c_include', 'c_include_system') AND file_id IN ({marks(len(part))}) ORDER BY start_line",
                    part):
                self.include_sources[file_id].add(str(source))
                resolved = found_id
                if resolved is None and source:  # an include root's file: the one path ending in the source
                    written = posixpath.normpath(str(source)).lstrip("./")
                    found = [i for path, i in by_name.get(posixpath.basename(written), [])
                             if path == written or path.endswith("/" + written)]
                    resolved = found[0] if len(found) == 1 else None
                if resolved is not None and resolved in self.paths:
                    out[file_id].append(int(resolved))
        return out

    def seen(self, file_id: int) -> frozenset[int]:
        """The file and every file it includes, transitively."""
        found = self._closures.get(file_id)
        if found is None:
            reached = {file_id}
            pending = [file_id]
            while pending:
                for target in self.includes.get(pending.pop(), []):
                    if target not in reached:
                        reached.add(target)
                        pending.append(target)
            found = self._closures[file_id] = frozenset(reached)
        return found

    # -- lookups -------------------------------------------------------------------------------------------
    def in_scope(self, seen: frozenset[int], prefixes: list[str], name: str) -> str | None:
        for prefix in prefixes:
            found = [d for d in self.namespace_level(f"{prefix}.{name}" if prefix else name) if d.file_id in seen]
            if found:
                return _one(found)
        return None

    def member(self, class_uid: str, name: str, depth: int = 0) -> str | None:
        """The member ``name`` of a class or, if it declares none, of its bases; UNSETTLED when a base the
        repository does not define (or a template's) may declare it."""
        cls = self.definition(class_uid)
        if cls is None:
            return None
        if name == cls.name:
            return class_uid  # the injected class name (``K::K``, ``~K``), not a constructor
        own = self.members(class_uid, name)
        if own:
            return _one(own)
        bases = _bases(cls.display)
        if not bases:
            return None
        if depth > 8:
            return UNSETTLED
        seen, prefixes = self.seen(cls.file_id), _prefixes(cls.owner)
        found: set[str] = set()
        for base in bases:
            uid = self.class_named(seen, prefixes, base) if "<" not in base else None
            inherited = self.member(uid, name, depth + 1) if uid is not None else UNSETTLED
            if inherited is not None:
                found.add(inherited)
        return _one(sorted(found)) if found else None

    def class_named(self, seen: frozenset[int], prefixes: list[str], written: str) -> str | None:
        path = written.strip().lstrip(":").replace("::", ".")
        for prefix in prefixes:
            found = [d for d in self.namespace_level(f"{prefix}.{path}" if prefix else path)
                     if d.kind in _CLASSES and d.file_id in seen]
            if found:
                return found[0].uid if len(found) == 1 else None
        return None

    def linked(self, file_id: int, name: str, *, qualified: str | None = None) -> str | None:
        """The one definition with external linkage a file's use of ``name`` denotes (module docstring)."""
        candidates = [d for d in self.external(name) if qualified is None or d.lexical == qualified]
        if not candidates:
            return None
        seen = self.seen(file_id)
        found = [d for d in candidates if d.file_id not in seen and not seen.isdisjoint(self._declaring(d))]
        if not found and len(candidates) == 1 and candidates[0].file_id not in seen and \
                not seen.isdisjoint(self.declarers(name)):
            found = candidates  # declared where the user sees it (``extern int x;``), defined once in the repository
        return _one(found) if found else None

    def file_scope_names(self) -> dict[str, frozenset[int]]:
        """Every name mentioned at file scope, with the files mentioning it (read once, for every file)."""
        if self._by_name is None:
            self._by_name = self._read_file_scope_names()
        return self._by_name

    def _read_file_scope_names(self) -> dict[str, frozenset[int]]:
        by_name: dict[str, set[int]] = defaultdict(set)
        for part in chunked(sorted(self.paths)):
            for file_id, token in self.conn.execute(
                    "SELECT DISTINCT r.file_id, r.token_text FROM st_ref r JOIN st_scope s ON s.scope_id = "
                    f"r.scope_id WHERE r.file_id IN ({marks(len(part))}) AND s.kind = 'file' AND r.is_member = 0",
                    part):
                by_name[str(token)].add(int(file_id))
        return {n: frozenset(f) for n, f in by_name.items()}

    def declared_type(self, file_id: int, name: str, prefixes: list[str]) -> str | None:
        """A class or struct the file knows only by a forward declaration (``struct BuildLog;``) is the one the
        repository defines under that name (C++'s one-definition rule), when one does."""
        seen = self.seen(file_id)
        keys = {f"{prefix}.{name}" if prefix else name for prefix in prefixes}
        found = [d for key in sorted(keys) for d in self.namespace_level(key) if d.kind in _CLASSES]
        if not found or any(d.file_id in seen for d in found) or seen.isdisjoint(self.declarers(name)):
            return None
        return _one(found)

    def declarers(self, name: str) -> frozenset[int]:
        """Every C/C++ file mentioning ``name`` at file scope (prototypes, ``extern`` declarations)."""
        if self._by_name is None and self.bulk:
            self._by_name = self._read_file_scope_names()
        if self._by_name is not None:
            return self._by_name.get(name, frozenset())
        found = self._declarers.get(name)
        if found is None:
            found = self._declarers[name] = frozenset(int(i) for (i,) in self.conn.execute(
                "SELECT DISTINCT r.file_id FROM st_ref r JOIN st_scope s ON s.scope_id = r.scope_id "
                "WHERE r.token_text = ? AND s.kind = 'file' AND r.is_member = 0", (name,)) if i in self.paths)
        return found

    def _declaring(self, d: _Def) -> frozenset[int]:
        """The headers the defining file includes that mention the definition's name at file scope."""
        return (self.declarers(d.name) & self.seen(d.file_id)) - {d.file_id}


def _one(found: list[_Def] | list[str]) -> str:
    """The one definition found, else UNSETTLED. Definitions of one name, kind and path in one file are ``#if``
    alternatives of one entity (``double GetLoadAverage()`` per platform): the last stands for them all, as the
    rename planner renames same-file definitions of one qualified name together."""
    uids = {d if isinstance(d, str) else d.uid for d in found}
    if len(uids) == 1:
        return next(iter(uids))
    defs = [d for d in found if not isinstance(d, str)]
    if len(defs) == len(found) and len({(d.file_id, d.lexical, d.kind) for d in defs}) == 1:
        return max(defs, key=lambda d: (d.line, d.col)).uid
    return UNSETTLED


def _static(d: _Def) -> bool:
    head = d.display.split("(", 1)[0].split(d.name, 1)[0]
    return "static" in head.split() or d.lexical.startswith(".")


def _prefixes(namespace: str) -> list[str]:
    """``a.b`` -> ``["a.b", "a", ""]``: where an unqualified name is looked for, innermost first."""
    parts = namespace.split(".") if namespace else []
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)] + [""]


def _bases(display: str) -> list[str]:
    """Base classes a class header spells (``struct D : public B, ns::C<int>`` -> ``B``, ``ns::C<int>``)."""
    text = display.replace("::", "\0")
    if ":" not in text:
        return []
    clause = text.split(":", 1)[1].replace("\0", "::")
    out, depth, current = [], 0, ""
    for char in clause:
        depth += char == "<"
        depth -= char == ">"
        if char == "," and depth == 0:
            out.append(current)
            current = ""
        else:
            current += char
    out.append(current)
    words = [[w for w in b.split() if w not in ("public", "private", "protected", "virtual")] for b in out]
    return [" ".join(w) for w in words if w]


class _FileScopes(NamedTuple):
    parents: dict[int, int | None]
    kinds: dict[int, str]
    starts: dict[int, tuple[int, int]]
    #: (scope, name) -> reasons of the bindings
    bound: dict[tuple[int, str], list[str]]


def _scopes(conn: sqlite3.Connection, part: Sequence[int]) -> _FileScopes:
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
    return _FileScopes(parents, kinds, starts, bound)


class _Linker:
    def __init__(self, program: _Program, fresh: set[int]) -> None:
        self.p = program
        self.fresh = fresh
        #: (tier code, target, ref id) of the references whose tier or target changes.
        self.rows: list[tuple[int, str | None, int]] = []
        #: Member tokens (with their shape) whose tier moved in a file not rewritten this epoch.
        self.moved: set[tuple[str, str]] = set()

    def settle(self, row: _Row, found: str | None) -> None:
        """STRONG to what linking found, else back to the per-file tier and target."""
        ref_id, _, _, _, _, local_tier, local_target, tier, target = row
        new = (_STRONG, found) if found is not None and found != UNSETTLED else (local_tier, local_target)
        if new != (tier, target):
            self.rows.append((new[0], new[1], ref_id))

    def file(self, file_id: int, refs: list[_Row], scopes: _FileScopes) -> None:
        p = self.p
        seen = p.seen(file_id)
        own = p.defs_in(file_id)
        defs = {(d.line, d.col): d for d in own}
        classes = [d for d in own if d.kind in _CLASSES]
        context: dict[int | None, tuple[str | None, list[str]]] = {}

        def around(scope: int | None) -> tuple[str | None, list[str]]:
            """(class whose members a use sees, namespaces to look in) at a scope."""
            if scope in context:
                return context[scope]
            found: tuple[str | None, list[str]] = (None, [""])
            current = scope
            while current is not None:
                start = scopes.starts.get(current, (-1, -1))
                d = defs.get(start)
                if d is not None and d.kind in _FUNCTIONS:
                    cls = self.owner_class(d, seen)
                    cls_def = p.definition(cls) if cls is not None else None
                    found = (cls, _prefixes(cls_def.owner)) if cls_def is not None else (None, _prefixes(d.owner))
                    break
                if scopes.kinds.get(current) == "class":  # a class body: the class's members, then its namespaces
                    holders = [c for c in classes if (c.line, c.col) <= start < c.end]
                    if holders:
                        cls_def = max(holders, key=lambda c: (c.line, c.col))
                        found = (cls_def.uid, _prefixes(cls_def.owner))
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
            if not free[place]:
                continue
            cls, prefixes = around(scope)
            if shape and shape.startswith("n:"):  # a name in a namespace's body, outside functions
                cls, prefixes = None, _prefixes(shape[2:].replace("::", "."))
            prefixes = p.widen(file_id, prefixes)
            key = (token, shape, cls, tuple(prefixes))
            if key not in answers:  # a name is used many times in a file, in few contexts
                answers[key] = self.resolve(file_id, token, shape, cls, prefixes)
            self.settle(row, answers[key])

    def owner_class(self, d: _Def, seen: frozenset[int]) -> str | None:
        if d.parent is not None:
            parent = self.p.definition(d.parent)
            return d.parent if parent is not None and parent.kind in _CLASSES else None
        if self.p.apart(d.uid) is None:
            return None
        namespace, _, name = d.owner.rpartition(".")
        return self.p.class_named(seen, self.p.widen(d.file_id, _prefixes(namespace)), name)

    def constructed(self, uid: str) -> str | None:
        """The class a constructor defined in its body belongs to (``Counter(int n) {...}`` in ``Counter``)."""
        d = self.p.definition(uid)
        if d is None or d.parent is None or d.kind not in _FUNCTIONS:
            return None
        parent = self.p.definition(d.parent)
        return parent.uid if parent is not None and parent.kind in _CLASSES and parent.name == d.name else None

    def declaration(self, d: _Def, seen: frozenset[int]) -> str | None:
        """The in-class declaration a member defined apart is (by parameter types among overloads)."""
        cls = self.owner_class(d, seen)
        if cls is None:
            return None
        cls_def = self.p.definition(cls)
        if cls_def is not None and d.name == cls_def.name:
            return cls  # a constructor defined apart (``K::K(int n)``): its name is the class's
        declared = [m for m in self.p.members(cls, d.name) if m.kind in _FUNCTIONS]
        if len(declared) > 1:
            key = parameter_key(d.display, d.name)
            declared = [m for m in declared if key is not None and parameter_key(m.display, m.name) == key]
        return declared[0].uid if len(declared) == 1 else None

    @staticmethod
    def _declaration(scope: int | None, token: str, scopes: _FileScopes) -> bool:
        """A file-scope declaration without a definition (``extern int x;``, no def row)."""
        return scope is not None and scopes.kinds.get(scope) == "file" and \
            "LOCAL_ASSIGN" in scopes.bound.get((scope, token), [])

    @staticmethod
    def _free(scope: int | None, token: str, scopes: _FileScopes) -> bool:
        """Whether no scope around binds the name (a file-scope declaration without a definition binds nothing
        here: it names the external definition)."""
        while scope is not None:
            reasons = scopes.bound.get((scope, token))
            # At file scope: a declaration without a definition, or several definitions (``#if`` alternatives,
            # which ``_one`` takes as one entity); a local or a parameter binds the name for good.
            if reasons and not (scopes.kinds.get(scope) == "file" and set(reasons) <= _FILE_REASONS):
                return False
            scope = scopes.parents.get(scope)
        return True

    def resolve(self, file_id: int, token: str, shape: str | None, cls: str | None, prefixes: list[str]) -> str | None:
        p = self.p
        seen = p.seen(file_id)
        if shape and shape.startswith("q:"):
            return self.qualified(file_id, token, shape[2:].replace("::", "."), prefixes)
        # The preprocessor runs first: a macro the file sees is what the name is, whatever namespace it was
        # written in (``#define HWY_MAX`` inside ``namespace hwy``) and whatever a scope declares.
        macros = [d for d in p.macros(token) if d.file_id in seen]
        if macros:
            return _one(macros)
        if cls is not None:
            found = p.member(cls, token)
            if found is not None:
                return found
        found = p.in_scope(seen, prefixes, token)
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


def _records(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, list[str]]]:
    """What each file defines and declares, and includes: what its relinking depends on elsewhere."""
    out: dict[int, dict[str, set[str]]] = {i: {"names": set(), "uids": set(), "includes": set()} for i in ids}
    for part in chunked(ids):
        q = marks(len(part))
        for file_id, uid, name, kind, display in conn.execute(
                f"SELECT file_id, def_uid, name, kind, display_name FROM st_def WHERE file_id IN ({q})", part):
            out[file_id]["names"].add(str(name))
            out[file_id]["uids"].add(str(uid))
            if kind in _CLASSES or kind in _EXTERNAL:  # bases and ``static`` decide lookups elsewhere
                out[file_id]["names"].add(f"{kind}:{display}")
        for file_id, token in conn.execute(
                "SELECT r.file_id, r.token_text FROM st_ref r JOIN st_scope s ON s.scope_id = r.scope_id "
                f"WHERE r.file_id IN ({q}) AND s.kind = 'file' AND r.is_member = 0", part):
            out[file_id]["names"].add(str(token))
        for file_id, source in conn.execute(
                f"SELECT file_id, source_literal FROM st_import WHERE file_id IN ({q}) "
                "AND import_kind IN ('c_include', 'c_include_system')", part):
            out[file_id]["includes"].add(str(source))
    return {i: {k: sorted(v) for k, v in record.items()} for i, record in out.items()}


def _record_all(conn: sqlite3.Connection, program: _Program) -> None:
    """``_records`` of every file, from the definitions and file-scope names a pass over all of them read."""
    out: dict[int, dict[str, set[str]]] = {i: {"names": set(), "uids": set(), "includes": set()}
                                           for i in program.paths}
    for file_id in program.paths:
        record = out[file_id]
        for d in program.defs_in(file_id):
            record["names"].add(d.name)
            record["uids"].add(d.uid)
            if d.kind in _CLASSES or d.kind in _EXTERNAL:
                record["names"].add(f"{d.kind}:{d.display}")
        record["includes"].update(program.include_sources.get(file_id, ()))
    for token, files in program.file_scope_names().items():
        for file_id in files:
            out[file_id]["names"].add(token)
    conn.execute("DELETE FROM st_state WHERE key LIKE ?", (f"{_STATE}:%",))
    conn.executemany("INSERT INTO st_state(key, value) VALUES (?, ?)",
                     [(f"{_STATE}:{program.paths[i]}", json.dumps({k: sorted(v) for k, v in r.items()},
                                                                  sort_keys=True)) for i, r in sorted(out.items())])
    conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES (?, '1')", (_STATE,))


def _affected(conn: sqlite3.Connection, effect: BatchEffect, program: _Program) -> set[int] | None:
    """File ids to relink after ``effect``; None: every C/C++ file."""
    changed = sorted(p for p in (*effect.upserted, *effect.deleted) if p.endswith(SUFFIXES))
    if not changed:
        return set()
    ids = {p: i for i, p in program.paths.items()}
    complete = conn.execute("SELECT 1 FROM st_state WHERE key = ?", (_STATE,)).fetchone() is not None
    stored: dict[str, dict[str, list[str]]] = {}
    for start in range(0, len(changed), 400):
        keys = [f"{_STATE}:{p}" for p in changed[start:start + 400]]
        for key, value in conn.execute(f"SELECT key, value FROM st_state WHERE key IN ({marks(len(keys))})", keys):
            stored[str(key)[len(_STATE) + 1:]] = json.loads(value)
    present = [p for p in changed if p in ids]
    conn.executemany("DELETE FROM st_state WHERE key = ?", [(f"{_STATE}:{p}",) for p in changed if p not in ids])
    if not complete:
        return None  # every file is relinked; ``relink`` then records every file from what it read
    fresh = _records(conn, [ids[p] for p in present])
    now = {p: fresh[ids[p]] for p in present}
    conn.executemany("INSERT OR REPLACE INTO st_state(key, value) VALUES (?, ?)",
                     [(f"{_STATE}:{p}", json.dumps(r, sort_keys=True)) for p, r in now.items()])
    names: set[str] = set()
    uids: set[str] = set()
    reach: set[int] = set()  # files whose includers see something else now
    for path in changed:
        old, new = stored.get(path), now.get(path)
        before, after = set(old["names"] if old else ()), set(new["names"] if new else ())
        names |= before ^ after
        # A definition keeping its uid (its signature) keeps every link into it: only those that came or went.
        uids |= set(old["uids"] if old else ()) ^ set(new["uids"] if new else ())
        if path in ids and (before != after or (old or {}).get("includes") != (new or {}).get("includes")):
            reach.add(ids[path])
    out = {ids[p] for p in present}
    if any(p not in ids or p not in stored for p in changed):  # a file came or went: includes may resolve anew
        gone_or_new = {posixpath.basename(p) for p in changed if p not in ids or p not in stored}
        out.update(int(file_id) for file_id, source in conn.execute(
            "SELECT file_id, source_literal FROM st_import WHERE import_kind IN ('c_include', 'c_include_system')")
            if file_id in program.paths and posixpath.basename(str(source or "")) in gone_or_new)
    if reach:
        includers: dict[int, set[int]] = defaultdict(set)
        for source, targets in program.includes.items():
            for target in targets:
                includers[target].add(source)
        pending = list(reach)
        while pending:
            for source in includers.get(pending.pop(), ()):
                if source not in out:
                    out.add(source)
                    pending.append(source)
        out |= reach
    for column, values in (("target_uid", sorted(uids)), ("token_text", sorted(names))):
        for start in range(0, len(values), 400):
            part = values[start:start + 400]
            out.update(int(i) for (i,) in conn.execute(
                f"SELECT DISTINCT file_id FROM st_ref WHERE {column} IN ({marks(len(part))})", part)
                if i in program.paths)
    return out


#: What ``_refs`` reads of a reference: (ref_id, scope_id, token, role code, shape, local tier code, local
#: target, tier code, target). Plain rows: a cold index of a big C tree settles millions of them.
_Row = tuple[int, int | None, str, int, str | None, int, str | None, int, str | None]


def _refs(conn: sqlite3.Connection, part: Sequence[int], known: Callable[[str], bool]) -> dict[int, list[_Row]]:
    """The references linking may settle (file order, not source order: each is settled on its own):
    unresolved names, uses of a file-scope declaration without a definition (and the declaration itself), uses
    of a constructor in its class, the names of definitions, and members of ``this``."""
    q = marks(len(part))
    out: dict[int, list[_Row]] = defaultdict(list)
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


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute C/C++ cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    if not any(p.endswith(SUFFIXES) for p in (*effect.upserted, *effect.deleted)):
        return 0, set()
    program = _Program(conn)
    if not program.paths:
        return 0, set()
    targets = _affected(conn, effect, program)
    ids = sorted(program.paths) if targets is None else sorted(targets)
    if len(ids) * _BULK_SHARE >= len(program.paths):
        program.read_all()
    linker = _Linker(program, fresh)
    for part in chunked(ids):
        refs = _refs(conn, part, program.known)
        scopes = _scopes(conn, part)
        for file_id in part:
            linker.file(file_id, refs.get(file_id, []), scopes)
    if targets is None:
        _record_all(conn, program)
    schema.update_link_codes(conn, linker.rows)
    return len(linker.rows), linker.moved
