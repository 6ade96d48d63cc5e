"""The two states a semantic diff compares, and which files differ between them.

``base``/``target`` are git revisions (anything ``git rev-parse`` takes; ``target=None`` is the work
tree) or ``epoch:N`` (index epochs, see ``epochs.py``); both sides use the same mode. Git mode lists the
changed files with libgit2 (tree-to-tree, or tree-to-work-tree including untracked, not ignored files; the
index -> work tree half takes ``git_status``'s stat-first scan where its rules allow), with rename
detection, and reads each version's bytes by blob id; work-tree files are read from disk.

Paths leave this module in their display form (``git.pathspecs.shown``: ``\\xNN`` for bytes that are not UTF-8,
as the git tools show them), so every cache key, store row and answer downstream is valid UTF-8; only
``FilePair.on_disk`` keeps the name the file system knows, for reading the work-tree file.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pygit2
from pygit2.enums import DiffFind, DiffOption, FileMode, SubmoduleStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import untracked as untracked_files
from codeplane.git import worktree_scan
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import resolve_commit
from codeplane.repo.ignore import IgnoreRules

_EPOCH = re.compile(r"epoch:(\d{1,18})")
_STATUS = {"A": "added", "D": "deleted", "M": "modified", "R": "renamed", "T": "modified", "?": "added"}
_REGULAR = (FileMode.BLOB, FileMode.BLOB_EXECUTABLE)
_PRIVATE = frozenset({".git", ".codeplane"})
_SUBMODULE_DIRTY = SubmoduleStatus.WD_INDEX_MODIFIED | SubmoduleStatus.WD_WD_MODIFIED | SubmoduleStatus.WD_UNTRACKED


def epoch_of(spec: str | None) -> int | None:
    """N for ``epoch:N``; None for a git revision; 1003 for a malformed epoch spec."""
    if spec is None or not spec.startswith("epoch:"):
        return None
    found = _EPOCH.fullmatch(spec)
    if found is None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{spec!r} is not epoch:<number>",
                             details={"value": spec})
    return int(found.group(1))


@dataclass(frozen=True)
class FilePair:
    """One changed file: its old and new path (display forms) and blob ids (None for the absent side)."""

    status: str
    old_path: str | None
    new_path: str | None
    old_id: str | None
    new_id: str | None
    #: False for symlinks and submodules: listed, never parsed.
    regular: bool = True
    #: A work-tree file git does not track.
    untracked: bool = False
    #: The new side's name as the file system knows it, when that is not its display form (bytes that are not
    #: UTF-8): a work-tree read must open this one, never ``new_path`` (another file could bear the escaped name).
    raw_new_path: str | None = None

    @property
    def path(self) -> str:
        path = self.new_path or self.old_path
        assert path is not None
        return path

    @property
    def on_disk(self) -> str:
        """The work-tree name of the new side (precondition: there is one)."""
        path = self.raw_new_path or self.new_path
        assert path is not None
        return path


@dataclass(frozen=True)
class GitSides:
    base_commit: str
    target_commit: str | None  # None: the work tree
    pairs: tuple[FilePair, ...]


def _displayed(pairs: Iterable[FilePair]) -> tuple[FilePair, ...]:
    """``pairs`` with display paths, sorted by them. pygit2 hands a name that is not UTF-8 over as surrogate escapes,
    which no JSON answer, SQLite row or log line can encode (semantic_diff answered 9001, or broke the transport)."""
    out = []
    for pair in pairs:
        old, new = (shown(p) if p is not None else None for p in (pair.old_path, pair.new_path))
        unchanged = (old, new) == (pair.old_path, pair.new_path)
        out.append(pair if unchanged else replace(pair, old_path=old, new_path=new,
                                                  raw_new_path=pair.new_path if new != pair.new_path else None))
    return tuple(sorted(out, key=lambda p: (p.path, p.old_path or "")))


def _under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") or not p for p in prefixes)


def _keep(path: str | None, paths: Sequence[str] | None) -> bool:
    return path is not None and path.split("/", 1)[0] not in _PRIVATE and (paths is None or _under(path, paths))


def changed_files(repo: pygit2.Repository, base: str, target: str | None, paths: Sequence[str] | None,
                  ignore: IgnoreRules | None = None) -> GitSides:
    """The files that differ from ``base`` to ``target`` (8002 for a ref that names no commit). Untracked
    files outside CodePlane's universe (``.cplignore``, pruned directories) are left out, as the index
    leaves them out; tracked ones are always listed. ``.git/`` and ``.codeplane/`` never are."""
    if target is None and base == "HEAD" and repo.head_is_unborn:
        # No commit yet: every file is new, against the empty tree (it answered 8002 "HEAD names no commit").
        empty = repo[repo.TreeBuilder().write()]
        assert isinstance(empty, pygit2.Tree)
        return GitSides("", None, _displayed(_worktree_pairs(repo, empty, paths, ignore)))
    base_commit = resolve_commit(repo, base, "base")
    if target is None:
        return GitSides(str(base_commit.id), None, _displayed(_worktree_pairs(repo, base_commit.tree, paths, ignore)))
    target_commit = resolve_commit(repo, target, "target")
    diff = base_commit.tree.diff_to_tree(target_commit.tree, DiffOption.INCLUDE_TYPECHANGE, 0)
    diff.find_similar(DiffFind.FIND_RENAMES)
    out: list[FilePair] = []
    for delta in diff.deltas:
        status = _STATUS.get(delta.status_char())
        if status is None:
            continue  # unmodified/unreadable entries
        old = delta.old_file if status != "added" else None
        new = delta.new_file if status != "deleted" else None
        old_path = old.path if old is not None else None
        new_path = new.path if new is not None else None
        if not (_keep(old_path, paths) or _keep(new_path, paths)):
            continue
        regular = all(f.mode in _REGULAR for f in (old, new) if f is not None)
        out.append(FilePair(status, old_path, new_path, str(old.id) if old is not None else None,
                            str(new.id) if new is not None else None, regular))
    return GitSides(str(base_commit.id), str(target_commit.id), _displayed(out))


def _worktree_pairs(repo: pygit2.Repository, base_tree: pygit2.Tree, paths: Sequence[str] | None,
                    ignore: IgnoreRules | None) -> list[FilePair]:
    """Base tree -> work tree as base -> index plus index -> work tree: the second diff trusts the index's
    stat data (as ``git status`` does), where libgit2's direct tree -> work tree diff reads every file
    (django: ~1 s against ~0.1 s). Renames: those staged (``git mv``) and exact moves of untracked files."""
    moved, staged = _staged(repo, base_tree)
    root = Path(repo.workdir)
    dirty, untracked = _index_to_worktree(repo, root)
    candidates = dirty | staged
    # As ``git status``: a flipped executable bit is a change unless git is told to ignore modes.
    modes = _config_bool(repo, "core.fileMode", True)
    flipped: set[str] = set()
    old_side: dict[str, tuple[str, bool]] = {}  # path -> (blob id, regular)
    new_side: dict[str, tuple[str | None, bool]] = {}  # path -> (blob id when regular, regular)
    for path in sorted(candidates):
        if not _keep(path, paths) or (path in untracked and ignore is not None and ignore.excludes(path)):
            continue
        try:
            entry = base_tree[path]
            old_side[path] = (str(entry.id), entry.filemode in _REGULAR)
            executable = entry.filemode == FileMode.BLOB_EXECUTABLE
            base_mode: int | None = entry.filemode
        except KeyError:
            executable = None
            base_mode = None
        try:
            st = os.lstat(root / path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            new_side[path] = (str(pygit2.hashfile(str(root / path))), True)
            if modes and executable is not None and executable != bool(st.st_mode & stat.S_IXUSR):
                flipped.add(path)
        elif not stat.S_ISDIR(st.st_mode):
            new_side[path] = (None, False)  # a symlink or special file
        elif (checked_out := _submodule_state(repo, root, path, base_mode,
                                              old_side[path][0] if path in old_side else None)) is not None:
            # A submodule (a gitlink on either side): its checked-out commit, changed when that moved or its files
            # did (git diff's "-dirty"). Skipped as a plain directory, it came out "deleted".
            new_side[path] = (checked_out[0], False)
            if checked_out[1]:
                flipped.add(path)
    pairs: list[FilePair] = []
    for new_path, old_path in sorted(moved.items()):
        if new_path in new_side and old_path in old_side and old_path not in new_side and new_path not in old_side:
            pairs.append(FilePair("renamed", old_path, new_path, old_side.pop(old_path)[0], new_side.pop(new_path)[0],
                                  True))
    gone = {oid: path for path, (oid, _) in sorted(old_side.items(), reverse=True) if path not in new_side}
    for path, (new_id, regular) in sorted(new_side.items()):
        if path in old_side:
            old_id, old_regular = old_side.pop(path)
            if old_id != new_id or old_regular != regular or path in flipped:
                pairs.append(FilePair("modified", path, path, old_id, new_id, regular and old_regular))
        elif new_id is not None and gone.get(new_id) is not None:
            origin = gone.pop(new_id)  # an untracked copy of a deleted file, byte for byte: a move
            old_side.pop(origin)
            pairs.append(FilePair("renamed", origin, path, new_id, new_id, True, path in untracked))
        else:
            pairs.append(FilePair("added", None, path, None, new_id, regular, path in untracked))
    for path, (old_id, regular) in sorted(old_side.items()):
        pairs.append(FilePair("deleted", path, None, old_id, None, regular))
    return pairs


def _submodule_state(repo: pygit2.Repository, root: Path, path: str, base_mode: int | None,
                     old_id: str | None) -> tuple[str | None, bool] | None:
    """(the commit checked out in submodule ``path``, whether it moved from ``old_id`` or has changed files), or
    ``None`` when ``path`` is a plain directory (a gitlink neither in the base tree nor in the index)."""
    if base_mode != FileMode.COMMIT:
        try:
            if repo.index[path].mode != FileMode.COMMIT:
                return None
        except (KeyError, ValueError):
            return None
    try:
        sub = pygit2.Repository(str(root / path))
        head = None if sub.head_is_unborn else str(sub.head.target)
    except (pygit2.GitError, KeyError, ValueError):
        head = None
    head = head or old_id  # not checked out (an empty directory): unchanged, as git diff sees it
    try:
        dirty = bool(repo.submodules.status(path) & _SUBMODULE_DIRTY)
    except (KeyError, ValueError, pygit2.GitError):
        dirty = False
    return head, dirty or head != old_id


#: repository -> (base tree id, index file stamp, renames, paths): the last base -> index diff. Git replaces the
#: index file whole (a lock file renamed over it), so an unchanged stamp is an unchanged index.
_staged_cache: dict[str, tuple[str, tuple[int, int, int, int], dict[str, str], frozenset[str]]] = {}
_staged_lock = threading.Lock()


def _staged(repo: pygit2.Repository, base_tree: pygit2.Tree) -> tuple[dict[str, str], frozenset[str]]:
    """(renamed new path -> old path, every path on either side) of base tree -> index. Loading Django's index
    and diffing it was a third of a clean tree's answer; with neither changed, the last answer is reused."""
    try:
        info = (Path(repo.path) / "index").stat()
        stamp: tuple[int, int, int, int] | None = (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino)
    except OSError:
        stamp = None
    with _staged_lock:
        hit = _staged_cache.get(repo.path)
    if hit is not None and stamp is not None and hit[:2] == (str(base_tree.id), stamp):
        return dict(hit[2]), hit[3]
    # Stamped before reading: an index replaced meanwhile is stored under the old stamp and so never reused.
    diff = base_tree.diff_to_index(repo.index, DiffOption.INCLUDE_TYPECHANGE)
    diff.find_similar(DiffFind.FIND_RENAMES)
    moved = {d.new_file.path: d.old_file.path for d in diff.deltas if d.status_char() == "R"}
    paths = frozenset(p for d in diff.deltas for p in (d.old_file.path, d.new_file.path))
    if stamp is not None:
        with _staged_lock:
            _staged_cache[repo.path] = (str(base_tree.id), stamp, dict(moved), paths)
    return moved, paths


