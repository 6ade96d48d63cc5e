"""Python's name rules, which narrow the uses by name a symbol-level impact walk follows (``impact_symbols.py``).

A reference the index left unresolved is spelled like many definitions; these tell which of them it can denote
at all, from what the file imports and how the use is written. Each answers "can" when unsure, so a test is only
dropped where Python itself rules the use out.
"""

from __future__ import annotations

import sqlite3

from codeplane.testing.impact_reach import Def
from codeplane.testing.impact_text import WORD, dotted_root
from codeplane.testing.impact_walkfacts import WalkFacts


def bare_visible(facts: WalkFacts, conn: sqlite3.Connection, file_id: int, d: Def, owner: Def | None) -> bool:
    """Whether a bare name (no receiver) in ``file_id`` that resolves to nothing there can denote ``d``.

    Python looks a bare name up in the enclosing functions, the module and the builtins, never in a class
    body from outside it: in another file, a class member cannot be named bare, and a module-level
    definition only through a star import or an import of its name (the linker left unresolved); with
    neither, the name is a builtin (``set()``, ``open()``) or a local of that file. Code that writes
    module globals by name (``exec``, ``eval``) keeps every bare name."""
    if file_id == d.file_id:
        return True
    if owner is not None and owner.kind == "class":
        return False
    return file_id in facts.loose_files(conn) or file_id in facts.importers_of_name(conn, d.name)


def external_receiver(facts: WalkFacts, conn: sqlite3.Connection, text: str, site: tuple[int, int, int], *,
                      foreign: bool) -> bool:
    """Whether the member access at ``site`` (file id, line, column; ``text`` is that line) hangs off a plain
    dotted name rooted at an import of another distribution's module (``TextIOBase.register``,
    ``os.path.join``): an attribute of that library's module or class, never a repository definition.
    ``foreign``: the access's own reference goes through such an import (the index records it for the first
    member of the chain). A call or subscript in the chain (``copy.copy(x).m``) may hand back a repository
    object: never external."""
    file_id, line, col = site
    found = dotted_root(text, col)
    if found is None:
        return False
    if foreign:
        return True
    start, dots = found
    root = WORD.match(text, start)
    if dots < 2 or root is None or root.group(0) in ("self", "cls"):
        return False  # ``x.name`` without an import through ``x``: a local, a parameter, this file's global
    via = facts.rows(
        conn, "SELECT i.resolved_file_id IS NULL AND i.resolved_alt_file_id IS NULL, i.target_key, i.import_kind "
        "FROM st_ref r JOIN st_import i ON i.import_uid = r.via_import_uid WHERE r.file_id = ? "
        "AND r.start_line = ? AND r.start_col = ?", (file_id, line, start))
    return bool(via) and all(
        outside and kind in ("python_import", "python_from") and isinstance(key, str) and key.startswith("py:")
        and not facts.own_package(key[3:].split(".", 1)[0]) for outside, key, kind in via)


def member_visible(facts: WalkFacts, conn: sqlite3.Connection, file_id: int, d: Def, owner: Def | None, *,
                   in_tests: bool) -> bool:
    """Whether a member access ``x.name`` in ``file_id`` that resolves to nothing there can denote ``d``.

    A module-level definition is an attribute of its module: ``x`` must be that module object, or one
    re-exporting the name (``WalkFacts.module_holders``): a file that imports neither cannot name it so
    (``admin.site.register`` is no use of an unrelated module's ``register`` function). Class members are
    not narrowed here (any object may be an instance), nor uses in test files and ``conftest.py``
    (``in_tests``), where a fixture may hand a test any module object."""
    if owner is not None or file_id == d.file_id or in_tests:
        return True
    holders = facts.module_holders(conn, d.file_id, d.name)
    return holders is None or file_id in holders
