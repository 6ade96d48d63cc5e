"""Which files a batch can change the Java/C#/PHP links of (``javalink``, ``cslink``, ``phplink``), so an edit does
not relink a whole language (a 3,000-file Java repository took ~17 s per one-file edit that way).

Links are recomputed in the changed files and in every file of the language that
- has a reference whose target is a definition of a changed file, before or after the batch (uids are stable
  across edits that keep a definition's signature, so this finds every link into the changed code);
- spells a name a changed file started or stopped declaring (a new member may hide, overload or newly answer a
  name elsewhere), or a field, property or method declared with a type that appeared or vanished.
Two edits reach further and relink the whole language: a changed supertype list or package clause of a file that
existed before, and a type appearing or vanishing under a name another type extends (its subclasses' inherited
members change for any file using them).

PHP folds case (``fold``): its class, function and method names are case-insensitive, so names are compared
lowercased, and a file's declarations are its qualified names (a namespace can change with every name kept; the
simple names of the qualified names that changed are the ones looked for).

What each file declared is kept in ``st_state`` under ``<language>_decls:<path>`` (names, types, definition uids,
supertypes as written, package); ``<language>_decls`` marks that every file has its record (until then a batch
relinks everything).
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from typing import TypedDict

from codeplane.index.structural.store import BatchEffect, chunked, marks

_TYPES = frozenset({"class", "interface", "enum", "record", "struct", "delegate", "trait"})


class Decls(TypedDict):
    names: list[str]
    types: list[str]
    uids: list[str]
    supers: list[str]
    package: str


def _records(conn: sqlite3.Connection, ids: list[int], fold: bool) -> dict[int, Decls]:
    out: dict[int, Decls] = {}
    names: dict[int, set[str]] = defaultdict(set)
    types: dict[int, set[str]] = defaultdict(set)
    uids: dict[int, set[str]] = defaultdict(set)
    supers: dict[int, set[str]] = defaultdict(set)
    packages: dict[int, str] = {}
    for part in chunked(ids):
        q = marks(len(part))
        for file_id, package in conn.execute(f"SELECT file_id, package FROM st_file WHERE file_id IN ({q})", part):
            packages[file_id] = package or ""
        for file_id, uid, simple, qualified, kind in conn.execute(
                f"SELECT file_id, def_uid, name, qualified_name, kind FROM st_def WHERE file_id IN ({q})", part):
            name = str(qualified).lower() if fold else str(simple)
            names[file_id].add(name)
            uids[file_id].add(uid)
            if kind in _TYPES:
                types[file_id].add(name)
        for file_id, shape in conn.execute(
                f"SELECT file_id, receiver_shape FROM st_ref WHERE file_id IN ({q}) AND receiver_shape LIKE 'super:%'",
                part):
            supers[file_id].add(_last(shape[6:]).lower() if fold else _last(shape[6:]))
    for file_id in ids:
        out[file_id] = Decls(names=sorted(names[file_id]), types=sorted(types[file_id]), uids=sorted(uids[file_id]),
                             supers=sorted(supers[file_id]), package=packages.get(file_id, ""))
    return out


def _last(written: str) -> str:
    return written.replace("\\", ".").rsplit(".", 1)[-1]


def affected(conn: sqlite3.Connection, effect: BatchEffect, language: str, suffixes: tuple[str, ...], *,
             fold: bool = False) -> set[int] | None:
    """File ids of ``language`` whose links this batch can change; None: all of them."""
    changed = sorted(p for p in (*effect.upserted, *effect.deleted) if p.endswith(suffixes))
    if not changed:
        return set()
    prefix = f"{language}_decls"
    paths = {str(p): int(i) for i, p in conn.execute("SELECT file_id, path FROM st_file WHERE language = ?",
                                                     (language,))}
    complete = conn.execute("SELECT 1 FROM st_state WHERE key = ?", (prefix,)).fetchone() is not None
    stored: dict[str, Decls] = {}
    for start in range(0, len(changed), 400):
        keys = [f"{prefix}:{p}" for p in changed[start:start + 400]]
        for key, value in conn.execute(f"SELECT key, value FROM st_state WHERE key IN ({marks(len(keys))})", keys):
            stored[str(key)[len(prefix) + 1:]] = json.loads(value)
    present = [p for p in changed if p in paths]
    fresh = _records(conn, [paths[p] for p in present], fold)
    now = {p: fresh[paths[p]] for p in present}
    conn.executemany("DELETE FROM st_state WHERE key = ?", [(f"{prefix}:{p}",) for p in changed if p not in paths])
    conn.executemany("INSERT OR REPLACE INTO st_state(key, value) VALUES (?, ?)",
                     [(f"{prefix}:{p}", json.dumps(d, sort_keys=True)) for p, d in now.items()])
    if not complete:
        rest = [i for p, i in paths.items() if p not in now]
        everything = _records(conn, rest, fold)
        by_id = {i: p for p, i in paths.items()}
        conn.executemany("INSERT OR REPLACE INTO st_state(key, value) VALUES (?, ?)",
                         [(f"{prefix}:{by_id[i]}", json.dumps(d, sort_keys=True)) for i, d in everything.items()])
        conn.execute("INSERT OR REPLACE INTO st_state(key, value) VALUES (?, '1')", (prefix,))
        return None
    for path in changed:
        old, new = stored.get(path), now.get(path)
        if old is not None and new is not None and (old["supers"] != new["supers"] or old["package"] != new["package"]):
            return None  # a hierarchy or a package changed: inherited members change wherever they are used
    appeared: set[str] = set()  # names (and, apart, types) a changed file started or stopped declaring
    types_changed: set[str] = set()
    uids: set[str] = set()
    for path in changed:
        old, new = stored.get(path), now.get(path)
        appeared |= set(old["names"] if old else ()) ^ set(new["names"] if new else ())
        types_changed |= set(old["types"] if old else ()) ^ set(new["types"] if new else ())
        uids |= set(old["uids"] if old else ()) | set(new["uids"] if new else ())
    if fold:  # qualified names: what is looked for is their simple names
        appeared, types_changed = {_last(n) for n in appeared}, {_last(n) for n in types_changed}
    if types_changed and _extended(conn, language, types_changed):
        return None
    if types_changed:
        appeared |= _typed_with(conn, language, types_changed, fold)
    out = {paths[p] for p in present}
    spelled = "lower(r.token_text)" if fold else "r.token_text"
    for column, values in (("r.target_uid", sorted(uids)), (spelled, sorted(appeared))):
        for start in range(0, len(values), 400):
            part = values[start:start + 400]
            out.update(i for (i,) in conn.execute(
                f"SELECT DISTINCT r.file_id FROM st_ref r JOIN st_file f ON f.file_id = r.file_id "
                f"WHERE {column} IN ({marks(len(part))}) AND f.language = ?", [*part, language]))
    return out


def _extended(conn: sqlite3.Connection, language: str, types: set[str]) -> bool:
    """Whether any type of the language names one of ``types`` as a supertype."""
    for (value,) in conn.execute("SELECT value FROM st_state WHERE key LIKE ?", (f"{language}_decls:%",)):
        if types & set(json.loads(value)["supers"]):
            return True
    return False


def _typed_with(conn: sqlite3.Connection, language: str, names: set[str], fold: bool) -> set[str]:
    """Names of fields, properties and methods declared with one of the ``names`` as their class."""
    found: set[str] = set()
    for token, shape in conn.execute(
            "SELECT r.token_text, r.receiver_shape FROM st_ref r JOIN st_file f ON f.file_id = r.file_id "
            "WHERE f.language = ? AND r.role = 'DEFINITION' AND r.target_uid IS NOT NULL "
            "AND r.receiver_shape LIKE 'type:%'", (language,)):
        written = _last(str(shape)[5:])
        if (written.lower() if fold else written) in names:
            found.add(str(token).lower() if fold else str(token))
    return found
