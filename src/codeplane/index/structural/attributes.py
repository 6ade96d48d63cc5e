"""Python instance attributes (``self.count = 0`` in a method of ``K``) as ``K.count``, for the queries naming them.

No definition row stands for them: a definition is a container the test selection and the semantic diff reason
about, and an assignment in ``__init__`` is ``__init__``'s code. The assignments are member references with the
role DEFINITION, receiver ``self.``, in a function scope whose parent is a class body; the first in source order
stands for the attribute. ``refactor/pyattributes.py`` makes the same targets for the refactor planner (same id).
"""

from __future__ import annotations

import hashlib
import sqlite3

from codeplane.index.structural.facts import DEFINITION
from codeplane.index.structural.models import DefFact
from codeplane.index.structural.schema import ROLE_CODE

#: Assignments read per query at most (an attribute assigned in more places is still one).
_LIMIT = 10_000


def attribute_uid(owner_uid: str, name: str) -> str:
    """A stable id for the attribute ``name`` of the class ``owner_uid`` (no row has it)."""
    return hashlib.sha256(f"attribute:{owner_uid}:{name}".encode()).hexdigest()[:16]


_FIRST_STORES = """
SELECT r.start_line, r.start_col, r.end_line, r.end_col, r.scope_id, s.parent_scope_id
FROM st_ref r JOIN st_scope s ON s.scope_id = r.scope_id JOIN st_scope c ON c.scope_id = s.parent_scope_id
WHERE r.file_id = ? AND r.token_text = ? AND r.is_member = 1 AND r.role_code = ? AND r.receiver_shape = 'self.'
  AND s.kind = 'function' AND c.kind = 'class' AND r.start_line BETWEEN ? AND ?
ORDER BY r.start_line, r.start_col LIMIT ?
"""


def instance_attributes(conn: sqlite3.Connection, owners: list[DefFact], name: str) -> list[DefFact]:
    """The attributes ``name`` that methods of ``owners`` (Python classes) assign on ``self``."""
    found: list[DefFact] = []
    for owner in owners:
        if owner.kind != "class" or not owner.path.endswith((".py", ".pyi")):
            continue
        row = conn.execute("SELECT file_id FROM st_file WHERE path = ?", (owner.path,)).fetchone()
        if row is None:
            continue
        for line, col, end_line, end_col, _, class_scope in conn.execute(
                _FIRST_STORES, (row[0], name, ROLE_CODE[DEFINITION], owner.start_line, owner.end_line, _LIMIT)):
            if _innermost_class(conn, row[0], line) != owner.def_uid:
                continue  # a nested class's method
            found.append(DefFact(
                def_uid=attribute_uid(owner.def_uid, name), path=owner.path, language=owner.language,
                unit_id=owner.unit_id, kind="variable", name=name, qualified_name=f"{owner.qualified_name}.{name}",
                lexical_path=f"{owner.lexical_path}.{name}", start_line=line, start_col=col, end_line=end_line,
                end_col=end_col, name_line=line, name_col=col, signature_hash="", display_name=name,
                parent_uid=owner.def_uid, scope_id=class_scope))
            break
    return found


def _innermost_class(conn: sqlite3.Connection, file_id: int, line: int) -> str | None:
    row = conn.execute("SELECT def_uid FROM st_def WHERE file_id = ? AND kind = 'class' AND start_line <= ? "
                       "AND end_line >= ? ORDER BY start_line DESC, start_col DESC LIMIT 1",
                       (file_id, line, line)).fetchone()
    return None if row is None else str(row[0])
