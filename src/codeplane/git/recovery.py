"""Recovery points: the prior state saved before any operation that can discard work.

A recovery point is a commit object under ``refs/codeplane/recovery/<UTC timestamp>-<op>``:

- its **tree** is the working tree as it was (tracked files as on disk plus untracked, not-ignored
  files; conflicted files as on disk);
- its metadata (JSON after the first paragraph of the message) names HEAD, the branch HEAD pointed to,
  and an **index commit** whose tree is the staged state (for conflicted paths, the "ours" side);
- its parents are HEAD, the index commit and any extra tips the operation would drop (a deleted
  branch, a dropped stash, a remote tip overwritten by a force push), so nothing it names is collected;
- during a merge, pick, revert or rebase (or with conflicts in the index), one more parent holds the raw index
  (conflict stages) and the operation's files (``MERGE_HEAD``...; the git CLI's ``rebase-merge/``, ``rebase-apply/``
  and ``sequencer/`` as subtrees), so the operation comes back too.

:func:`restore` puts HEAD/branch, index and working tree back exactly (files created since are removed,
ignored files are left alone), re-creates a deleted branch and re-stores a dropped stash. Of the operation in
progress it ends only what git's reset ends (:func:`codeplane.git.branch_state.end_branch_state`), then puts back
what the point recorded: a rebase, a bisect or a sequence the git CLI runs is never ended by a restore. In a sparse
checkout the files outside the cone are recorded as the index has them (not as deleted) and a restore keeps the cone
(``git/sparse.py``); a submodule directory the point drops stays in place, untracked (``git/gitlinks.py``). Restore from
a shell: ``git reset --hard <meta.head> && git checkout <point> -- . && git read-tree <meta.index>``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from datetime import UTC, datetime
from pathlib import Path

import pygit2
from pygit2.enums import CheckoutStrategy, FileMode, FileStatus

from codeplane.core.clock import now_ms
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import NAME_MAX
from codeplane.git import sparse
from codeplane.git._workdir import checkout_index, leading_links, prune_empty, replace_links, settling
from codeplane.git.branch_state import OPERATION_DIRS, end_branch_state
from codeplane.git.conflicts import rebase_state_path
from codeplane.git.gitlinks import kept_submodules
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import git_name, raw_ref
from codeplane.git.revisions import bookkeeping_signature, has_ref, head_branch, head_commit, put_ref

RECOVERY_PREFIX = "refs/codeplane/recovery/"
#: Oldest points beyond this many are deleted when a new one is recorded (they pin objects forever).
KEEP_POINTS = 500
_MARK = "codeplane recovery point"
_WORKTREE_BITS = (FileStatus.WT_NEW | FileStatus.WT_MODIFIED | FileStatus.WT_TYPECHANGE
                  | FileStatus.WT_RENAMED | FileStatus.CONFLICTED)


class RecoveryPoint(GitModel):
    name: str
    oid: str
    op: str
    created: str
    head: str | None
    branch: str | None
    index_commit: str
    #: Extra tips saved with the point: ``branch:<ref>``, ``stash``, ``remote:<ref>`` → oid.
    extras: dict[str, str] = {}


class Restored(GitModel):
    point: RecoveryPoint
    recreated: list[str] = []
    notes: list[str] = []


def _mode(path: Path) -> int:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return int(FileMode.LINK)
    return int(FileMode.BLOB_EXECUTABLE if info.st_mode & stat.S_IXUSR else FileMode.BLOB)


def _index_copy(repo: pygit2.Repository) -> pygit2.Index:
    """An in-memory copy of the index with conflicts collapsed to their "ours" side."""
    index = repo.index
    mem = pygit2.Index()
    if index.conflicts is None:
        tree = repo[index.write_tree()]
        assert isinstance(tree, pygit2.Tree)
        mem.read_tree(tree)
        return mem
    conflicted: dict[str, pygit2.IndexEntry | None] = {}
    for ancestor, ours, theirs in index.conflicts:
        entry = ours or theirs or ancestor
        assert entry is not None
        conflicted[entry.path] = ours
    for entry in index:
        if entry.path not in conflicted:
            mem.add(entry)
    for ours in conflicted.values():
        if ours is not None:
            mem.add(ours)
    return mem


def snapshot_trees(repo: pygit2.Repository) -> tuple[pygit2.Oid, pygit2.Oid]:
    """(index tree, working-tree tree) written to the object database; the real index is untouched."""
    mem = _index_copy(repo)
    index_tree = mem.write_tree(repo)
    root = Path(repo.workdir)
    # Outside a sparse checkout's cone a file's absence is no deletion (libgit2's status says it is).
    flags = sparse.honour(repo, {p: FileStatus(f) for p, f in repo.status(untracked_files="all").items()})
    for path, flag in flags.items():
        if flag & FileStatus.IGNORED:
            continue
        full = root / path
        if flag & FileStatus.WT_DELETED or not os.path.lexists(full):
            try:
                mem.remove(path)
            except (KeyError, OSError, pygit2.GitError):
                pass
        elif flag & _WORKTREE_BITS and (full.is_symlink() or not full.is_dir()):
            # Directories here are submodules or nested repositories: their gitlink stays as indexed.
            mem.add(pygit2.IndexEntry(path, repo.create_blob_fromworkdir(path), FileMode(_mode(full))))
    return index_tree, mem.write_tree(repo)


def _remove_untracked(repo: pygit2.Repository) -> None:
    """Remove each untracked file (ignored ones stay) and the directories that leaves empty. libgit2's
    ``REMOVE_UNTRACKED`` removed an untracked directory whole, the ignored files in it too, which the restore's own
    recovery point (made of untracked and tracked files) could not bring back. A nested repository stays."""
    root = Path(repo.workdir)
    gone = [path for path, flag in repo.status(untracked_files="all").items()
            if flag & FileStatus.WT_NEW and not flag & FileStatus.IGNORED
            and ((root / path).is_symlink() or not (root / path).is_dir())]
    with settling(repo, gone):
        for path in sorted(gone):
            (root / path).unlink(missing_ok=True)
            prune_empty(root, path)


def _stamp(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y%m%dT%H%M%S") + f"{ms % 1000:03d}Z"


def record(repo: pygit2.Repository, op: str, extras: dict[str, str] | None = None) -> str:
    """Save HEAD, index and working tree (plus ``extras`` tips); returns the recovery ref name."""
    extras = dict(extras or {})
    sig = bookkeeping_signature(repo)
    operation = _operation_state(repo, sig, op)
    if operation is not None:
        extras["operation"] = str(operation)
    extras = dict(sorted(extras.items()))
    head = head_commit(repo)
    head_parents = [head.id] if head is not None else []
    index_tree, worktree_tree = snapshot_trees(repo)
    index_commit = repo.create_commit(None, sig, sig, f"{_MARK}: index before {op}\n", index_tree, head_parents)
    ms = now_ms()
    meta = {"op": op, "created": datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(),
            "head": str(head.id) if head is not None else None, "branch": head_branch(repo),
            "index_commit": str(index_commit), "extras": extras}
    message = f"{_MARK}: before {op}\n\n{json.dumps(meta, sort_keys=True)}\n"
    parents = [*head_parents, index_commit, *(pygit2.Oid(hex=v) for v in extras.values())]
    oid = repo.create_commit(None, sig, sig, message, worktree_tree, parents)
    base = f"{RECOVERY_PREFIX}{_stamp(ms)}-{op.replace(' ', '-')}"
    name, n = base, 1
    while name in repo.references:
        n += 1
        name = f"{base}-{n}"
    repo.references.create(name, oid)
    _prune(repo)
    return name


#: What says an operation is in progress (``.git/<name>``): git's merge, pick and revert files, and CodePlane's
#: rebase state; and the git CLI's operation directories (:data:`codeplane.git.branch_state.OPERATION_DIRS`). Saved
#: with the raw index (its conflict stages) when one is there or the index has conflicts.
_OPERATION_FILES = ("MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "CHERRY_PICK_HEAD", "REVERT_HEAD", "AUTO_MERGE",
                    "codeplane-rebase.json")


def _operation_state(repo: pygit2.Repository, sig: pygit2.Signature, op: str) -> pygit2.Oid | None:
    """A commit whose tree holds the raw index and the operation's files, or ``None`` when no operation is in
    progress and nothing is conflicted: a point taken during a merge restored the files but flattened the
    conflicts to "ours" and dropped ``MERGE_HEAD`` (the next commit was no merge)."""
    gitdir = Path(repo.path)
    present = [name for name in _OPERATION_FILES if (gitdir / name).is_file()]
    folders = [name for name in OPERATION_DIRS if (gitdir / name).is_dir() and not (gitdir / name).is_symlink()]
    if not present and not folders and repo.index.conflicts is None:
        return None
    tree = repo.TreeBuilder()
    index_file = gitdir / "index"
    if index_file.is_file():
        tree.insert("index", repo.create_blob(index_file.read_bytes()), FileMode.BLOB)
    for name in present:
        tree.insert(name, repo.create_blob((gitdir / name).read_bytes()), FileMode.BLOB)
    for name in folders:
        tree.insert(name, _folder_tree(repo, gitdir / name), FileMode.TREE)
    return repo.create_commit(None, sig, sig, f"{_MARK}: operation in progress before {op}\n", tree.write(), [])


def _folder_tree(repo: pygit2.Repository, folder: Path) -> pygit2.Oid:
    """The regular files under ``folder`` (an operation's directory: a todo, messages, patches) as a tree."""
    tree = repo.TreeBuilder()
    for child in sorted(folder.iterdir()):
        if child.is_symlink():
            continue
        if child.is_dir():
            tree.insert(child.name, _folder_tree(repo, child), FileMode.TREE)
        elif child.is_file():
            tree.insert(child.name, repo.create_blob(child.read_bytes()), FileMode.BLOB)
    return tree.write()


def _put_operation_back(repo: pygit2.Repository, oid: pygit2.Oid) -> None:
    """The operation saved by :func:`_operation_state`: its files, its directories (each replacing the one there
    now) and the raw index, conflict stages and all."""
    gitdir = Path(repo.path)
    tree = repo[oid].peel(pygit2.Commit).tree
    for entry in tree:
        name = entry.name or ""
        temporary = gitdir / f".{name}.cpl-restore"
        if entry.filemode == FileMode.TREE:
            shutil.rmtree(temporary, ignore_errors=True)
            _write_folder(repo, repo[entry.id].peel(pygit2.Tree), temporary)
            shutil.rmtree(gitdir / name, ignore_errors=True)
            os.replace(temporary, gitdir / name)
            continue
        temporary.write_bytes(repo[entry.id].peel(pygit2.Blob).data)
        os.replace(temporary, gitdir / name)
    repo.index.read(True)


def _write_folder(repo: pygit2.Repository, tree: pygit2.Tree, folder: Path) -> None:
    folder.mkdir()
    for entry in tree:
        if entry.filemode == FileMode.TREE:
            _write_folder(repo, repo[entry.id].peel(pygit2.Tree), folder / (entry.name or ""))
        else:
            (folder / (entry.name or "")).write_bytes(repo[entry.id].peel(pygit2.Blob).data)


def _prune(repo: pygit2.Repository) -> None:
    names = sorted(n for n in repo.references if n.startswith(RECOVERY_PREFIX))
    for name in names[:-KEEP_POINTS]:
        repo.references.delete(name)


def load(repo: pygit2.Repository, name: str) -> RecoveryPoint:
    """The recovery point ``name`` (full ref or the part after the prefix); 8002 if there is none."""
    full = name if name.startswith(RECOVERY_PREFIX) else RECOVERY_PREFIX + name
    longest = max(len(part.encode("utf-8", errors="surrogateescape")) for part in full.split("/"))
    if longest > NAME_MAX:  # libgit2 raised ValueError (8001) on a name the file system cannot hold
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"no recovery point has a name part over {NAME_MAX} bytes "
                             f"(this one has {longest}); the answer that saved a point names it",
                             details={"field": "recovery_point", "limit": NAME_MAX, "length": longest})
    try:
        ref = repo.references.get(full)
    except ValueError:
        ref = None
    if ref is None:
        echoed = name if len(name) <= 200 else name[:200] + "…"
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no recovery point {echoed!r}",
                             details={"recovery_point": echoed})
    commit = ref.peel(pygit2.Commit)
    _, _, body = commit.message.partition("\n\n")
    try:
        meta = json.loads(body)
    except json.JSONDecodeError as exc:
        raise CodePlaneError(ErrorCode.GIT_ERROR, f"{full} is not a CodePlane recovery point",
                             details={"recovery_point": full}) from exc
    return RecoveryPoint(name=full, oid=str(commit.id), op=meta["op"], created=meta["created"],
                         head=meta["head"], branch=meta["branch"], index_commit=meta["index_commit"],
                         extras=meta.get("extras", {}))


