"""Test tools (§23.4, §11.9.6, D9): discover, inspect impact, run, poll, cancel.

Thin adapters over :class:`codeplane.testing.TestingService`. ``run_test_targets`` starts a run in the
background and waits at most ``wait_sec`` (sending progress notifications when the client gave a progress
token); an unfinished run comes back with its id, ``state``, ``progress_percentage`` and
``last_progress_at`` for ``get_test_run``. Logs and reports are artifacts, referenced by id and path.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import Field, PrivateAttr

from codeplane.core.calls import FailureReport
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.git.diffs import DiffLimits
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.paging import CURSOR_STAND_IN, items_that_fit
from codeplane.server.tools.tests_models import ImpactModel, MissingRunnerModel, TargetModel
from codeplane.server.tools.tests_render import render_discover, render_inspect
from codeplane.server.tools.tests_run_models import CaseModel, TestRunResult, render_run
from codeplane.server.tools.tests_run_render import render_test_run
from codeplane.testing.impact import parse_changes
from codeplane.testing.impact_models import TestMatch
from codeplane.testing.model import Target
from codeplane.testing.paging import page, query_key
from codeplane.testing.run_store import RunHandle

if TYPE_CHECKING:
    from codeplane.git import GitService  # at boot, git's service is deferred to its first use
    from codeplane.testing import TestingService

_MAX_WAIT = 300.0
#: Longest one wait blocks a thread: a cancelled call's abandoned wait ends within it.
_WAKE_S = 1.0
#: Waiting calls block their own threads, never the tokens other tools' thread work needs.
_WAITERS = anyio.CapacityLimiter(64)


_AFFECTED = ("Changed files, each 'path' or 'path:12-30,41' (changed lines as the file is now; without lines, "
             "the lines changed against git HEAD). Python changes select test cases through the symbol graph, "
             "the rest whole files through imports (§11.9).")


class DiscoverParams(ToolParams):
    paths: list[str] | None = Field(default=None, max_length=200,
                                    description="Only targets under these repo-relative paths.")
    affected_by: list[str] | None = Field(default=None, max_length=2000, description=_AFFECTED)
    cursor: str | None = None
    limit: int = Field(default=200, ge=1, le=1000)


class DiscoverResult(ToolResult):
    targets: list[TargetModel]
    #: Targets matching the filters (all pages).
    total: int
    #: Targets in the repository before filtering.
    discovered_total: int
    runners: list[str]
    missing_runners: list[MissingRunnerModel]
    impact: ImpactModel | None = None
    agentic_hint: str | None = None
    next_cursor: str | None = None


class InspectParams(ToolParams):
    changed_files: list[str] = Field(min_length=1, max_length=2000, description=_AFFECTED)
    cursor: str | None = None
    limit: int = Field(default=100, ge=1, le=500, description="Selected test files per page.")


class RunParams(ToolParams):
    targets: list[str] | None = Field(default=None, max_length=5000,
                                      description="Target ids or directories (default: every target).")
    affected_by: list[str] | None = Field(default=None, max_length=2000, description=(
        "Run the tests affected by these changed files instead ('path' or 'path:12-30'; see "
        "discover_test_targets): only the selected cases where the symbol graph picks them."))
    fail_fast: bool | None = Field(default=None, description="Stop at the first failing target (no re-runs).")
    timeout_sec: float | None = Field(default=None, gt=0, le=24 * 3600, description="Global timeout of the run.")
    wait_sec: float = Field(default=25.0, ge=0, le=_MAX_WAIT,
                            description="Longest to wait for the run before returning its id to poll.")
    coverage: bool = Field(default=False, description=(
        "pytest only: record which definitions each test runs, so later affected_by selections follow what "
        "really ran (and an affected_by run says how much changed code ran). Slower."))


class GetRunParams(ToolParams):
    run_id: str
    wait_sec: float = Field(default=0.0, ge=0, le=_MAX_WAIT, description="Wait up to this long for it to finish.")
    include: Literal["summary", "targets", "cases"] = Field(
        default="summary", description=("summary: failing targets and cases only; targets: every target with "
                                        "its attempts; cases: every case of the final attempts (paged)."))
    cursor: str | None = None
    limit: int = Field(default=100, ge=1, le=500)


class CancelRunParams(ToolParams):
    run_id: str
    wait_sec: float = Field(default=5.0, ge=0, le=60, description="Wait up to this long for processes to die.")


class InspectResult(ToolResult):
    #: Its matches are one page of the selected test files; the counts are of all.
    impact: ImpactModel
    next_cursor: str | None = None


class _TestRunAnswer(TestRunResult):
    """A run view that reports a failed finish to the task observer exactly once per run."""

    _report: FailureReport | None = PrivateAttr(default=None)

    def test_run_report(self) -> FailureReport | None:
        return self._report


def _check_changes(services: Services, items: Sequence[str]) -> None:
    """5004 for a changed path that is neither in the work tree nor in git's HEAD (a deleted file is), 1003 for
    lines past a file's end: a mistyped path selected nothing and answered as a complete, green selection."""
    paths, ranges = parse_changes(items)
    missing: list[str] = []
    for path in dict.fromkeys(paths):
        disk = services.root / path
        if not disk.exists():
            missing.append(path)
            continue
        if disk.is_file() and ranges.get(path):
            count = _line_count(disk)
            last = max(end for _, end in ranges[path])
            if last > count:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{path} has {count} lines; line {last} was "
                                     "given as changed", details={"path": path, "line_count": count, "line": last})
    git = getattr(services, "git", None)
    if not missing or git is None:
        return
    try:
        report = git.diff(base="HEAD", paths=missing, limits=DiffLimits(max_files=len(missing) + 1, max_lines=1))
    except CodePlaneError:
        return
    deleted = {f.path for f in report.files if f.status == "deleted"}
    # A moved file's old path (``write_source`` names both in tests_affected_by) is gone from the work tree but
    # in HEAD: a change as much as a deletion.
    deleted |= {f.old_path for f in report.files if f.old_path}
    unknown = [p for p in missing if p not in deleted and not _in_head(git, p)]
    if unknown:
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{unknown[0]} is not in the work tree, and git's HEAD has no "
                             "such file that was deleted", details={"paths": unknown[:20]})


