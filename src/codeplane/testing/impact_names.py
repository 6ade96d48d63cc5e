"""Python's name rules, which narrow the uses by name a symbol-level impact walk follows (``impact_symbols.py``).

A reference the index left unresolved is spelled like many definitions; these tell which of them it can denote
at all, from what the file imports and how the use is written. Each answers "can" when unsure, so a test is only
dropped where Python itself rules the use out.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence

from codeplane.testing.impact_reach import Def
from codeplane.testing.impact_text import WORD, bound_literal, dotted_root
from codeplane.testing.impact_walkfacts import WalkFacts

#: ``x.__dict__.`` (a dict or mappingproxy), ``x.__name__.`` (a str)...: attributes Python itself gives every
#: object, class or function, whose types are builtins (``self.__dict__.get``: requests' ``LookupDict`` reached
#: every method named ``get``). Matched right before the member's column.
_BUILTIN_ATTRIBUTE = re.compile(
    r"\.\s*__(?:dict|name|qualname|module|doc|annotations|mro|bases)__\s*\.\s*$")
#: A call of a builtin that always returns a builtin container or string, right before the member access
#: (``globals().values()``: a dict's ``values``, never werkzeug's ``Request.values``); flat arguments only.
_BUILTIN_CALL = re.compile(
    r"(?<![\w.])(globals|locals|vars|dict|list|set|frozenset|tuple|sorted|str|bytes|bytearray)\s*\([^()]*\)\s*\.\s*$")
#: A line assigning what looks like a literal to a plain name.
_LITERAL_ASSIGNMENT = re.compile(
    r"""\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*(?:[-\[{"'\d]|[rRbBuUfF]{1,2}["']|(?:True|False|None)\b)""")
#: ``*name`` / ``**name``: a packed parameter (or an unpacking or a product, which the bind then rules out).
_PACKED = re.compile(r"\*[ \t]*([A-Za-z_]\w*)")
#: ``global a, b`` / ``nonlocal a``: names another scope may rebind.
_REBINDS = re.compile(r"\b(?:global|nonlocal)\s+([\w, \t]+)")


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
    via = facts.file_rows(
        conn, "SELECT i.resolved_file_id IS NULL AND i.resolved_alt_file_id IS NULL, i.target_key, i.import_kind "
        "FROM st_ref r JOIN st_import i ON i.import_uid = r.via_import_uid WHERE r.file_id = ? "
        "AND r.start_line = ? AND r.start_col = ?", (file_id, line, start))
    return bool(via) and all(
        outside and kind in ("python_import", "python_from") and isinstance(key, str) and key.startswith("py:")
        and not facts.own_package(key[3:].split(".", 1)[0]) for outside, key, kind in via)


#: pytest's own fixtures whose values, and every attribute of them, are pytest's or the standard library's objects
#: (``pytestconfig.pluginmanager.register`` is pluggy's). Not ``request`` (``request.instance``, ``request.module``
#: hand back the tests' own objects) nor ``cache`` (it hands back what was stored).
PYTEST_OBJECTS = frozenset({"pytestconfig", "monkeypatch", "capsys", "capsysbinary", "capfd", "capfdbinary",
                            "caplog", "recwarn", "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory"})


_PYTEST_WORDS = re.compile(r"\b(?:" + "|".join(sorted(PYTEST_OBJECTS)) + r")\b")


def pytest_receiver(facts: WalkFacts, conn: sqlite3.Connection, text: str, site: tuple[int, int, int],
                    read_lines: Callable[[str], Sequence[str]]) -> bool:
    """Whether the member access at ``site`` (``text`` is its line) hangs off a plain dotted name rooted at a
    parameter named after one of pytest's own fixtures (``PYTEST_OBJECTS``) that the repository defines no
    fixture of that name for (a definition so named, or ``name="..."`` in a file naming ``fixture``): pytest hands
    its own object, whose attributes are no repository definition. Any doubt answers False (the use counts)."""
    file_id, line, col = site
    if _PYTEST_WORDS.search(text, 0, col) is None:
        return False
    found = dotted_root(text, col)
    root = WORD.match(text, found[0]) if found is not None else None
    if found is None or root is None or root.group(0) not in PYTEST_OBJECTS:
        return False
    param = facts.file_rows(conn, "SELECT 1 FROM st_ref r JOIN st_bind b ON b.bind_id = r.bind_id WHERE r.file_id = ? "
                       "AND r.start_line = ? AND r.start_col = ? AND b.reason_code = 'PARAM'",
                       (file_id, line, found[0]))
    return bool(param) and not _repository_fixture(facts, conn, root.group(0), read_lines)


def _repository_fixture(facts: WalkFacts, conn: sqlite3.Connection, name: str,
                        read_lines: Callable[[str], Sequence[str]]) -> bool:
    known = facts.pytest_overrides.get(name)
    if known is None:
        known = bool(facts.rows(conn, "SELECT 1 FROM st_def WHERE name_lc = ? AND name = ? LIMIT 1",
                                (name.lower(), name)))
        if not known:
            spelled = (f'"{name}"', f"'{name}'")
            for (path,) in facts.rows(conn, "SELECT DISTINCT f.path FROM st_ref r JOIN st_file f ON f.file_id = "
                                      "r.file_id WHERE r.token_text = 'fixture'", ()):
                lines = read_lines(str(path))
                if not lines or any(q in t for t in lines for q in spelled):
                    known = True
                    break
        facts.pytest_overrides[name] = known
    return known


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


def literal_receiver(facts: WalkFacts, conn: sqlite3.Connection, lines: Sequence[str],
                     site: tuple[int, int, int], *, at_import: bool = False,
                     stored_elsewhere: Callable[[str], bool] | None = None) -> bool:
    """Whether the member access at ``site`` (file id, line, column; ``lines``: the file's text) hangs off an
    attribute every object has with a builtin type (``x.__dict__.get``), a call of a builtin that makes a container
    or a string (``globals().values()``, ``sorted(x).index``), or a function's local variable that
    every assignment in the function binds to a literal (``sorts = [...]`` then ``sorts.index(x)``: a ``list``,
    whose ``index`` is no repository definition; flask's ``routes_command`` reached every function named
    ``index`` so). Only a local of a function scope: no other code can rebind it unless the file says
    ``global``/``nonlocal`` for its name, which keeps it. An augmented assignment keeps a list, dict or set
    what it is (``+=``, ``|=`` extend it in place), not a string or a number. A ``*args``/``**kwargs``
    parameter nothing rebinds is a tuple/dict (``_packed_parameter``).

    ``at_import``: the access runs at import time (module level, a class body). There a module-level variable
    counts as such a local too: nothing outside the module can have rebound it before the module finished
    importing (a test module's ``ALLOWED = {...}`` then ``ALLOWED.update(...)`` is a set's ``update``, not
    click's ``ProgressBar.update``), unless the file says ``global`` for it, star-imports or runs strings as
    code. In a function, another module may have rebound it since (``monkeypatch.setattr(mod, "X", ...)``), unless
    ``stored_elsewhere`` says no code anywhere stores an attribute of that name (``mod.X = ...``) or names it for a
    ``setattr``-like call: then werkzeug's ``default_exceptions.get(...)`` in ``_find_exceptions`` is a dict's
    ``get``, never ``Client.get``."""
    file_id, line, col = site
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if _BUILTIN_ATTRIBUTE.search(text, 0, col):
        return True
    call = _BUILTIN_CALL.search(text, 0, col)
    if call is not None and not facts.file_rows(  # the builtin itself: no definition or binding of the file names it
            conn, "SELECT 1 FROM st_ref WHERE file_id = ? AND start_line = ? AND start_col = ? AND (target_uid IS NOT "
            "NULL OR bind_id IS NOT NULL)", (file_id, line, call.start(1))):
        return True
    start = receiver_start(text, col)
    if start is None:
        return False
    if _packed_parameter(facts, conn, lines, site, start):
        return True
    named = facts.literal_names.get(file_id)
    if named is None:  # a cheap first look: names the file ever assigns something literal-looking to
        named = facts.literal_names[file_id] = frozenset(
            m.group(1) for t in lines if (m := _LITERAL_ASSIGNMENT.match(t)) is not None)
    word = WORD.match(text, start)
    if word is None or word.group(0) not in named:
        return False
    binds = facts.file_rows(
        conn, "SELECT r.bind_id, s.kind FROM st_ref r JOIN st_bind b ON b.bind_id = r.bind_id JOIN st_scope s ON "
        "s.scope_id = b.scope_id WHERE r.file_id = ? AND r.start_line = ? AND r.start_col = ? "
        "AND b.reason_code = 'LOCAL_ASSIGN' AND s.kind IN ('function', 'file')", (file_id, line, start))
    if len(binds) != 1 or (binds[0][1] == "file" and not (
            (at_import or (stored_elsewhere is not None and not stored_elsewhere(word.group(0))))
            and file_id not in facts.loose_files(conn))):
        return False
    bind = int(binds[0][0])
    known = facts.literal_binds.get(bind)
    if known is None:
        name = WORD.match(text, start)
        rebound = rebound_names(facts, file_id, lines)
        sites = [(int(ln), int(c)) for ln, c in facts.file_rows(
            conn, "SELECT start_line, start_col FROM st_ref WHERE file_id = ? AND bind_id = ? AND role = 'DEFINITION'",
            (file_id, bind))]
        known = facts.literal_binds[bind] = name is not None and name.group(0) not in rebound and _literal_bind(
            lines, sites)
    return known


def _packed_parameter(facts: WalkFacts, conn: sqlite3.Connection, lines: Sequence[str], site: tuple[int, int, int],
                      start: int) -> bool:
    """Whether the receiver at column ``start`` is a ``*args`` (a tuple) or ``**kwargs`` (a dict) parameter that
    nothing rebinds (``kwargs.get("domain")`` in requests' ``RequestsCookieJar.set`` reached every method named
    ``get``): its members are the builtin type's."""
    file_id, line, _ = site
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    word = WORD.match(text, start)
    if word is None:
        return False
    packed = facts.packed_names.get(file_id)
    if packed is None:  # a cheap first look: names the file ever writes as ``*name``/``**name``
        packed = facts.packed_names[file_id] = frozenset(_PACKED.findall("\n".join(lines)))
    if word.group(0) not in packed:
        return False
    sites = facts.file_rows(
        conn, "SELECT d.start_line, d.start_col FROM st_ref r JOIN st_bind b ON b.bind_id = r.bind_id "
        "JOIN st_ref d ON d.bind_id = b.bind_id AND d.file_id = r.file_id AND d.role = 'DEFINITION' "
        "WHERE r.file_id = ? AND r.start_line = ? AND r.start_col = ? AND b.reason_code = 'PARAM'",
        (file_id, line, start))
    if len(sites) != 1:
        return False
    def_line, def_col = int(sites[0][0]), int(sites[0][1])
    head = lines[def_line - 1][:def_col] if 0 < def_line <= len(lines) else ""
    return head.rstrip().endswith("*") and word.group(0) not in rebound_names(facts, file_id, lines)


def rebound_names(facts: WalkFacts, file_id: int, lines: Sequence[str]) -> frozenset[str]:
    rebound = facts.rebound.get(file_id)
    if rebound is None:
        text = "\n".join(lines)
        rebound = facts.rebound[file_id] = frozenset(
            n for m in _REBINDS.finditer(text) for n in WORD.findall(m.group(1))
        ) if "global" in text or "nonlocal" in text else frozenset()
    return rebound


def receiver_start(text: str, col: int) -> int | None:
    """Column of ``x`` in a plain ``x.name`` at ``col`` (not ``a.x.name``, ``f().name``, ``self.name``)."""
    i = col - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    if i < 0 or text[i] != ".":
        return None
    i -= 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    end = i + 1
    while i >= 0 and (text[i].isalnum() or text[i] == "_"):
        i -= 1
    start = i + 1
    if start == end or text[start].isdigit() or text[start:end] in ("self", "cls"):
        return None
    while i >= 0 and text[i] in " \t":
        i -= 1
    return None if i >= 0 and text[i] == "." else start


def _literal_bind(lines: Sequence[str], sites: Sequence[tuple[int, int]]) -> bool:
    kinds = {bound_literal(lines, ln - 1, c) if 0 < ln <= len(lines) else None for ln, c in sites}
    return bool(sites) and None not in kinds and kinds != {"augmented"} and not (
        "augmented" in kinds and "scalar" in kinds)