def list_points(repo: pygit2.Repository, limit: int = 50) -> list[RecoveryPoint]:
    """Newest first."""
    names = sorted((n for n in repo.references if n.startswith(RECOVERY_PREFIX)), reverse=True)
    return [load(repo, n) for n in names[:limit]]


def check_restore(repo: pygit2.Repository) -> None:
    """The refusal :func:`restore` gives before writing: it rewrites every file, which in a sparse checkout must
    hold none outside the cone (8005)."""
    sparse.refuse_outside(repo, "restoring a recovery point", "git reset --hard <head> && git checkout <point> -- . "
                          "&& git read-tree <index commit>", forced=True)


def restore(repo: pygit2.Repository, point: RecoveryPoint) -> tuple[list[str], list[str]]:
    """Put HEAD, index and working tree back to ``point``; returns the refs it re-created and the submodule
    directories left in place (the point drops their gitlink).

    A merge, cherry-pick or revert in progress (and CodePlane's rebase) is ended, as git's reset ends them, and the
    operation the point recorded comes back. Stash re-storing is left to the caller (it needs the git CLI);
    everything else happens here.
    """
    check_restore(repo)
    with sparse.keeping_cone(repo):
        return _restore(repo, point)


def _restore(repo: pygit2.Repository, point: RecoveryPoint) -> tuple[list[str], list[str]]:
    recreated: list[str] = []
    end_branch_state(repo)
    rebase_state_path(repo).unlink(missing_ok=True)
    if point.branch is not None:
        branch = raw_ref(point.branch)  # the point keeps a name that is not UTF-8 as shown (``models.GitModel``)
        if point.head is not None:
            put_ref(repo, branch, pygit2.Oid(hex=point.head))
        elif has_ref(repo, branch):
            repo.references.delete(branch)
        repo.set_head(git_name(branch))  # type: ignore[arg-type]  # (bytes is taken too)
    elif point.head is not None:
        repo.set_head(pygit2.Oid(hex=point.head))
    snapshot = repo[pygit2.Oid(hex=point.oid)].peel(pygit2.Commit)
    index = repo.index
    # Index = snapshot first, so every file created since the point is untracked and gets removed.
    # kept_submodules compares with the index as it was, before the snapshot replaced it.
    with kept_submodules(repo, snapshot.tree) as kept:
        index.read_tree(snapshot.tree)
        index.write()
        # A symlink standing where the point has a directory: libgit2 wrote the point's files through it (outside
        # the repository, or over another file), then the link, untracked now, was removed as created since.
        replace_links(Path(repo.workdir), leading_links(Path(repo.workdir), (e.path for e in index)))
        checkout_index(repo, CheckoutStrategy.FORCE)
    _remove_untracked(repo)
    staged = repo[pygit2.Oid(hex=point.index_commit)].peel(pygit2.Commit)
    index.read_tree(staged.tree)
    index.write()
    if "operation" in point.extras:
        _put_operation_back(repo, pygit2.Oid(hex=point.extras["operation"]))
    for key, oid in point.extras.items():
        if key.startswith("branch:"):
            ref = raw_ref(key.removeprefix("branch:"))
            if not has_ref(repo, ref):
                put_ref(repo, ref, pygit2.Oid(hex=oid))
                recreated.append(ref)
    return recreated, kept
