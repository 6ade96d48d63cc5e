"""Which tracked files differ from the index: git's ``diff-files`` algorithm, stat first.

libgit2's index→working-tree diff walks every directory (opendir, readdir, a ``.git`` probe each); on
trees with thousands of directories that costs several times ``git diff``. Git instead compares each
index entry's cached stat data with one ``lstat`` and reads a file only when the stat differs or the
entry is racily clean (changed in the same tick the index was written). This module does the same,
in one thread (a thread pool was measured slower).

It answers only when the rules are simple: SHA-1 repository, stage-0 entries without intent-to-add or
skip-worktree flags, no submodules, no content filters (autocrlf, ``.gitattributes``), file modes and
symlinks honoured, case-sensitive names. Otherwise
:func:`scan` returns ``None`` and the caller uses libgit2.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from codeplane.git.index_file import IndexSnapshot, UnsupportedIndex, read_index

_GITLINK = 0o160000
_SYMLINK = 0o120000


@dataclass(frozen=True)
class WorktreeChange:
    """A tracked file whose working-tree content or mode differs from its index entry."""

    #: pygit2-style path (``surrogateescape`` for non-UTF-8 bytes).
    path: str
    old_oid: pygit2.Oid
    #: New content (file bytes or symlink target); ``None`` when the file is gone.
    data: bytes | None
    #: modified | deleted | typechange (file ↔ symlink)
    kind: str = "modified"
    #: The index entry's mode and the file's (0 when gone): a ``chmod +x`` alone changes only these.
    old_mode: int = 0
    new_mode: int = 0


_MASK = 0xFFFFFFFF
#: A file verified unchanged is trusted on its stat only when it was last written this long before.
_SETTLED_NS = 2_000_000_000
#: What one ``lstat`` must reproduce for an entry to count as unchanged: mtime and ctime in ns, the inode
#: and the size as git stores them (32-bit). A chmod or a rewrite changes ctime, so mode needs no check here.
StatKey = tuple[int, int, int, int]


@dataclass(frozen=True)
class _Prepared:
    """An index snapshot plus what every scan of it needs, computed once per index file version."""

    snapshot: IndexSnapshot
    paths: tuple[bytes, ...]
    keys: tuple[StatKey, ...]
    racy: tuple[bool, ...]
    #: stage-0 entries only, no intent-to-add/skip-worktree, no submodules, no .gitattributes
    simple: bool
    #: Repository-relative paths of the entries, and every directory that holds one (``b""`` is the root).
    tracked: frozenset[bytes]
    tracked_dirs: frozenset[bytes]
    #: Entries read and found unchanged although their stat data differs from the index's (a tree copied or
    #: restored: new inodes and ctimes, which only git's own index refresh rewrites), with the stat seen then: the
    #: next scans trust it as git trusts a refreshed entry. Each scan re-read and hashed every such file: 4 s per
    #: call on a copied Django. Kept in memory only (a read tool does not write git's index), per index version.
    verified: dict[int, StatKey] = field(default_factory=dict)


_cache_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int, int, bytes], _Prepared]] = {}


def _prepared(path: Path, root: bytes) -> _Prepared:
    """Parsing a large index in Python costs tens of ms; reuse it while the file is unchanged."""
    info = path.stat()
    stamp = (info.st_mtime_ns, info.st_size, info.st_ino, root)
    with _cache_lock:
        hit = _cache.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    snapshot = read_index(path)
    entries = snapshot.entries
    prepared = _Prepared(
        snapshot=snapshot,
        paths=tuple(root + b"/" + e.path for e in entries),
        keys=tuple((e.mtime_s * 1_000_000_000 + e.mtime_ns, e.ctime_s * 1_000_000_000 + e.ctime_ns, e.ino, e.size)
                   for e in entries),
        # Racily clean: written in the same tick as the index, so equal stat data proves nothing.
        racy=tuple(e.mtime_s * 1_000_000_000 + e.mtime_ns >= snapshot.mtime_ns for e in entries),
        simple=not any(e.stage or e.extended or e.mode == _GITLINK or e.path == b".gitattributes"
                       or e.path.endswith(b"/.gitattributes") for e in entries),
        tracked=frozenset(e.path for e in entries),
        tracked_dirs=_directories(e.path for e in entries),
    )
    with _cache_lock:
        _cache[path] = (stamp, prepared)
    return prepared


def _directories(paths: Iterable[bytes]) -> frozenset[bytes]:
    dirs = {b""}
    for path in paths:
        cut = path.rfind(b"/")
        while cut > 0:
            parent = path[:cut]
            if parent in dirs:
                break
            dirs.add(parent)
            cut = parent.rfind(b"/")
    return frozenset(dirs)


#: Settings under which git's answer is not "stat, then compare the blob": content filters, another hash,
#: ignored modes, case-folded names, symlinks checked out as files. Values that take the fast path.
_SETTINGS = {"core.autocrlf": ("false",), "extensions.objectformat": ("sha1",), "core.filemode": ("true",),
             "core.ignorecase": ("false",), "core.symlinks": ("true",)}


def _rules_not_simple(repo: pygit2.Repository) -> bool:
    config = repo.config
    for key, simple_values in _SETTINGS.items():
        try:
            value = str(config[key]).lower()
        except KeyError:
            continue
        if value not in simple_values:
            return True
    return (Path(repo.path) / "info" / "attributes").exists()


def prepared_index(repo: pygit2.Repository, root: Path) -> _Prepared | None:
    """The parsed index (cached per index file version) when the fast rules apply, else ``None``."""
    try:
        prepared = _prepared(Path(repo.path) / "index", os.fsencode(root))
    except (UnsupportedIndex, OSError, ValueError, IndexError):
        return None
    if not prepared.simple or _rules_not_simple(repo):
        return None
    return prepared


Suspects = list[tuple[int, os.stat_result | None]]


def _suspects(prepared: _Prepared) -> Suspects:
    """(entry index, lstat or None if gone) of every entry whose stat data does not prove it unchanged.

    One thread on purpose: spreading the calls over a pool was measured slower on 2 cores (threads that
    release and retake the GIL around each short syscall convoy: 4 threads cost 1.5x one)."""
    lstat = os.lstat
    out: Suspects = []
    keys, racy, paths, verified = prepared.keys, prepared.racy, prepared.paths, prepared.verified
    for i in range(len(paths)):
        try:
            st = lstat(paths[i])
        except (FileNotFoundError, NotADirectoryError):
            out.append((i, None))
            continue
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino & _MASK, st.st_size & _MASK)
        if (racy[i] or keys[i] != key) and verified.get(i) != key:
            out.append((i, st))
    return out


def _mode_of(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return _SYMLINK
    return 0o100755 if st.st_mode & stat.S_IXUSR else 0o100644


def scan(repo: pygit2.Repository, root: Path) -> list[WorktreeChange] | None:
    """Tracked files that differ from the index, sorted by path; ``None`` when the fast rules do not apply."""
    prepared = prepared_index(repo, root)
    if prepared is None:
        return None
    suspects = _suspects(prepared)
    if any(_filtered(repo, prepared.snapshot.entries[i].path) for i, st in suspects if st is not None):
        return None
    return _changes(prepared, suspects)


#: Attributes that make git compare a file through a filter instead of as raw bytes.
_FILTER_ATTRIBUTES = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")


def _filtered(repo: pygit2.Repository, path: bytes) -> bool:
    """Whether any ``.gitattributes`` in the work tree (tracked or not: git reads both) gives ``path`` a
    content filter. Only files whose stat data changed are asked: an unchanged file needs no comparison."""
    return any(repo.get_attr(path, name) is not None for name in _FILTER_ATTRIBUTES)


def _changes(prepared: _Prepared, suspects: Suspects) -> list[WorktreeChange]:
    changes: list[WorktreeChange] = []
    for i, st in suspects:
        entry = prepared.snapshot.entries[i]
        path, oid = os.fsdecode(entry.path), pygit2.Oid(raw=entry.oid)
        if st is None or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            changes.append(WorktreeChange(path=path, old_oid=oid, data=None, kind="deleted", old_mode=entry.mode))
            continue
        if stat.S_ISLNK(st.st_mode):
            data = os.readlink(prepared.paths[i])
        else:
            with open(prepared.paths[i], "rb") as handle:
                data = handle.read()
        mode = _mode_of(st)
        if pygit2.hash(data) != oid or mode != entry.mode:
            kind = "typechange" if (mode ^ entry.mode) & 0o170000 else "modified"
            changes.append(WorktreeChange(path=path, old_oid=oid, data=data, kind=kind, old_mode=entry.mode,
                                          new_mode=mode))
        elif st.st_mtime_ns < time.time_ns() - _SETTLED_NS:
            # Unchanged, and not racily so: a rewrite within the same clock tick could keep this stat.
            prepared.verified[i] = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino & _MASK, st.st_size & _MASK)
    return changes
