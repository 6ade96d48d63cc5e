"""Conflicts as data: the conflicted index entries and the repository's in-progress state (§23.7)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pygit2
from pygit2.enums import RepositoryState

from codeplane.git.models import Conflict
from codeplane.git.pathspecs import shown

RepoState = Literal["none", "merge", "revert", "cherrypick", "rebase", "bisect", "apply_mailbox"]

_STATES: dict[RepositoryState, RepoState] = {
    RepositoryState.NONE: "none",
    RepositoryState.MERGE: "merge",
    RepositoryState.REVERT: "revert",
    RepositoryState.REVERT_SEQUENCE: "revert",
    RepositoryState.CHERRYPICK: "cherrypick",
    RepositoryState.CHERRYPICK_SEQUENCE: "cherrypick",
    RepositoryState.BISECT: "bisect",
    RepositoryState.REBASE: "rebase",
    RepositoryState.REBASE_INTERACTIVE: "rebase",
    RepositoryState.REBASE_MERGE: "rebase",
    RepositoryState.APPLY_MAILBOX: "apply_mailbox",
    RepositoryState.APPLY_MAILBOX_OR_REBASE: "rebase",
}

#: CodePlane's own rebase keeps its state here (see ``rebase_state.py``); it counts as "rebase".
REBASE_STATE_FILE = "codeplane-rebase.json"


def rebase_state_path(repo: pygit2.Repository) -> Path:
    return Path(repo.path) / REBASE_STATE_FILE


def repo_state(repo: pygit2.Repository) -> RepoState:
    """What is in progress: CodePlane's rebase (its steps leave cherry-pick markers, so it wins), else git's
    own markers (MERGE_HEAD, rebase directories, ...)."""
    if rebase_state_path(repo).exists():
        return "rebase"
    return _STATES.get(repo.state(), "none")


def read_conflicts(index: pygit2.Index) -> list[Conflict]:
    """Conflicted paths with the ancestor/ours/theirs blob oids, sorted by path."""
    conflicts = index.conflicts
    if conflicts is None:
        return []
    out: list[Conflict] = []
    for ancestor, ours, theirs in conflicts:
        entry = ours or theirs or ancestor
        assert entry is not None
        out.append(Conflict(
            path=shown(entry.path),
            ancestor_oid=str(ancestor.id) if ancestor is not None else None,
            ours_oid=str(ours.id) if ours is not None else None,
            theirs_oid=str(theirs.id) if theirs is not None else None,
        ))
    return sorted(out, key=lambda c: c.path)
