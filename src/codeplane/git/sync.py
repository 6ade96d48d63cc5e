"""Fetch, push and pull: the git CLI moves objects (credentials), pygit2 integrates them locally.

``pull`` = fetch the upstream branch, then CodePlane's own merge (fast-forward or merge commit) or
rebase of the local commits onto it, so conflicts come back as data exactly as from ``git_merge`` and
``git_rebase``. As with ``git pull``, a merge's conflict markers name the fetched commit by its full id
(``>>>>>>> <40 hex>``) and its message names the remote's URL without a final ``.git``. A force push uses
``--force-with-lease`` on the last fetched remote tip and saves that tip in a recovery point first.
"""

from __future__ import annotations

from collections.abc import Sequence

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import merge as merging
from codeplane.git import rebase, remotes
from codeplane.git._session import Write, require_confirm
from codeplane.git.conflicts import repo_state
from codeplane.git.pathspecs import check_ref
from codeplane.git.results import PullResult, PushResult, RemoteResult
from codeplane.git.revisions import head_branch


def _fetched_from(url: str) -> str:
    """The URL as ``git fetch`` names it in FETCH_HEAD, which ``git pull``'s merge message quotes: trailing slashes
    and then a final ``.git`` dropped (builtin/fetch.c), credentials redacted."""
    shown = (remotes.redact(url) or url).rstrip("/")
    return shown[:-4] if len(shown) > 5 and shown.endswith(".git") else shown


def _current_branch(repo: pygit2.Repository, branch: str | None) -> str:
    if branch is not None:
        check_ref(branch, "branch")
        return branch.removeprefix("refs/heads/")
    current = head_branch(repo)
    if current is None or repo.head_is_detached:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "HEAD is detached; name the branch to use",
                             details={"field": "branch"})
    return current.removeprefix("refs/heads/")


def fetch(w: Write, remote: str | None, branch: str | None, *, prune: bool, timeout_s: float) -> RemoteResult:
    name = remote or remotes.default_remote(w.repo, head_branch(w.repo))
    remotes.get_remote(w.repo, name)
    specs = [f"+refs/heads/{branch}:refs/remotes/{name}/{branch}"] if branch else []
    remotes.fetch(w.root, name, specs, prune=prune, timeout_s=timeout_s)
    info = next(r for r in remotes.list_remotes(w.repo) if r.name == name)
    return RemoteResult(action="fetch", remote=info, effect=w.effect())


def push(w: Write, remote: str | None, branch: str | None, *, remote_branch: str | None, force: bool,
         set_upstream: bool, confirm: bool, timeout_s: float, tags: Sequence[str] = (),
         delete: bool = False) -> PushResult:
    """Push a branch and/or ``tags`` (tags alone when no branch is named, as ``git push origin v1``), or with
    ``delete`` remove the named remote branch and tags. Several refs go in one atomic push."""
    repo = w.repo
    for tag in tags:
        check_ref(tag, "tags")
    if delete:
        return _delete(w, remote, branch, remote_branch=remote_branch, tags=tags, set_upstream=set_upstream,
                       confirm=confirm, timeout_s=timeout_s)
    missing = [t for t in tags if f"refs/tags/{t.removeprefix('refs/tags/')}" not in repo.references]
    if missing:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no local tag {missing[0]!r}", details={"tags": missing})
    with_branch = branch is not None or remote_branch is not None or not tags
    if not with_branch and (force or set_upstream):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{'force' if force else 'set_upstream'} applies to a "
                             "branch; tags alone are pushed without it", details={"field": "force" if force else
                                                                                 "set_upstream"})
    updates = [(ref, ref) for ref in (f"refs/tags/{t.removeprefix('refs/tags/')}" for t in tags)]
    leases: dict[str, str | None] = {}
    name = remote
    if with_branch:
        local = _current_branch(repo, branch)
        if local not in repo.branches.local:
            raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no local branch {local!r}", details={"branch": local})
        name = remote or remotes.default_remote(repo, f"refs/heads/{local}")
        if remote_branch is not None:
            check_ref(remote_branch, "remote_branch")
        target = remote_branch or remotes.upstream_branch(repo, local, name)
        if force:
            lease = _tracked_tip(repo, name, target)
            require_confirm(confirm, f"force-pushing {local} to {name}/{target}",
                            "the remote branch's commits that are not in yours", remote=name, branch=target)
            w.record("force-push", {f"remote:refs/remotes/{name}/{target}": lease} if lease else {})
            leases[f"refs/heads/{target}"] = lease
        updates.insert(0, (f"refs/heads/{local}", f"refs/heads/{target}"))
    name = name or remotes.default_remote(repo, head_branch(repo))
    remotes.get_remote(repo, name)
    refs = remotes.push(w.root, name, updates, leases=leases, set_upstream=set_upstream,
                        timeout_s=timeout_s)
    return PushResult(remote=name, refs=refs, effect=w.effect())