def _in_head(git: GitService, path: str) -> bool:
    try:
        git.show("HEAD", path, limits=DiffLimits(max_files=1, max_lines=1))
    except CodePlaneError:
        return False
    return True


def _line_count(path: Path) -> int:
    data = path.read_bytes()
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


def _changed_lines(services: Services, items: Sequence[str] | None) -> dict[str, list[tuple[int, int]]]:
    """For changed files given without lines, the lines that differ from git HEAD: added and replacing lines, and
    the lines around a pure removal (a replaced line is its new line alone, not the line above it too). A hunk
    whose lines were cut off counts whole; a file git cannot say (untracked, binary,
    too many hunks, no repository) gets none: it is selected at module level."""
    _check_changes(services, items or ())
    wanted = sorted({i.strip().removeprefix("./") for i in items or () if ":" not in i})
    git = getattr(services, "git", None)
    if not wanted or git is None:
        return {}
    try:
        report = git.diff(base="HEAD", paths=wanted, limits=DiffLimits(
            max_files=len(wanted) + 1, max_hunks_per_file=2000, max_lines=50_000, context_lines=0))
    except CodePlaneError:
        return {}
    ranges: dict[str, list[tuple[int, int]]] = {}
    for changed in report.files:
        if changed.binary or changed.hunks_omitted or changed.status not in ("modified", "renamed", "copied"):
            continue
        spans = ranges.setdefault(changed.path, [])
        for hunk in changed.hunks:
            if hunk.lines_omitted:
                spans.append((hunk.new_start, hunk.new_start + max(hunk.new_lines, 1)))
                continue
            previous = hunk.new_start - 1
            removed = False  # a run of ``-`` lines not (yet) replaced by ``+`` lines
            for line in hunk.lines:
                if line.origin == "-":
                    removed = True
                    continue
                if line.new_lineno is None:
                    continue
                if removed and line.origin != "+":  # a pure removal: the lines around where it was
                    spans.append((max(1, previous), previous + 1))
                removed = False
                previous = line.new_lineno
                if line.origin == "+":
                    spans.append((previous, previous))
            if removed:
                spans.append((max(1, previous), previous + 1))
    return ranges


