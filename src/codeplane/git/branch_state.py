"""The files that say a git operation is in progress, and ending one the way git's own commands end it.

libgit2's ``state_cleanup`` removes every marker it knows: the merge's files, but also ``rebase-merge/``,
``rebase-apply/``, ``sequencer/`` and ``BISECT_LOG``. Called after a hard reset, a commit, an abort or a restore it
ended a rebase, a bisect or a ``git cherry-pick A B`` sequence the git CLI had started, half-way: ``git rebase
--abort`` then found no rebase, and ``git bisect`` was left with ``BISECT_START`` but no log (QA61). git's
``reset`` (mixed, hard, merge), ``commit`` and ``merge --abort`` remove only the *branch state*
(``remove_branch_state``, git's ``branch.c``): the merge's files and the single pick or revert in progress, with the
sequence only when that pick was its last one; a rebase and a bisect go on, as ``git status`` then says.
:func:`end_branch_state` is that, and the only way CodePlane ends an operation's state.

A sequence (``git cherry-pick A B``, ``git revert A B``) keeps ``sequencer/``: ``head`` is where the branch was before
it, ``abort-safety`` where HEAD was when it last stopped, ``todo`` the picks left (the one in progress first).
:func:`sequence` reads it for ``git cherry-pick --abort``'s rewind (``git/merge_abort.py``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pygit2

from codeplane.git.conflicts import rebase_state_path
from codeplane.git.stash_ref import store_stash

#: What git's ``remove_branch_state`` unlinks (``MERGE_RR`` is rerere's record of the conflicts, ``AUTO_MERGE`` the
#: merge's tree with conflict markers, ``SQUASH_MSG`` a ``merge --squash``'s message).
_BRANCH_STATE = ("MERGE_HEAD", "MERGE_RR", "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "SQUASH_MSG", "CHERRY_PICK_HEAD",
                 "REVERT_HEAD")
#: git's operations that outlive a reset: their directories (``BISECT_*`` files stay as well).
OPERATION_DIRS = ("rebase-merge", "rebase-apply", "sequencer")
#: What libgit2's ``state_cleanup`` removes and git's reset keeps.
_OUTLIVING = (*OPERATION_DIRS, "BISECT_LOG")
_SEQUENCER = "sequencer"
_AUTOSTASH = "MERGE_AUTOSTASH"


@dataclass(frozen=True)
class PickSequence:
    """A cherry-pick or revert sequence the git CLI started and has not finished."""

    action: Literal["cherrypick", "revert"]
    #: The commit HEAD named before the sequence (``None``: the branch was yet to be born).
    head: pygit2.Oid | None
    #: HEAD is still where the sequence last left it, so ``--abort`` may rewind (git's ``rollback_is_safe``).
    safe: bool


def end_branch_state(repo: pygit2.Repository, *, rebase_step: bool = False) -> None:
    """Remove what git's ``remove_branch_state`` removes: a merge's, pick's or revert's files, and the sequence's
    ``sequencer/`` when the pick in progress was its last (git's ``sequencer_post_commit_cleanup``). A rebase, a bisect
    and the rest of a sequence stay. ``rebase_step``: the pick was a step of CodePlane's rebase, never one of a git
    CLI's sequence (git's rebase writes no ``CHERRY_PICK_HEAD``), so the sequence stays whole."""
    _end(repo, picking=not rebase_step and _picking(Path(repo.path)))


@contextmanager
def libgit2_reset(repo: pygit2.Repository, *, rebase_step: bool = False) -> Iterator[None]:
    """Around libgit2's mixed or hard ``reset``, which runs ``state_cleanup`` itself: what git's reset keeps (the
    git CLI's rebase directories, sequence and bisect log) is moved aside for the call and put back, and once the
    reset succeeded the branch state ends as :func:`end_branch_state` ends it."""
    gitdir = Path(repo.path)
    picking = not rebase_step and _picking(gitdir)
    pairs = [(gitdir / name, gitdir / f".{name}.cpl-kept") for name in _OUTLIVING]
    for path, kept in pairs:
        if os.path.lexists(kept):  # a server killed during an earlier reset left it aside
            if os.path.lexists(path):
                _remove(kept)
            else:
                os.replace(kept, path)
    aside = [(path, kept) for path, kept in pairs if os.path.lexists(path)]
    for path, kept in aside:
        os.replace(path, kept)
    try:
        yield
    finally:
        for path, kept in aside:
            if not os.path.lexists(path):
                os.replace(kept, path)
    _end(repo, picking=picking)


def _picking(gitdir: Path) -> bool:
    return any((gitdir / name).is_file() for name in ("CHERRY_PICK_HEAD", "REVERT_HEAD"))


def _end(repo: pygit2.Repository, *, picking: bool) -> None:
    gitdir = Path(repo.path)
    for name in _BRANCH_STATE:
        (gitdir / name).unlink(missing_ok=True)
    _keep_autostash(repo)
    if picking and _picks_left(gitdir) <= 1:
        remove_sequence(repo)


def _keep_autostash(repo: pygit2.Repository) -> None:
    """A ``git merge --autostash`` (or ``merge.autoStash``) keeps the local changes it set aside in
    ``MERGE_AUTOSTASH``. Ending the merge removed the merge's files and left that ref behind, where nothing shows it
    and the next such merge overwrites it: the changes looked lost. They become a stash entry ``autostash``, as
    git's ``remove_merge_branch_state`` saves them on a reset (``git_stash`` pops it; git's own commit and
    ``merge --abort`` apply it at once). A ref that names no commit here is left as it is."""
    path = Path(repo.path) / _AUTOSTASH
    try:
        oid = _oid(path.read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError):
        return
    if oid is None or not isinstance(repo.get(oid), pygit2.Commit):
        return
    store_stash(repo, oid, "autostash")
    path.unlink(missing_ok=True)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def remove_sequence(repo: pygit2.Repository) -> None:
    """Forget the git CLI's pick or revert sequence (``git cherry-pick --quit``)."""
    shutil.rmtree(Path(repo.path) / _SEQUENCER, ignore_errors=True)


