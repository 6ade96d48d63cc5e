"""Runs linter processes in parallel, each with its own timeout, through ``core.procs`` (own process
group, the whole group killed at the timeout). A run that cannot start or times out is an outcome,
never an exception: one broken linter must not cost the others' diagnostics."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from codeplane.core import procs


@dataclass(frozen=True)
class Job:
    argv: tuple[str, ...]
    cwd: Path
    timeout_s: float
    stdin: bytes | None = None


@dataclass(frozen=True)
class Outcome:
    job: Job
    #: ``None`` when the process could not be started (``error`` says why).
    result: procs.ProcResult | None
    error: str | None = None

    @property
    def timed_out(self) -> bool:
        return self.result is not None and self.result.timed_out


def _environment() -> dict[str, str]:
    # Colour codes would corrupt the machine formats of tools that ignore isatty.
    return {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0", "CLICOLOR": "0"}


def _run(job: Job) -> Outcome:
    try:
        return Outcome(job, procs.run(job.argv, cwd=job.cwd, timeout_s=job.timeout_s, env=_environment(),
                                      stdin=job.stdin))
    except OSError as exc:
        return Outcome(job, None, f"{type(exc).__name__}: {exc}")


class Progress:
    """The linter runs of a call that have finished, in order, read by a caller polling from another thread
    (``list.append`` is atomic under the GIL); ``total`` grows as the call plans more runs."""

    def __init__(self) -> None:
        self.finished: list[str] = []
        self.total = 0


def run_jobs(jobs: Sequence[Job], workers: int, on_done: Callable[[int, Outcome], None] | None = None,
             ) -> list[Outcome]:
    """Every job's outcome, in the order of ``jobs``; ``on_done(index, outcome)`` as each one ends."""

    def one(index: int) -> Outcome:
        outcome = _run(jobs[index])
        if on_done is not None:
            on_done(index, outcome)
        return outcome

    if len(jobs) <= 1:
        return [one(i) for i in range(len(jobs))]
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs))), thread_name_prefix="cpl-lint") as pool:
        return list(pool.map(one, range(len(jobs))))
