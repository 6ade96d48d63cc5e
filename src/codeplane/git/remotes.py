"""Remotes: configuration through pygit2; fetch and push through the git CLI (§10: credentials).

The CLI inherits the user's credential helpers and ssh agent, runs without a terminal (prompts off),
and every argument is a separate argv entry after validation. URLs are shown with passwords redacted.
A push the remote rejects (non-fast-forward, hook) is 8006 with each ref's status; it is never retried
with force implicitly. Names and URLs are bounded (:data:`MAX_NAME_BYTES`, :data:`MAX_URL_CHARS`) so every remote
``add`` makes can be removed again, by libgit2 and by git.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.redaction import redact_url
from codeplane.git.cli import failure, run_git
from codeplane.git.models import GitModel
from codeplane.git.pathspecs import check_ref, refuse_option_like

PushStatus = Literal["ok", "forced", "new", "deleted", "up_to_date", "rejected"]
#: A remote name is a directory under ``refs/remotes/`` (and ``logs/refs/remotes/``): one file-name component.
MAX_NAME_BYTES = 255
#: libgit2 removes a remote through a regular expression built from its entries, which fails ("regular
#: expression is too large") past about 32,000 characters; git refuses config lines of a few MB; the git CLI
#: itself cannot take an argument over 128 KiB. Real URLs are far shorter.
MAX_URL_CHARS = 8192
_FLAGS: dict[str, PushStatus] = {" ": "ok", "+": "forced", "*": "new", "-": "deleted", "=": "up_to_date",
                                 "!": "rejected"}


class RemoteInfo(GitModel):
    name: str
    url: str | None
    push_url: str | None = None


class PushedRef(GitModel):
    local: str
    remote_ref: str
    status: PushStatus
    summary: str
    reason: str | None = None


def redact(url: str | None) -> str | None:
    """``https://user:secret@host`` → ``https://user:***@host`` (and a query's tokens: ``core.redaction``)."""
    return None if url is None else redact_url(url)


def list_remotes(repo: pygit2.Repository) -> list[RemoteInfo]:
    return [RemoteInfo(name=r.name, url=redact(r.url), push_url=redact(r.push_url))
            for r in sorted(repo.remotes, key=lambda r: r.name or "")]


def check_remote_name(name: str) -> str:
    check_ref(name, "name")
    size = len(name.encode("utf-8", errors="surrogateescape"))
    if size > MAX_NAME_BYTES:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"a remote name is at most {MAX_NAME_BYTES} bytes "
                             f"(it names a directory under refs/remotes); this one is {size}",
                             details={"field": "name", "limit": MAX_NAME_BYTES, "length": size})
    if "/" in name or not pygit2.reference_is_valid_name(f"refs/remotes/{name}/x"):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{name!r} is not a valid remote name",
                             details={"field": "name", "value": name})
    return name


def get_remote(repo: pygit2.Repository, name: str) -> pygit2.Remote:
    check_ref(name, "remote")
    try:
        return repo.remotes[name]
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, f"no remote {name!r}",
                             details={"remote": name, "remotes": [r.name for r in repo.remotes]}) from exc


def check_url(url: str) -> str:
    """1003 for an empty, option-like, multi-line or over-long (:data:`MAX_URL_CHARS`) URL."""
    check_ref(url, "url")
    if len(url) > MAX_URL_CHARS:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"url is at most {MAX_URL_CHARS} characters; this one is "
                             f"{len(url)}", details={"field": "url", "limit": MAX_URL_CHARS, "length": len(url)})
    return url


def add(repo: pygit2.Repository, name: str, url: str) -> RemoteInfo:
    check_remote_name(name)
    check_url(url)
    if name in [r.name for r in repo.remotes]:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"remote {name!r} already exists", details={"remote": name})
    remote = repo.remotes.create(name, url)
    return RemoteInfo(name=remote.name, url=redact(remote.url))


def remove(repo: pygit2.Repository, name: str) -> RemoteInfo:
    remote = get_remote(repo, name)
    info = RemoteInfo(name=remote.name, url=redact(remote.url), push_url=redact(remote.push_url))
    try:
        repo.remotes.delete(name)
    except pygit2.GitError as exc:
        # libgit2 cannot remove entries too long for its regular expressions (a remote made by another program,
        # or before URLs were bounded); git edits the config line by line and can. It refuses a name starting
        # with "-" as an unknown option, and get_remote refused those already.
        result = run_git(Path(repo.workdir or repo.path), ["remote", "remove", name], timeout_s=60)
        if not result.ok:
            raise failure(result, ErrorCode.GIT_ERROR, f"removing remote {name} failed", remote=name) from exc
    return info


def default_remote(repo: pygit2.Repository, branch: str | None) -> str:
    """The branch's configured remote, else ``origin``, else the only remote; 8002 if there is none."""
    names = [r.name for r in repo.remotes]
    if branch:
        try:
            configured = repo.config[f"branch.{branch.removeprefix('refs/heads/')}.remote"]
        except KeyError:
            configured = None
        if configured and configured in names:
            return str(configured)
    if "origin" in names:
        return "origin"
    if len(names) == 1 and names[0]:
        return names[0]
    raise CodePlaneError(ErrorCode.GIT_REF_NOT_FOUND, "no remote given and no default remote (origin) configured",
                         details={"remotes": names})


