"""The ``structural`` section of ``/status``, ``describe`` and ``cpl status``: read from ``index.db`` on a
private read-only connection, so it never waits for indexing and works without a server.

The rest of the section groups all of ``st_file`` (0.15 s per call on 133k files, on the event loop, so a client
polling ``/status`` during a checkout took a core from indexing): it is kept under the same key.

The fact counts scan whole tables (17M references on a 133k-file corpus: 0.6 s per call from the database, over
5 s from a first build's WAL), so they are kept per database file and structural apply: every apply rewrites
``st_state.last_apply`` (its epoch and timings), and an adopted or rebuilt database is another file (inode). The
server asks without waiting (``wait=False``): counts not read yet for the current apply are read on a thread of
their own, and the answer meanwhile carries the last ones read with ``counts_pending: true`` (none before the
first), so ``/status`` never waits for a table scan. Such a recount waits ``RECOUNT_PAUSE_RATIO`` times the last
count's duration after it, so frequent applies on a big store are not each paid for with a scan.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import threading
import time
from pathlib import Path

from codeplane.index.languages import grammar_of
from codeplane.index.structural import grammars

MAX_FAILURES_SHOWN = 20

_COUNTED = ("st_def", "st_ref", "st_import")
_lock = threading.Lock()
#: The last fact counts read per database path, with the key they were read under.
_last: dict[Path, tuple[tuple[object, ...], dict[str, int]]] = {}
#: The last section read per database path (everything but the counts), with its key.
_sections: dict[Path, tuple[tuple[object, ...], dict[str, object]]] = {}
#: Paths whose counts a thread is reading.
_counting: set[Path] = set()
#: When each path's last count ended and how long it took (monotonic seconds).
_count_ended: dict[Path, tuple[float, float]] = {}
#: A recount (after a new apply) waits until this many times the last count's duration has passed since it
#: ended: a client polling ``/status`` while edits land then costs a few percent of a core at most, where it cost
#: one count per apply (31M references: ~2.7 s of a core on a 133k-file corpus, for every edit).
RECOUNT_PAUSE_RATIO = 20


def structural_status(db_path: Path, *, wait: bool = True) -> dict[str, object]:
    """Files per language and status, parse failures (first 20), grammar versions, contexts, fact counts."""
    if not db_path.is_file():
        return {"state": "not_built"}
    try:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error as exc:
        return {"state": "unavailable", "error": str(exc)}
    try:
        conn.execute("BEGIN")  # one snapshot for the key and the counts
        stat = db_path.stat()
        row = conn.execute("SELECT value FROM st_state WHERE key = 'last_apply'").fetchone()
        key = (stat.st_dev, stat.st_ino, None if row is None else row[0])
        with _lock:
            cached = _last.get(db_path)
            known = _sections.get(db_path)
        if known is not None and known[0] == key:
            section = copy.deepcopy(known[1])
        else:
            section = _read(conn)
            with _lock:
                _sections[db_path] = (key, copy.deepcopy(section))
        if cached is not None and cached[0] == key:
            counts = dict(cached[1])
        elif wait:
            counts = _count(conn)
            with _lock:
                _last[db_path] = (key, dict(counts))
        else:
            _count_later(db_path)
            counts = {**(cached[1] if cached is not None else {}), "counts_pending": True}
        section.update({name: counts[table] for name, table in (("defs", "st_def"), ("refs", "st_ref"),
                                                                 ("imports", "st_import")) if table in counts})
        if counts.get("counts_pending"):
            section["counts_pending"] = True
        return section
    except (sqlite3.Error, OSError) as exc:
        return {"state": "not_built", "error": str(exc)}
    finally:
        conn.close()


def _read(conn: sqlite3.Connection) -> dict[str, object]:
    by_language: dict[str, dict[str, int]] = {}
    skipped: dict[str, int] = {}
    for language, status, count in conn.execute(
            "SELECT language, status, count(*) FROM st_file WHERE language IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2"):
        by_language.setdefault(language, {})[status] = int(count)
        if status not in ("parsed", "not_text", "unsupported"):
            skipped[status] = skipped.get(status, 0) + int(count)
    failures = [{"path": p, "status": s, "error": e} for p, s, e in conn.execute(
        "SELECT path, status, error FROM st_file WHERE status IN ('parse_failed', 'grammar_missing', 'too_large') "
        "ORDER BY path LIMIT ?", (MAX_FAILURES_SHOWN,))]
    with_errors = int(conn.execute("SELECT count(*) FROM st_file WHERE status = 'parsed' AND error_count > 0")
                      .fetchone()[0])
    contexts = {status: int(count) for status, count in conn.execute(
        "SELECT probe_status, count(*) FROM st_context GROUP BY 1 ORDER BY 1")}
    parsed = [lang for (lang,) in conn.execute("SELECT DISTINCT language FROM st_file WHERE status = 'parsed'")]
    last = conn.execute("SELECT value FROM st_state WHERE key = 'last_apply'").fetchone()
    used = sorted({g for g in (grammar_of(lang) for lang in parsed) if g})
    return {
        "state": "ready",
        "files": sum(sum(v.values()) for v in by_language.values()),
        "by_language": by_language,
        "skipped": skipped,
        "parse_failures": failures,
        "files_with_syntax_errors": with_errors,
        "grammars": {**grammars.versions(used), "missing": grammars.missing_grammars()},
        "contexts": contexts,
        "last_apply": None if last is None else json.loads(last[0]),
    }


def _count(conn: sqlite3.Connection) -> dict[str, int]:
    return {table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in _COUNTED}


def _count_later(db_path: Path) -> None:
    with _lock:
        ended = _count_ended.get(db_path)
        if db_path in _counting or (ended is not None and time.monotonic() < ended[0] + RECOUNT_PAUSE_RATIO * ended[1]):
            return
        _counting.add(db_path)

    def run() -> None:
        began = time.monotonic()
        try:
            structural_status(db_path, wait=True)
        finally:
            with _lock:
                _counting.discard(db_path)
                now = time.monotonic()
                _count_ended[db_path] = (now, now - began)

    threading.Thread(target=run, name="codeplane-status-counts", daemon=True).start()