def _service(services: Services) -> TestingService:
    testing: TestingService | None = getattr(services, "testing", None)
    if testing is None:
        raise CodePlaneError(ErrorCode.INTERNAL_ERROR, "the tests subsystem is not wired in")
    return testing


async def _await(ctx: ToolContext, record: RunHandle, wait_sec: float) -> None:
    """Wait for ``record`` up to ``wait_sec``, sending a progress notification whenever it moves."""
    deadline = anyio.current_time() + min(wait_sec, _MAX_WAIT)
    seen = -1
    sent = -1.0
    while True:
        version = record.version
        # Read before the snapshot: a run that finishes after it is seen on the next turn, so its last
        # notification (100) is always sent; checked after the snapshot, the call could return having sent 99.
        finished = record.finished
        if version != seen:
            seen = version
            snapshot = record.snapshot()
            # MCP progress values must increase from one notification to the next.
            if snapshot.progress_percentage > sent:
                sent = snapshot.progress_percentage
                done = sum(1 for t in snapshot.targets if t.attempts)
                await ctx.progress(sent, 100.0, f"{snapshot.state}: {done}/{len(snapshot.targets)} targets "
                                                f"{snapshot.message}".strip())
        left = deadline - anyio.current_time()
        if finished or left <= 0:
            return
        # Woken by the record itself: the answer goes out as soon as the run ends, not a poll interval later.
        await anyio.to_thread.run_sync(record.wait, version, min(left, _WAKE_S), abandon_on_cancel=True,
                                       limiter=_WAITERS)


def _answer(record: RunHandle, include: str = "summary", cursor: str | None = None, limit: int = 100,
            ) -> _TestRunAnswer:
    snapshot = record.snapshot()
    result = _TestRunAnswer(**render_run(snapshot, include=include, cursor=cursor, limit=limit))
    listed = "cases" if include == "cases" else "targets"
    items = list(getattr(result, listed))
    # Measured with one failure shown: the failures then take what room the page leaves.
    fit = items_that_fit(len(items), lambda k: render_test_run(result.model_copy(
        update={listed: items[:k], "next_cursor": CURSOR_STAND_IN, "failures": result.failures[:1]})))
    if fit < len(items):
        # A shorter page of the listed targets or cases, so that the text fits; the cursor resumes after it.
        result = _TestRunAnswer(**render_run(snapshot, include=include, cursor=cursor, limit=fit))
    failures = result.failures
    shown = items_that_fit(len(failures), lambda k: render_test_run(
        result.model_copy(update={"failures": failures[:k]})))
    if shown < len(failures):
        # The text names the rest by count and the call that pages every case with its detail.
        result = result.model_copy(update={"failures": failures[:shown]})
    result._report = record.take_failure_report() if record.finished else None
    return result


