"""Test tools (§23.4, §11.9.6, D9): discover, inspect impact, run, poll, cancel.

Thin adapters over :class:`codeplane.testing.TestingService`. ``run_test_targets`` starts a run in the
background and waits at most ``wait_sec`` (sending progress notifications when the client gave a progress
token); an unfinished run comes back with its id, ``state``, ``progress_percentage`` and
``last_progress_at`` for ``get_test_run``. Logs and reports are artifacts, referenced by id and path.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import anyio
from pydantic import Field, PrivateAttr

from codeplane.core.calls import FailureReport
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.paging import CURSOR_STAND_IN, items_that_fit
from codeplane.server.tools.tests_changes import changes
from codeplane.server.tools.tests_models import ImpactModel, MissingRunnerModel, TargetModel
from codeplane.server.tools.tests_render import render_discover, render_inspect
from codeplane.server.tools.tests_run_models import CaseModel, TestRunResult, failures_cursor, render_run
from codeplane.server.tools.tests_run_render import render_test_run
from codeplane.testing.impact import ImpactResult
from codeplane.testing.impact_models import TestMatch
from codeplane.testing.model import Target
from codeplane.testing.paging import page, query_key
from codeplane.testing.run_store import RunHandle

if TYPE_CHECKING:
    from codeplane.testing import TestingService

class _RecentSelections:
    """The last few ``inspect_affected_tests`` selections, for their later pages (bounded in number and age)."""

    def __init__(self, size: int = 8, ttl_s: float = 600.0) -> None:
        self._items: OrderedDict[tuple[Any, ...], tuple[float, ImpactResult]] = OrderedDict()
        self._size, self._ttl = size, ttl_s

    def get(self, key: tuple[Any, ...]) -> ImpactResult | None:
        found = self._items.get(key)
        if found is None or time.monotonic() - found[0] > self._ttl:
            return None
        self._items.move_to_end(key)
        return found[1]

    def put(self, key: tuple[Any, ...], result: ImpactResult) -> None:
        self._items[key] = (time.monotonic(), result)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)


_SELECTIONS = _RecentSelections()
_MAX_WAIT = 300.0
#: Longest one wait blocks a thread: a cancelled call's abandoned wait ends within it.
_WAKE_S = 1.0
#: Waiting calls block their own threads, never the tokens other tools' thread work needs.
_WAITERS = anyio.CapacityLimiter(64)


_AFFECTED = ("Changed files, each 'path' or 'path:12-30,41' (changed lines as the file is now; without lines, "
             "the lines changed against git HEAD, or changed_since). Python changes select test cases through the "
             "symbol graph, the rest whole files through imports (§11.9).")
_SINCE = ("A revision (commit, branch, tag, HEAD~1): select by what changed from it to the work tree, as "
          "'git diff <rev>' (to review a commit or a branch); files in affected_by take their lines from it.")


class DiscoverParams(ToolParams):
    paths: list[str] | None = Field(default=None, max_length=200,
                                    description="Only targets under these repo-relative paths.")
    affected_by: list[str] | None = Field(default=None, max_length=2000, description=_AFFECTED)
    changed_since: str | None = Field(default=None, min_length=1, max_length=256, description=_SINCE)
    cursor: Cursor = None
    limit: int = Field(default=200, ge=1, le=1000)


class DiscoverResult(ToolResult):
    #: The repository's root, for the text alone: the commands name a program inside it relative to their cwd
    #: (the record keeps the absolute path).
    _root: str = PrivateAttr(default="")

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
    changed_files: list[str] | None = Field(default=None, min_length=1, max_length=2000, description=_AFFECTED)
    changed_since: str | None = Field(default=None, min_length=1, max_length=256, description=_SINCE)
    cursor: Cursor = None
    limit: int = Field(default=100, ge=1, le=500, description="Selected test files per page.")


class RunParams(ToolParams):
    targets: list[str] | None = Field(default=None, max_length=5000,
                                      description="Target ids or directories (default: every target).")
    affected_by: list[str] | None = Field(default=None, max_length=2000, description=(
        "Run the tests affected by these changed files instead ('path' or 'path:12-30'): only the selected "
        "cases where the symbol graph picks them."))
    changed_since: str | None = Field(default=None, min_length=1, max_length=256, description=_SINCE)
    fail_fast: bool | None = Field(default=None, description="Stop at the first failing target (no re-runs).")
    timeout_sec: float | None = Field(default=None, gt=0, le=24 * 3600, description="Global timeout of the run.")
    wait_sec: float = Field(default=25.0, ge=0, le=_MAX_WAIT,
                            description="Longest to wait for the run before returning its id to poll.")
    coverage: bool = Field(default=False, description=(
        "pytest only: record which definitions each test runs, so later affected_by selections follow what "
        "really ran (and an affected_by run says how much changed code ran). Slower."))


class GetRunParams(ToolParams):
    run_id: str
    wait_sec: float = Field(default=0.0, ge=0, le=_MAX_WAIT, description="Longest wait for it to end.")
    include: Literal["summary", "targets", "cases"] = Field(
        default="summary", description="summary: what did not pass; targets: every target; cases: every case (paged).")
    status: Literal["failed"] | None = Field(default=None, description="cases: the failing ones only.")
    cursor: Cursor = None
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
                said = snapshot.message if snapshot.message != snapshot.state else ""  # "running: … running"
                await ctx.progress(sent, 100.0, f"{snapshot.state}: {done}/{len(snapshot.targets)} targets "
                                                f"{said}".strip())
        left = deadline - anyio.current_time()
        if finished or left <= 0:
            return
        # Woken by the record itself: the answer goes out as soon as the run ends, not a poll interval later.
        await anyio.to_thread.run_sync(record.wait, version, min(left, _WAKE_S), abandon_on_cancel=True,
                                       limiter=_WAITERS)


def _owns(ctx: ToolContext, record: RunHandle) -> bool:
    """Whether this call runs under the task that started the run. Only such a call takes the run's failure report
    to the task (§12.3: non-progress is judged within a task): the first caller to see the failure took it, another
    session's task, or the next task of the same session, and the task that ran the tests never had it."""
    return ctx.services.tasks.owns_run(record.run_id, ctx.request_id)


