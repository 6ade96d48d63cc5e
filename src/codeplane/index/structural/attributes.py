"""Instance attributes (``self.count = 0`` in a method of ``K``; ``this.count = 0`` in JavaScript and TypeScript) as
``K.count``, for the queries naming them.

No definition row stands for them: a definition is a container the test selection and the semantic diff reason
about, and an assignment in ``__init__`` is ``__init__``'s code. The assignments are member references with the
role DEFINITION, receiver ``self.`` (``this.``), in a function scope whose parent is a class body (through block
scopes: a constructor's body); the first in source order stands for the attribute. ``refactor/attributes.py``
makes the same targets for the refactor planner (same id).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable

from codeplane.index.structural.facts import DEFINITION
from codeplane.index.structural.models import DefFact
from codeplane.index.structural.schema import ROLE_CODE

#: Assignments read per query at most (an attribute assigned in more places is still one).
_LIMIT = 10_000
#: The receiver that names the instance in a method, by the file's suffix.
_RECEIVERS = {".py": "self.", ".pyi": "self.", ".js": "this.", ".mjs": "this.", ".cjs": "this.", ".jsx": "this.",
              ".ts": "this.", ".tsx": "this.", ".mts": "this.", ".cts": "this."}


def receiver_of(path: str) -> str | None:
    """``self.`` or ``this.``: how a method of a class in ``path`` names its instance (None: no such attributes)."""
    dot = path.rfind(".")
    return _RECEIVERS.get(path[dot:]) if dot >= 0 else None


def the_method_scope(scope_id: int | None, scope: Callable[[int | None], tuple[str, int | None] | None]) -> int | None:
    """The function scope around ``scope_id`` (through block scopes) when its parent is a class body; ``scope``
    gives a scope's (kind, parent id)."""
    current = scope(scope_id)
    while current is not None and current[0] == "block":
        scope_id = current[1]
        current = scope(scope_id)
    if current is None or current[0] != "function":
        return None
    parent = scope(current[1])
    return scope_id if parent is not None and parent[0] == "class" else None


def attribute_uid(owner_uid: str, name: str) -> str:
    """A stable id for the attribute ``name`` of the class ``owner_uid`` (no row has it)."""
    return hashlib.sha256(f"attribute:{owner_uid}:{name}".encode()).hexdigest()[:16]


_STORES = """
SELECT r.start_line, r.start_col, r.end_line, r.end_col, r.scope_id
FROM st_ref r
WHERE r.file_id = ? AND r.token_text = ? AND r.is_member = 1 AND r.role_code = ? AND r.receiver_shape = ?
  AND r.start_line BETWEEN ? AND ?
ORDER BY r.start_line, r.start_col LIMIT ?
"""


def instance_attributes(conn: sqlite3.Connection, owners: list[DefFact], name: str) -> list[DefFact]:
    """The attributes ``name`` that methods of ``owners`` assign on ``self`` (``this``)."""
    found: list[DefFact] = []
    scopes: dict[int | None, tuple[str, int | None] | None] = {}

    def scope(scope_id: int | None) -> tuple[str, int | None] | None:
        if scope_id not in scopes:
            row = conn.execute("SELECT kind, parent_scope_id FROM st_scope WHERE scope_id = ?",
                               (scope_id,)).fetchone() if scope_id is not None else None
            scopes[scope_id] = (str(row[0]), row[1]) if row is not None else None
        return scopes[scope_id]

    for owner in owners:
        receiver = receiver_of(owner.path)
        if owner.kind != "class" or receiver is None:
            continue
        row = conn.execute("SELECT file_id FROM st_file WHERE path = ?", (owner.path,)).fetchone()
        if row is None:
            continue
        for line, col, end_line, end_col, scope_id in conn.execute(
                _STORES, (row[0], name, ROLE_CODE[DEFINITION], receiver, owner.start_line, owner.end_line, _LIMIT)):
            method = the_method_scope(scope_id, scope)
            if method is None or _innermost_class(conn, row[0], line) != owner.def_uid:
                continue  # not in a method, or a nested class's method
            found.append(DefFact(
                def_uid=attribute_uid(owner.def_uid, name), path=owner.path, language=owner.language,
                unit_id=owner.unit_id, kind="variable", name=name, qualified_name=f"{owner.qualified_name}.{name}",
                lexical_path=f"{owner.lexical_path}.{name}", start_line=line, start_col=col, end_line=end_line,
                end_col=end_col, name_line=line, name_col=col, signature_hash="", display_name=name,
                parent_uid=owner.def_uid, scope_id=(scope(method) or ("", None))[1]))
            break
    return found


def _innermost_class(conn: sqlite3.Connection, file_id: int, line: int) -> str | None:
    row = conn.execute("SELECT def_uid FROM st_def WHERE file_id = ? AND kind = 'class' AND start_line <= ? "
                       "AND end_line >= ? ORDER BY start_line DESC, start_col DESC LIMIT 1",
                       (file_id, line, line)).fetchone()
    return None if row is None else str(row[0])