async def _discover(ctx: ToolContext, params: DiscoverParams) -> DiscoverResult:
    service = _service(ctx.services)
    absent = [p for p in params.paths or () if not (ctx.services.root / resolve_in_repo(ctx.services.root, p).rel
                                                    ).exists()]
    if absent:  # "0 targets" read as "no tests there", as list_files and lint_check say 5004
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{absent[0]!r} does not exist in the repository",
                             details={"paths": absent[:20]})
    view = await anyio.to_thread.run_sync(lambda: service.discover(
        params.paths, params.affected_by, ranges=_changed_lines(ctx.services, params.affected_by)))
    key = query_key("discover", params.paths, params.affected_by)
    chunk, next_cursor = page(view.targets, key=key, cursor=params.cursor, limit=params.limit)

    def answer(targets: Sequence[Target], cursor: str | None) -> DiscoverResult:
        # The impact lists the matches of these targets only: all of them, beside a page of targets, made every
        # page of a change reaching 600 test files 26 KB.
        impact = None
        if view.impact is not None:
            named = {name for t in targets for name in (t.path, t.target_id) if name}
            impact = ImpactModel.from_result(view.impact, shown=[m for m in view.impact.matches
                                                                 if m.test_file in named])
        return DiscoverResult(
            targets=[TargetModel.from_target(t) for t in targets], total=len(view.targets),
            discovered_total=view.total_targets, runners=list(view.runners),
            missing_runners=[MissingRunnerModel(runner=m.runner, project=m.project, hint=m.hint)
                             for m in view.missing],
            impact=impact, agentic_hint=impact.agentic_hint if impact else None, next_cursor=cursor)

    fit = items_that_fit(len(chunk), lambda k: render_discover(answer(chunk[:k], CURSOR_STAND_IN)))
    if fit < len(chunk):
        # Fewer targets, so that the text fits; the cursor resumes after the last one shown.
        chunk, next_cursor = page(view.targets, key=key, cursor=params.cursor, limit=fit)
    return answer(chunk, next_cursor)


async def _inspect(ctx: ToolContext, params: InspectParams) -> InspectResult:
    service = _service(ctx.services)
    result = await anyio.to_thread.run_sync(lambda: service.inspect_affected(
        params.changed_files, ranges=_changed_lines(ctx.services, params.changed_files)))
    key = query_key("inspect_affected_tests", params.changed_files)
    chunk, next_cursor = page(result.matches, key=key, cursor=params.cursor, limit=params.limit)

    def answer(matches: Sequence[TestMatch], cursor: str | None) -> InspectResult:
        return InspectResult(impact=ImpactModel.from_result(result, detailed=True, shown=matches), next_cursor=cursor)

    fit = items_that_fit(len(chunk), lambda k: render_inspect(answer(chunk[:k], CURSOR_STAND_IN)))
    if fit < len(chunk):
        # Fewer test files, so that the text fits; the cursor resumes after the last one shown.
        chunk, next_cursor = page(result.matches, key=key, cursor=params.cursor, limit=fit)
    return answer(chunk, next_cursor)


async def _run(ctx: ToolContext, params: RunParams) -> _TestRunAnswer:
    service = _service(ctx.services)
    if params.targets and params.affected_by is not None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "give targets or affected_by, not both",
                             details={"fields": ["targets", "affected_by"]})
    record = await anyio.to_thread.run_sync(lambda: service.start_run(
        params.targets, affected_by=params.affected_by, fail_fast=params.fail_fast, timeout_sec=params.timeout_sec,
        coverage=params.coverage, ranges=_changed_lines(ctx.services, params.affected_by)))
    await _await(ctx, record, params.wait_sec)
    return _answer(record)


async def _get(ctx: ToolContext, params: GetRunParams) -> _TestRunAnswer:
    record = _service(ctx.services).get_run(params.run_id)
    await _await(ctx, record, params.wait_sec)
    return _answer(record, params.include, params.cursor, params.limit)


async def _cancel(ctx: ToolContext, params: CancelRunParams) -> _TestRunAnswer:
    record = _service(ctx.services).cancel(params.run_id)
    await _await(ctx, record, params.wait_sec)
    return _answer(record)


