"""``git_checkout``: switch HEAD to a branch/commit, or restore paths from the index or a commit.

Switching is safe by default: local changes that the switch would overwrite stop it (8004, with the
paths) and nothing changes; local changes that do not collide are carried over, as in git. ``force``
overwrites them (the service records a recovery point first). Naming a branch that exists only as
``<remote>/<name>`` creates a local tracking branch (git's DWIM).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import CheckoutNotify, CheckoutStrategy

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git._workdir import checkout_index, checkout_tree
from codeplane.git.branches import check_branch_name
from codeplane.git.pathspecs import check_ref, shown, under
from codeplane.git.revisions import head_commit, resolve_commit


class _Collisions(pygit2.CheckoutCallbacks):
    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def checkout_notify_flags(self) -> CheckoutNotify:
        return CheckoutNotify.CONFLICT

    def checkout_notify(self, why: CheckoutNotify, path: str, baseline: object, target: object,
                        workdir: object) -> None:
        self.paths.append(path)


@dataclass(frozen=True)
class SwitchTarget:
    commit: pygit2.Commit
    #: Full branch ref HEAD will point to; ``None`` detaches.
    branch: str | None
    #: Branch to create first: (name, start commit, upstream remote branch or None).
    create: tuple[str, pygit2.Commit, str | None] | None = None


def resolve_target(repo: pygit2.Repository, ref: str, create: bool, start_point: str | None) -> SwitchTarget:
    if create:
        check_branch_name(ref, "ref")
        if ref in repo.branches.local:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"branch {ref!r} already exists",
                                 details={"branch": ref})
        start = resolve_commit(repo, start_point, "start_point") if start_point else head_commit(repo)
        if start is None:
            raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "HEAD has no commit yet; commit first")
        return SwitchTarget(commit=start, branch=f"refs/heads/{ref}", create=(ref, start, None))
    check_ref(ref)
    name = ref.removeprefix("refs/heads/")
    local = repo.branches.local.get(name)
    if local is not None:
        return SwitchTarget(commit=local.peel(pygit2.Commit), branch=local.name)
    remote_matches = [n for n in repo.branches.remote if n.split("/", 1)[-1] == name]
    if len(remote_matches) == 1 and not _is_revision(repo, ref):
        remote = repo.branches.remote[remote_matches[0]]
        commit = remote.peel(pygit2.Commit)
        return SwitchTarget(commit=commit, branch=f"refs/heads/{name}", create=(name, commit, remote_matches[0]))
    return SwitchTarget(commit=resolve_commit(repo, ref), branch=None)


def checked_out_elsewhere(repo: pygit2.Repository, branch: str) -> str | None:
    """The work tree (path) of another worktree of the repository whose HEAD is ``branch`` (a full ref), if any:
    git refuses to check a branch out twice, and libgit2 refused only at ``set_head``, after writing the files."""
    own = Path(repo.path).resolve()
    common = own
    pointer = own / "commondir"
    if pointer.is_file():
        common = (own / pointer.read_text(encoding="utf-8").strip()).resolve()
    gitdirs = [common, *sorted(p for p in (common / "worktrees").glob("*") if p.is_dir())]
    for gitdir in gitdirs:
        if gitdir == own:
            continue
        try:
            head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if head == f"ref: {branch}":
            where = gitdir / "gitdir"
            return str(Path(where.read_text(encoding="utf-8").strip()).parent) if where.is_file() else str(
                gitdir.parent)
    return None


def tracks(target: SwitchTarget, path: str) -> bool:
    """Whether the target's tree has ``path`` (an untracked file there is overwritten by a forced switch)."""
    try:
        target.commit.tree[path]
    except KeyError:
        return False
    return True


def _is_revision(repo: pygit2.Repository, ref: str) -> bool:
    try:
        repo.revparse_single(ref)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    return True


def collisions(repo: pygit2.Repository, target: SwitchTarget) -> list[str]:
    """Paths whose local changes the switch would overwrite (a dry run; nothing is written)."""
    callbacks = _Collisions()
    try:
        checkout_tree(repo, target.commit.tree, CheckoutStrategy.SAFE | CheckoutStrategy.DRY_RUN,
                      callbacks=callbacks)
    except pygit2.GitError:
        pass  # the dry run reports collisions by failing after notifying them
    return sorted(shown(p) for p in set(callbacks.paths))


def switch(repo: pygit2.Repository, target: SwitchTarget, *, force: bool) -> None:
    """Check out the target's tree and move HEAD; 8004 if local changes collide and not ``force``."""
    if not force:
        blocked = collisions(repo, target)
        if blocked:
            raise CodePlaneError(
                ErrorCode.GIT_DIRTY_WORKTREE,
                "local changes would be overwritten by the checkout; commit or stash them, or use force",
                details={"paths": blocked[:200], "count": len(blocked)},
            )
    strategy = CheckoutStrategy.FORCE if force else CheckoutStrategy.SAFE
    checkout_tree(repo, target.commit.tree, strategy)
    if target.create is not None:
        name, start, upstream = target.create
        branch = repo.branches.local.create(name, start)
        if upstream is not None:
            try:
                branch.upstream = repo.branches.remote[upstream]
            except (KeyError, ValueError, pygit2.GitError):
                pass  # a remote-tracking ref without a configured remote: the branch simply has no upstream
    if target.branch is not None:
        repo.set_head(target.branch)
    else:
        repo.set_head(target.commit.id)


def _source_paths(repo: pygit2.Repository, source: pygit2.Tree | None, paths: Sequence[str]) -> list[str]:
    if source is None:
        names = [e.path for e in repo.index]
    else:
        names = []

        def walk(tree: pygit2.Tree, prefix: str) -> None:
            for entry in tree:
                full = prefix + (entry.name or "")
                if isinstance(entry, pygit2.Tree):
                    walk(entry, full + "/")
                else:
                    names.append(full)

        walk(source, "")
    matched = sorted({n for n in names if under(n, paths)})
    missing = [p for p in paths if not any(under(n, [p]) for n in matched)]
    if missing:
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND,
                             f"paths not found in {'the index' if source is None else 'that commit'}: {missing}",
                             details={"paths": missing})
    return matched


RestoreSource = tuple[pygit2.Tree | None, list[str]]


def restore_source(repo: pygit2.Repository, paths: Sequence[str], ref: str | None) -> RestoreSource:
    """What :func:`restore_paths` writes: ``ref``'s tree (``None``: the index) and the files under ``paths`` (empty:
    all) it holds. 8002/5004 before anything is written."""
    tree = resolve_commit(repo, ref).tree if ref is not None else None
    return tree, _source_paths(repo, tree, paths)


def restore_paths(repo: pygit2.Repository, source: RestoreSource) -> list[str]:
    """Overwrite the files of ``source`` (from :func:`restore_source`) in the working tree from the index (or from
    the tree, updating the index too)."""
    tree, files = source
    strategy = CheckoutStrategy.FORCE | CheckoutStrategy.DISABLE_PATHSPEC_MATCH
    if tree is None:
        checkout_index(repo, strategy, paths=files)
    else:
        checkout_tree(repo, tree, strategy, paths=files)
    return [shown(p) for p in files]