def _delete(w: Write, remote: str | None, branch: str | None, *, remote_branch: str | None, tags: Sequence[str],
            set_upstream: bool, confirm: bool, timeout_s: float) -> PushResult:
    """``git push --delete`` with a lease: a remote branch is deleted only at the tip last fetched (its commits
    are then in the recovery point); tags are deleted whatever they name (git keeps no remote-tracking tags)."""
    repo = w.repo
    target = remote_branch or branch
    if set_upstream or (target is None and not tags):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "delete names what to delete: remote_branch (or branch) "
                             "and/or tags; set_upstream does not apply", details={"field": "delete"})
    name = remote or remotes.default_remote(repo, head_branch(repo))
    remotes.get_remote(repo, name)
    updates = [("", f"refs/tags/{t.removeprefix('refs/tags/')}") for t in tags]
    leases: dict[str, str | None] = {}
    saved: dict[str, str] = {}
    if target is not None:
        check_ref(target, "remote_branch")
        target = target.removeprefix("refs/heads/")
        lease = _tracked_tip(repo, name, target)
        leases[f"refs/heads/{target}"] = lease
        updates.insert(0, ("", f"refs/heads/{target}"))
        if lease:
            saved[f"remote:refs/remotes/{name}/{target}"] = lease
    shown = ", ".join(ref.removeprefix("refs/heads/").removeprefix("refs/tags/") for _, ref in updates)
    require_confirm(confirm, f"deleting {shown} on {name}", "what only the remote has there", remote=name,
                    refs=[ref for _, ref in updates])
    w.record("push-delete", saved)
    refs = remotes.push(w.root, name, updates, leases=leases, set_upstream=False, timeout_s=timeout_s)
    return PushResult(remote=name, refs=refs, effect=w.effect())


def _tracked_tip(repo: pygit2.Repository, remote: str, branch: str) -> str | None:
    tracking = repo.references.get(f"refs/remotes/{remote}/{branch}")
    return str(tracking.target) if tracking is not None else None


def pull(w: Write, remote: str | None, branch: str | None, *, use_rebase: bool, timeout_s: float,
         hook_timeout_s: float = 300.0) -> PullResult:
    repo = w.repo
    local = _current_branch(repo, None)
    name = remote or remotes.default_remote(repo, f"refs/heads/{local}")
    url = remotes.get_remote(repo, name).url or name
    upstream = branch.removeprefix("refs/heads/") if branch else remotes.upstream_branch(repo, local, name)
    check_ref(upstream, "branch")
    try:
        remotes.fetch(w.root, name, [f"+refs/heads/{upstream}:refs/remotes/{name}/{upstream}"], prune=False,
                      timeout_s=timeout_s)
    except CodePlaneError as exc:
        if "couldn't find remote ref" not in str(exc.details.get("stderr", "")) + exc.message:
            raise
        # Not a network hiccup to retry (it was 8006, retryable): the branch is not on the remote.
        tracked = branch is not None or remotes.has_upstream(repo, local)
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"{name} has no branch {upstream!r}" + (
            "" if tracked else f" and {local} tracks none: pass branch, or push it first (git_push set_upstream)"),
                             details={"remote": name, "branch": upstream}) from exc
    repo = w.repo = pygit2.Repository(str(w.root))  # see the fetched objects and refs
    tracking = f"{name}/{upstream}"
    if use_rebase:
        plan = rebase.plan(repo, tracking)
        if plan.steps:
            rebase.check_start(repo, plan)
            point = w.record("pull-rebase")
            outcome = rebase.execute(repo, plan, point)
            return PullResult(remote=name, upstream=tracking, mode="rebase", rebase=outcome, success=outcome.success,
                              conflicts=outcome.conflicts, state=repo_state(repo), effect=w.effect())
    message = f"Merge branch '{upstream}' of {_fetched_from(url)}"  # git's own: no final newline until cleaned
    result = merging.merge(repo, tracking, message=message, hook_timeout_s=hook_timeout_s, label_by_id=True)
    return PullResult(remote=name, upstream=tracking, mode="rebase" if use_rebase else "merge", merge=result,
                      success=result.success, conflicts=result.conflicts, state=repo_state(repo), effect=w.effect())
