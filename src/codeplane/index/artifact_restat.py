"""Giving an adopted artifact's file rows this checkout's stat data, where git vouches for the content.

The exporter zeroes every row's stat (it described CI's checkout), so without this the startup reconcile
reads and hashes every file of a fresh clone just to find them equal (≈1 s on Django). Git already knows:
a path that ``git status`` finds clean holds exactly its index blob, so when that blob is the artifact's
blob for the path, the row is true for the file on disk and may carry its stat. Guards, each leaving the
row zeroed (hashed by the reconcile as before):
- the file is stat'ed before and after ``git status`` and both must agree (a write in between is seen);
- it is a regular file of the row's exact size (``core.autocrlf`` or a smudge filter make the checked-out
  bytes differ from the blob; a size change catches the common case, ``core.autocrlf=true`` skips all);
- its mtime is older than ``.git/index`` (otherwise git itself would call it "racily clean" and hash it).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import dataclass
from pathlib import Path

import pygit2

from codeplane.core.logging import get_logger
from codeplane.index.artifact_format import Manifest

log = get_logger(__name__)


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_size, a.st_mtime_ns, a.st_ino, a.st_mode) == (b.st_size, b.st_mtime_ns, b.st_ino, b.st_mode)


@dataclass(frozen=True)
class GitCleanState:
    """What git says about the checkout, taken before the rows are touched: every tracked path's stat,
    the paths ``git status`` finds changed, the index's blob ids, and the index file's mtime."""

    before: dict[str, os.stat_result | None]
    dirty: frozenset[str]
    blobs: dict[str, str]
    index_mtime_ns: int


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
        blobs = {entry.path: str(entry.id) for entry in repo.index}
        base = f"{root}{os.sep}"  # string joins: a Path per tracked file costs more than its lstat
        before = {path: _lstat(base + path) for path in blobs}
        dirty = frozenset(repo.status(untracked_files="no"))
        index_mtime = git_index.stat().st_mtime_ns
    except (pygit2.GitError, OSError, KeyError, ValueError) as exc:
        log.info("artifact rows keep no stat data (the reconcile hashes every file)", reason=str(exc))
        return None
    return GitCleanState(before, dirty, blobs, index_mtime)


def restat_clean_files(root: Path, index_db: Path, manifest: Manifest, state: GitCleanState | None) -> int:
    """Write stat data into ``index_db``'s rows for files git showed unchanged since the artifact (``state``,
    from :func:`git_clean_state`); returns how many rows got it."""
    if state is None:
        return 0
    before, dirty, blobs, index_mtime = state.before, state.dirty, state.blobs, state.index_mtime_ns
    conn = sqlite3.connect(index_db, isolation_level=None)
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        # A staging copy: a crash discards it, so no rollback journal (it would copy every touched page).
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        sizes = dict(conn.execute("SELECT path, size FROM files").fetchall())
        rows: list[tuple[int, int, int, str]] = []
        for file in manifest.files:
            first = before.get(file.path)
            if first is None or file.path in dirty or blobs.get(file.path) != file.blob:
                continue
            if not stat.S_ISREG(first.st_mode) or first.st_size != sizes.get(file.path) \
                    or first.st_mtime_ns >= index_mtime:
                continue
            again = _lstat(f"{root}{os.sep}{file.path}")
            if again is None or not _same(first, again):
                continue
            rows.append((first.st_size, first.st_mtime_ns, first.st_ino, file.path))
        conn.execute("BEGIN")
        conn.executemany("UPDATE files SET size = ?, mtime_ns = ?, inode = ? WHERE path = ?", rows)
        conn.execute("COMMIT")
        return len(rows)
    finally:
        conn.close()
