"""Giving an adopted artifact's file rows this checkout's stat data, where git vouches for the content.

The exporter zeroes every row's stat (it described CI's checkout), so without this the startup reconcile
reads and hashes every file of a fresh clone just to find them equal (≈1 s on Django). Git already knows:
a path that ``git status`` finds clean holds exactly its index blob, so when that blob is the artifact's
blob for the path, the row is true for the file on disk and may carry its stat. Guards, each leaving the
row zeroed (hashed by the reconcile as before):
- the file is stat'ed before and after ``git status`` and both must agree (a write in between is seen; a
  write after the second stat changes the stat the reconcile compares the row with);
- it is a regular file of the row's exact size (``core.autocrlf`` or a smudge filter make the checked-out
  bytes differ from the blob; a size change catches the common case, ``core.autocrlf=true`` skips all);
- its mtime is older than ``.git/index`` (otherwise git itself would call it "racily clean" and hash it).
All of that is taken on a thread while the archive unpacks (:func:`git_clean_state`); what is left for the
adoption's critical path is comparing blob ids and sizes and one ``UPDATE``.

The index's ``.git/index`` mtime, read before any of those stats, is also recorded in ``meta``
(:data:`STAT_REFERENCE_KEY`): a file timestamp older than every stat this index holds. A row whose mtime is
below it cannot be "racily clean" — any later write gets a newer mtime — so the reconcile need not re-hash it
however recent the checkout (without it, a ``git clone && cpl up`` re-hashed every file written in the last
two seconds). Recorded only where it is a timestamp of the worktree's own file system and clock.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from codeplane.core.logging import get_logger
from codeplane.index.artifact_format import Manifest
from codeplane.repo.universe import stamp_ns

log = get_logger(__name__)

#: ``meta`` key: a file timestamp (ns) observed before any row's stat was taken (see the module docstring).
STAT_REFERENCE_KEY = "stat_reference_ns"


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_size, stamp_ns(a), a.st_ino, a.st_mode) == (b.st_size, stamp_ns(b), b.st_ino, b.st_mode)


@dataclass(frozen=True)
class GitCleanState:
    """What git vouches for in the checkout, taken before the rows are touched: the stat of every tracked
    regular file ``git status`` finds clean, unchanged across the status and older than ``.git/index``,
    and the index's blob id of each."""

    stats: dict[str, os.stat_result]
    blobs: dict[str, str]
    #: ``.git/index``'s mtime, read before the stats; ``0`` where it cannot serve as a reference.
    reference_ns: int = 0


def git_clean_state(root: Path) -> GitCleanState | None:
    """The git half of :func:`restat_clean_files`, which needs no artifact: the adopter runs it while the
    archive unpacks. ``None``: git cannot vouch for anything (the reconcile hashes every file)."""
    try:
        repo = pygit2.Repository(str(root))
        config = repo.config
        autocrlf = config["core.autocrlf"] if "core.autocrlf" in config else "false"  # noqa: SIM401 - no .get
        if str(autocrlf).lower() in ("true", "input"):
            return None
        git_index = Path(repo.path) / "index"
        # Read before every stat below: a file timestamp older than each of them (a racy-git reference).
        index_stat = git_index.stat()
        index_mtime = index_stat.st_mtime_ns
        same_clock = index_stat.st_dev == root.stat().st_dev and index_mtime <= time.time_ns()
        blobs = {entry.path: str(entry.id) for entry in repo.index}
        base = f"{root}{os.sep}"  # string joins: a Path per tracked file costs more than its lstat
        before = {path: _lstat(base + path) for path in blobs}
        dirty = frozenset(repo.status(untracked_files="no"))
        stats: dict[str, os.stat_result] = {}
        for path, first in before.items():
            if first is None or path in dirty or not stat.S_ISREG(first.st_mode) or stamp_ns(first) >= index_mtime:
                continue
            again = _lstat(base + path)
            if again is not None and _same(first, again):
                stats[path] = first
    except (pygit2.GitError, OSError, KeyError, ValueError) as exc:
        log.info("artifact rows keep no stat data (the reconcile hashes every file)", reason=str(exc))
        return None
    return GitCleanState(stats, blobs, index_mtime if same_clock else 0)


def restat_clean_files(index_db: Path, manifest: Manifest, state: GitCleanState | None) -> int:
    """Write stat data into ``index_db``'s rows for files git showed unchanged since the artifact (``state``,
    from :func:`git_clean_state`), and this checkout's stat reference; returns how many rows got stat data."""
    conn = sqlite3.connect(index_db, isolation_level=None)
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        # A staging copy: a crash discards it, so no rollback journal (it would copy every touched page).
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        rows: list[tuple[int, int, int, str]] = []
        if state is not None:
            sizes = dict(conn.execute("SELECT path, size FROM files").fetchall())
            for file in manifest.files:
                found = state.stats.get(file.path)
                if found is None or state.blobs.get(file.path) != file.blob or found.st_size != sizes.get(file.path):
                    continue
                rows.append((found.st_size, stamp_ns(found), found.st_ino, file.path))
        conn.execute("BEGIN")
        conn.executemany("UPDATE files SET size = ?, mtime_ns = ?, inode = ? WHERE path = ?", rows)
        # Only this checkout's git supplies the reference, never the artifact's own meta table.
        conn.execute("DELETE FROM meta WHERE key = ?", (STAT_REFERENCE_KEY,))
        if state is not None and state.reference_ns:
            conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (STAT_REFERENCE_KEY, str(state.reference_ns)))
        conn.execute("COMMIT")
        return len(rows)
    finally:
        conn.close()