def _answer(record: RunHandle, include: str = "summary", cursor: str | None = None, limit: int = 100, *,
            owner: bool, status: str | None = None) -> _TestRunAnswer:
    snapshot = record.snapshot()
    result = _TestRunAnswer(**render_run(snapshot, include=include, cursor=cursor, limit=limit, status=status))
    listed = "cases" if include == "cases" else "targets"
    items = list(getattr(result, listed))
    # Measured with one failure shown: the failures then take what room the page leaves.
    fit = items_that_fit(len(items), lambda k: render_test_run(result.model_copy(
        update={listed: items[:k], "next_cursor": CURSOR_STAND_IN, "failures": result.failures[:1]})))
    if fit < len(items):
        # A shorter page of the listed targets or cases, so that the text fits; the cursor resumes after it.
        result = _TestRunAnswer(**render_run(snapshot, include=include, cursor=cursor, limit=fit, status=status))
    failures = result.failures
    shown = items_that_fit(len(failures), lambda k: render_test_run(result.model_copy(
        update={"failures": failures[:k], "failures_cursor": CURSOR_STAND_IN if k < result.failures_total else None})))
    if shown < result.failures_total:
        # The text names the rest by count and the cursor of the failing cases after those shown.
        result = result.model_copy(update={"failures": failures[:shown], "failures_cursor": failures_cursor(
            snapshot, result.failures_total, shown)})
    result._report = record.take_failure_report() if record.finished and owner else None
    return result


async def _discover(ctx: ToolContext, params: DiscoverParams) -> DiscoverResult:
    service = _service(ctx.services)
    absent = [p for p in params.paths or () if not (ctx.services.root / resolve_in_repo(ctx.services.root, p).rel
                                                    ).exists()]
    if absent:  # "0 targets" read as "no tests there", as list_files and lint_check say 5004
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{absent[0]!r} does not exist in the repository",
                             details={"paths": absent[:20]})
    changed = changes(ctx.services, params.affected_by, params.changed_since)
    view = await anyio.to_thread.run_sync(lambda: service.discover(params.paths, changed.items, ranges=changed.ranges))
    key = query_key("discover", params.paths, params.affected_by, params.changed_since)
    chunk, next_cursor = page(view.targets, key=key, cursor=params.cursor, limit=params.limit)

    def answer(targets: Sequence[Target], cursor: str | None) -> DiscoverResult:
        # The impact lists the matches of these targets only: all of them, beside a page of targets, made every
        # page of a change reaching 600 test files 26 KB.
        impact = None
        if view.impact is not None:
            named = {name for t in targets for name in (t.path, t.target_id) if name}
            impact = ImpactModel.from_result(view.impact, shown=[m for m in view.impact.matches
                                                                 if m.test_file in named])
        found = DiscoverResult(
            targets=[TargetModel.from_target(t) for t in targets], total=len(view.targets),
            discovered_total=view.total_targets, runners=list(view.runners),
            missing_runners=[MissingRunnerModel(runner=m.runner, project=m.project, hint=m.hint)
                             for m in view.missing],
            impact=impact, agentic_hint=impact.agentic_hint if impact else None, next_cursor=cursor)
        found._root = str(ctx.services.root)
        return found

    fit = items_that_fit(len(chunk), lambda k: render_discover(answer(chunk[:k], CURSOR_STAND_IN)))
    if fit < len(chunk):
        # Fewer targets, so that the text fits; the cursor resumes after the last one shown.
        chunk, next_cursor = page(view.targets, key=key, cursor=params.cursor, limit=fit)
    return answer(chunk, next_cursor)


