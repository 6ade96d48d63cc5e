"""Conflicts as data: the conflicted index entries and the repository's in-progress state (§23.7)."""

from __future__ import annotations

import re
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


def git_style_labels(repo: pygit2.Repository, commit: pygit2.Commit) -> None:
    """After libgit2 applied ``commit`` (cherry-pick, revert, a rebase step) with conflicts: name it in the
    markers and ``MERGE_MSG`` as git does. libgit2 writes ``>>>>>>> a93fcf8... t1`` and ``#Conflicts:``; git
    writes ``>>>>>>> a93fcf8 (t1)`` (``parent of …`` for a revert) and ``# Conflicts:``."""
    short = str(commit.id)[:7].encode()
    label = re.compile(rb"^(>{7} (?:parent of )?" + short + rb")\.\.\. ([^\r\n]*)(\r?)$", re.MULTILINE)
    root = Path(repo.workdir)
    for entries in repo.index.conflicts or ():
        path = root / next(e for e in entries if e is not None).path
        try:
            if path.is_symlink() or not path.is_file():
                continue
            data = path.read_bytes()
            fixed = label.sub(rb"\1 (\2)\3", data)
            if fixed != data:
                path.write_bytes(fixed)
        except OSError:
            continue  # cosmetic: the conflict itself is in the index either way
    message = Path(repo.path) / "MERGE_MSG"
    try:
        text = message.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if "\n#Conflicts:\n" in text:
        message.write_text(text.replace("\n#Conflicts:\n", "\n# Conflicts:\n"), encoding="utf-8")


def conflicts_comment(conflicts: list[Conflict]) -> str:
    """The comment git appends to ``MERGE_MSG`` when a merge stops (dropped again when the message is used)."""
    return "\n# Conflicts:\n" + "".join(f"#\t{c.path}\n" for c in conflicts) if conflicts else ""
