"""Which tracked files differ from the index: git's ``diff-files`` algorithm, stat first.

libgit2's index→working-tree diff walks every directory (opendir, readdir, a ``.git`` probe each); on
trees with thousands of directories that costs several times ``git diff``. Git instead compares each
index entry's cached stat data with one ``lstat`` and reads a file only when the stat differs or the
entry is racily clean (changed in the same tick the index was written). This module does the same,
with the ``lstat`` calls spread over a few threads.

It answers only when the rules are simple: SHA-1 repository, stage-0 entries without intent-to-add or
skip-worktree flags, no submodules, no content filters (autocrlf, ``.gitattributes``). Otherwise
:func:`scan` returns ``None`` and the caller uses libgit2.
"""

from __future__ import annotations

import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pygit2

from codeplane.git.index_file import IndexEntry, IndexSnapshot, UnsupportedIndex, read_index

_GITLINK = 0o160000
_SYMLINK = 0o120000
_THREADS = 4
_CHUNK = 512


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


_cache_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int, int], IndexSnapshot]] = {}


def _cached_index(path: Path) -> IndexSnapshot:
    """Parsing a large index in Python costs tens of ms; reuse it while the file is unchanged."""
    info = path.stat()
    stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
    with _cache_lock:
        hit = _cache.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    snapshot = read_index(path)
    with _cache_lock:
        _cache[path] = (stamp, snapshot)
    return snapshot


def _filters_configured(repo: pygit2.Repository, snapshot: IndexSnapshot) -> bool:
    config = repo.config
    for key in ("core.autocrlf", "extensions.objectformat"):
        try:
            value = str(config[key]).lower()
        except KeyError:
            continue
        if key == "core.autocrlf" and value in ("true", "input"):
            return True
        if key == "extensions.objectformat" and value != "sha1":
            return True
    if (Path(repo.path) / "info" / "attributes").exists():
        return True
    return any(e.path == b".gitattributes" or e.path.endswith(b"/.gitattributes") for e in snapshot.entries)


def _stat_all(root: bytes, entries: tuple[IndexEntry, ...]) -> list[os.stat_result | None]:
    def chunk(part: tuple[IndexEntry, ...]) -> list[os.stat_result | None]:
        out: list[os.stat_result | None] = []
        for entry in part:
            try:
                out.append(os.lstat(root + b"/" + entry.path))
            except (FileNotFoundError, NotADirectoryError):
                out.append(None)
        return out

    parts = [entries[i:i + _CHUNK] for i in range(0, len(entries), _CHUNK)]
    if len(parts) <= 1:
        return chunk(entries)
    with ThreadPoolExecutor(max_workers=_THREADS) as pool:
        return [st for result in pool.map(chunk, parts) for st in result]


def _stat_matches(entry: IndexEntry, st: os.stat_result) -> bool:
    return (entry.mtime_s == int(st.st_mtime) and entry.mtime_ns == st.st_mtime_ns % 1_000_000_000
            and entry.ctime_s == int(st.st_ctime) and entry.ctime_ns == st.st_ctime_ns % 1_000_000_000
            and entry.ino == st.st_ino & 0xFFFFFFFF and entry.size == st.st_size & 0xFFFFFFFF)


def _mode_of(st: os.stat_result) -> int:
    if stat.S_ISLNK(st.st_mode):
        return _SYMLINK
    return 0o100755 if st.st_mode & stat.S_IXUSR else 0o100644


def scan(repo: pygit2.Repository, root: Path) -> list[WorktreeChange] | None:
    """Tracked files that differ from the index, sorted by path; ``None`` when the fast rules do not apply."""
    try:
        snapshot = _cached_index(Path(repo.path) / "index")
    except (UnsupportedIndex, OSError, ValueError, IndexError):
        return None
    entries = snapshot.entries
    if any(e.stage or e.extended or e.mode == _GITLINK for e in entries) or _filters_configured(repo, snapshot):
        return None
    base = os.fsencode(root)
    changes: list[WorktreeChange] = []
    for entry, st in zip(entries, _stat_all(base, entries), strict=True):
        if st is None or not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            changes.append(WorktreeChange(path=os.fsdecode(entry.path), old_oid=pygit2.Oid(raw=entry.oid), data=None,
                                          kind="deleted"))
            continue
        mode_changed = _mode_of(st) != entry.mode
        racy = entry.mtime_s * 1_000_000_000 + entry.mtime_ns >= snapshot.mtime_ns
        if not mode_changed and not racy and _stat_matches(entry, st):
            continue
        path, oid = os.fsdecode(entry.path), pygit2.Oid(raw=entry.oid)
        full = base + b"/" + entry.path
        if stat.S_ISLNK(st.st_mode):
            data = os.readlink(full)
        else:
            with open(full, "rb") as handle:
                data = handle.read()
        if pygit2.hash(data) != oid or mode_changed:
            kind = "typechange" if (_mode_of(st) ^ entry.mode) & 0o170000 else "modified"
            changes.append(WorktreeChange(path=path, old_oid=oid, data=data, kind=kind))
    return changes