def _run_detail(params: Any) -> str:
    if params.affected_by is not None:
        return f"affected_by={len(params.affected_by)}"
    return f"targets={len(params.targets) if params.targets else 'all'}"


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="discover_test_targets", category="tests", kind="read", handler=_discover,
            params=DiscoverParams, result=DiscoverResult, render=render_discover,
            summary=("List the repository's test targets (a test file, a Go package, a Rust test binary) with "
                     "runner, command, working directory and estimated cost. Runners come from config, marker "
                     "files (pytest.ini, go.mod, Cargo.toml, package.json, ...) or language defaults; runners "
                     "missing from PATH are listed. With affected_by, only the tests reaching the changed code "
                     "(the cases, for Python changes with changed lines)."),
            when_to_use=("before run_test_targets, to pick target ids",
                         "after editing files: affected_by=[changed files] gives the tests to run and a confidence"),
            when_not_to_use=("to run tests (use run_test_targets)",
                             "to see why a test was selected (use inspect_affected_tests)"),
            examples=(ToolExample("every target", {}), ToolExample("under tests/unit", {"paths": ["tests/unit"]}),
                      ToolExample("affected by a change", {"affected_by": ["src/pkg/models.py"]})),
        ),
        ToolSpec(
            name="inspect_affected_tests", category="tests", kind="read", handler=_inspect,
            params=InspectParams, result=InspectResult, render=render_inspect,
            summary=("Explain impact selection for changed files: the changed definitions, each selected test case "
                     "with its chain to them (high: resolved references; low: a use by name), files selected by "
                     "imports (high: exact import chain; low: package match) with every fallback's reason, files "
                     "that could not be resolved, and source modules no test imports (max 20)."),
            when_to_use=("discover_test_targets(affected_by=...) returned partial confidence or low matches",
                         "checking whether a change is covered by any test"),
            when_not_to_use=("to list or run tests",),
            examples=(ToolExample("one changed module", {"changed_files": ["src/pkg/models.py"]}),
                      ToolExample("changed lines", {"changed_files": ["src/pkg/models.py:40-52"]})),
        ),
        ToolSpec(
            name="run_test_targets", category="tests", kind="test", handler=_run,
            params=RunParams, result=TestRunResult, render=render_test_run,
            summary=("Run test targets in parallel (cost-balanced batches, one runner process per worker), "
                     "each with a timeout; failed targets are re-run once and fail-then-pass is reported as "
                     "flaky. Returns per-case results parsed from the runner's machine-readable output, a "
                     "failure fingerprint, and artifact ids of logs and reports. Waits at most wait_sec, then "
                     "returns the run id with state and progress_percentage to poll with get_test_run. "
                     "Counts against the task's max_test_runs."),
            when_to_use=("verifying a change (prefer affected_by=[changed files] first, then the full suite)",
                         "re-running specific failing targets by id"),
            when_not_to_use=("polling a run you already started (use get_test_run)",
                             "listing targets (use discover_test_targets)"),
            examples=(ToolExample("whole suite", {}),
                      ToolExample("affected tests, fail fast", {"affected_by": ["src/pkg/models.py"],
                                                                "fail_fast": True}),
                      ToolExample("two targets, return at once", {"targets": ["tests/test_a.py", "pkg/foo"],
                                                                  "wait_sec": 0})),
            read_only=False, idempotent=False, detail_for=_run_detail,
        ),
        ToolSpec(
            name="get_test_run", category="tests", kind="read", handler=_get,
            params=GetRunParams, result=TestRunResult, render=render_test_run,
            summary=("The state of a test run: state (queued, running, passed, failed, cancelled, timed_out), "
                     "progress_percentage, last_progress_at, per-target outcomes and attempts, failures with "
                     "bounded tracebacks, flaky cases, fingerprint, artifacts. Waits up to wait_sec for it to end; "
                     "include='cases' pages through every case."),
            when_to_use=("run_test_targets returned before the run finished", "paging through all cases of a run"),
            when_not_to_use=("starting a run (use run_test_targets)",),
            examples=(ToolExample("wait up to 60 s", {"run_id": "tr_18f2c3a4b5c", "wait_sec": 60}),),
        ),
        ToolSpec(
            # meta: stopping work must stay possible even when the task's budgets refuse everything else.
            name="cancel_test_run", category="tests", kind="meta", handler=_cancel,
            params=CancelRunParams, result=TestRunResult, render=render_test_run,
            summary=("Cancel a queued or running test run: every runner process group is killed and the run ends "
                     "in state 'cancelled' (not 'failed'); targets that never finished are 'cancelled'."),
            when_to_use=("a run is no longer needed or hangs",),
            when_not_to_use=("a run that already finished (it stays as it ended)",),
            examples=(ToolExample("cancel", {"run_id": "tr_18f2c3a4b5c"}),),
            read_only=False, idempotent=True,
        ),
    ]


__all__ = ["CaseModel", "tools"]
