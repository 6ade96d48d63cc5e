"""Shared pieces of the ``git_*`` tool modules: running a GitService call off the event loop, wrapping
git models as tool results, and the guidance every destructive git tool repeats."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar, cast

import anyio
from pydantic import BaseModel, Field

from codeplane.core.calls import MutationReport
from codeplane.git.models import Effect
from codeplane.server.tooling import ToolResult

T = TypeVar("T")
R = TypeVar("R", bound=ToolResult)

CATEGORY = "git"

#: Appended to the summary of every tool that can discard work (describe shows it too).
RECOVERY_NOTE = (
    "Anything that would discard work (uncommitted changes, unmerged commits, a stash, a remote tip) is "
    "refused with 5009 unless confirm: true, and is first saved as a recovery point "
    "(refs/codeplane/recovery/<time>-<op>, named in effect.recovery_point). Undo with "
    "git_reset {recovery_point: <name>, confirm: true}."
)

#: Every action of a tool takes it (its params' ``every_action``): whether an action discards work can depend on the
#: state (a branch not merged, a stash entry), so confirming ahead is never refused.
CONFIRM_FIELD = Field(default=False, description="Required (true) for operations that discard work; a recovery "
                                                 "point is recorded first.")


async def run(fn: Callable[[], T]) -> T:
    """Run a blocking GitService call in a worker thread."""
    return await anyio.to_thread.run_sync(fn)


def as_result(cls: type[R], model: BaseModel) -> R:
    """Re-type a git model as the tool result subclass that extends it (no copy of nested models)."""
    # model_construct is typed as returning the base class under the pydantic plugin; it returns cls.
    return cast(R, cls.model_construct(_fields_set=model.model_fields_set, **dict(model)))


class ActionResult(ToolResult):
    """Result of an action-style tool: ``effect`` is present only when the action wrote something."""

    action: str
    effect: Effect | None = None

    def mutation_report(self) -> MutationReport | None:
        return self.effect.mutation_report() if self.effect is not None else None


def config_change(report: MutationReport | None, key: str, what: str) -> MutationReport | None:
    """``report`` with ``key`` named as changed: a remote or a linked work tree added, removed or re-pointed
    changes the repository's configuration, no file and no ref (else the call read as a no-op)."""
    if report is None:
        return None
    return replace(report, refs_moved=tuple(sorted({*report.refs_moved, (key, what)})))
