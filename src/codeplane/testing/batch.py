"""One runner process for a batch of targets, watched: progress, per-target timeout, stop, whole-group kill.

The process starts in its own process group (``core.procs``); a timeout or a stop kills the whole group, so
no test's grandchild outlives it. With a live stream (pytest events, ``go test -json``, libtest) time is
attributed to the target running now, so one hung test file times out alone and the batch's remaining
targets go on in a fresh process (jest gets such a stream from CodePlane's reporter, ``runners/js.py``). Without
one (vitest's JSON at exit), the batch is watched whole (:func:`whole_batch_budget`) and, if it overruns, its
targets are retried one per process to find the culprit (the run's answer says so: that time is in no attempt).
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from codeplane.core.procs import ExitWaiter, kill_process_group, start
from codeplane.testing.model import CaseResult, Target, TargetResult
from codeplane.testing.runners.base import BatchParser, Invocation

POLL_S = 0.05
STARTUP_FLOOR_S = 30.0
#: What a target never timed is expected to take at most, in a batch watched whole (``run_process``).
BATCH_FLOOR_S = 10.0
StopReason = Literal["cancel", "fail_fast", "deadline"]


@dataclass(frozen=True)
class ProcessOutcome:
    """What one process did. ``results`` covers finished targets only."""

    invocation: Invocation
    results: dict[str, TargetResult]
    exit_code: int | None
    wall_s: float
    #: The target that exceeded its own timeout (``""``: the runner never started a target in time).
    timed_out: str | None = None
    #: The whole process overran its budget (non-live runners).
    batch_timed_out: bool = False
    stopped: StopReason | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None
    #: Pool targets this process took (None: it took part in no pool, ``results`` cover all it was given).
    claimed: frozenset[str] | None = None
    #: What the run's answer should say about how the process ran its tests (``BatchParser.warnings``).
    warnings: tuple[str, ...] = ()
    #: The process died before its runner finished (``BatchParser.died``).
    died: bool = False
    #: Of the target that timed out (or was running when the run's timeout stopped the process, ``partial_of``):
    #: the cases that had finished, and the one running when it was killed.
    partial: tuple[tuple[CaseResult, ...], str | None] = ((), None)
    partial_of: str | None = None
    #: ``timed_out`` hung while pytest imported it (collection): the start-up budget it had, in seconds.
    import_timeout_s: float | None = None


_Key = str | None


@dataclass
class _Watch:
    current: _Key = None
    since: float = 0.0
    spent: dict[_Key, float] = field(default_factory=dict)

    def charge(self, current: _Key, now: float) -> float:
        """Attribute time since the last poll to the previous current target; return the current's total.

        ``None`` (start-up, or between targets while the runner builds the next one) is a gap: its budget
        counts one continuous gap, not all of them together.
        """
        self.spent[self.current] = self.spent.get(self.current, 0.0) + (now - self.since)
        if current is None and self.current is not None:
            self.spent[None] = 0.0
        self.current, self.since = current, now
        return self.spent.get(current, 0.0)


def _pump(stream: IO[bytes], sink: IO[bytes], lock: threading.Lock, feed: Callable[[str], None] | None) -> None:
    for raw in iter(stream.readline, b""):
        sink.write(raw)
        if feed is not None:
            with lock:
                feed(raw.decode("utf-8", errors="replace"))
    sink.flush()


class _EventTail:
    """Reads complete lines appended to the event file since the last call."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""

    def lines(self) -> list[str]:
        if self.path is None or not self.path.is_file():
            return []
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        self.offset += len(data)
        data = self.partial + data
        *complete, self.partial = data.split(b"\n")
        return [line.decode("utf-8", errors="replace") for line in complete if line.strip()]


