"""Measuring what a write did: HEAD, ref moves and working-tree paths, as an :class:`Effect`.

A tracker snapshots refs (and, for operations that touch files, the dirty paths with their index
entries and the bytes of the files that differ from the index) before the operation and compares after it; a file
whose status stayed the same but whose bytes a write that saved a recovery point replaced (an untracked file a
restore put back) is a change too. A file outside a sparse checkout's cone that was never on disk is not, whatever
its index entry did.
Changed files are hashed (SHA-256 of the bytes on disk, the same function ``read_source`` uses) up to
:data:`EFFECT_PATH_LIMIT` files of at most 8 MiB; every changed file is classified (added, modified, deleted)
and its lines counted by :mod:`codeplane.git.numstat`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from stat import S_ISDIR

import pygit2

from codeplane.core.hashing import sha256_file
from codeplane.git import numstat, sparse
from codeplane.git.conflicts import repo_state
from codeplane.git.models import EFFECT_PATH_LIMIT, EFFECT_REF_LIMIT, Effect, PathChange, RefChange
from codeplane.git.pathspecs import shown
from codeplane.git.revisions import head_commit
from codeplane.git.status import dirty_paths

_HASH_MAX_BYTES = 8 * 1024 * 1024
#: A file's ctime may read up to a clock tick (a second on some file systems) before the moment it was written.
_CLOCK_MARGIN_NS = 2_000_000_000
_OWN_REFS = "refs/codeplane/"
_STASH = "refs/stash"


def ref_snapshot(repo: pygit2.Repository) -> dict[str, str]:
    """Every direct ref → oid (symbolic aliases like origin/HEAD and CodePlane's own refs left out)."""
    out: dict[str, str] = {}
    for name in repo.references:
        if name.startswith(_OWN_REFS):
            continue
        target = repo.references[name].target
        if isinstance(target, pygit2.Oid):
            out[name] = str(target)
    return out


def _worktree_state(repo: pygit2.Repository, *, refresh: bool = False) -> dict[str, tuple[int, str | None]]:
    index = repo.index
    state: dict[str, tuple[int, str | None]] = {}
    for path, flag in dirty_paths(repo, refresh=refresh).items():
        try:
            entry_id: str | None = str(index[path].id)
        except (KeyError, ValueError):
            entry_id = None
        state[path] = (int(flag), entry_id)
    return state


def hash_paths(root: Path, paths: list[str], stats: dict[str, numstat.PathStat] | None = None) -> list[PathChange]:
    """Display paths with the SHA-256 of what is on disk now ("" gone, ``None`` too big to hash), with what the
    write did to each file when ``stats`` says it."""
    out: list[PathChange] = []
    for path in paths[:EFFECT_PATH_LIMIT]:
        file = root / path
        digest: str | None = None
        if not os.path.lexists(file):
            digest = ""
        elif not file.is_symlink() and file.is_file() and file.stat().st_size <= _HASH_MAX_BYTES:
            digest = sha256_file(file)
        stat = (stats or {}).get(path)
        change = stat.change if stat is not None else "deleted" if digest == "" else "modified"
        if change == "deleted" and digest is None:
            digest = ""  # a directory stands there now (a symlink replaced by one): the file itself is gone
        out.append(PathChange(path=shown(path), sha256=digest, change=change,
                              old_sha256=stat.old_sha256 if stat is not None else None))
    return out


def head_ref(repo: pygit2.Repository) -> str | None:
    """The branch ref HEAD names (``refs/heads/main``, born or not), ``None`` when detached."""
    try:
        target = repo.references["HEAD"].target
    except (KeyError, pygit2.GitError):
        return None
    return target if isinstance(target, str) else None


class EffectTracker:
    """Snapshot before a write; :meth:`finish` after it yields the :class:`Effect`."""

    def __init__(self, repo: pygit2.Repository, *, worktree: bool) -> None:
        self._root = Path(repo.workdir) if repo.workdir else Path(repo.path)
        head = head_commit(repo)
        self._head = str(head.id) if head is not None else None
        self._head_ref = head_ref(repo)
        self._tree = head.tree.id if head is not None else None
        self._refs = ref_snapshot(repo)
        # A write's first look at the work tree: it refreshes git's index where git finds a file it converts
        # unchanged (only touched), which libgit2's stash and checkouts would otherwise take for a change.
        self._worktree = _worktree_state(repo, refresh=True) if worktree else None
        # What only the disk holds, kept now: the write may replace it (a stash, a forced checkout, a reset).
        self._before = numstat.Before(self._root, self._worktree, numstat.keep_dirty(self._root, self._worktree),
                                      head.tree if head is not None else None) if self._worktree is not None else None
        self._started_ns = time.time_ns()
        self._skipped = sparse.skip_worktree_paths(repo) if self._worktree is not None else frozenset()
        self._marks = _marks(repo)

    @property
    def head_before(self) -> str | None:
        return self._head

    def finish(self, repo: pygit2.Repository, *, recovery_point: str | None = None,
               extra_paths: tuple[str, ...] = (), insertions: int = 0, deletions: int = 0,
               added: tuple[str, ...] = ()) -> Effect:
        """The effect. A write that tracks files has its paths classified and their lines counted here; one that
        does not (a commit) says its ``extra_paths``, the ``added`` among them and their line counts."""
        head = head_commit(repo)
        refs_after = ref_snapshot(repo)
        names = sorted(set(self._refs) | set(refs_after))
        refs = [RefChange(ref=n, old=self._refs.get(n), new=refs_after.get(n))
                for n in names if self._refs.get(n) != refs_after.get(n)]
        paths: set[str] = set(extra_paths)
        after: dict[str, tuple[int, str | None]] = {}
        saved = _saved_trees(repo, recovery_point, self._refs.get(_STASH), refs_after.get(_STASH))
        if self._worktree is not None:
            after = _worktree_state(repo)
            paths |= {p for p in set(self._worktree) | set(after) if self._worktree.get(p) != after.get(p)}
            if recovery_point is not None:  # the writes that can replace work: they save a point first
                paths |= self._rewritten(repo, after, saved)
            if head is not None and self._tree is not None and head.tree.id != self._tree:
                old_tree = repo[self._tree]
                assert isinstance(old_tree, pygit2.Tree)
                for delta in old_tree.diff_to_tree(head.tree).deltas:
                    paths.add(delta.old_file.path)
                    paths.add(delta.new_file.path)
            elif head is not None and self._tree is None:
                paths |= {e.path for e in repo.index}
            paths -= self._never_on_disk(repo, paths)
        ordered = sorted(paths)
        if self._before is not None:
            stats = self._measure(repo, ordered, after, saved)
            insertions = sum(st.insertions for st in stats.values())
            deletions = sum(st.deletions for st in stats.values())
            uncounted = sum(not st.counted for st in stats.values())
        else:
            stats = {p: numstat.PathStat(change="added") for p in added}
            uncounted = 0
        marks = _marks(repo)
        changed = [f"state {self._marks['state']} -> {marks['state']}" if key == "state" else key
                   for key in ("index", "state", "stash list") if marks[key] != self._marks[key]]
        if "index" in changed and (ordered or refs):
            changed.remove("index")  # said by the paths or the commit that moved
        ref_after = head_ref(repo)
        switched = ref_after != self._head_ref
        return Effect(
            head_before=self._head, head_after=str(head.id) if head is not None else None,
            refs=refs[:EFFECT_REF_LIMIT], refs_total=len(refs),
            paths=hash_paths(self._root, ordered, stats), paths_total=len(ordered),
            insertions=insertions, deletions=deletions, uncounted=uncounted, recovery_point=recovery_point,
            head_ref_before=self._head_ref if switched else None, head_ref_after=ref_after if switched else None,
            changed=changed,
        )

    def _never_on_disk(self, repo: pygit2.Repository, paths: set[str]) -> set[str]:
        """Of ``paths``, those outside a sparse checkout's cone that were not in the work tree before the write and
        are not now: only their index entry changed (a merge outside the cone), which git does not show either.
        A file outside the cone present before is refused by every writer that would touch it (``sparse``)."""
        skipped = sparse.skip_worktree_paths(repo)
        if not skipped:
            return set()
        assert self._before is not None
        tree = self._before.tree
        return {p for p in paths & skipped if not os.path.lexists(self._root / p) and (
            p in self._skipped or (p not in self._before.state and not _in_tree(tree, p)))}

    def _rewritten(self, repo: pygit2.Repository, after: dict[str, tuple[int, str | None]],
                   saved: tuple[pygit2.Tree, ...]) -> set[str]:
        """Files that differed from the index before the write and still do, with the same flags, whose bytes the
        write changed (a recovery point's restore puts an untracked or dirty file's old content back): their
        status alone did not show it, and the caller kept the hash it had. Only files whose inode changed since the
        write began (its ctime, less a margin for coarse file-system clocks) are compared, by object id."""
        assert self._before is not None and self._worktree is not None
        since = self._started_ns - _CLOCK_MARGIN_NS
        root = str(self._root)
        points: list[pygit2.Index] | None = None
        out: set[str] = set()
        for path, (flag, entry) in self._worktree.items():
            if not flag & numstat.ON_DISK or after.get(path) != (flag, entry):
                continue
            full = f"{root}/{path}"
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if S_ISDIR(st.st_mode) or st.st_ctime_ns < since:  # a submodule's directory; a file left alone
                continue
            kept = self._before.kept.get(path)
            if kept is None and points is None:
                points = [_flat(tree) for tree in saved]  # one lookup per path, not a tree walk each
            was = None if kept is not None else next((o for o in (_entry_id(i, path) for i in points or ()) if o),
                                                     None)
            if numstat.disk_differs(repo, full, path, kept=kept, saved=was):
                out.add(path)
        return out

    def _measure(self, repo: pygit2.Repository, paths: list[str], after: dict[str, tuple[int, str | None]],
                 saved: tuple[pygit2.Tree, ...]) -> dict[str, numstat.PathStat]:
        """Each path's change and lines; the first :data:`EFFECT_PATH_LIMIT` (those listed) with their hash before."""
        assert self._before is not None
        return {path: numstat.measure(path, self._before.content(repo, path, saved),
                                      numstat.after_content(repo, self._root, path, after),
                                      old_hash=i < EFFECT_PATH_LIMIT)
                for i, path in enumerate(paths)}


def _flat(tree: pygit2.Tree) -> pygit2.Index:
    index = pygit2.Index()
    index.read_tree(tree)
    return index


def _entry_id(index: pygit2.Index, path: str) -> pygit2.Oid | None:
    try:
        return index[path].id
    except KeyError:
        return None


def _in_tree(tree: pygit2.Tree | None, path: str) -> bool:
    if tree is None:
        return False
    try:
        tree[path]
    except KeyError:
        return False
    return True


def _saved_trees(repo: pygit2.Repository, recovery_point: str | None, stash_before: str | None,
                 stash_after: str | None) -> tuple[pygit2.Tree, ...]:
    """Trees that hold the work tree as it was before the write, dirty files included: the recovery point's, and
    a stash the write made (its tree: tracked files; its third parent: untracked ones)."""
    trees: list[pygit2.Tree] = []
    try:
        if recovery_point is not None:
            trees.append(repo.references[recovery_point].peel(pygit2.Commit).tree)
        if stash_after is not None and stash_after != stash_before:
            stash = repo[stash_after]
            assert isinstance(stash, pygit2.Commit)
            trees += [stash.tree] + [p.tree for p in stash.parents[2:3]]
    except (KeyError, pygit2.GitError, ValueError):
        pass  # a point or stash that cannot be read: its dirty files are uncounted, not guessed
    return tuple(trees)


def _marks(repo: pygit2.Repository) -> dict[str, str]:
    """What a write can change that no path or ref shows: the index (its checksum trailer: staged entries, a
    submodule's commit, conflict stages), the operation in progress, the stash list (dropping ``stash@{1}`` moves
    no ref)."""
    index = Path(repo.path) / "index"
    try:
        with index.open("rb") as handle:
            handle.seek(-20, os.SEEK_END)
            trailer = handle.read().hex()
    except OSError:
        trailer = ""
    stashes = ",".join(str(s.commit_id) for s in repo.listall_stashes())
    return {"index": trailer, "state": repo_state(repo), "stash list": stashes}
