"""Runs linter processes in parallel, each with its own timeout, through ``core.procs`` (own process
group, the whole group killed at the timeout). A run that cannot start or times out is an outcome,
never an exception: one broken linter must not cost the others' diagnostics."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from codeplane.core import procs


@dataclass(frozen=True)
class Job:
    argv: tuple[str, ...]
    cwd: Path
    timeout_s: float
    stdin: bytes | None = None
    #: Variables set for this run on top of the server's environment.
    env: tuple[tuple[str, str], ...] = ()


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


class Progress:
    """The linter runs of a call that have finished, in order, read by a caller polling from another thread
    (``list.append`` is atomic under the GIL); ``total`` grows as the call plans more runs."""

    def __init__(self) -> None:
        self.finished: list[str] = []
        self.total = 0


class Runner:
    """Runs jobs in parallel; :meth:`close` kills every process group still running (server stop) and
    refuses new jobs, so a hanging linter never holds the server's exit for its timeout."""

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()
        self._closed = False

    def _started(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._live.add(proc)
            closed = self._closed
        if closed:  # close() ran between the check in _run and the start
            procs.kill_process_group(proc)

    def _run(self, job: Job) -> Outcome:
        if self._closed:
            return Outcome(job, None, "not run: the server is stopping")
        holder: list[subprocess.Popen[bytes]] = []

        def started(proc: subprocess.Popen[bytes]) -> None:
            holder.append(proc)
            self._started(proc)

        try:
            while True:
                result = procs.run(job.argv, cwd=job.cwd, timeout_s=job.timeout_s,
                                   env={**_environment(), **dict(job.env)}, stdin=job.stdin, on_start=started)
                if not _cache_failed(job, result):
                    return Outcome(job, result)
                job = _without_cache(job)  # once: a run with --no-cache never fails on its cache
        except OSError as exc:
            return Outcome(job, None, f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._live.difference_update(holder)

    def run(self, jobs: Sequence[Job], workers: int, on_done: Callable[[int, Outcome], None] | None = None,
            ) -> list[Outcome]:
        """Every job's outcome, in the order of ``jobs``; ``on_done(index, outcome)`` as each one ends."""

        def one(index: int) -> Outcome:
            outcome = self._run(jobs[index])
            if on_done is not None:
                on_done(index, outcome)
            return outcome

        if len(jobs) <= 1:
            return [one(i) for i in range(len(jobs))]
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(jobs))), thread_name_prefix="cpl-lint") as pool:
            return list(pool.map(one, range(len(jobs))))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            live = list(self._live)
        for proc in live:
            procs.kill_process_group(proc, grace_s=0.2)


_NO_CACHE = "--no-cache"


def _cache_failed(job: Job, result: procs.ProcResult) -> bool:
    """Ruff could not write its cache (it fails whole, exit 2, on a file name that is not UTF-8: "Failed to serialize
    cache data"); the same check without the cache reports the diagnostics (QA s55). A run already without it is
    its outcome, whatever it says."""
    return (result.returncode == 2 and len(job.argv) > 1 and job.argv[1] == "check" and _NO_CACHE not in job.argv
            and Path(job.argv[0]).name.startswith("ruff") and b"Failed to serialize cache data" in result.stderr)


def _without_cache(job: Job) -> Job:
    """``ruff check --no-cache ...``: the flag right after the subcommand, the rest as it was."""
    return replace(job, argv=(*job.argv[:2], _NO_CACHE, *job.argv[2:]))