def run_process(invocation: Invocation, parser: BatchParser, targets: Sequence[Target], workdir: Path, *,
                timeout_of: Callable[[Target], float], deadline: float,
                should_stop: Callable[[], StopReason | None],
                on_progress: Callable[[BatchParser], None]) -> ProcessOutcome:
    """Run ``invocation`` to completion, a timeout or a stop. Never raises for the child's failures."""
    workdir.mkdir(parents=True, exist_ok=True)
    out_path, err_path = workdir / "stdout.log", workdir / "stderr.log"
    budgets = {t.target_id: timeout_of(t) for t in targets}
    batch_budget = whole_batch_budget(targets, budgets)
    began = time.monotonic()
    try:
        proc = start(invocation.argv, cwd=invocation.cwd, env=invocation.env)
    except OSError as exc:
        return ProcessOutcome(invocation, {}, None, 0.0, stopped=None, timed_out=None,
                              stdout_path=None, stderr_path=_write(err_path, f"cannot start runner: {exc}"))
    lock = threading.Lock()
    with out_path.open("wb") as out_sink, err_path.open("wb") as err_sink:
        assert proc.stdout is not None and proc.stderr is not None
        pumps = [threading.Thread(target=_pump, args=(proc.stdout, out_sink, lock, parser.feed_stdout), daemon=True),
                 threading.Thread(target=_pump, args=(proc.stderr, err_sink, lock, None), daemon=True)]
        for pump in pumps:
            pump.start()
        events = _EventTail(invocation.event_file)
        with ExitWaiter(proc) as waiter:
            timed_out, batch_timed_out, stopped = _watch(
                proc, parser, waiter, lock=lock, events=events, budgets=budgets, batch_budget=batch_budget,
                deadline=deadline, should_stop=should_stop, on_progress=on_progress, began=began)
        for pump in pumps:
            pump.join(timeout=10)
    with lock:
        for line in events.lines():
            parser.feed_event(line)
    killed = timed_out is not None or batch_timed_out or stopped is not None
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    with lock:
        finished = parser.finish(proc.returncode, stdout, stderr, killed)
        claimed = parser.claimed_targets()
        warnings = tuple(parser.warnings())
        died = parser.died() and not killed
        # The run's timeout kills the process in the middle of a target too: what it had run is kept the same way.
        # And fail-fast kills it in the middle of the target whose case failed: that failure is the run's answer.
        victim = (timed_out if timed_out else
                  parser.current_target() if stopped == "deadline" and not timed_out else
                  _failing_unfinished(parser, finished, budgets) if stopped == "fail_fast" else None)
        cases, running = parser.partial(victim) if victim else ([], None)
        importing = bool(timed_out) and parser.importing()
    results = {r.target_id: r for r in finished if r.target_id in budgets}
    return ProcessOutcome(invocation, results, proc.returncode, time.monotonic() - began,
                          timed_out=timed_out, batch_timed_out=batch_timed_out, stopped=stopped,
                          stdout_path=out_path, stderr_path=err_path,
                          claimed=frozenset(claimed) if claimed is not None else None, warnings=warnings,
                          died=died, partial=(tuple(cases), running), partial_of=victim,
                          import_timeout_s=max([*budgets.values(), STARTUP_FLOOR_S]) if importing else None)


def _failing_unfinished(parser: BatchParser, finished: Sequence[TargetResult], budgets: Mapping[str, float]
                        ) -> str | None:
    """The target of this process a case failed in that has no result of its own (its process was killed)."""
    done = {r.target_id for r in finished}
    failing = sorted((parser.failed_targets() & budgets.keys()) - done)
    return failing[0] if failing else None


def whole_batch_budget(targets: Sequence[Target], budgets: dict[str, float]) -> float:
    """How long a batch watched whole may run (a runner whose results come at the end, vitest's JSON): one hung
    file held a batch of N for the sum of their timeouts (124 s for a 30 s limit), before each was run again
    alone. One timeout plus what each target is expected to take (three times its recorded cost, at least
    :data:`BATCH_FLOOR_S`, at most its timeout), never more than that sum: past it, the batch is re-run target by
    target, each with its own timeout."""
    expected = sum(min(budgets[t.target_id], max(3 * t.estimated_cost, BATCH_FLOOR_S)) for t in targets)
    return min(sum(budgets.values()), max(budgets.values(), default=0.0) + expected)


def _watch(proc: subprocess.Popen[bytes], parser: BatchParser, waiter: ExitWaiter, *, lock: threading.Lock,
           events: _EventTail, budgets: dict[str, float], batch_budget: float, deadline: float,
           should_stop: Callable[[], StopReason | None],
           on_progress: Callable[[BatchParser], None], began: float,
           ) -> tuple[str | None, bool, StopReason | None]:
    """Poll until the process exits or must die: the target that timed out, batch overrun, stop."""
    watch = _Watch(since=began)
    # Start-up (interpreter, imports, collection) is nobody's test: it gets at least STARTUP_FLOOR_S.
    startup_budget = max([*budgets.values(), STARTUP_FLOOR_S])
    seen_progress: object = None
    while True:
        with lock:
            for line in events.lines():
                parser.feed_event(line)
            current = parser.current_target()
            importing = parser.importing()
            progress_key = (frozenset(parser.done_targets()), tuple(sorted(parser.case_progress().items())),
                            frozenset(parser.failed_targets()))
        if progress_key != seen_progress:
            seen_progress = progress_key
            on_progress(parser)
        if proc.poll() is not None:
            return None, False, None
        now = time.monotonic()
        reason = should_stop() or ("deadline" if now >= deadline else None)
        if reason is not None:
            kill_process_group(proc)
            return None, False, reason
        if parser.live:
            spent = watch.charge(current, now)
            # Importing a file (collection) is still start-up: heavy imports get its budget, and a hang is named.
            budget = budgets.get(current, startup_budget) if current is not None and not importing else startup_budget
            if spent > budget:
                kill_process_group(proc)
                return current or "", False, None
        elif now - began > batch_budget:
            kill_process_group(proc)
            return None, True, None
        waiter.nap(POLL_S)  # ends when the process does: its results are read at once, not a poll later


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