def _picks_left(gitdir: Path) -> int:
    """Lines of ``sequencer/todo`` (git's ``have_finished_the_last_pick``: one line or none means the pick in progress
    was the last); a sequence without a todo counts as unfinished, as git keeps it then."""
    try:
        text = (gitdir / _SEQUENCER / "todo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 2 if (gitdir / _SEQUENCER).is_dir() else 0
    return len(text.rstrip("\n").split("\n")) if text.strip() else 0


def sequence(repo: pygit2.Repository) -> PickSequence | None:
    """The git CLI's pick or revert sequence in progress (``sequencer/head`` exists), else ``None``."""
    folder = Path(repo.path) / _SEQUENCER
    try:
        head_text = (folder / "head").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    head = _oid(head_text)
    try:
        expected = _oid((folder / "abort-safety").read_text(encoding="ascii").strip())
    except (OSError, UnicodeDecodeError):
        expected = None  # git compares with the null id then: safe only on an unborn branch
    actual = None if repo.head_is_unborn else repo.head.target
    return PickSequence(action=_action(folder), head=head, safe=expected == actual)


def way_out(repo: pygit2.Repository, state: str) -> str:
    """How to end the operation in progress (``state`` as :func:`codeplane.git.conflicts.repo_state` says it) with
    what really ends it: CodePlane's tools for what they can finish, else the git CLI's command (``git_rebase`` runs
    only CodePlane's own rebase). Each abort keeps unrelated local changes; a hard reset ends none of a rebase, a
    bisect or a sequence, as git's does not."""
    if state == "rebase" and rebase_state_path(repo).exists():
        return "resolve, git_stage, then git_rebase action=continue, or abandon it with git_rebase action=abort"
    if state == "rebase":
        return ("the git CLI started it, and git_rebase continues only rebases CodePlane starts: resolve, git_stage, "
                "then run `git rebase --continue` in a terminal (with GIT_EDITOR=true it keeps each message and opens "
                "no editor), or abandon it with `git rebase --abort`")
    if state == "bisect":
        return "the git CLI started it: end it with `git bisect reset` in a terminal"
    if state == "apply_mailbox":
        return ("`git am` started it: resolve, git_stage, then run `git am --continue` in a terminal, or `git am "
                "--skip` / `git am --abort`")
    if state in ("cherrypick", "revert") and sequence(repo) is not None:
        cli = "git cherry-pick" if state == "cherrypick" else "git revert"
        return (f"it is one step of a `{cli}` sequence the git CLI started: resolve, git_stage, then run `{cli} "
                "--continue` in a terminal (with GIT_EDITOR=true it opens no editor; git_commit would commit this step "
                "only), or abandon the whole sequence with git_merge action=abort")
    return "resolve, git_stage, then git_commit, or abandon it with git_merge action=abort"


def between_picks(repo: pygit2.Repository) -> tuple[Literal["cherrypick", "revert"], str] | None:
    """A git CLI sequence with no pick in progress (``git status``: "Cherry-pick currently in progress"), as
    (state, how it goes on or ends), else ``None``; only meaningful where no other operation is in progress."""
    pending = sequence(repo)
    if pending is None or _picking(Path(repo.path)):
        return None
    cli = "git cherry-pick" if pending.action == "cherrypick" else "git revert"
    return pending.action, (f"a `{cli}` sequence the git CLI started: `{cli} --continue` in a terminal does the "
                            f"rest, `{cli} --quit` forgets it, git_merge action=abort returns to where it started")


def sequence_left(repo: pygit2.Repository) -> str | None:
    """What to say of a git CLI sequence that outlived a reset between two of its picks, or ``None``: git's reset
    keeps it, and with no pick in progress the state reads "none" where ``git status`` says a cherry-pick is."""
    pending = sequence(repo)
    if pending is None or _picking(Path(repo.path)):
        return None
    cli = "git cherry-pick" if pending.action == "cherrypick" else "git revert"
    return (f"the `{cli}` sequence the git CLI started goes on, as git's reset leaves it: `{cli} --continue` in a "
            f"terminal does the rest, `{cli} --quit` forgets it, git_merge action=abort returns to where it started")


def _oid(text: str) -> pygit2.Oid | None:
    try:
        oid = pygit2.Oid(hex=text)
    except ValueError:
        return None
    return None if oid == pygit2.Oid(raw=b"\0" * 20) else oid


def _action(folder: Path) -> Literal["cherrypick", "revert"]:
    """The todo's first command, as git's ``sequencer_get_last_command`` reads it (``revert``, else a pick)."""
    try:
        first = (folder / "todo").read_text(encoding="utf-8", errors="replace").lstrip(" \t\r\n").split(None, 1)
    except OSError:
        first = []
    return "revert" if first and first[0] == "revert" else "cherrypick"
