"""The file universe: every path CodePlane lists, found by a stat walk of the work tree (spec §5.3–5.4).

A path is in the universe unless a PRUNABLE_DIRS component or a ``.cplignore`` rule excludes it; a symlink
named like a pruned directory (``.venv -> /opt/venvs/x``) is left out too, as the watcher leaves it out.
Symlinks are listed as entries of their own and never followed (§5.7), so a link to a directory does
not pull another tree in and a link pointing outside the repository is never read through. Names that
are not valid UTF-8 cannot be represented as canonical paths (every answer is JSON): they are skipped, and
a full walk hands them to the caller (:func:`shown_name`, ``\\xNN`` escapes as git's tools show them) so
the index can say which files it leaves out.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from codeplane.repo.ignore import PRUNABLE_DIRS, TRANSIENT_SUFFIXES, IgnoreRules


@dataclass(frozen=True, slots=True)
class DiskEntry:
    """What one ``lstat`` says about a universe path."""

    path: str
    size: int
    #: The later of mtime and ctime (``stamp_ns``), what the ``files`` table's ``mtime_ns`` holds too.
    mtime_ns: int
    inode: int
    is_symlink: bool

    def same_stat(self, size: int, mtime_ns: int, inode: int) -> bool:
        return self.size == size and self.mtime_ns == mtime_ns and self.inode == inode


def stamp_ns(st: os.stat_result) -> int:
    """A file's change time for "did it change since": the later of mtime and ctime. git compares ctime too: a
    rewrite of the same size whose mtime was put back (``cp -p``, ``touch -r``, an editor keeping times) moves only
    ctime, and a restart's reconcile kept the old facts (a read by symbol showed another function's body)."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def _valid_name(name: str) -> bool:
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(rel: str) -> str:
    """A path whose name is not valid UTF-8, printable: each undecodable byte as ``\\xNN``."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


_C_ESCAPES = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r",
              '"': '\\"', "\\": "\\\\"}


def quoted_path(rel: str) -> str:
    """A path as a text line shows it: as is, or, when it holds a control character (a newline in a name read as
    two entries, U+2028), a double quote or a backslash, in double quotes with C escapes (``"nl\\nname.txt"``,
    other unprintable characters as octal UTF-8 bytes), as git quotes it; printable non-ASCII stays as it is."""
    if rel.isprintable() and '"' not in rel and "\\" not in rel:
        return rel
    return '"' + "".join(_C_ESCAPES.get(ch) or (ch if ch.isprintable() else "".join(
        f"\\{byte:03o}" for byte in ch.encode("utf-8", "surrogateescape"))) for ch in rel) + '"'


def _entry(rel: str, st: os.stat_result) -> DiskEntry:
    return DiskEntry(path=rel, size=st.st_size, mtime_ns=stamp_ns(st), inode=st.st_ino,
                     is_symlink=stat.S_ISLNK(st.st_mode))


def _walk(root: Path, start: str, rules: IgnoreRules, unnamed: list[str] | None = None) -> Iterator[DiskEntry]:
    """Entries under ``start``, a directory whose ancestors and itself are in the universe (the caller checks).

    Per entry this is the inner loop of every full reconcile (a warm restart's, issue 19), so it asks only what
    the path's parents have not already answered: a pruned name, a transient suffix, and ``.cplignore``.
    """
    matches = rules.entry_matcher()
    top = os.fspath(root)
    stack = [start]
    while stack:
        rel_dir = stack.pop()
        prefix = f"{rel_dir}/" if rel_dir else ""
        try:
            scanner = os.scandir(os.path.join(top, rel_dir) if rel_dir else top)
        except OSError:
            continue
        with scanner:
            for item in scanner:
                name = item.name
                if not name.isascii() and not _valid_name(name):
                    if unnamed is not None:
                        unnamed.append(shown_name(prefix + name))
                    continue
                rel = prefix + name
                try:
                    if item.is_dir(follow_symlinks=False):
                        if name not in PRUNABLE_DIRS and not matches(rel, name, True):
                            stack.append(rel)
                        continue
                    if not item.is_file(follow_symlinks=False) and (not item.is_symlink() or name in PRUNABLE_DIRS):
                        continue  # sockets, fifos, devices; a ``.venv`` symlink stands for a pruned tree
                    if name == ".git":
                        continue  # a submodule's or worktree's gitlink file: git's, like the directory
                    if rel.endswith(TRANSIENT_SUFFIXES) or matches(rel, name, False):
                        continue
                    st = item.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished between scandir and stat
                yield DiskEntry(rel, st.st_size, stamp_ns(st), st.st_ino, stat.S_ISLNK(st.st_mode))


def walk_universe(root: Path, rules: IgnoreRules, unnamed: list[str] | None = None) -> list[DiskEntry]:
    """Every universe file under ``root``, sorted by path; entries whose name is not valid UTF-8 (a directory's
    stands for its whole tree) are appended to ``unnamed`` instead, shown with ``\\xNN`` escapes."""
    return sorted(_walk(root, "", rules, unnamed), key=lambda e: e.path)


def _parents_are_directories(root: Path, rel: str, known: dict[str, bool]) -> bool:
    """Whether every parent of ``rel`` is a real directory, not a symlink (``known`` caches the answers).

    ``lstat`` follows symlinks in every component but the last: with ``cyc/up -> ..``, ``cyc/up/z.txt`` (named by
    the watcher, whose recursive watch follows links, or a row it left) was found as ``z.txt``, kept by every
    reconcile, and through ``cyc/up2 -> ../..`` files outside the repository were too. git stores the symlink
    itself and the walk never descends into one: a path below one is no universe path, so its row is dropped."""
    parent = rel.rpartition("/")[0]
    chain: list[str] = []
    while parent and parent not in known:
        chain.append(parent)
        parent = parent.rpartition("/")[0]
    real = known.get(parent, True)
    for directory in reversed(chain):  # from the root down: below a symlink, nothing is real
        if real:
            try:
                real = stat.S_ISDIR(os.lstat(root / directory).st_mode)
            except OSError:
                real = False
        known[directory] = real
    return real


def walk_paths(root: Path, paths: Iterable[str], rules: IgnoreRules) -> dict[str, DiskEntry]:
    """Universe entries at or under each of ``paths`` (files are stat'ed, directories walked).

    Paths that do not exist, are ignored or lie under a pruned directory contribute nothing, which is
    how the caller learns that a previously known file has left the universe.
    """
    found: dict[str, DiskEntry] = {}
    real_dirs: dict[str, bool] = {}
    for rel in paths:
        if not rel:
            found.update((e.path, e) for e in _walk(root, "", rules))
            continue
        if rules.excludes(rel) or not _parents_are_directories(root, rel, real_dirs):
            continue
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if not rules.excludes(rel, is_dir=True):
                found.update((e.path, e) for e in _walk(root, rel, rules))
        elif stat.S_ISREG(st.st_mode) or (stat.S_ISLNK(st.st_mode) and rel.rpartition("/")[2] not in PRUNABLE_DIRS):
            found[rel] = _entry(rel, st)
    return found
