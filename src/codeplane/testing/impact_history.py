"""What a changed file declared before: the index's record of each state of a file (``st_def_snapshot``, written
for every file an epoch changed), read by the walks to see names a change took away or declarations it changed.

The index holds only the new text's facts: after ``func Scale`` became ``func Scale2`` (or ``def m`` became ``def
m2``), the old name's users are linked to nothing, and no seed of the walk leads to them. Which earlier state a
change is against (HEAD, a ``changed_since`` revision) is not known here, so every recorded state counts: a
declaration is unchanged only if every one of them holds it as it is now (wider when in doubt, never narrower);
a file never recorded before (the index was built after the change) has no earlier state, and nothing is known.
A definition some earlier state does not declare at all, and no state declares otherwise, was added since that
state (``verdict``): against it, what changed is the addition, not a declaration its users knew; whether an addition
reaches code beyond its uses (a Go method making its type satisfy an interface) is the caller's language's rule.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Literal

Declared = tuple[str, str, str]
#: ``kept``: every earlier state declares it as it is now; ``added``: each state declares it so or declares nothing
#: at its lexical path (at least one the latter); ``changed``: a state declares its path otherwise.
Verdict = Literal["kept", "added", "changed"]


def declared(kind: str, lexical_path: str, display: str) -> Declared:
    """What a declaration says to its users: a function's signature, a field's type, a type's definition; a
    constant's or variable's name and type, not its value (``Rate = 3``)."""
    if kind in ("constant", "variable"):
        display = display.partition(" = ")[0]
    return kind, lexical_path, display


def verdict(earlier: Sequence[frozenset[Declared]], key: Declared) -> Verdict | None:
    """How declaration ``key`` (as it is now) stands against the ``earlier`` states of its file; None when no
    earlier state is recorded (nothing is known)."""
    if not earlier:
        return None
    if all(key in state for state in earlier):
        return "kept"
    lexical = key[1]
    if all(key in state or all(path != lexical for _, path, _ in state) for state in earlier):
        return "added"
    return "changed"


def earlier_declarations(conn: sqlite3.Connection, path: str) -> list[frozenset[Declared]]:
    """The declarations of each earlier recorded state of ``path`` (all but its latest, which is now); an empty
    set for a state where the file did not exist."""
    rows = [(int(e), bool(deleted), int(count)) for e, deleted, count in conn.execute(
        "SELECT epoch_id, deleted, def_count FROM st_snapshot_file WHERE file_path = ? ORDER BY epoch_id", (path,))]
    if len(rows) < 2:
        return []
    # A file that exists and declares nothing is mostly one caught mid-write (truncated, then written): such a
    # state would make every declaration look new for good.
    states = [(e, deleted) for e, deleted, count in rows[:-1] if deleted or count] + [rows[-1][:2]]
    if len(states) < 2:
        return []
    found: dict[int, set[Declared]] = {e: set() for e, _ in states[:-1]}
    for epoch, kind, lexical_path, display in conn.execute(
            "SELECT epoch_id, kind, lexical_path, display_name FROM st_def_snapshot WHERE file_path = ? AND "
            "epoch_id < ?", (path, states[-1][0])):
        if int(epoch) in found:
            found[int(epoch)].add(declared(str(kind), str(lexical_path), str(display)))
    return [frozenset(found[e]) for e, _ in states[:-1]]
