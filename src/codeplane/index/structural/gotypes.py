"""The declared types ``golink`` follows members through (``x.M`` where ``x``'s declaration spells its type).

The Go adapter records what a declaration spells (``type:T`` / ``type:pkg.T`` on parameters, receivers, ``var``
and ``:=`` of a composite literal or ``new``; ``ftype:`` on a struct field's type). Here a spelled type is
resolved in its own file: ``T`` is the package's declaration, ``pkg.T`` the declaration in the one repository
package that file imports as ``pkg``. A field's type is resolved in the file that declares the field.

A type is only followed when its package is the referencing file's own or one it imports: exactly the files
``golink`` relinks when that package changes, so a link made through a type never outlives the type.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import NamedTuple

from codeplane.index.structural.store import marks

#: ``(local package name → [(import uid, repository directory)])`` of one file.
Named = dict[str, list[tuple[str, str | None]]]


class GoType(NamedTuple):
    directory: str
    package: str | None
    name: str
    #: A slice or array of the type (no members; ``range`` gives its elements).
    slice: bool = False


class DeclaredTypes:
    """Types of bindings and fields, for one relink pass. ``lookup(directory, package, name, from_test)`` is
    the package-level declaration lookup; ``file_context(file_id)`` gives a file's (directory, package, is
    test, imports by local name) — for files outside the pass too."""

    def __init__(self, conn: sqlite3.Connection,
                 lookup: Callable[[str, str | None, str, bool], str | None],
                 package_name: Callable[[str], str | None],
                 file_context: Callable[[int], tuple[str, str | None, bool, Named] | None]) -> None:
        self._conn = conn
        self._lookup = lookup
        self._package_name = package_name
        self._file_context = file_context
        self._fields: dict[str, GoType | None] = {}
        self._results: dict[str, GoType | None] = {}

    def resolve(self, written: str, directory: str, package: str | None, test: bool, named: Named) -> GoType | None:
        """What a spelled type denotes from a file in ``directory``/``package`` with imports ``named``; ``F()``
        is the first result type of the function ``F`` (``pkg.F()``: of that package), resolved where ``F`` is
        declared."""
        if written.startswith("[]"):
            element = self.resolve(written[2:], directory, package, test, named)
            return element._replace(slice=True) if element is not None else None
        called = written.endswith("()")
        qualifier, _, name = written.removesuffix("()").rpartition(".")
        target, target_package, from_test = directory, package, test
        if qualifier:
            choices = named.get(qualifier, [])
            if len(choices) != 1 or choices[0][1] is None:
                return None
            target = str(choices[0][1])
            target_package, from_test = self._package_name(target), False
            if target_package is None:
                return None
        uid = self._lookup(target, target_package, name, from_test)
        if uid is None:
            return None
        return self._result(uid) if called else GoType(target, target_package, name)

    def _resolve_in(self, file_id: int, written: str) -> GoType | None:
        """A spelled type resolved where it is written (another file's package and imports)."""
        context = self._file_context(file_id)
        if context is None:
            return None
        directory, package, test, named = context
        return self.resolve(written, directory, package, test, named)

    def _result(self, function_uid: str) -> GoType | None:
        """The first result type a package-level function spells, resolved in its own file."""
        if function_uid in self._results:
            return self._results[function_uid]
        found: GoType | None = None
        row = self._conn.execute("SELECT file_id, name_line, name_col, kind FROM st_def WHERE def_uid = ?",
                                 (function_uid,)).fetchone()
        if row is not None and row[3] == "function":
            shape = self._conn.execute(
                "SELECT receiver_shape FROM st_ref WHERE file_id = ? AND start_line = ? AND start_col = ? "
                "AND role = 'DEFINITION'", (row[0], row[1], row[2])).fetchone()
            written = shape[0] if shape is not None and shape[0] else ""
            if written.startswith("type:") and not written.endswith("()") and not written.startswith("type:range@"):
                found = self._resolve_in(row[0], written[5:])
        self._results[function_uid] = found
        return found

    def bindings(self, file_ids: Iterable[int]) -> dict[int, str]:
        """Binding id → the type its declaration spells (a binding spelled two ways has none)."""
        ids = sorted(file_ids)
        spelled: dict[int, set[str]] = defaultdict(set)
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            for bind, shape in self._conn.execute(
                    f"SELECT bind_id, receiver_shape FROM st_ref WHERE file_id IN ({marks(len(part))}) "
                    "AND role = 'DEFINITION' AND bind_id IS NOT NULL AND receiver_shape LIKE 'type:%'", part):
                spelled[bind].add(shape[5:])
        return {bind: next(iter(types)) for bind, types in spelled.items() if len(types) == 1}

    def field_type(self, field_uid: str) -> GoType | None:
        """The type a struct field is declared with, resolved where the field is declared."""
        if field_uid in self._fields:
            return self._fields[field_uid]
        found: GoType | None = None
        row = self._conn.execute("SELECT file_id, name_line, kind FROM st_def WHERE def_uid = ?",
                                 (field_uid,)).fetchone()
        if row is not None and row[2] == "field":
            file_id, line = row[0], row[1]
            shapes = {s for (s,) in self._conn.execute(
                "SELECT receiver_shape FROM st_ref WHERE file_id = ? AND start_line = ? "
                "AND receiver_shape LIKE 'ftype:%'", (file_id, line))}
            # ``a, b T`` share a type; two types on one line (``struct{ a A; b B }``) are not told apart.
            if len(shapes) == 1:
                found = self._resolve_in(file_id, next(iter(shapes))[6:])
        self._fields[field_uid] = found
        return found
