"""Executing a run (§11.4): prepare, pack by cost onto N workers, run batches, re-run failures, merge.

Each worker thread owns one batch and runs it as few processes as the runner allows (one per project for
multi-target runners), so interpreter start-up is paid once per worker, not once per file. Failed targets
get one more attempt, always in a fresh process (packed again; only the failing cases where the runner can run
them alone): a re-run in the same interpreter passed on state the first attempt left; fail-then-pass is
``flaky``. Fail-fast stops everything at the first failing target and skips re-runs. Cancel and the run's global
timeout kill every process group.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.bytecode import prune_sourceless
from codeplane.core.logging import get_logger
from codeplane.core.procs import kill_process_group, start
from codeplane.core.storage import storage_error
from codeplane.testing.batch import ProcessOutcome, StopReason, run_process, whole_batch_budget
from codeplane.testing.costs import CostHistory
from codeplane.testing.discovery import Discovery
from codeplane.testing.model import (
    FAILING_OUTCOMES,
    Attempt,
    RunArtifact,
    RunState,
    Target,
    TargetOutcome,
    TargetResult,
)
from codeplane.testing.orphans import OWNER_ENV
from codeplane.testing.packing import pack
from codeplane.testing.pool import Pool
from codeplane.testing.runners import RUNNERS, BatchParser, Project
from codeplane.testing.runners.base import CoverageSetup, error_result, result_from_cases
from codeplane.testing.runs import RunRecord

log = get_logger(__name__)
_RETRYABLE: frozenset[str] = frozenset({"failed", "error"})


@dataclass(frozen=True)
class RunSettings:
    workers: int
    target_timeout_s: float
    run_timeout_s: float
    fail_fast: bool
    retry_failed: bool
    #: A coverage run: where the test processes write what they recorded (runners that can).
    coverage: CoverageSetup | None = None
    #: Where Python test processes cache bytecode their environment forbids writing beside the sources.
    bytecode_dir: Path | None = None
    #: Put in every started process's environment, to find them if this server dies (``orphans.py``).
    owner: str = ""


class RunExecutor:
    """Runs one :class:`RunRecord` to a terminal state. ``execute`` blocks; call it from a worker thread."""

    def __init__(self, repo_root: Path, discovery: Discovery, record: RunRecord, settings: RunSettings, *,
                 costs: CostHistory, store: ArtifactStore, workroot: Path,
                 before_finish: Callable[[RunRecord], None] | None = None) -> None:
        """``before_finish``: called once every process has ended, before the run's state is final (a coverage
        run's evidence is read then, while its work directory still exists); a failure there is logged."""
        self.root = repo_root
        self.discovery = discovery
        self.record = record
        self.settings = settings
        self.costs = costs
        self.store = store
        self.workroot = workroot
        self.before_finish = before_finish
        self._fail_fast_hit = threading.Event()
        self._deadline = 0.0
        self._process_seq = 0
        self._seq_lock = threading.Lock()
        self._add_lock = threading.Lock()
        #: What processes said about how they ran (``ProcessOutcome.warnings``), told in the run's final message.
        self._warnings: set[str] = set()
        #: The current phase runs more than one process at a time (runners then run serially inside).
        self._beside_others = False

    # -- stop conditions ---------------------------------------------------------------------------
    def _should_stop(self) -> StopReason | None:
        if self.record.cancel_requested.is_set():
            return "cancel"
        if self._fail_fast_hit.is_set():
            return "fail_fast"
        return "deadline" if time.monotonic() >= self._deadline else None

    def execute(self) -> None:
        self._deadline = time.monotonic() + self.settings.run_timeout_s
        targets = list(self.record.targets.values())
        try:
            self.record.set_running("preparing" if any(self._needs_prepare(targets)) else "running")
            runnable = self._prepare(targets)
            self.record.note("running")
            self._phase(runnable, attempt=1)
            retry = [self._narrowed(t) for t in runnable if self._retryable(t)]
            if retry and self.settings.retry_failed and not self.settings.fail_fast and self._should_stop() is None:
                self.record.note(f"re-running {len(retry)} failed target(s)")
                self._phase(retry, attempt=2)
            if self.before_finish is not None:
                try:
                    self.before_finish(self.record)
                except Exception:  # what it adds is advisory; the run's results stand
                    log.exception("after-run step failed", run_id=self.record.run_id)
            self._finish()
        except Exception as exc:
            log.exception("test run crashed", run_id=self.record.run_id)
            self.record.finish("failed", {}, {}, crash_message(exc))
        finally:
            shutil.rmtree(self.workroot, ignore_errors=True)
            if self.settings.bytecode_dir is not None:  # after the answer: the run is already finished
                prune_sourceless(self.settings.bytecode_dir)

    def _owned(self) -> dict[str, str]:
        return {OWNER_ENV: self.settings.owner} if self.settings.owner else {}

    def _narrowed(self, target: Target) -> Target:
        """``target`` as its re-run: only its failing cases when its runner can run them alone."""
        project = self.discovery.owners[target.target_id]
        cases = RUNNERS[project.runner].retry_cases(target, self.record.attempts(target.target_id)[0].result)
        return replace(target, cases=cases) if cases else target

    def _carried_over(self, target: Target, result: TargetResult) -> TargetResult:
        """A re-run of some cases (``_narrowed``) as the target's second attempt: those cases as they ran now,
        every other case as the first attempt left it (``cases_run`` says how many ran)."""
        first = self.record.attempts(target.target_id)[0].result
        prefix = f"{target.target_id}::"
        again = set(target.cases)
        runner = RUNNERS[self.discovery.owners[target.target_id].runner]
        kept = [c for c in first.cases if runner.retried_by(c.case_id.removeprefix(prefix)) not in again]
        merged = sorted([*kept, *result.cases], key=lambda c: c.case_id)
        return replace(result_from_cases(target.target_id, merged, exit_code=result.exit_code,
                                         duration_s=result.duration_s, unlisted_passed=first.unlisted_passed),
                       cases_run=len(result.cases))

    def _retryable(self, target: Target) -> bool:
        """Failed once and not re-run yet."""
        attempts = self.record.attempts(target.target_id)
        return len(attempts) == 1 and attempts[0].result.outcome in _RETRYABLE and not attempts[0].result.settled

    # -- prepare (build once per project) ----------------------------------------------------------
    def _needs_prepare(self, targets: Sequence[Target]) -> list[Project]:
        projects = {self.discovery.owners[t.target_id] for t in targets}
        return sorted((p for p in projects if self._prepare_argv(p) is not None), key=lambda p: (p.root, p.runner))

    def _prepare_argv(self, project: Project) -> tuple[str, ...] | None:
        toolchain = self.discovery.toolchains.get(project)
        return RUNNERS[project.runner].prepare(project, self.root, toolchain) if toolchain else None

    def _prepare(self, targets: Sequence[Target]) -> list[Target]:
        failed: set[Project] = set()
        for project in self._needs_prepare(targets):
            argv = self._prepare_argv(project)
            toolchain = self.discovery.toolchains[project]
            assert argv is not None and toolchain is not None
            self.record.note(f"building {project.runner} project {project.root}")
            ok, output = self._run_prepare(argv, project.dir(self.root), toolchain.environ(self._owned()))
            if not ok:
                failed.add(project)
                for target in targets:
                    if self.discovery.owners[target.target_id] == project:
                        self._add(target, 1, "prepare", error_result(target.target_id, output, exit_code=None), ())
        return [t for t in targets if self.discovery.owners[t.target_id] not in failed]

    def _run_prepare(self, argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[bool, str]:
        proc = start(argv, cwd=cwd, env=env)
        while True:
            try:
                out, err = proc.communicate(timeout=0.2)
                text = (out + err).decode("utf-8", errors="replace")
                return proc.returncode == 0, f"{' '.join(argv)} failed:\n{text}"
            except subprocess.TimeoutExpired:
                if self._should_stop() is not None:
                    kill_process_group(proc)
                    proc.communicate()
                    return False, "stopped while building"

    # -- one phase: pack, run workers, wait --------------------------------------------------------
    def _phase(self, targets: Sequence[Target], *, attempt: int, share: bool = True) -> None:
        if not targets:
            return
        medians = self.costs.medians((t.runner, t.target_id) for t in targets)

        def cost(target: Target) -> float:
            return medians.get((target.runner, target.target_id), target.estimated_cost)

        def group_of(target: Target) -> str | None:
            project = self.discovery.owners[target.target_id]
            return f"{project.runner}:{project.root}" if RUNNERS[project.runner].one_process_per_project else None

        pools = self._pools(targets, set(medians), attempt) if share else {}
        shared = {t.target_id for pool in pools.values() for t in pool.targets}
        batches = pack([t for t in targets if t.target_id not in shared], self.settings.workers, cost=cost,
                       group_of=group_of)
        if pools:  # every worker joins the pools
            batches += [[] for _ in range(min(self.settings.workers, len(targets)) - len(batches))]
        self._beside_others = len(batches) > 1
        threads = [threading.Thread(target=self._worker, args=(batch, attempt, pools, i), daemon=True,
                                    name=f"cpl-test-{self.record.run_id}-{i}") for i, batch in enumerate(batches)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        left = [t for pool in pools.values() for t in pool.targets
                if len(self.record.attempts(t.target_id)) < attempt]
        if left and self._should_stop() is None:  # every process that shared them failed to take them
            self._phase(left, attempt=attempt, share=False)

    def _pools(self, targets: Sequence[Target], weighed: set[tuple[str, str]], attempt: int) -> dict[Project, Pool]:
        """Targets without cost history, per project whose runner can share them: packing cannot weigh
        them, so the workers' processes take them one by one instead (``pool.py``)."""
        if attempt > 1 or self.settings.workers < 2:
            return {}
        unknown: dict[Project, list[Target]] = {}
        for target in targets:
            project = self.discovery.owners[target.target_id]
            runner = RUNNERS[project.runner]
            if (runner.shares_pools and runner.multi_target and not runner.one_process_per_project
                    and (target.runner, target.target_id) not in weighed):
                unknown.setdefault(project, []).append(target)
        pools = {}
        for index, (project, shared) in enumerate(sorted(unknown.items(), key=lambda kv: (kv[0].root, kv[0].runner))):
            if len(shared) > 1:
                shared.sort(key=lambda t: (-t.estimated_cost, t.target_id))
                pools[project] = Pool.create(self.workroot / f"pool-a{attempt}-{index}", self.root, shared)
        return pools

    def _worker(self, batch: Sequence[Target], attempt: int, pools: dict[Project, Pool], index: int = 0) -> None:
        groups: dict[Project, list[Target]] = {}
        for target in batch:
            groups.setdefault(self.discovery.owners[target.target_id], []).append(target)
        for project in pools:
            groups.setdefault(project, [])
        for project, group in groups.items():
            try:
                self._run_group(project, group, attempt, pools.get(project), index)
            except Exception as exc:
                log.exception("test batch crashed", project=project.root, runner=project.runner)
                for target in group:
                    self._add(target, attempt, "crash", error_result(target.target_id, crash_message(exc),
                                                                     exit_code=None), ())

    def _run_group(self, project: Project, group: list[Target], attempt: int, pool: Pool | None,
                   index: int = 0) -> None:
        runner = RUNNERS[project.runner]
        toolchain = self.discovery.toolchains[project]
        assert toolchain is not None
        singles = not runner.multi_target
        pending = list(group)
        shared = pool.unclaimed() if pool is not None else []
        while (pending or shared) and self._should_stop() is None:
            # Every process collects the shared files, in argv order; the odd workers' in reverse: on a cold
            # bytecode cache each then compiles its half and reads the other's, instead of both compiling all.
            chunk = [*(pending[:1] if singles else pending), *(shared[::-1] if index % 2 else shared)]
            with self._seq_lock:
                self._process_seq += 1
                batch_id = f"a{attempt}-p{self._process_seq:03d}"
            workdir = self.workroot / batch_id
            workdir.mkdir(parents=True, exist_ok=True)
            invocation = runner.invocation(project, self.root, toolchain, chunk, workdir, rerun=attempt > 1,
                                           coverage=self.settings.coverage)
            if self._beside_others:
                invocation = runner.serial(project, self.root, invocation)
            if self.settings.bytecode_dir is not None:
                invocation = runner.cache_bytecode(invocation, self.settings.bytecode_dir)
            invocation = replace(invocation, env={**invocation.env, **self._owned()})
            if shared and pool is not None:
                invocation = runner.share_pool(invocation, pool.directory)
            parser = runner.parser(project, self.root, chunk, invocation)
            live = [t.target_id for t in chunk]
            self.record.enter(live)
            try:
                outcome = run_process(invocation, parser, chunk, workdir, timeout_of=self._timeout_of,
                                      deadline=self._deadline, should_stop=self._should_stop,
                                      on_progress=self._progress_for(chunk, attempt))
                artifacts = self._store(outcome)
                with self._add_lock:
                    self._warnings.update(outcome.warnings)
                pending = [t for t in pending if t not in chunk]
                # Shared targets are this process's to report only if it took them (or shared nothing).
                mine = [t for t in chunk
                        if t not in shared or outcome.claimed is None or t.target_id in outcome.claimed]
                requeue = self._settle(mine, outcome, attempt, batch_id, artifacts)
            finally:  # after the results: a settled target never reads "queued" in between
                self.record.leave(live)
            if requeue:
                singles = singles or outcome.batch_timed_out or outcome.died
                pending = requeue + pending
            if outcome.batch_timed_out and len(chunk) > 1:
                # Its time is in no target's attempt (each runs again alone): the run's answer says where it went.
                budget = whole_batch_budget(chunk, {t.target_id: self._timeout_of(t) for t in chunk})
                with self._add_lock:
                    self._warnings.add(f"a {project.runner} process of {len(chunk)} files ran past its budget of "
                                       f"{budget:g}s with no result and was killed; each file then ran alone")
            took_some = outcome.claimed is None or bool(outcome.claimed) or not shared
            shared = pool.unclaimed() if pool is not None and outcome.claimed is not None and took_some else []

    def _settle(self, chunk: Sequence[Target], outcome: ProcessOutcome, attempt: int, batch_id: str,
                artifacts: tuple[RunArtifact, ...]) -> list[Target]:
        """Record what ``outcome`` says about each target; return the targets that need another process."""
        requeue: list[Target] = []
        for target in chunk:
            result = outcome.results.get(target.target_id)
            budget = self._timeout_of(target)
            if result is not None:
                self._add(target, attempt, batch_id, result, artifacts)
            elif outcome.timed_out is not None and outcome.timed_out in (target.target_id, ""):
                why = f"exceeded the per-target timeout of {budget:g}s" if outcome.timed_out else (
                    f"the runner did not start a test within {budget:g}s")
                if outcome.import_timeout_s is not None:  # the other files of its process go again without it
                    why = f"pytest did not finish importing this file (collection) within {outcome.import_timeout_s:g}s"
                self._add(target, attempt, batch_id, _timeout(target, why, outcome), artifacts)
            elif (outcome.batch_timed_out or outcome.died) and len(chunk) > 1:
                requeue.append(target)  # not at fault: another target's test hung or killed the process
            elif outcome.batch_timed_out:
                self._add(target, attempt, batch_id, _timeout(target, f"exceeded the per-target timeout of "
                                                                      f"{budget:g}s", outcome), artifacts)
            elif outcome.stopped == "deadline":
                self._add(target, attempt, batch_id, _timeout(
                    target, f"the run's timeout of {self.settings.run_timeout_s:g}s was reached", outcome), artifacts)
            elif outcome.stopped == "fail_fast" and outcome.partial_of == target.target_id:
                self._add(target, attempt, batch_id, _stopped_failing(target, outcome), artifacts)
            elif outcome.stopped is not None:
                continue
            elif outcome.timed_out is not None:
                requeue.append(target)
            else:
                reason = (outcome.stderr_path.read_text(encoding="utf-8", errors="replace")
                          if outcome.stderr_path and outcome.stderr_path.is_file() else "")
                self._add(target, attempt, batch_id, error_result(
                    target.target_id, f"the runner reported no result for this target\n{reason}",
                    exit_code=outcome.exit_code), artifacts)
        return requeue

    def _timeout_of(self, target: Target) -> float:
        project = self.discovery.owners[target.target_id]
        configured = project.options.get("timeout_sec")
        return float(configured) if isinstance(configured, int | float) else self.settings.target_timeout_s

    def _progress_for(self, chunk: Sequence[Target], attempt: int) -> Callable[[BatchParser], None]:
        ids = {t.target_id for t in chunk}

        def report(parser: BatchParser) -> None:
            if self.settings.fail_fast and parser.failed_targets() & ids:
                self._fail_fast_hit.set()
            if attempt > 1:
                return
            fractions = {t: done / total for t, (done, total) in parser.case_progress().items() if total and t in ids}
            fractions.update({t: 1.0 for t in parser.done_targets() if t in ids})
            self.record.progress(fractions)
        return report

    def _add(self, target: Target, attempt: int, batch_id: str, result: TargetResult,
             artifacts: tuple[RunArtifact, ...]) -> None:
        """Record attempt ``attempt`` of ``target`` unless one was recorded (processes that could not share
        a pool all report its targets: the first report counts)."""
        narrowed = attempt > 1 and target.cases != self.record.targets[target.target_id].cases
        if narrowed and result.outcome in ("passed", "failed"):
            result = self._carried_over(target, result)
        with self._add_lock:
            if len(self.record.attempts(target.target_id)) >= attempt:
                return
            self.record.add_attempt(Attempt(attempt, batch_id, result, artifacts))
        if self.settings.fail_fast and result.outcome in FAILING_OUTCOMES:
            self._fail_fast_hit.set()

    def _store(self, outcome: ProcessOutcome) -> tuple[RunArtifact, ...]:
        files = [("stdout", outcome.stdout_path), ("stderr", outcome.stderr_path)]
        if outcome.invocation.event_file is not None:
            files.append(("events", outcome.invocation.event_file))
        files += [("report", p) for p in outcome.invocation.report_files]
        stored = []
        for kind, path in files:
            if path is None or not path.is_file() or (kind in ("stdout", "stderr") and path.stat().st_size == 0):
                continue
            ref = self.store.put_file(path)
            rel = (self.store.directory / ref.artifact_id).relative_to(self.root).as_posix()
            stored.append(RunArtifact(kind=kind, artifact_id=ref.artifact_id, path=rel, sha256=ref.sha256,
                                      bytes=ref.size))
        self.record.add_artifacts(stored)
        return tuple(stored)

    # -- merge -------------------------------------------------------------------------------------
    def _finish(self) -> None:
        outcomes: dict[str, TargetOutcome] = {}
        flaky: dict[str, tuple[str, ...]] = {}
        durations: dict[tuple[str, str], float] = {}
        stop = self._should_stop()
        for target_id, target in self.record.targets.items():
            attempts = self.record.attempts(target_id)
            if not attempts:
                outcomes[target_id] = "cancelled" if stop == "cancel" else "not_run"
                continue
            first, last = attempts[0].result, attempts[-1].result
            # A file pytest ignores (collect_ignore) or whose tests all skip costs ~0 s and says so; without
            # a sample its default estimate would weigh in every packing (attrs: 1 s, a quarter of a worker).
            # A run of some of a target's cases says nothing about what the whole target costs.
            if ((first.duration_s > 0 or first.outcome == "skipped") and first.outcome != "timeout"
                    and not target.cases):
                durations[(target.runner, target_id)] = first.duration_s
            outcomes[target_id] = last.outcome
            if len(attempts) > 1 and first.outcome in _RETRYABLE:
                # A case that failed and then passed is flaky even where others keep failing (it was lost there).
                passed_now = {c.case_id for a in attempts[1:] for c in a.result.cases if c.outcome == "passed"}
                cases = tuple(sorted(c.case_id for c in first.cases if c.failing and c.case_id in passed_now))
                if last.outcome in ("passed", "skipped"):
                    outcomes[target_id] = "flaky"
                    flaky[target_id] = cases
                elif cases:
                    flaky[target_id] = cases
        self.costs.record(durations)
        state: RunState
        if stop == "cancel":
            state, message = "cancelled", self.record.cancel_reason
        elif stop == "deadline":
            state, message = "timed_out", f"the run's timeout of {self.settings.run_timeout_s:g}s was reached"
        elif any(o in FAILING_OUTCOMES for o in outcomes.values()):
            state, message = "failed", "stopped at the first failure (fail_fast)" if stop == "fail_fast" else ""
        else:
            state, message = "passed", ""
        with self._add_lock:
            told = sorted(self._warnings)
        self.record.finish(state, outcomes, flaky, "; ".join(m for m in (message, *told) if m))


def _timeout(target: Target, why: str, outcome: ProcessOutcome) -> TargetResult:
    """The target's timeout, with what ran before it: the cases that had finished (counted and listed like any
    others) and the one that was running, named (a 300-case file reported nothing at all)."""
    cases, running = outcome.partial if outcome.partial_of == target.target_id else ((), None)
    if running or cases:
        why += f" while running {running}" if running else ""
        why += f"; {len(cases)} cases had finished" if cases else ""
    if "per-target timeout" in why:
        runner = RUNNERS.get(target.runner)
        # Only runners that run a case alone can take the advice to run fewer (cargo refuses ``file::test``: 7005).
        own = f"tests.runners.{target.runner}.timeout_sec" if runner is not None else "its tests.custom timeout_sec"
        why += (f" (raise tests.target_timeout_sec, or run fewer of its cases: {target.target_id}::<case>)"
                if runner is not None and runner.runs_cases else f" (raise tests.target_timeout_sec or {own})")
    return TargetResult(target_id=target.target_id, outcome="timeout", exit_code=outcome.exit_code, message=why,
                        duration_s=round(outcome.wall_s, 4), cases=tuple(cases))


def _stopped_failing(target: Target, outcome: ProcessOutcome) -> TargetResult:
    """The target fail-fast stopped at its failing case: the cases that had finished, the failure among them
    (it was recorded as not run, and a run whose only failure it was answered ``passed``; QA s55)."""
    cases, _running = outcome.partial
    result = result_from_cases(target.target_id, cases, exit_code=outcome.exit_code, duration_s=outcome.wall_s,
                               message="stopped at its first failure (fail_fast); later cases did not run")
    if result.outcome != "failed":  # the failure the stream saw did not reach the cases: never a pass
        return error_result(target.target_id, "a case failed and the run stopped (fail_fast) before its report "
                            "was complete", exit_code=outcome.exit_code, duration_s=outcome.wall_s, cases=cases)
    return result


def crash_message(exc: BaseException) -> str:
    """Why a run or batch stopped: a storage failure by its catalog entry and what to do, else the exception."""
    mapped = storage_error(exc, doing="the test run")
    if mapped is not None:
        return f"{mapped.error.name} ({mapped.code}): {mapped.message}"
    return f"internal error: {type(exc).__name__}: {exc}"