def _index_to_worktree(repo: pygit2.Repository, root: Path) -> tuple[frozenset[str], set[str]]:
    """(every path the index -> work tree diff lists, the untracked ones among them). Only a superset of the
    changed files matters: each candidate is hashed again above. The fast path is ``git_diff``'s and
    ``git_status``'s (one ``lstat`` per tracked file, cached directory listings for untracked ones); libgit2's
    directory walk was 80% of a clean Django tree's 136 ms (qa48 F6). Repositories the fast rules do not cover
    (filters, submodules, sparse or conflicted indexes, nested repositories) still go through libgit2."""
    prepared = worktree_scan.prepared_index(repo, root)
    if prepared is not None:
        changes = worktree_scan.scan(repo, root)
        new = untracked_files.untracked_paths(repo, os.fsencode(root).rstrip(b"/"), prepared.tracked,
                                              prepared.tracked_dirs)
        if changes is not None and new is not None:
            return frozenset(c.path for c in changes).union(new), set(new)
    dirty = repo.index.diff_to_workdir(DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS
                                       | DiffOption.INCLUDE_TYPECHANGE)
    paths = frozenset(d.new_file.path for d in dirty.deltas)
    return paths, {d.new_file.path for d in dirty.deltas if d.status_char() == "?"}


def _config_bool(repo: pygit2.Repository, key: str, default: bool) -> bool:
    try:
        return bool(repo.config.get_bool(key))
    except (KeyError, pygit2.GitError, ValueError):
        return default


def read_blob(repo: pygit2.Repository, blob_id: str) -> bytes:
    blob = repo[blob_id]
    assert isinstance(blob, pygit2.Blob)
    return bytes(blob.data)


def blob_at(repo: pygit2.Repository, commit_id: str, path: str) -> bytes | None:
    """The bytes of ``path`` in commit ``commit_id``; None when the commit has no regular file there."""
    try:
        commit = repo[commit_id]
        assert isinstance(commit, pygit2.Commit)
        entry = commit.tree[path]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    blob = repo[entry.id]
    return bytes(blob.data) if isinstance(blob, pygit2.Blob) else None


def read_worktree(root: Path, path: str) -> tuple[str, bytes] | None:
    """(blob id, bytes) of a work-tree file as git would store it; None if it vanished meanwhile."""
    try:
        data = (root / path).read_bytes()
    except OSError:
        return None
    return str(pygit2.hash(data)), data
