"""``git_checkout``: switch HEAD to a branch/commit, or restore paths from the index or a commit.

Switching is safe by default: local changes that the switch would overwrite stop it (8004, with the
paths) and nothing changes; local changes that do not collide are carried over, as in git. ``force``
overwrites them (the service records a recovery point first). Leaving a detached HEAD whose commits no ref
keeps warns, as git does. Naming a branch that exists only as
``<remote>/<name>`` creates a local tracking branch (git's DWIM).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import CheckoutNotify, CheckoutStrategy, SortMode

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git._session import error_code
from codeplane.git._workdir import checkout_index, checkout_tree, leading_links, replace_links, tree_delta_paths
from codeplane.git.branches import check_branch_name
from codeplane.git.filters import refuse_filtered
from codeplane.git.gitlinks import dropped_submodules, kept_submodules, returning_submodules
from codeplane.git.pathspecs import check_ref, git_name, raw_ref, shown, under
from codeplane.git.revisions import head_commit, resolve_commit
from codeplane.git.worktrees import common_dir


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
    # A branch that is not UTF-8 named as listings show it (``br\\xff``) switches to it, not to a detached commit.
    name = raw_ref(ref).removeprefix("refs/heads/")
    local = repo.branches.local.get(git_name(name))  # type: ignore[arg-type]  # (bytes is taken too)
    if local is not None:
        return SwitchTarget(commit=local.peel(pygit2.Commit), branch=local.name)
    remote_matches = [n for n in repo.branches.remote if n.split("/", 1)[-1] == name]
    if len(remote_matches) == 1 and not _is_revision(repo, ref):
        remote = repo.branches.remote[remote_matches[0]]
        commit = remote.peel(pygit2.Commit)
        return SwitchTarget(commit=commit, branch=f"refs/heads/{name}", create=(name, commit, remote_matches[0]))
    return SwitchTarget(commit=resolve_commit(repo, ref), branch=None)


def switch_unborn(repo: pygit2.Repository, name: str) -> None:
    """``git checkout -b <name>`` before the first commit: HEAD names the new, still unborn, branch. The index and
    the working tree stay as they are (there is no commit to check out)."""
    check_branch_name(name, "ref")
    if name in repo.branches.local:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"branch {name!r} already exists",
                             details={"branch": name, "field": "ref"})
    repo.set_head(f"refs/heads/{name}")


def checked_out_elsewhere(repo: pygit2.Repository, branch: str) -> str | None:
    """The work tree (path) of another worktree of the repository whose HEAD is ``branch`` (a full ref), if any:
    git refuses to check a branch out twice, and libgit2 refused only at ``set_head``, after writing the files."""
    own = Path(repo.path).resolve()
    common = common_dir(repo)
    gitdirs = [common, *sorted(p for p in (common / "worktrees").glob("*") if p.is_dir())]
    for gitdir in gitdirs:
        if gitdir == own:
            continue
        try:
            # surrogateescape: a branch or worktree path that is not UTF-8 compares as pygit2 names it (was 8001)
            head = (gitdir / "HEAD").read_text(encoding="utf-8", errors="surrogateescape").strip()
        except OSError:
            continue
        if head == f"ref: {branch}":
            where = gitdir / "gitdir"
            return str(Path(where.read_text(encoding="utf-8", errors="surrogateescape").strip()).parent
                       ) if where.is_file() else str(
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
    # A submodule the target drops is kept as it is, and one it brings back over the directory git left gets that
    # directory again (:mod:`codeplane.git.gitlinks`): their files collide with nothing.
    kept = dropped_submodules(repo, target.commit.tree) + returning_submodules(repo, target.commit.tree)
    return sorted(shown(p) for p in set(callbacks.paths) if not (kept and under(p, kept)))


def refuse_filtered_switch(repo: pygit2.Repository, target: SwitchTarget) -> None:
    """8005 if a file the switch writes has a filter driver (:mod:`codeplane.git.filters`); nothing written yet."""
    head = head_commit(repo)
    refuse_filtered(repo, tree_delta_paths(head.tree, target.commit.tree) if head is not None else
                    _tree_files(target.commit.tree), "checkout")


def switch(repo: pygit2.Repository, target: SwitchTarget, *, force: bool) -> list[str]:
    """Check out the target's tree and move HEAD; 8004 if local changes collide and not ``force``. Returns the
    submodule directories the target drops, left in place as git leaves them."""
    if not force:
        blocked = collisions(repo, target)
        if blocked:
            raise CodePlaneError(
                ErrorCode.GIT_DIRTY_WORKTREE,
                "local changes would be overwritten by the checkout; commit or stash them, or use force",
                details={"paths": blocked[:200], "count": len(blocked)},
            )
    strategy = CheckoutStrategy.FORCE if force else CheckoutStrategy.SAFE
    with kept_submodules(repo, target.commit.tree) as kept:
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
        repo.set_head(git_name(target.branch))  # type: ignore[arg-type]  # (bytes is taken too)
    else:
        repo.set_head(target.commit.id)
    return kept


#: Commits :func:`left_behind_warning` names one by one (git shows four).
_LEFT_SHOWN = 4


def left_behind_warning(repo: pygit2.Repository, old: pygit2.Oid) -> str | None:
    """After leaving a detached HEAD at ``old``: git's "you are leaving N commits behind" when commits reachable
    from ``old`` are reachable from no ref and not from the new HEAD (the reflog is the only thing that still names
    them), with how to keep them. CodePlane's own recovery-point refs do not count as keeping them."""
    walker = repo.walk(old, SortMode.TOPOLOGICAL)
    head = head_commit(repo)
    if head is not None:
        walker.hide(head.id)
    for name in repo.references:
        if name.startswith("refs/codeplane/"):
            continue
        try:
            walker.hide(repo.references[name].peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            continue  # a ref to a tree or blob, or a dangling symbolic one
    lost = list(walker)
    if not lost:
        return None
    listed = "; ".join(f"{str(c.id)[:7]} {c.message.split(chr(10), 1)[0]}" for c in lost[:_LEFT_SHOWN])
    more = f"; … and {len(lost) - _LEFT_SHOWN} more" if len(lost) > _LEFT_SHOWN else ""
    noun = "1 commit" if len(lost) == 1 else f"{len(lost)} commits"
    return (f"you are leaving {noun} behind, not connected to any of your "
            f"branches: {listed}{more}. To keep {'it' if len(lost) == 1 else 'them'}, create a branch there: "
            f"git_checkout ref=<new-branch-name> create=true start_point={str(old)[:12]}")


def _tree_files(tree: pygit2.Tree, prefix: str = "") -> list[str]:
    names: list[str] = []
    for entry in tree:
        full = prefix + (entry.name or "")
        names += _tree_files(entry, full + "/") if isinstance(entry, pygit2.Tree) else [full]
    return names


def _source_paths(repo: pygit2.Repository, source: pygit2.Tree | None, paths: Sequence[str]) -> list[str]:
    names = [e.path for e in repo.index] if source is None else _tree_files(source)
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
    all) it holds. 8002/5004, 8005 (an unmerged path, a filter driver) before anything is written."""
    tree = resolve_commit(repo, ref).tree if ref is not None else None
    if tree is None:
        _refuse_unmerged(repo, paths)
    files = _source_paths(repo, tree, paths)
    refuse_filtered(repo, files, "checkout")
    return tree, files


def _refuse_unmerged(repo: pygit2.Repository, paths: Sequence[str]) -> None:
    """8005 for unmerged paths, as ``git checkout -- <path>`` refuses them: the index holds no one version to
    restore, and libgit2 would rewrite the file with fresh conflict markers and report nothing restored."""
    conflicts = repo.index.conflicts
    if conflicts is None:
        return
    unmerged = {next(e for e in entries if e is not None).path for entries in conflicts}
    hit = sorted(shown(p) for p in unmerged if not paths or under(p, paths))
    if hit:
        listed = ", ".join(repr(p) for p in hit[:20])
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"path {listed} is unmerged: resolve it and commit it "
                             "(git_stage_and_commit), or restore it from a commit (ref=HEAD for ours)", details={
                                 "field": "paths", "paths": hit[:200], "count": len(hit)})


def links_in_the_way(repo: pygit2.Repository, source: RestoreSource) -> list[str]:
    """The symlinks :func:`restore_paths` replaces by real directories, as ``git checkout -- <paths>`` does: each
    stands where the source has a directory of files to restore (libgit2 wrote those through the link, into its
    target, outside the repository or over another file's local changes)."""
    return leading_links(Path(repo.workdir), source[1])


def restore_paths(repo: pygit2.Repository, source: RestoreSource, recovery_point: str | None = None) -> list[str]:
    """Overwrite the files of ``source`` (from :func:`restore_source`) in the working tree from the index (or from
    the tree, updating the index too); returns the paths that differed (written, or their index entry changed).

    Like ``git checkout -- <paths>`` this is not atomic: a file that cannot be written stops it with the ones
    before it already restored. The error says which were (and which were not) and names ``recovery_point``, which
    holds the local changes they had; a write the file system refused is 5012 (5010, 5011), not 8001."""
    tree, files = source
    root = Path(repo.workdir)
    before = {p: _stat_mark(root / p) for p in files}
    staged = _index_marks(repo, files) if tree is not None else {}
    strategy = CheckoutStrategy.FORCE | CheckoutStrategy.DISABLE_PATHSPEC_MATCH
    replace_links(root, links_in_the_way(repo, source))
    try:
        if tree is None:
            checkout_index(repo, strategy, paths=files)
        else:
            checkout_tree(repo, tree, strategy, paths=files)
            _index_as_tree(repo, tree, files)
    except pygit2.GitError as exc:
        changed = {p for p in files if _stat_mark(root / p) != before[p]}
        written = sorted(shown(p) for p in changed)
        left = sorted(shown(p) for p in files if p not in changed)
        undo = (f"; the local changes they had are in recovery point {recovery_point} (git_reset "
                f"recovery_point={recovery_point} confirm=true puts every path back)") if recovery_point else ""
        raise CodePlaneError(error_code(exc), f"restoring paths stopped: {exc}; {len(written)} of {len(files)} "
                             f"path(s) were already restored{': ' + ', '.join(written[:20]) if written else ''}"
                             f"{undo}", details={
                                 "exception": type(exc).__name__, "field": "paths", "restored": written[:200],
                                 "not_restored": left[:200], "recovery_point": recovery_point}) from exc
    # Only what differed: libgit2 leaves a file that already matches untouched (its stat stays), and listing
    # every path in scope said "restored" of files nothing happened to (133 lines for one changed file).
    after = _index_marks(repo, files) if tree is not None else {}
    return [shown(p) for p in files if _stat_mark(root / p) != before[p] or after.get(p) != staged.get(p)]


def _index_as_tree(repo: pygit2.Repository, tree: pygit2.Tree, files: Sequence[str]) -> None:
    """The index entries of ``files`` as ``tree`` has them, as ``git checkout <ref> -- <path>`` writes them: libgit2
    compares with HEAD, so a staged change whose file on disk already matched the tree stayed staged."""
    index = repo.index
    index.read(force=False)
    stale = []
    for path in files:
        entry = tree[path]
        try:
            current = index[path]
        except (KeyError, ValueError):
            current = None
        if current is None or current.id != entry.id or current.mode != entry.filemode:
            stale.append(pygit2.IndexEntry(path, entry.id, entry.filemode))
    for item in stale:
        index.add(item)
    if stale:
        index.write()


def _index_marks(repo: pygit2.Repository, files: Sequence[str]) -> dict[str, tuple[str, int]]:
    """Each path's index entry (blob id, mode): restoring from a commit also rewrites the index, which may differ
    where the file on disk does not (a staged change undone in the working tree)."""
    index = repo.index
    index.read(force=False)
    marks: dict[str, tuple[str, int]] = {}
    for path in files:
        try:
            entry = index[path]
        except (KeyError, ValueError):
            continue
        marks[path] = (str(entry.id), int(entry.mode))
    return marks


def _stat_mark(path: Path) -> tuple[int, int, int, int] | None:
    """What any write, removal or replacement of ``path`` changes (``None``: absent)."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns
