"""Anchor groups (§7.3.9): member references that no import chain resolves, bucketed by
(unit, member token, receiver shape), with the true count and at most ``MAX_EXEMPLARS`` exemplar ref ids in
(path, line, column) order.

Only the groups whose token/shape a batch touched are recomputed; above ``FULL_REBUILD_PAIRS`` touched pairs
one set-based rebuild is cheaper than many small ones.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

MAX_EXEMPLARS = 10
FULL_REBUILD_PAIRS = 20_000

_RANKED = """
SELECT f.unit_id, r.token_text, coalesce(r.receiver_shape, ''), r.ref_id,
       row_number() OVER w AS rn, count(*) OVER (PARTITION BY f.unit_id, r.token_text,
                                                 coalesce(r.receiver_shape, '')) AS total
FROM st_ref r JOIN st_file f ON f.file_id = r.file_id
{join}
WHERE r.is_member = 1 AND r.ref_tier = 'ANCHORED'
WINDOW w AS (PARTITION BY f.unit_id, r.token_text, coalesce(r.receiver_shape, '')
             ORDER BY f.path, r.start_line, r.start_col, r.ref_id)
"""


def _write(conn: sqlite3.Connection, rows: Iterable[tuple[int, str, str, int, int, int]]) -> int:
    groups: dict[tuple[int, str, str], tuple[int, list[int]]] = {}
    for unit, token, shape, ref_id, rank, total in rows:
        key = (unit, token, shape)
        if key not in groups:
            groups[key] = (total, [])
        if rank <= MAX_EXEMPLARS:
            groups[key][1].append(ref_id)
    conn.executemany(
        "INSERT INTO st_anchor_group(unit_id, member_token, receiver_shape, total_count, exemplar_ids) "
        "VALUES (?,?,?,?,?)",
        [(u, t, s, total, json.dumps(ids)) for (u, t, s), (total, ids) in sorted(groups.items())])
    return len(groups)


def rebuild_all(conn: sqlite3.Connection) -> int:
    conn.execute("DELETE FROM st_anchor_group")
    return _write(conn, conn.execute(_RANKED.format(join="")))


def refresh(conn: sqlite3.Connection, pairs: set[tuple[str, str]]) -> int:
    """Recompute the groups of the given (member_token, receiver_shape) pairs, in every unit."""
    if not pairs:
        return 0
    if len(pairs) > FULL_REBUILD_PAIRS:
        return rebuild_all(conn)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS st_anchor_pairs (token TEXT NOT NULL, shape TEXT NOT NULL)")
    conn.execute("DELETE FROM temp.st_anchor_pairs")
    conn.executemany("INSERT INTO temp.st_anchor_pairs VALUES (?, ?)", sorted(pairs))
    conn.execute("DELETE FROM st_anchor_group WHERE (member_token, receiver_shape) IN "
                 "(SELECT token, shape FROM temp.st_anchor_pairs)")
    join = ("JOIN temp.st_anchor_pairs p ON p.token = r.token_text AND p.shape = coalesce(r.receiver_shape, '')")
    count = _write(conn, conn.execute(_RANKED.format(join=join)))
    conn.execute("DELETE FROM temp.st_anchor_pairs")
    return count
