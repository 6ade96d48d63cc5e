"""``cpl doctor`` checks for the git tools: a commit identity, and no CodePlane rebase left half-done."""

from __future__ import annotations

from pathlib import Path

import pygit2

from codeplane.core.doctor import CheckResult
from codeplane.git import recovery
from codeplane.git.branch_state import way_out
from codeplane.git.conflicts import repo_state


def check_git_tools(root: Path) -> list[CheckResult]:
    try:
        repo = pygit2.Repository(str(root))
    except (pygit2.GitError, KeyError) as exc:
        return [CheckResult("git tools", False, str(exc), "check .git permissions / run git fsck")]
    try:
        sig = repo.default_signature
        identity = CheckResult("git identity (for git_commit)", True, f"{sig.name} <{sig.email}>")
    except (KeyError, pygit2.GitError):
        identity = CheckResult("git identity (for git_commit)", False, "user.name / user.email not set",
                               'git config --global user.name "Your Name"; git config --global user.email '
                               "you@example.com")
    state = repo_state(repo)
    points = sum(1 for n in repo.references if n.startswith(recovery.RECOVERY_PREFIX))
    return [
        identity,
        CheckResult("git operation in progress", True, state if state != "none" else "none",
                    way_out(repo, state) if state != "none" else ""),
        CheckResult("git recovery points", True, f"{points} under {recovery.RECOVERY_PREFIX}"),
    ]
