"""The persisted state of a CodePlane rebase in progress (``.git/codeplane-rebase.json``).

CodePlane runs rebases itself over pygit2 (libgit2's rebase cannot squash, reword or edit), so it keeps
its own todo list instead of git's ``rebase-merge/`` directory. While the file exists ``git_status``
reports ``state: "rebase"``; ``git_rebase`` continue/skip/abort act on it. The git CLI does not know
about it: finish or abort through CodePlane.
"""

from __future__ import annotations

from typing import Literal

import pygit2

from codeplane.core.atomic import write_atomic
from codeplane.git.conflicts import rebase_state_path
from codeplane.git.models import GitModel

StepAction = Literal["pick", "reword", "edit", "squash", "fixup", "drop"]


class RebaseStep(GitModel):
    action: StepAction = "pick"
    commit_sha: str
    #: The commit's summary in a plan; the new message for reword/squash in an executed plan.
    message: str | None = None


class RebasePlan(GitModel):
    upstream: str
    onto: str
    steps: list[RebaseStep]


class RebaseState(GitModel):
    plan: RebasePlan
    orig_head: str
    #: Full name of the branch being rebased; ``None`` for a detached HEAD.
    branch: str | None
    #: Index of the next step to run.
    next: int = 0
    paused: Literal["conflict", "edit"] | None = None
    skipped_empty: list[str] = []
    recovery_point: str | None = None


def load(repo: pygit2.Repository) -> RebaseState | None:
    path = rebase_state_path(repo)
    if not path.exists():
        return None
    return RebaseState.model_validate_json(path.read_bytes())


def save(repo: pygit2.Repository, state: RebaseState) -> None:
    write_atomic(rebase_state_path(repo), state.model_dump_json(indent=1).encode())


def clear(repo: pygit2.Repository) -> None:
    rebase_state_path(repo).unlink(missing_ok=True)
