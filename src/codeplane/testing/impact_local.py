"""Test files that reach a change only through imports inside their test functions (issue 22).

The module-level walk (``impact.py``) selects a test file whole when it imports an affected module: importing
the file runs its imports. An ``import`` statement inside a test function runs only when that test runs, so a
test file whose every import that leads to an affected module lies in the body of a test function (flask's
``def test_x(): from blueprintapp import app``) needs only those tests. Read from the index's facts: each
import's line (``st_import``) and the definitions around it (``st_def``).

Any doubt keeps the whole file: an import at module level, in a class body, a helper, a fixture or a decorator
that may lead to an affected module (exact, through a parent package, or a submodule of an affected package),
an import whose source is not a plain literal anywhere outside a test, a file whose text cannot be read, and a
file that spells an affected module's dotted name or one of its packages' in a string (``locate_app("cliapp.app",
...)``, ``["--app", "cliapp.app:create"]``, ``f"cliapp.{name}"``): code it calls may import that by name
(``__import__``, ``import_module``), where no import statement shows it.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence

#: A string literal on one line (its quote, its text): f-strings and byte strings too.
_STRING = re.compile(r"""(?:^|[^\w])[rRbBuUfF]{0,2}(["'])((?:\\.|(?!\1).)*)\1""")


def package_prefixes(key: str) -> list[str]:
    """``py:a.b.c`` → ``py:a``, ``py:a.b`` (Python's packages; other languages have none). The key up to each of
    its dots: a selection on Django asks this of ~100k keys."""
    if not key.startswith("py:"):
        return []
    found = []
    dot = key.find(".", 3)
    while dot != -1:
        found.append(key[:dot])
        dot = key.find(".", dot + 1)
    return found


class Affected:
    """Whether an import may run an affected module: it names one (or one of its parent packages, whose
    ``__init__`` may import it), or a module inside an affected package (importing it runs the package)."""

    def __init__(self, modules: Iterable[str], primary: Iterable[str] = ()) -> None:
        """``modules``: every key of every affected module; ``primary``: the first key of each (its packages
        are the names a string would spell; an alias's, ``tests.test_apps`` for ``cliapp``, are directories)."""
        self.modules = frozenset(modules)
        self.parents = frozenset(p for m in self.modules for p in package_prefixes(m))
        self._spelled = self.modules | {p for m in primary for p in package_prefixes(m)}
        self._named: re.Pattern[str] | None = None

    def spelled(self, lines: Sequence[str]) -> bool:
        """Whether a string literal in ``lines`` names an affected module or one of its packages (dotted)."""
        if self._named is None:  # compiled on first need: most selections narrow no file
            names = sorted({k[3:] for k in self._spelled if k.startswith("py:")}, key=lambda n: (-len(n), n))
            self._named = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, names)) + r")(?![\w])"
                                     if names else r"(?!)")
        named = self._named
        for text in lines:
            if ("'" in text or '"' in text) and any(named.search(m.group(2)) for m in _STRING.finditer(text)):
                return True
        return False

    def touches(self, target: str | None, alt: str | None) -> bool:
        if target is None:
            return True  # no literal: it may import anything
        keys = [k for k in (target, alt) if k]
        return any(k in self.modules or k in self.parents or any(p in self.modules for p in package_prefixes(k))
                   for k in keys)


ImportRow = tuple[int, str | None, str | None, str | None]
#: Test files whose imports are read per query.
_CHUNK = 200


def import_rows(conn: sqlite3.Connection, file_ids: Iterable[int],
                memo: dict[int, list[ImportRow] | None] | None = None) -> dict[int, list[ImportRow]]:
    """(line, target key, alt key, scope kind) of every import of each of the files with an import inside a
    function (only those may be narrowed), in chunks of files. ``memo``: each file's answer (``None``: no import
    inside a function) from an earlier call over the same facts, completed here."""
    if memo is not None:
        missing = sorted({f for f in file_ids if f not in memo})
        if missing:
            found_now = import_rows(conn, missing)
            memo.update((f, found_now.get(f)) for f in missing)
        return {f: rows for f in sorted(set(file_ids)) if (rows := memo[f]) is not None}
    wanted: list[int] = []
    every = sorted(set(file_ids))
    for start in range(0, len(every), _CHUNK):
        chunk = every[start:start + _CHUNK]
        wanted += [int(f) for (f,) in conn.execute(
            f"SELECT DISTINCT i.file_id FROM st_import i JOIN st_scope s ON s.scope_id = i.scope_id "
            f"WHERE s.kind = 'function' AND i.file_id IN ({','.join('?' * len(chunk))})", chunk)]
    wanted.sort()
    found: dict[int, list[ImportRow]] = {f: [] for f in wanted}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start:start + _CHUNK]
        for file_id, line, target, alt, scope in conn.execute(
                f"SELECT i.file_id, i.start_line, i.target_key, i.alt_key, s.kind FROM st_import i LEFT JOIN "
                f"st_scope s ON s.scope_id = i.scope_id WHERE i.file_id IN ({','.join('?' * len(chunk))})", chunk):
            found[int(file_id)].append((int(line), _text(target), _text(alt), _text(scope)))
    return found


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def local_cases(conn: sqlite3.Connection, file_id: int, rows: Iterable[ImportRow],
                affected: Affected) -> tuple[str, ...] | None:
    """The test cases (``test_x``, ``TestC::test_x``) whose bodies hold every import of the file (``rows``) that
    may run an affected module, or None when one of them runs elsewhere (the whole file is needed then)."""
    lines: set[int] = set()
    for line, target, alt, scope in rows:
        if not affected.touches(target, alt):
            continue
        if scope != "function":
            return None  # the file's or a class body's: it runs when the file is imported
        lines.add(line)
    if not lines:
        return None
    defs = [(str(uid), str(kind), str(name), str(path), int(start), int(end), parent)
            for uid, kind, name, path, start, end, parent in conn.execute(
                "SELECT def_uid, kind, name, lexical_path, start_line, end_line, parent_uid FROM st_def "
                "WHERE file_id = ?", (file_id,))]
    by_uid = {d[0]: d for d in defs}
    cases: set[str] = set()
    for line in sorted(lines):
        inside = [d for d in defs if d[4] <= line <= d[5]]
        if not inside:
            return None  # module level
        innermost = max(inside, key=lambda d: (d[4], -d[5]))
        chain = [innermost]
        while chain[-1][6] is not None and chain[-1][6] in by_uid and len(chain) < 32:
            chain.append(by_uid[str(chain[-1][6])])
        case = _test_case(chain)
        if case is None:
            return None
        cases.add(case)
    return tuple(sorted(cases))


def _test_case(chain: list[tuple[str, str, str, str, int, int, str | None]]) -> str | None:
    """The test function (``test*`` at module level or in classes only) whose body holds the innermost
    definition of ``chain`` (innermost first), as a pytest case id."""
    for i, (_, kind, name, path, _, _, _) in enumerate(chain):
        if name.startswith("test") and kind in ("function", "method") and all(
                a[1] == "class" for a in chain[i + 1:]):
            return path.replace(".", "::")
    return None
