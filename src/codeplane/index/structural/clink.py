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
lookup, using-declarations (``using std::vector;``), the types of values (``Widget w; w.size()`` stays ANCHORED: the
refactor planner reads ``w``'s declared class from its ``type:Widget`` shape), declarations a macro expands to.

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

from codeplane.index.structural import schema
from codeplane.index.structural.clinker import Linker, file_scopes, settleable
from codeplane.index.structural.cprogram import CLASSES, EXTERNAL, INLINE_PARTS, SUFFIXES, Program
from codeplane.index.structural.store import BatchEffect, chunked, marks

_STATE = "c_family_decls"
#: Relinking at least 1/_BULK_SHARE of the C/C++ files reads every definition at once (a cold index has no name
#: indexes yet); fewer read them by name.
_BULK_SHARE = 4


def _records(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, list[str]]]:
    """What each file defines and declares, and includes: what its relinking depends on elsewhere."""
    out: dict[int, dict[str, set[str]]] = {i: {"names": set(), "uids": set(), "includes": set()} for i in ids}
    for part in chunked(ids):
        q = marks(len(part))
        for file_id, uid, name, kind, display in conn.execute(
                f"SELECT file_id, def_uid, name, kind, display_name FROM st_def WHERE file_id IN ({q})", part):
            out[file_id]["names"].add(str(name))
            out[file_id]["uids"].add(str(uid))
            if kind in CLASSES or kind in EXTERNAL:  # bases and ``static`` decide lookups elsewhere
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


def _record_all(conn: sqlite3.Connection, program: Program) -> None:
    """``_records`` of every file, from the definitions and file-scope names a pass over all of them read."""
    out: dict[int, dict[str, set[str]]] = {i: {"names": set(), "uids": set(), "includes": set()}
                                           for i in program.paths}
    for file_id in program.paths:
        record = out[file_id]
        for d in program.defs_in(file_id):
            record["names"].add(d.name)
            record["uids"].add(d.uid)
            if d.kind in CLASSES or d.kind in EXTERNAL:
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


def _affected(conn: sqlite3.Connection, effect: BatchEffect, program: Program) -> set[int] | None:
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
        # An inline part (``.inl``) sees what the files including it see (``Program.seen``).
        out |= {t for f in list(out) for t in program.includes.get(f, ()) if program.paths[t].endswith(INLINE_PARTS)}
    for column, values in (("target_uid", sorted(uids)), ("token_text", sorted(names))):
        for start in range(0, len(values), 400):
            part = values[start:start + 400]
            out.update(int(i) for (i,) in conn.execute(
                f"SELECT DISTINCT file_id FROM st_ref WHERE {column} IN ({marks(len(part))})", part)
                if i in program.paths)
    return out


def relink(conn: sqlite3.Connection, effect: BatchEffect, fresh: set[int]) -> tuple[int, set[tuple[str, str]]]:
    """Recompute C/C++ cross-file tiers after ``effect``; (refs changed, member tokens whose tier moved)."""
    if not any(p.endswith(SUFFIXES) for p in (*effect.upserted, *effect.deleted)):
        return 0, set()
    program = Program(conn)
    if not program.paths:
        return 0, set()
    targets = _affected(conn, effect, program)
    ids = sorted(program.paths) if targets is None else sorted(targets)
    if len(ids) * _BULK_SHARE >= len(program.paths):
        program.read_all()
    linker = Linker(program, fresh)
    for part in chunked(ids):
        refs = settleable(conn, part, program.known)
        scopes = file_scopes(conn, part)
        for file_id in part:
            linker.file(file_id, refs.get(file_id, []), scopes)
    if targets is None:
        _record_all(conn, program)
    schema.update_link_codes(conn, linker.rows)
    return len(linker.rows), linker.moved

