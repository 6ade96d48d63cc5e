"""What a full reconcile needs from the walk, found in a child process for a big tree (issue 19's warm restart).

A full reconcile walks the tree and compares it with the file table; only the paths where the two disagree, and
the racy rows, can hold a change (:func:`reconcile.differing`). On 133k files the walk is 1.1–1.4 s and the
comparison 0.4 s of Python, and inside a booting server both take turns for the GIL with the boot's imports and
what was then the watcher's inotify setup in this process (it has its own since: ``repo/watch_child.py``): the
walk alone took 2.7–3.1 s there. A child process does the walk and the comparison on the other core, reading the
table through its own read-only connection, and hands back only that delta.

The child's snapshot of the table may be older than the rows the caller reads under its writer lock; that is
the walk's own staleness (the walk always ran before the lock), handled the same way: the caller re-stats every
row of the delta whose stat disagrees with what the child saw (``unsettled``), and adds the rows racy by then.
If the child fails, the caller walks in-process.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.logging import get_logger
from codeplane.index.reconcile import differing
from codeplane.index.store import racy_paths, stat_keys
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import DiskEntry, walk_universe

log = get_logger(__name__)

#: Indexed files from which a full reconcile walks in a child: below, starting an interpreter (~0.15 s of a core)
#: costs more than the walk it takes off this process.
APART_FROM_FILES = 20_000


@dataclass(frozen=True)
class WalkDelta:
    """The paths where the file table and the disk may differ (``scope``) and the walk's entries for those of
    them it found on disk; every other universe path has a row with the same stat that is not racy."""

    scope: set[str]
    entries: dict[str, DiskEntry]
    #: Entries the walk left out because their name is not valid UTF-8 (``universe.shown_name``), sorted.
    unnamed: tuple[str, ...] = ()


def delta_in_process(walked: dict[str, DiskEntry], conn: sqlite3.Connection, racy_from_ns: int,
                     unnamed: list[str] | tuple[str, ...] = ()) -> WalkDelta:
    scope = differing(stat_keys(conn), walked) | racy_paths(conn, racy_from_ns)
    return WalkDelta(scope, {path: walked[path] for path in scope if path in walked}, tuple(sorted(unnamed)))


def _loads(out: bytes) -> WalkDelta:
    scope, rows, unnamed = marshal.loads(out)
    return WalkDelta(set(scope), {row[0]: DiskEntry(*row) for row in rows}, tuple(unnamed))


def delta_apart(root: Path, rules: IgnoreRules, index_db: Path, racy_from_ns: int) -> WalkDelta | None:
    """The delta, walked and compared by a child process; ``None`` if it failed (then walk in-process)."""
    try:
        # -P: the working directory (often the repository) must not shadow CodePlane's own modules.
        child = subprocess.run([sys.executable, "-P", "-m", __name__, os.fspath(root), os.fspath(index_db),
                                str(racy_from_ns)], input=rules.source_text.encode(), capture_output=True, check=True)
        return _loads(child.stdout)
    except (OSError, subprocess.SubprocessError, ValueError, EOFError, TypeError) as exc:
        stderr = getattr(exc, "stderr", b"") or b""
        log.warning("walk_apart_failed", error=type(exc).__name__, detail=stderr.decode(errors="replace")[-500:])
        return None


class EarlyWalk:
    """A child begun before the table it compares with exists: it walks the tree now, while an artifact is adopted
    (``IndexService``), and compares once :meth:`delta` tells it which table and racy threshold to use.

    Its walk is older than the adopted table's rows; the reconcile treats that as it treats any walk's staleness
    (``unsettled`` rows re-stat'ed), and a change made after the walk and before the watcher was live is found by
    the watcher's catch-up walk (``IndexService._on_watch_live``), as for any full reconcile that walked first.
    """

    def __init__(self, root: Path, rules: IgnoreRules) -> None:
        self.rules_text = rules.source_text
        # -P: the working directory (often the repository) must not shadow CodePlane's own modules.
        self._proc = subprocess.Popen([sys.executable, "-P", "-m", __name__, "--early", os.fspath(root)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        rules_bytes = rules.source_text.encode()
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.write(b"%d\n" % len(rules_bytes) + rules_bytes)
            self._proc.stdin.flush()
        except OSError:
            pass  # the child died: delta() reports it and the reconcile walks in-process

    def delta(self, index_db: Path, racy_from_ns: int, timeout: float = 600.0) -> WalkDelta | None:
        """The delta against ``index_db`` (``None`` if the child failed: then walk in-process)."""
        try:
            out, err = self._proc.communicate(f"{racy_from_ns}\t{os.fspath(index_db)}\n".encode(), timeout=timeout)
            if self._proc.returncode != 0:
                raise subprocess.CalledProcessError(self._proc.returncode, "walk_apart --early", out, err)
            return _loads(out)
        except (OSError, subprocess.SubprocessError, ValueError, EOFError, TypeError) as exc:
            self.cancel()
            stderr = getattr(exc, "stderr", b"") or b""
            log.warning("walk_apart_failed", error=type(exc).__name__, detail=stderr.decode(errors="replace")[-500:])
            return None

    def cancel(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()


def _compare(walked: dict[str, DiskEntry], index_db: Path, racy_from_ns: int, unnamed: list[str]) -> None:
    conn = sqlite3.connect(f"{index_db.absolute().as_uri()}?mode=ro", uri=True)
    try:
        delta = delta_in_process(walked, conn, racy_from_ns, unnamed)
    finally:
        conn.close()
    rows = [(e.path, e.size, e.mtime_ns, e.inode, e.is_symlink) for e in delta.entries.values()]
    sys.stdout.buffer.write(marshal.dumps((sorted(delta.scope), rows, list(delta.unnamed))))


def _main() -> None:
    if sys.argv[1] == "--early":  # rules (length-prefixed), walk, then wait for "racy_from_ns<TAB>index_db"
        stdin = sys.stdin.buffer
        rules = IgnoreRules.from_text(stdin.read(int(stdin.readline())).decode())
        unnamed: list[str] = []
        walked = {e.path: e for e in walk_universe(Path(sys.argv[2]), rules, unnamed)}
        go = stdin.readline().decode()
        if not go.strip():
            return  # the parent went away or no longer needs the delta
        racy, _, index_db = go.rstrip("\n").partition("\t")
        _compare(walked, Path(index_db), int(racy), unnamed)
        return
    root, index_db, racy_from_ns = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    rules = IgnoreRules.from_text(sys.stdin.read())
    left_out: list[str] = []
    _compare({e.path: e for e in walk_universe(root, rules, left_out)}, index_db, racy_from_ns, left_out)


if __name__ == "__main__":
    _main()
