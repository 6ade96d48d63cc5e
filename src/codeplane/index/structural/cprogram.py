"""The C/C++ definitions and include graph the cross-file linker (``clink.py``) looks names up in.

``Program`` reads the C/C++ files' paths, ``#include`` lines (resolved by the generic pass, else by the one
repository file whose path ends with the written one) and ``using namespace`` directives, and their definitions:
all at once (``read_all``: a cold index, which has no name indexes yet) or by name as lookups ask. Lookups: what a
file sees (``seen``), macros, namespace-level definitions by lexical path, class members (through the bases a class
header spells), functions and variables with external linkage, and the files that mention a name at file scope.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from codeplane.index.languages import C_FAMILY_SUFFIXES
from codeplane.index.structural.classhierarchy import UNSETTLED
from codeplane.index.structural.store import chunked, marks

LANGUAGES = ("c", "cpp")
#: C-family files and the textual includes (``.inc``) no grammar parses but a change to which relinks.
SUFFIXES = (*C_FAMILY_SUFFIXES, ".inc")
SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++")
#: Files holding a header's inline definitions, included by it (or by its users) rather than including it.
INLINE_PARTS = (".inl", ".ipp")
CLASSES = frozenset({"class", "struct"})
#: What has external linkage (``int ns::f()`` defined apart from its namespace is a ``method`` with no class).
EXTERNAL = frozenset({"function", "variable", "method"})
FUNCTIONS = frozenset({"function", "method"})


class CDef(NamedTuple):
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
    levels: dict[str, list[CDef]]  # lexical path -> namespace-level definitions
    members: dict[str, list[CDef]]  # class uid -> its members of the name
    external: list[CDef]
    macros: list[CDef]


class Program:
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
        #: ``using a::b::K;`` -> {"K": {file: "a.b.K"}}: the files that let ``K`` name ``a::b::K`` (by name: most names
        #: looked up have none, and a lookup must not walk a file's whole include closure to find that out).
        self._declared_usings: dict[str, dict[int, str]] = defaultdict(dict)
        for file_id, source in conn.execute(
                "SELECT file_id, source_literal FROM st_import WHERE import_kind = 'cpp_using' "
                "AND source_literal NOT LIKE 'namespace %' ORDER BY file_id, start_line"):
            path = str(source).strip().lstrip(":").replace("::", ".")
            if file_id in self.paths and "." in path and "<" not in path:
                self._declared_usings[path.rsplit(".", 1)[1]][int(file_id)] = path
        self._usings: dict[int, list[str]] = {}
        self._indexed: dict[str, _ByName] = {}
        self._named: dict[str, list[CDef]] = {}
        self._uids: dict[str, CDef] = {}
        self._files: dict[int, list[CDef]] = {}
        self._class_paths: dict[str, bool] = {}
        self._closures: dict[int, frozenset[int]] = {}
        self._reverse: dict[int, set[int]] | None = None
        self._declared: dict[int, frozenset[str]] = {}
        self._declarers: dict[str, frozenset[int]] = {}
        self._by_name: dict[str, frozenset[int]] | None = None

    def read_all(self) -> None:
        """Read every definition now: most files are relinked."""
        self.bulk = True
        rows: dict[str, list[CDef]] = defaultdict(list)
        for part in chunked(sorted(self.paths)):
            for d in self._rows(f"file_id IN ({marks(len(part))})", part):
                rows[d.name].append(d)
                self._files.setdefault(d.file_id, []).append(d)
        self._named = dict(rows)
        self._class_paths = {d.lexical: True for defs in rows.values() for d in defs if d.kind in CLASSES}
        for file_id in self.paths:
            self._files.setdefault(file_id, [])

    def _rows(self, where: str, args: Sequence[object]) -> list[CDef]:
        out = []
        # Sorted here: ``ORDER BY def_uid`` would have SQLite walk the uid index over the whole table.
        rows = self.conn.execute(
            "SELECT def_uid, file_id, kind, name, lexical_path, parent_uid, display_name, start_line, start_col, "
            f"end_line, end_col FROM st_def WHERE {where}", args)
        for uid, file_id, kind, name, lexical, parent, display, line, col, end_line, end_col in sorted(rows):
            if file_id in self.paths:
                d = CDef(uid, file_id, kind, name, lexical, parent, display, line, col, (end_line, end_col))
                out.append(d)
                self._uids[uid] = d
        return out

    def definition(self, uid: str) -> CDef | None:
        found = self._uids.get(uid)
        if found is None and not self.bulk:
            rows = self._rows("def_uid = ?", (uid,))
            found = rows[0] if rows else None
        return found

    def named(self, name: str) -> list[CDef]:
        """Every C/C++ definition with this simple name."""
        found = self._named.get(name)
        if found is None:
            if self.bulk:  # every definition is read: none has this name
                return []
            found = self._named[name] = self._rows("name_lc = ? AND name = ?", (name.lower(), name))
        return found

    def defs_in(self, file_id: int) -> list[CDef]:
        found = self._files.get(file_id)
        if found is None:
            found = self._files[file_id] = self._rows("file_id = ?", (file_id,))
        return found

    def is_class(self, path: str) -> bool:
        found = self._class_paths.get(path)
        if found is None:
            found = self._class_paths[path] = any(
                d.kind in CLASSES and d.lexical == path for d in self.named(path.rpartition(".")[2]))
        return found

    def apart(self, uid: str) -> CDef | None:
        """The member defined outside its class that ``uid`` names, if it is one."""
        d = self._uids.get(uid)
        return d if d is not None and self._is_apart(d) else None

    def _is_apart(self, d: CDef) -> bool:
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

    def using_declared(self, file_id: int, name: str) -> str | None:
        """What ``using leveldb::WriteBatch;`` in the file or a header it sees makes ``WriteBatch`` name there."""
        declaring = self._declared_usings.get(name)
        if not declaring:
            return None
        seen = self.seen(file_id)
        paths = {path for f, path in declaring.items() if f in seen}
        return self.in_scope(seen, [""], paths.pop()) if len(paths) == 1 else None

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
            levels: dict[str, list[CDef]] = defaultdict(list)
            members: dict[str, list[CDef]] = defaultdict(list)
            external, macros = [], []
            for d in self.named(name):
                if d.kind == "macro":
                    macros.append(d)
                if d.parent is not None:
                    members[d.parent].append(d)
                elif not self._is_apart(d):
                    levels[d.lexical].append(d)
                    if d.kind in EXTERNAL and self.paths[d.file_id].endswith(SOURCES) and not _static(d):
                        external.append(d)
            found = self._indexed[name] = _ByName(dict(levels), dict(members), external, macros)
        return found

    def namespace_level(self, lexical: str) -> list[CDef]:
        """Namespace-level definitions with this lexical path (not members, not members defined apart)."""
        return self._index(lexical.rpartition(".")[2]).levels.get(lexical, [])

    def external(self, name: str) -> list[CDef]:
        """Definitions of ``name`` with external linkage: functions and variables of source files, not static."""
        return self._index(name).external

    def macros(self, name: str) -> list[CDef]:
        return self._index(name).macros

    def members(self, class_uid: str, name: str) -> list[CDef]:
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
        """The file and every file it includes, transitively; an inline implementation file (``.inl``, ``.ipp``)
        also sees what the files including it see, as it is compiled as part of them (it rarely includes the
        header that declares its class: ``#include "widget.inl"`` at the header's end)."""
        found = self._closures.get(file_id)
        if found is None:
            found = self._included(file_id)
            if self.paths[file_id].endswith(INLINE_PARTS):
                for includer in sorted(self._includers().get(file_id, ())):
                    found |= self._included(includer)
            self._closures[file_id] = found
        return found

    def _included(self, file_id: int) -> frozenset[int]:
        reached = {file_id}
        pending = [file_id]
        while pending:
            for target in self.includes.get(pending.pop(), []):
                if target not in reached:
                    reached.add(target)
                    pending.append(target)
        return frozenset(reached)

    def _includers(self) -> dict[int, set[int]]:
        if self._reverse is None:
            self._reverse = defaultdict(set)
            for file_id, targets in self.includes.items():
                for target in targets:
                    self._reverse[target].add(file_id)
        return self._reverse

    # -- lookups -------------------------------------------------------------------------------------------
    def in_scope(self, seen: frozenset[int], prefixes: list[str], name: str, *, cpp: bool = False) -> str | None:
        """The one definition of ``name`` the file sees, innermost namespace first; ``cpp``: the file is C++, where
        ``X`` names the struct ``X`` even beside a C header's ``typedef struct X X;`` (in C they are two names)."""
        for prefix in prefixes:
            found = [d for d in self.namespace_level(f"{prefix}.{name}" if prefix else name) if d.file_id in seen]
            if found:
                return one(found, typedef_is_tag=cpp)
        return None

    def member(self, class_uid: str, name: str, depth: int = 0) -> str | None:
        """The member ``name`` of a class or, if it declares none, of its bases; UNSETTLED when a base the
        repository does not define (or a template's) may declare it."""
        cls = self.definition(class_uid)
        if cls is None:
            return None
        if name == cls.name:
            return class_uid  # the injected class name (``K::K``, ``~K``), not a constructor
        own = self.members(class_uid, name) or [  # or a nested class defined apart (``struct K::Inner {...}``)
            d for d in self.namespace_level(f"{cls.lexical}.{name}") if d.kind in CLASSES]
        if own:
            return one(own)
        bases = _bases(cls.display)
        if not bases:
            return None
        if depth > 8:
            return UNSETTLED
        seen, prefixes = self.seen(cls.file_id), namespaces_of(cls.owner)
        found: set[str] = set()
        for base in bases:
            uid = self.class_named(seen, prefixes, base) if "<" not in base else None
            inherited = self.member(uid, name, depth + 1) if uid is not None else UNSETTLED
            if inherited is not None:
                found.add(inherited)
        return one(sorted(found)) if found else None

    def class_named(self, seen: frozenset[int], prefixes: list[str], written: str) -> str | None:
        path = written.strip().lstrip(":").replace("::", ".")
        for prefix in prefixes:
            found = [d for d in self.namespace_level(f"{prefix}.{path}" if prefix else path)
                     if d.kind in CLASSES and d.file_id in seen]
            if found:
                return found[0].uid if len(found) == 1 else None
        head, _, rest = path.partition(".")
        aliased = {p for f, p in self._declared_usings.get(head, {}).items() if f in seen}
        if len(aliased) == 1:  # ``using leveldb::Comparator;`` then ``struct C : public Comparator``
            target = f"{aliased.pop()}.{rest}" if rest else aliased.pop()
            found = [d for d in self.namespace_level(target) if d.kind in CLASSES and d.file_id in seen]
            if found:
                return found[0].uid if len(found) == 1 else None
        outer, _, inner = path.rpartition(".")
        if not outer:
            return None
        # A nested class (``WriteBatch::Handler``, a base of ``MemTableInserter``): a member of the outer class.
        holder = self.class_named(seen, prefixes, outer)
        nested = [d for d in self.members(holder, inner) if d.kind in CLASSES] if holder is not None else []
        return nested[0].uid if len(nested) == 1 else None

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
        return one(found) if found else None

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
        found = [d for key in sorted(keys) for d in self.namespace_level(key) if d.kind in CLASSES]
        if not found or any(d.file_id in seen for d in found) or seen.isdisjoint(self.declarers(name)):
            return None
        return one(found)

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

    def _declaring(self, d: CDef) -> frozenset[int]:
        """The headers the defining file includes that mention the definition's name at file scope."""
        return (self.declarers(d.name) & self.seen(d.file_id)) - {d.file_id}


def one(found: list[CDef] | list[str], *, typedef_is_tag: bool = False) -> str:
    """The one definition found, else UNSETTLED. Definitions of one name, kind and path in one file are ``#if``
    alternatives of one entity (``double GetLoadAverage()`` per platform): the last stands for them all, as the
    rename planner renames same-file definitions of one qualified name together."""
    uids = {d if isinstance(d, str) else d.uid for d in found}
    if len(uids) == 1:
        return next(iter(uids))
    defs = [d for d in found if not isinstance(d, str)]
    classes = [d for d in defs if d.kind in CLASSES]
    if typedef_is_tag and len(defs) == len(found) and len(classes) == 1 and all(
            d is classes[0] or (d.kind == "type" and _tags(d.display, d.name) == d.name) for d in defs):
        return classes[0].uid  # C++ using a C header's ``typedef struct X X;`` beside ``struct X {...}``: one type
    if len(defs) == len(found) and len({(d.file_id, d.lexical, d.kind) for d in defs}) == 1:
        return max(defs, key=lambda d: (d.line, d.col)).uid
    return UNSETTLED


_TYPEDEF_TAG = re.compile(r"typedef\s+(?:struct|class|union)\s+(\w+)\s+(\w+)\s*;")


def _tags(display: str, name: str) -> str | None:
    """The struct a ``typedef struct X name;`` gives ``name`` to."""
    match = _TYPEDEF_TAG.match(display.strip())
    return match.group(1) if match is not None and match.group(2) == name else None


def _static(d: CDef) -> bool:
    head = d.display.split("(", 1)[0].split(d.name, 1)[0]
    return "static" in head.split() or d.lexical.startswith(".")


def namespaces_of(namespace: str) -> list[str]:
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


