"""Definitions that moved between files: a removal in one file and an addition in another of the same thing.

``compare.py`` matches definitions within one file; a definition cut from ``a.py`` and pasted into ``c.py``
(``refactor_move``, or by hand) comes out of it as a removal and an addition, which would tell the agent to
check references to a removed symbol that nothing uses any more. A removal and an addition pair up when they
have the same kind and the same qualified name inside their files and the same own text (nested definitions
cut out, so a moved class pairs, and each of its members pairs on its own), and that key is found exactly once
among the removals and once among the additions; an epoch snapshot keeps no text, so there the signature and
the length stand in for it. A definition moved *and* edited stays a removal and an addition.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from codeplane.analysis.models import ADDED, MOVED, REMOVED, Change, DefState
from codeplane.index.structural.extract import PARSED, extract_many
from codeplane.index.structural.facts import ImportRow
from codeplane.repo.content import decode, is_binary

#: Tag of a move whose old module still binds the name by importing it from the new one (``keep_reexport``).
REEXPORTED = "reexported"

Extra = TypeVar("Extra")


def _key(d: DefState) -> tuple[str, str, str, str] | None:
    if d.own_hash is not None:
        return d.kind, d.lexical_path, "text", d.own_hash
    if not d.signature_hash:
        return None
    return d.kind, d.lexical_path, d.signature_hash, str(d.end_line - d.start_line)


def pair_moves(found: Sequence[tuple[Change, Extra]]) -> list[tuple[Change, Extra]]:
    """``found`` with each moved definition's removal and addition folded into one ``moved`` change (at the
    addition's place, ``old_path`` the file it left); everything else as it was, in order."""
    removed: dict[tuple[str, str, str, str], list[int]] = {}
    added: dict[tuple[str, str, str, str], list[int]] = {}
    for i, (c, _) in enumerate(found):
        state = c.old if c.change == REMOVED else c.new if c.change == ADDED else None
        key = _key(state) if state is not None else None
        if key is not None:
            (removed if c.change == REMOVED else added).setdefault(key, []).append(i)
    folded: dict[int, Change] = {}
    gone: set[int] = set()
    for key, olds in removed.items():
        news = added.get(key, [])
        if len(olds) != 1 or len(news) != 1:
            continue  # two candidates on either side: which went where is a guess
        old, new = found[olds[0]][0], found[news[0]][0]
        if old.path == new.path:
            continue
        folded[news[0]] = replace(new, change=MOVED, old=old.old, old_path=old.path, lines_changed=None,
                                  delta_tags=("symbol_moved",), preview=())
        gone.add(olds[0])
    return [(folded.get(i, c), extra) for i, (c, extra) in enumerate(found) if i not in gone]


def reexported(conn: sqlite3.Connection, change: Change) -> Change:
    """``change`` tagged ``reexported`` when it is a move and its old module (as the index holds it now) imports
    the name from the new one (``from .new import f``, ``export { f } from "./new"``): importers of the old module
    keep working, so the move breaks nothing."""
    if change.change != MOVED or change.old_path is None:
        return change
    found = conn.execute(
        "SELECT 1 FROM st_import i JOIN st_file old ON old.file_id = i.file_id JOIN st_file new "
        "ON new.file_id = i.resolved_file_id WHERE old.path = ? AND new.path = ? AND coalesce(i.alias, "
        "i.imported_name) = ? AND i.imported_name = ? LIMIT 1",
        (change.old_path, change.path, change.name, change.name)).fetchone()
    return replace(change, delta_tags=(*change.delta_tags, REEXPORTED)) if found else change


def imports_of(path: str, data: bytes) -> tuple[ImportRow, ...]:
    """The imports of ``path`` holding ``data`` (a revision's blob), as the index's extractor finds them."""
    if is_binary(data):
        return ()
    outcome = extract_many([(path, decode(data))])[0]
    return tuple(outcome.facts.imports) if outcome.status == PARSED and outcome.facts is not None else ()


def _relative(source: str) -> bool:
    return source.startswith(".")  # ``from .b``, ``./b``, ``../b``: read from the importing file's directory


def _absolute(kind: str, source: str) -> bool:
    """A Python or JavaScript source that names the same module from every importing file."""
    return kind.startswith(("python_", "js_")) and not _relative(source)


def reexported_in(conn: sqlite3.Connection, change: Change, imports: Sequence[ImportRow] | None) -> Change:
    """``reexported`` for a revision (``target`` given): ``imports`` are the old module's as that revision has it
    (None: it has no such file). The index describes the work tree, so the module an import names is resolved
    as the index resolves the same source written where it means the same: in the old module itself, in a file
    beside it for a relative source, anywhere for an absolute one. Unresolved there: not tagged (cautious)."""
    if change.change != MOVED or change.old_path is None or not imports:
        return change
    sources = {(i.source_literal, i.import_kind) for i in imports
               if i.imported_name == change.name and i.alias in (None, change.name) and i.source_literal}
    folder = change.old_path.rpartition("/")[0]
    for source, kind in sorted(sources, key=lambda s: (s[0] or "", s[1])):
        assert source is not None
        for (importer,) in conn.execute(
                "SELECT f.path FROM st_import i JOIN st_file f ON f.file_id = i.file_id JOIN st_file new "
                "ON new.file_id = i.resolved_file_id WHERE new.path = ? AND i.source_literal = ? AND i.import_kind = ? "
                "LIMIT 1000", (change.path, source, kind)):
            if importer == change.old_path or (_relative(source) and importer.rpartition("/")[0] == folder) \
                    or _absolute(kind, source):
                return replace(change, delta_tags=(*change.delta_tags, REEXPORTED))
    return change
