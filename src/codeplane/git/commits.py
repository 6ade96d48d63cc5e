"""``git_commit`` / ``git_stage_and_commit``: a commit from the index, with the repository's commit hooks.

Order: refuse an amend during a merge/cherry-pick/revert (as git) and ``commit.gpgsign`` (``git/signing.py``) →
stage ``stage`` paths (``git_stage_and_commit``; staging a resolved file resolves it, as ``git add`` does) or the
``only`` paths → refuse unresolved conflicts (for ``only`` before staging: git refuses a partial commit during a
merge anyway; a refusal after staging puts the index back) → run ``pre-commit`` → write the tree (every staged
change, or with ``only`` just those paths on top of HEAD, like ``git commit -- <paths>``, whose hooks get that
temporary index in ``GIT_INDEX_FILE``) → the message goes to ``.git/COMMIT_EDITMSG``, ``prepare-commit-msg`` and
``commit-msg`` may rewrite it, and it is read back and cleaned → create the commit (merge in progress: MERGE_HEAD
becomes a parent) → put the staged index in place → end the merge/cherry-pick state → ``post-commit``. What a
commit stages goes into a copy of the index that replaces it only once HEAD moved (``commit_index.py``, as git's
``index.lock``), so its hooks get the copy in ``GIT_INDEX_FILE``. As in git, skipping the hooks
(``--no-verify``) skips ``pre-commit`` and ``commit-msg`` only, and ``post-commit`` cannot fail the commit. A
failing hook before the commit, or a missing identity, leaves the index exactly as it was before the call (8007
with the hook's output); so does a server killed at any point before the commit exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema
from pygit2.enums import DeltaStatus

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.git.branch_state import end_branch_state
from codeplane.git.commit_index import commit_index, work_index
from codeplane.git.conflicts import read_conflicts, repo_state
from codeplane.git.diffs import DiffLimits, DiffReport, commit_diff
from codeplane.git.hooks import HookRun, run_hook
from codeplane.git.messages import clean_message, edit_message
from codeplane.git.models import WriteResult, cap_listed
from codeplane.git.revisions import advance_head, author_signature, head_branch, head_commit, user_signature
from codeplane.git.signing import refuse_signing
from codeplane.git.staging import StagedPath, stage

_log = get_logger(__name__)


@dataclass(frozen=True)
class Author:
    name: str
    email: str


class CommitResult(WriteResult):
    oid: str
    short_oid: str
    summary: str
    parents: list[str]
    branch: str | None
    amended: bool = False
    staged: list[StagedPath] = []
    #: How many paths were staged in all, when more than ``staged`` holds.
    staged_total: int = 0
    hooks: list[HookRun] = []
    #: git's stat of the commit (``git commit``'s summary: its diff from its first parent, renames found, the first
    #: files without hunks) when its tree diff has a deleted and an added path that git may pair as a rename
    #: (:func:`git_stat`); ``None`` otherwise, when the effect's paths are git's. For the answer's text only: the
    #: record keeps the effect (every path as the tree diff has it, with its hash), so neither dump nor schema has it.
    stat: SkipJsonSchema[DiffReport | None] = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _bounded(cls, data: Any) -> Any:
        return cap_listed(data, "staged")


def merge_heads(repo: pygit2.Repository) -> list[pygit2.Oid]:
    path = Path(repo.path) / "MERGE_HEAD"
    if not path.exists():
        return []
    return [pygit2.Oid(hex=ln.strip()) for ln in path.read_text().splitlines() if ln.strip()]


def _operation_message(repo: pygit2.Repository) -> str:
    """``MERGE_MSG`` (a merge, cherry-pick or revert in progress), comments dropped: what ``git commit`` without
    ``-m`` takes then (``Revert "x"`` with its ``This reverts commit <id>.``)."""
    path = Path(repo.path) / "MERGE_MSG"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    return clean_message("\n".join(line for line in text.splitlines() if not line.startswith("#")))


def _cherry_picked(repo: pygit2.Repository) -> pygit2.Commit | None:
    path = Path(repo.path) / "CHERRY_PICK_HEAD"
    try:
        return repo[pygit2.Oid(hex=path.read_text(encoding="utf-8").strip())].peel(pygit2.Commit)
    except (OSError, ValueError, KeyError, pygit2.GitError):
        return None


_OPERATIONS = {"merge": "merge", "cherrypick": "cherry-pick", "revert": "revert"}


def _refuse_conflicts(index: pygit2.Index) -> None:
    conflicts = read_conflicts(index)
    if conflicts:
        raise CodePlaneError(ErrorCode.GIT_CONFLICT, "resolve conflicts and stage the files before committing "
                             "(git_stage_and_commit stages the paths it is given first)",
                             details={"conflicts": [c.model_dump() for c in conflicts]})


@dataclass(frozen=True)
class CommitRequest:
    message: str
    #: Commit only these paths (as on disk), leaving other staged changes staged.
    only: tuple[str, ...] = ()
    #: Stage these paths first, then commit everything staged; ``stage_all`` stages every change.
    stage: tuple[str, ...] = ()
    stage_all: bool = False
    author: Author | None = None
    allow_empty: bool = False
    amend: bool = False
    run_hooks: bool = True
    hook_timeout_s: float = 300.0


def commit(repo: pygit2.Repository, root: Path, req: CommitRequest) -> CommitResult:
    """Create the commit; see the module docstring for the order and the failure guarantees."""
    staging_first = bool(req.stage or req.stage_all) and not req.only
    state = repo_state(repo)
    if req.amend and state in _OPERATIONS:
        # git: "You are in the middle of a merge -- cannot amend." An amend would drop MERGE_HEAD (or the
        # picked commit) and replace HEAD with a one-parent commit: the merge silently lost.
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"a {_OPERATIONS[state]} is in progress: cannot amend; "
                             "commit it without amend, or abandon it with git_merge action=abort",
                             details={"state": state, "field": "amend"})
    refuse_signing(repo, "commit")
    if not staging_first:
        _refuse_conflicts(repo.index)
    merging = merge_heads(repo) if state == "merge" else []
    if req.only and merging:
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "a merge commit takes the whole index; omit paths",
                             details={"state": state})
    # Who commits is known before anything is staged: a missing identity leaves the index as it was, as in git.
    committer = user_signature(repo) if req.author is None else _committer(repo, req.author)
    if req.author is None:
        author_signature(repo)
    staging = bool(req.only or req.stage or req.stage_all)
    with work_index(repo, staging=staging) as work:
        staged: list[StagedPath] = []
        if staging:
            staged, skipped = stage(repo, root, req.only or req.stage, tracked_only=bool(req.only), into=work.index)
            if skipped:  # like ``git add`` on a pathspec matching nothing: a commit without a named path is refused
                missing = [s for s in skipped if s.reason.startswith("no such")]
                raise CodePlaneError(
                    ErrorCode.FILE_NOT_FOUND if missing else ErrorCode.INVALID_ARGUMENTS,
                    "nothing was committed and the index is as before: "
                    + "; ".join(f"{s.path}: {s.reason}" for s in skipped),
                    details={"skipped": [s.model_dump() for s in skipped]})
        if staging_first:  # staging a resolved file is what resolves it (``git add``): check what is left after
            _refuse_conflicts(work.index)
        hooks: list[HookRun] = []
        with commit_index(repo, work, req.only) as (index_path, read_tree):
            if req.run_hooks:
                _checked(run_hook(repo, "pre-commit", timeout_s=req.hook_timeout_s, index_file=index_path), hooks,
                         restore=work.restore)
            tree = read_tree()
            head = head_commit(repo)
            if req.amend:
                if head is None:
                    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, "nothing to amend: HEAD has no commit yet")
                parents = list(head.parent_ids)
            else:
                parents = ([head.id] if head is not None else []) + merging
            given = clean_message(req.message)
            message = given or (head.message if req.amend and head is not None else "") or (
                _operation_message(repo) if state in _OPERATIONS else "")
            if not message:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "commit message is empty",
                                     details={"field": "message"})
            base_tree = repo[parents[0]].peel(pygit2.Commit).tree.id if parents else repo.TreeBuilder().write()
            if tree == base_tree and not (req.allow_empty or merging or req.amend):
                raise CodePlaneError(ErrorCode.GIT_NOTHING_TO_COMMIT, "no staged changes to commit (use allow_empty)",
                                     details={"paths": list(req.only or req.stage)})
            source = ("message",) if given or head is None else ("commit", str(head.id))
            edited = edit_message(repo, message, file_name="COMMIT_EDITMSG", source=source, verify=req.run_hooks,
                                  timeout_s=req.hook_timeout_s, index_file=index_path)
        for hook in edited.hooks:
            _checked(hook, hooks, restore=work.restore)
        if not edited.text:
            work.restore()
            raise CodePlaneError(ErrorCode.GIT_HOOK_FAILED, f"the {' and '.join(h.hook for h in edited.hooks)} hook "
                                 "left an empty commit message; nothing was committed and the index is as before",
                                 details={"hooks": [h.model_dump() for h in hooks]})
        message = edited.text
        if req.author is not None:
            author = pygit2.Signature(req.author.name, req.author.email, committer.time, committer.offset)
        elif req.amend and head is not None:
            author = head.author
        elif state == "cherrypick" and (picked := _cherry_picked(repo)) is not None:
            author = picked.author  # as git: the commit copied keeps its author (and date)
        else:
            author = author_signature(repo)
        with work.installing():  # HEAD moves first, then the index, as git commits its index.lock
            oid = repo.create_commit(None, author, committer, message, tree, parents)
            _move_head(repo, oid, message, kind=_reflog_kind(state, amend=req.amend, initial=head is None))
    repo.index.read(True)  # the repository's index as it is now on disk, not as staging left it in memory
    if state in ("merge", "cherrypick", "revert"):
        end_branch_state(repo)  # as git's commit: the rest of a git CLI's pick sequence stays for its --continue
    post = run_hook(repo, "post-commit", timeout_s=req.hook_timeout_s)
    if post.ran:
        hooks.append(post)
    branch = head_branch(repo)
    return CommitResult(
        oid=str(oid), short_oid=str(oid)[:7], summary=message.split("\n", 1)[0], parents=[str(p) for p in parents],
        branch=branch.removeprefix("refs/heads/") if branch and not repo.head_is_detached else None,
        amended=req.amend, staged=staged, hooks=hooks,
    )


def git_stat(repo: pygit2.Repository, commit: pygit2.Commit, tree_diff: pygit2.Diff, max_files: int,
             ) -> DiffReport | None:
    """``commit``'s stat as ``git commit`` prints it when ``tree_diff`` (its first parent's tree to its own, no
    rename detection) may hide a rename: a moved file is there its old path deleted and its new one added, its lines
    counted twice, where git says one ``old -> new`` file (``--find-renames``, 50%). ``None`` when no deleted and
    added path could pair (the tree diff is git's stat then, at no cost), for a root commit, and when the commit's
    diff cannot be read: the commit is made, and its answer stands with the tree diff's stat."""
    statuses = {delta.status for delta in tree_diff.deltas}
    if not commit.parents or not {DeltaStatus.ADDED, DeltaStatus.DELETED} <= statuses:
        return None
    try:
        return commit_diff(repo, commit, DiffLimits(max_files=max_files, include_hunks=False))
    except (CodePlaneError, pygit2.GitError, OSError):
        _log.warning("reading a commit's stat failed", commit=str(commit.id), exc_info=True)
        return None


def _checked(hook: HookRun, hooks: list[HookRun], *, restore: Callable[[], None]) -> None:
    """Adds a hook that ran to ``hooks``; a failed one undoes the call's staging (``restore``) and is 8007."""
    if not hook.ran:
        return
    hooks.append(hook)
    if not hook.passed:
        restore()
        raise CodePlaneError(ErrorCode.GIT_HOOK_FAILED,
                             f"{hook.hook} hook {'timed out' if hook.timed_out else f'exited {hook.exit_code}'}"
                             "; nothing was committed and the index is as before",
                             details={"hook": hook.model_dump()})


def _committer(repo: pygit2.Repository, author: Author) -> pygit2.Signature:
    try:
        return repo.default_signature
    except (KeyError, pygit2.GitError):
        return pygit2.Signature(author.name, author.email)


def _move_head(repo: pygit2.Repository, oid: pygit2.Oid, message: str, *, kind: str) -> None:
    advance_head(repo, oid, f"{kind}: {message.split(chr(10), 1)[0]}")


def _reflog_kind(state: str, *, amend: bool, initial: bool) -> str:
    """How git's reflog names a commit made by ``git commit``: concluding a merge or a cherry-pick says so."""
    if amend:
        return "commit (amend)"
    if initial:
        return "commit (initial)"
    return {"merge": "commit (merge)", "cherrypick": "commit (cherry-pick)"}.get(state, "commit")