def upstream_branch(repo: pygit2.Repository, branch: str, remote: str) -> str:
    """The remote branch name a local branch tracks (``branch.<b>.merge``), defaulting to the same name."""
    short = branch.removeprefix("refs/heads/")
    try:
        merge = repo.config[f"branch.{short}.merge"]
    except KeyError:
        merge = None
    return str(merge).removeprefix("refs/heads/") if merge else short


def has_upstream(repo: pygit2.Repository, branch: str) -> bool:
    """Whether the local ``branch`` has a configured upstream (``branch.<b>.merge``)."""
    try:
        return bool(repo.config[f"branch.{branch.removeprefix('refs/heads/')}.merge"])
    except KeyError:
        return False


def fetch(root: Path, remote: str, refspecs: list[str], *, prune: bool, timeout_s: float) -> None:
    check_ref(remote, "remote")
    for spec in refspecs:
        refuse_option_like(spec, "branch")
    args = ["fetch", "--no-write-fetch-head", *(["--prune"] if prune else []), remote, *refspecs]
    result = run_git(root, args, timeout_s=timeout_s)
    if not result.ok:
        raise failure(result, ErrorCode.GIT_REMOTE_ERROR, f"fetch from {remote} failed", remote=remote)


def parse_push(text: str) -> list[PushedRef]:
    """Parse ``git push --porcelain`` ref lines (``<flag>\\t<from>:<to>\\t<summary> (<reason>)``)."""
    out: list[PushedRef] = []
    for line in text.splitlines():
        if len(line) < 2 or line[1] != "\t" or line[0] not in _FLAGS:
            continue
        parts = line[2:].split("\t")
        if len(parts) < 2:
            continue
        local, _, remote_ref = parts[0].partition(":")
        summary = parts[1]
        match = re.search(r"\(([^)]*)\)\s*$", summary)
        out.append(PushedRef(local=local, remote_ref=remote_ref, status=_FLAGS[line[0]], summary=summary,
                             reason=match.group(1) if match else None))
    return out


def push(root: Path, remote: str, updates: list[tuple[str, str]], *, leases: dict[str, str | None],
         set_upstream: bool, timeout_s: float) -> list[PushedRef]:
    """Push each ``(local_ref, remote_ref)`` of ``updates`` (an empty local ref deletes the remote one). A remote
    ref named in ``leases`` is forced or deleted with ``--force-with-lease`` on its last known remote tip, so a
    tip someone else pushed meanwhile is never overwritten blindly. With no known tip the lease says the branch
    must not exist on the remote (``<ref>:``): a plain ``--force`` overwrote commits never fetched, which no
    recovery point holds; git's lease refuses them ("stale info"). Several refs go in one ``--atomic`` push:
    all of them or none."""
    check_ref(remote, "remote")
    for local_ref, remote_ref in updates:
        refuse_option_like(local_ref, "branch")
        refuse_option_like(remote_ref, "branch")
    args = ["push", "--porcelain", *(["--atomic"] if len(updates) > 1 else [])]
    args += [f"--force-with-lease={ref}:{lease or ''}" for ref, lease in leases.items()]
    if set_upstream:
        args.append("--set-upstream")
    args += [remote, *(f"{local_ref}:{remote_ref}" for local_ref, remote_ref in updates)]
    result = run_git(root, args, timeout_s=timeout_s)
    refs = parse_push(result.text())
    rejected = [r for r in refs if r.status == "rejected"]
    if rejected or not result.ok:
        error = failure(result, ErrorCode.GIT_REMOTE_ERROR, f"push to {remote} was rejected" if rejected else
                        f"push to {remote} failed", remote=remote, refs=[r.model_dump() for r in refs])
        if rejected:
            # An atomic push rejects every ref for the one that failed: name that one.
            first = min(rejected, key=lambda r: r.reason == "atomic push failed")
            reason = first.reason or "rejected"
            error.message = _rejection(remote, first.remote_ref, reason)
            error.retryable = False
            error.details["reason"] = reason
        raise error
    return refs


def _rejection(remote: str, remote_ref: str, reason: str) -> str:
    said = f"push to {remote} rejected ({reason})"
    if remote_ref.startswith("refs/tags/"):
        tag = remote_ref.removeprefix("refs/tags/")
        return (f"{said}: the remote's tag {tag} names another commit; to move it, delete it there first "
                f"(push again with delete=true tags=[{tag!r}] confirm=true), then push it" if "already exists" in reason
                else said)
    branch = remote_ref.removeprefix("refs/heads/")
    if "fetch first" in reason or "non-fast-forward" in reason:
        return f"{said}; fetch/pull and integrate first, or push with force (requires confirm)"
    if "stale info" in reason:
        return (f"{said}: the remote branch is not at the tip last fetched (or was never fetched); git_remote "
                f"action=fetch name={remote} branch={branch} first, look at what it holds, then force again")
    return said