async def _inspect(ctx: ToolContext, params: InspectParams) -> InspectResult:
    service = _service(ctx.services)
    if params.changed_files is None and params.changed_since is None:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "give changed_files, changed_since, or both",
                             details={"fields": ["changed_files", "changed_since"]})
    changed = changes(ctx.services, params.changed_files, params.changed_since)
    key = query_key("inspect_affected_tests", params.changed_files, params.changed_since)
    # A page after the first continues the selection page 1 computed, while the index and the changes are the
    # same: each page recomputed it (12-26 s a page for an 1,800-file change on Django).
    selection = (str(ctx.services.root), key, ctx.services.index.epoch, repr(changed.items),
                 repr(sorted((changed.ranges or {}).items())))
    result = _SELECTIONS.get(selection) if params.cursor is not None else None
    if result is None:
        result = await anyio.to_thread.run_sync(lambda: service.inspect_affected(changed.items or [],
                                                                                 ranges=changed.ranges))
        _SELECTIONS.put(selection, result)
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
    if params.targets and (params.affected_by is not None or params.changed_since is not None):
        given = "affected_by" if params.affected_by is not None else "changed_since"
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"give targets or {given}, not both",
                             details={"fields": ["targets", given]})
    changed = changes(ctx.services, params.affected_by, params.changed_since)
    record = await anyio.to_thread.run_sync(lambda: service.start_run(
        params.targets, affected_by=changed.items, fail_fast=params.fail_fast, timeout_sec=params.timeout_sec,
        coverage=params.coverage, ranges=changed.ranges))
    ctx.services.tasks.claim_run(record.run_id, ctx.request_id)
    try:
        await _await(ctx, record, params.wait_sec)
    except anyio.get_cancelled_exc_class():
        # The caller gave up on the call (notifications/cancelled, its own timeout: the TypeScript SDK's is 60 s)
        # before it learned the run's id: nobody could poll or cancel the run, which went on holding the task's
        # test-run budget. MCP: the work of a cancelled request should stop.
        service.cancel(record.run_id)
        raise
    return _answer(record, owner=_owns(ctx, record))


async def _get(ctx: ToolContext, params: GetRunParams) -> _TestRunAnswer:
    record = _service(ctx.services).get_run(params.run_id)
    await _await(ctx, record, params.wait_sec)
    return _answer(record, params.include, params.cursor, params.limit, owner=_owns(ctx, record),
                   status=params.status)


async def _cancel(ctx: ToolContext, params: CancelRunParams) -> _TestRunAnswer:
    service = _service(ctx.services)
    record = service.get_run(params.run_id)
    if record.finished:
        # Like ``kill`` on an ended process: one line that nothing was stopped, not the report read already
        # (4.5 KB); the record is the run's head, its report is get_test_run's.
        answer = _answer(record, owner=_owns(ctx, record))
        ended = answer.model_copy(update={"targets": [], "failures": [], "flaky": [], "flaky_failures": [],
                                          "fingerprint": None, "artifacts": [], "next_cursor": None,
                                          "failures_cursor": None, "poll_hint": None, "coverage": None,
                                          "not_cancelled": True})
        ended._report = answer._report
        return ended
    record = service.cancel(params.run_id)
    await _await(ctx, record, params.wait_sec)
    return _answer(record, owner=_owns(ctx, record))


def _run_detail(params: Any) -> str:
    if params.changed_since is not None:
        return f"changed_since={params.changed_since}"
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
            # Paid for the status parameter (tools/list budget, issue 16): the fields are the output schema's,
            # and include's own description says what the cases listing does.
            summary=("The state of a test run (queued, running, passed, failed, cancelled, timed_out) and its "
                     "progress, per-target outcomes and attempts, failures with bounded tracebacks, flaky cases, "
                     "fingerprint, artifacts. Waits up to wait_sec for it to end."),
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
