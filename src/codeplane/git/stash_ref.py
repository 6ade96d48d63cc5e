"""Adding an entry to the stash list: ``refs/stash`` moves to it and its reflog (the list) gains a line."""

from __future__ import annotations

from pathlib import Path

import pygit2


def store_stash(repo: pygit2.Repository, stashed: pygit2.Oid, text: str) -> None:
    """``git stash store -m <text> <stashed>``. libgit2 logs a reference outside ``refs/heads`` only when its log
    exists: it is made first, as git does for the stash."""
    log = Path(repo.path) / "logs" / "refs" / "stash"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch(exist_ok=True)
    current = repo.references.get("refs/stash")
    if current is None:
        repo.create_reference_direct("refs/stash", stashed, False, message=text)
    else:
        current.set_target(stashed, text)
