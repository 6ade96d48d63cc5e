"""Writes applied whose call never answered: what the ledger must still record after a kill.

A write batch's ledger row is appended when its call ends, after the reindex that makes the answer (seconds for
a large batch). A server killed in between left the files changed and no row at all: the journal is retired at
commit, so nothing told the next start (QA44). The batch now leaves a marker once it is durable
(``.codeplane/unanswered/<batch>.json``: the call's ``request_id`` and tool from the log correlation, the paths);
the call's end removes it once its row is written, and a start records a row for each marker left.

The marker also names the session and task the call was admitted under (:func:`admitted`, set by the task tracker,
which stores the task, counting the write, at admission): the row a start records belongs to that task, as the
row the call would have written (QA56 #3: it was recorded with no task or session).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

import structlog

from codeplane.core.atomic import write_atomic
from codeplane.core.clock import now_ms

DIR = "unanswered"
#: Paths kept per marker (the ledger keeps 500 per row too).
MAX_PATHS = 500


@dataclass(frozen=True)
class Owner:
    """The session and task a mutating call was admitted under."""

    session_id: str
    task_id: str


#: The running call's owner; a context variable as the correlation ids are, so the commit (in a worker thread,
#: which runs in a copy of the call's context) sees its own call's.
_owner: ContextVar[Owner | None] = ContextVar("codeplane_unanswered_owner", default=None)


def admitted(owner: Owner | None) -> None:
    """Name the owner of the call running in this context (``None``: the call ended or owns no task)."""
    _owner.set(owner)


@dataclass(frozen=True)
class Unanswered:
    batch: str
    request_id: str | None
    tool: str | None
    at_ms: int
    paths: tuple[str, ...]
    paths_total: int
    file: Path
    owner: Owner | None = None


def note(state_dir: Path, batch: str, paths: Sequence[str]) -> None:
    """Leave the marker of ``batch`` (durable, applied) for the call running now; best effort: a marker that cannot
    be written loses only this evidence, never the write."""
    bound = structlog.contextvars.get_contextvars()
    request_id = bound.get("request_id")
    if not isinstance(request_id, str):
        return  # not a tool call (a test, the CLI): nothing will record a row for it later either
    body = {"batch": batch, "request_id": request_id, "tool": bound.get("tool"), "at_ms": now_ms(),
            "paths": list(paths[:MAX_PATHS]), "paths_total": len(paths)}
    owner = _owner.get()
    if owner is not None:
        body.update(session_id=owner.session_id, task_id=owner.task_id)
    try:
        (state_dir / DIR).mkdir(exist_ok=True)
        write_atomic(state_dir / DIR / f"{batch}.json", (json.dumps(body, sort_keys=True) + "\n").encode())
    except OSError:
        return


def settle(state_dir: Path, request_id: str) -> None:
    """Remove the markers of ``request_id``: its row is written."""
    for entry in pending(state_dir):
        if entry.request_id == request_id:
            entry.file.unlink(missing_ok=True)


def pending(state_dir: Path) -> list[Unanswered]:
    """The markers left, oldest batch first; unreadable ones are skipped (a torn write never answered either)."""
    try:
        names = sorted(os.listdir(state_dir / DIR))
    except OSError:
        return []
    for torn in (n for n in names if not n.endswith(".json")):  # a kill during ``note``: never renamed into place
        (state_dir / DIR / torn).unlink(missing_ok=True)
    names = [n for n in names if n.endswith(".json")]
    found: list[Unanswered] = []
    for name in names:
        path = state_dir / DIR / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            paths = tuple(str(p) for p in data.get("paths", []))
            # A marker of a server before owners were noted has none: its row stays task-less.
            owner = Owner(str(data["session_id"]), str(data["task_id"])) if "task_id" in data else None
            found.append(Unanswered(str(data["batch"]), data.get("request_id"), data.get("tool"), int(data["at_ms"]),
                                    paths, int(data.get("paths_total", len(paths))), path, owner))
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # written atomically: unreadable means not ours to read
            continue
    return found
