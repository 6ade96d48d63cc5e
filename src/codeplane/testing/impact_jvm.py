"""Who uses a JVM source file without importing it: the reverse edges the import walk adds for ``jvm:`` modules.

Java and Kotlin code sees every class of its own package with no import, takes a whole package with a wildcard
(``import qa.shapes.*;``, ``import static qa.shapes.Shapes.*;``) and may name a class by its full name inline
(``new qa.shapes.Square(1)``). None of these is an import of the class's module, so the import walk alone
missed a same-package ``SquareTest`` and answered ``complete``. A file uses a changed one when:

- one of its references resolves to a definition of the changed file (the index links same-package names,
  wildcard imports and full names alike) — ``high`` where the change reached the file exactly;
- it lies in the changed file's package, or imports that package or one of its classes with a wildcard, and
  one of its references, resolved or not, spells a top-level name of the changed file — ``low``: what the
  index could not link is matched by name, never dropped.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from codeplane.testing.impact_models import Confidence

_PREFIX = "jvm:"


def is_jvm_key(key: str) -> bool:
    return key.startswith(_PREFIX)


def _package(name: str) -> str:
    return name.rpartition(".")[0]


class JvmUsers:
    """The reverse edges of ``jvm:`` modules over one read transaction (``keys_of``: file id → module keys)."""

    def __init__(self, conn: sqlite3.Connection, keys_of: Mapping[int, tuple[str, ...]]) -> None:
        self.conn = conn
        self.files_of: dict[str, list[int]] = {}
        #: package → file ids declaring it.
        self.members: dict[str, list[int]] = {}
        for file_id, keys in keys_of.items():
            for key in keys:
                if is_jvm_key(key):
                    self.files_of.setdefault(key, []).append(file_id)
                    self.members.setdefault(_package(key[len(_PREFIX):]), []).append(file_id)

    def users(self, key: str) -> list[tuple[int, Confidence, str]]:
        """(file id, confidence, why) of every other file using the module ``key`` without an import of it."""
        name = key[len(_PREFIX):]
        package = _package(name)
        found: dict[int, tuple[Confidence, str]] = {}
        for changed in self.files_of.get(key, ()):
            for (user,) in self.conn.execute(
                    "SELECT DISTINCT r.file_id FROM st_def d JOIN st_ref r ON r.target_uid = d.def_uid "
                    "WHERE d.file_id = ? AND r.file_id != ? AND r.role NOT IN ('DEFINITION', 'IMPORT', 'EXPORT')",
                    (changed, changed)):
                found.setdefault(int(user), ("high", f"refers to {name} (resolved reference)"))
            names = sorted({str(n) for (n,) in self.conn.execute(
                "SELECT name FROM st_def WHERE file_id = ? AND parent_uid IS NULL", (changed,))} | {
                name.rpartition(".")[2]})
            wildcards = [f"{package}.*", *(f"{package}.{n}.*" for n in names)]
            near = set(self.members.get(package, ())) | {int(f) for (f,) in self.conn.execute(
                f"SELECT DISTINCT file_id FROM st_import WHERE source_literal IN ({','.join('?' * len(wildcards))})",
                wildcards)}
            near.discard(changed)
            for user in sorted(near - set(found)):
                hit = self.conn.execute(
                    f"SELECT token_text FROM st_ref WHERE file_id = ? AND token_text IN ({','.join('?' * len(names))}) "
                    "AND role NOT IN ('DEFINITION', 'EXPORT') LIMIT 1", (user, *names)).fetchone()
                if hit is not None:
                    found[user] = ("low", f"names {hit[0]} of {name} (same package or a wildcard import: no import "
                                          "of it needed)")
        return [(f, conf, why) for f, (conf, why) in sorted(found.items())]
