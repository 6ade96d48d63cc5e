"""Commit messages: git's whitespace cleanup, and the hooks that may rewrite a message before its commit.

git writes the message to a file in the git directory (``COMMIT_EDITMSG``, or ``MERGE_MSG`` for a merge),
runs ``prepare-commit-msg <file> <source> [<commit>]`` (always) and ``commit-msg <file>`` (only where git
verifies: ``git commit`` and ``git merge`` without ``--no-verify``), with no editor, then reads the file
back: cleaned for a commit or a merge, verbatim for a cherry-pick or a revert, as git does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from codeplane.git.hooks import HookRun, hook_exists, run_hook


def clean_message(text: str) -> str:
    """git's ``--cleanup=whitespace``: trailing spaces and surrounding blank lines go, runs of blanks fold."""
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return body + "\n" if body else ""


@dataclass(frozen=True)
class EditedMessage:
    #: The message to commit: "" when a hook emptied it.
    text: str
    #: The hooks that ran, in order; the last one failed if any did.
    hooks: tuple[HookRun, ...] = ()

    @property
    def failed(self) -> HookRun | None:
        return next((h for h in self.hooks if not h.passed), None)


def edit_message(repo: pygit2.Repository, text: str, *, file_name: str, source: Sequence[str], verify: bool,
                 timeout_s: float, cleanup: bool = True, index_file: Path | None = None) -> EditedMessage:
    """``text`` (exactly what git writes to the file) after the repository's message hooks, cleaned unless
    ``cleanup`` is off; ``index_file``: the index the commit is made from, when not the repository's."""
    names = ("prepare-commit-msg", "commit-msg") if verify else ("prepare-commit-msg",)
    present = [name for name in names if hook_exists(repo, name)]
    if not present:
        return EditedMessage(clean_message(text) if cleanup else text)
    path = Path(repo.path) / file_name
    path.write_text(text, encoding="utf-8")
    runs: list[HookRun] = []
    for name in present:
        args = (str(path), *source) if name == "prepare-commit-msg" else (str(path),)
        # No editor may open: git sets this too when it does not edit the message.
        runs.append(run_hook(repo, name, args, timeout_s=timeout_s, env={"GIT_EDITOR": ":"}, index_file=index_file))
        if not runs[-1].passed:
            return EditedMessage(text, tuple(runs))
    edited = path.read_text(encoding="utf-8", errors="replace")
    return EditedMessage(clean_message(edited) if cleanup else edited, tuple(runs))
