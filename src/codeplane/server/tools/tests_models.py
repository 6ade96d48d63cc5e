"""Output models of the test tools and how a run snapshot is rendered into them (bounded, sorted)."""

from __future__ import annotations

import re
from typing import Any, Literal

from codeplane.server.answers import short_fingerprint
from codeplane.server.tooling import ToolResult
from codeplane.testing.impact import ImpactResult
from codeplane.testing.impact_reach import CoverageUse
from codeplane.testing.model import CaseResult, RunCoverage, RunSnapshot, Target, TargetRecord
from codeplane.testing.paging import page, query_key

#: Inline bounds; everything else is in the artifacts or behind a cursor.
MAX_FAILURES = 25
MAX_ARTIFACTS = 100
MAX_MATCHES = 500
#: A traceback or a target's message inline, at most (characters); the tail is kept, where the error is.
MAX_DETAIL_CHARS = 1500
_OUTCOME_ORDER = {"timeout": 0, "error": 1, "failed": 2, "flaky": 3, "cancelled": 4, "not_run": 5, "skipped": 6,
                  "passed": 7}


class TargetModel(ToolResult):
    target_id: str
    runner: str
    lang: str
    kind: str
    cwd: str
    cmd: list[str]
    estimated_cost: float
    #: Only these cases run (impact selection at test-case level); empty: the whole target.
    cases: list[str] = []

    @classmethod
    def from_target(cls, target: Target) -> TargetModel:
        return cls(target_id=target.target_id, runner=target.runner, lang=target.lang, kind=target.kind,
                   cwd=target.cwd, cmd=list(target.cmd), estimated_cost=target.estimated_cost,
                   cases=list(target.cases))


class MissingRunnerModel(ToolResult):
    runner: str
    project: str
    hint: str


class ImpactCaseModel(ToolResult):
    #: ``test_x``, ``TestC::test_x`` or a whole class ``TestC`` (run as ``test_file::case``).
    case: str
    confidence: Literal["high", "low"]
    #: From the test to a changed definition (inspect_affected_tests only).
    chain: list[str] = []
    #: ``coverage``: recorded running a changed definition (else reached through the reference graph).
    source: Literal["graph", "coverage"] = "graph"


class ImpactMatchModel(ToolResult):
    test_file: str
    confidence: Literal["high", "low"]
    reasons: list[str]
    #: The selected cases (symbol-level selection); empty: the whole file.
    cases: list[ImpactCaseModel] = []


class ImpactCoverageModel(ToolResult):
    """What recorded coverage evidence (``run_test_targets(coverage=true)``) did to the selection."""

    #: Whether it could leave tests out (else ``note`` says why: only confirms and adds).
    narrowed: bool
    note: str = ""
    confirmed: int = 0
    added: int = 0
    #: Selected by the graph, but fresh evidence shows they ran none of the changed code (max 20).
    dropped: list[str] = []
    dropped_total: int = 0
    #: Why some evidence was not trusted (max 20); the tests it concerned stay selected by the graph.
    stale: list[str] = []
    stale_tests: int = 0
    #: Of those: kept because changed code ran earlier in their test process (a cache it filled may be why
    #: they did not run it) and they ran code that leads to it.
    after_change: int = 0
    unrecorded: int = 0

    @classmethod
    def from_use(cls, use: CoverageUse) -> ImpactCoverageModel:
        return cls(narrowed=use.narrowed, note=use.note, confirmed=use.confirmed, added=use.added,
                   dropped=list(use.dropped), dropped_total=use.dropped_total, stale=list(use.stale),
                   stale_tests=use.stale_tests, after_change=use.after_change, unrecorded=use.unrecorded)


class ImpactModel(ToolResult):
    """§11.9.4: ``complete`` only when every changed file resolved and no test import is dynamic."""

    confidence: Literal["complete", "partial"]
    changed_modules: list[str]
    unresolved_files: list[str]
    matches: list[ImpactMatchModel]
    matches_total: int
    high: int
    low: int
    null_literal_imports: int
    source_dirs: list[str]
    uncovered_modules: list[str] = []
    uncovered_total: int = 0
    agentic_hint: str = ""
    #: Imports of a changed package that name no file (why the tier is partial), at most 20.
    unresolved_imports: list[str] = []
    #: Changed definitions the symbol-level selection started from.
    changed_symbols: list[str] = []
    #: ``path: reason`` for each change selected at module level instead (the symbol graph could not follow it).
    fallbacks: list[str] = []
    #: Present once coverage evidence was recorded.
    coverage: ImpactCoverageModel | None = None

    @classmethod
    def from_result(cls, result: ImpactResult, *, detailed: bool = False) -> ImpactModel:
        matches = result.matches[:MAX_MATCHES]
        return cls(
            confidence=result.confidence, changed_modules=list(result.changed_modules),
            unresolved_files=list(result.unresolved_files),
            matches=[ImpactMatchModel(test_file=m.test_file, confidence=m.confidence,
                                      reasons=list(m.reasons) if detailed else list(m.reasons[:1]),
                                      cases=[ImpactCaseModel(case=c.case, confidence=c.confidence,
                                                             chain=list(c.chain) if detailed else [], source=c.source)
                                             for c in m.cases]) for m in matches],
            matches_total=len(result.matches), high=sum(1 for m in result.matches if m.confidence == "high"),
            low=sum(1 for m in result.matches if m.confidence == "low"),
            null_literal_imports=result.null_literal_imports, source_dirs=list(result.source_dirs),
            uncovered_modules=list(result.uncovered_modules), uncovered_total=result.uncovered_total,
            agentic_hint=result.hint, unresolved_imports=list(result.unresolved_imports),
            changed_symbols=list(result.changed_symbols), fallbacks=list(result.fallbacks[:MAX_MATCHES]),
            coverage=ImpactCoverageModel.from_use(result.coverage) if result.coverage is not None else None)


class CaseModel(ToolResult):
    case_id: str
    target_id: str
    outcome: Literal["passed", "failed", "error", "skipped", "xfail"]
    duration_s: float
    message: str = ""
    exception_type: str = ""
    traceback: str = ""

    @classmethod
    def from_case(cls, case: CaseResult, *, detail: bool = True) -> CaseModel:
        return cls(case_id=case.case_id, target_id=case.target_id, outcome=case.outcome, duration_s=case.duration_s,
                   message=bounded(case.message), exception_type=case.exception_type,
                   traceback=bounded(case.traceback) if detail else "")


def bounded(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    if len(text) <= limit:
        return text
    return "… " + text[len(text) - limit + 2:]


class ArtifactModel(ToolResult):
    kind: str
    artifact_id: str
    path: str
    sha256: str
    bytes: int


class AttemptModel(ToolResult):
    number: int
    batch_id: str
    outcome: str
    duration_s: float
    exit_code: int | None
    #: Empty when it is the previous attempt's message again (a re-run failing the same way).
    message: str = ""
    cases: int
    #: Cases this attempt ran: fewer than ``cases`` for pytest's in-process re-run of the failed ones.
    cases_run: int
    failing_cases: int
    #: Artifact ids of this attempt's process (logs, reports); details in the run's ``artifacts``.
    artifacts: list[str]


class TargetRunModel(ToolResult):
    target_id: str
    runner: str
    outcome: str
    attempts: list[AttemptModel]
    flaky_cases: list[str] = []


class CountsModel(ToolResult):
    """Cases by outcome; an outcome no case had is left out of the record (0), the total always said."""

    passed: int = 0
    failed: int = 0
    error: int = 0
    skipped: int = 0
    xfail: int = 0
    total: int


class ChangedCoverageModel(ToolResult):
    path: str
    #: The changed definition's qualified name.
    name: str
    ran: bool
    lines: int = 0
    lines_run: int = 0
    #: Changed code lines that did not run (max 20).
    missed: list[int] = []


class RunCoverageModel(ToolResult):
    """A coverage run: the evidence it stored, and how much of the changed code (affected_by) it ran (§11.9.5)."""

    tests: int
    untrusted: int = 0
    files: int = 0
    unmapped: list[str] = []
    unmapped_total: int = 0
    changed: list[ChangedCoverageModel] = []
    changed_total: int = 0
    changed_run: int = 0
    lines: int = 0
    lines_run: int = 0
    import_time_lines: int = 0
    note: str = ""

    @classmethod
    def from_coverage(cls, c: RunCoverage) -> RunCoverageModel:
        return cls(tests=c.tests, untrusted=c.untrusted, files=c.files, unmapped=list(c.unmapped),
                   unmapped_total=c.unmapped_total, changed=[
                       ChangedCoverageModel(path=u.path, name=u.name, ran=u.ran, lines=u.lines, lines_run=u.lines_run,
                                            missed=list(u.missed)) for u in c.changed],
                   changed_total=c.changed_total, changed_run=c.changed_run, lines=c.lines, lines_run=c.lines_run,
                   import_time_lines=c.import_time_lines, note=c.note)


class TestRunResult(ToolResult):
    """A test run (D9/D10): state and progress, targets with attempts, failures, artifacts."""

    __test__ = False

    run_id: str
    state: Literal["queued", "running", "passed", "failed", "cancelled", "timed_out"]
    finished: bool
    progress_percentage: float
    #: Epoch milliseconds of the last observed progress.
    last_progress_at: int
    started_at: int
    finished_at: int | None
    duration_s: float
    workers: int
    fail_fast: bool = False
    timeout_sec: float
    #: What the run is doing or why it ended other than by its cases (a server stop); "" for nothing to say.
    message: str = ""
    counts: CountsModel
    #: Targets per outcome (``passed``, ``failed``, ``flaky``, ``timeout``, ...).
    target_outcomes: dict[str, int]
    #: Targets that did not pass (every target with include='targets'); passing ones are in target_outcomes.
    targets: list[TargetRunModel]
    targets_total: int
    failures: list[CaseModel]
    failures_total: int = 0
    flaky: list[str]
    fingerprint: str | None
    artifacts: list[ArtifactModel]
    artifacts_total: int = 0
    #: ``include='cases'``: one page of every case of the final attempts, by case id.
    cases: list[CaseModel] = []
    next_cursor: str | None = None
    poll_hint: str | None = None
    #: Only for a finished coverage=true run.
    coverage: RunCoverageModel | None = None


#: A failure's traceback in the text: its last frames, at most this many characters.
TEXT_TRACEBACK_CHARS = 800


def brief_traceback(traceback: str, *said: str) -> str:
    """The part of a traceback an agent acts on: from a few lines above the last failing line (pytest's
    ``>`` marker, else the last ``File`` frame) to the end, bounded, without blank lines or an ``E`` line
    that only repeats what ``said`` (the failure's head line) says. The full one is in the record."""
    lines = traceback.rstrip().splitlines()
    marks = [i for i, line in enumerate(lines) if line.startswith(">")] or \
            [i for i, line in enumerate(lines) if line.lstrip().startswith("File ")]
    start = max(0, marks[-1] - 3) if marks else 0
    told = {text.strip() for text in said if text.strip()}
    kept = [line.rstrip() for line in lines[start:]
            if line.strip() not in ("", "E") and not (line.startswith("E ") and line[1:].strip() in told)]
    return bounded("\n".join(_without_restated_diff(kept, told)), TEXT_TRACEBACK_CHARS)


def _diff_body(line: str) -> str | None:
    """The ``- expected`` / ``+ actual`` / ``? ^`` part of one of pytest's comparison diff lines, else None."""
    body = line[1:].lstrip() if line.startswith("E ") else ""
    return body if body[:2] in ("- ", "+ ", "? ") else None


def _compared(told: set[str]) -> set[str]:
    """The two sides of ``assert a == b`` as a head line shows them, each also without its quotes."""
    sides: set[str] = set()
    for text in told:
        _, found, rest = text.partition("assert ")
        parts = rest.split(" == ")
        if found and len(parts) == 2:
            for side in (part.strip() for part in parts):
                sides.add(side)
                if len(side) >= 2 and side[0] == side[-1] and side[0] in "'\"":
                    sides.add(side[1:-1])
    return sides


def _without_restated_diff(lines: list[str], told: set[str]) -> list[str]:
    """Drop the diff pytest prints under an ``assert a == b`` whose head line shows both values whole: a
    ``-``/``+`` line that is exactly one side of the head's comparison, the ``?`` markers under a dropped
    one, and a ``Full diff:`` left with nothing under it. A value pytest shortened (``'xx...xx'``) or a diff it
    cut (``Skipping N identical leading characters``) never equals a side, so that diff stays."""
    sides = _compared(told)
    if not sides:
        return lines
    out: list[str] = []
    dropped = False
    for line in lines:
        body = _diff_body(line)
        if body is None:
            dropped = False
        elif body.startswith("?"):
            if dropped:
                continue
        else:
            dropped = body[2:].rstrip() in sides
            if dropped:
                continue
        out.append(line)
    return [line for i, line in enumerate(out) if not (
        line.startswith("E") and line[1:].strip() == "Full diff:"
        and (i + 1 == len(out) or _diff_body(out[i + 1]) is None))]


def _without_type_at_end(traceback: str, exception_type: str) -> str:
    """pytest's last line ``path:line: ExceptionType`` as ``path:line``: the head line names the type (or
    shows the failed ``assert``)."""
    rest, sep, last = traceback.rpartition("\n")
    place = last.removesuffix(f": {exception_type}") if exception_type else last
    return f"{rest}{sep}{place}" if place != last and re.fullmatch(r"\S+:\d+", place) else traceback


def _first_line(message: str, exception_type: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else ""
    if exception_type and line.startswith(exception_type):
        line = line[len(exception_type):].lstrip(": ")
    if exception_type == "AssertionError" and line.startswith("assert "):
        return line  # a failed ``assert`` names its exception itself
    return f"{exception_type}: {line}" if exception_type and line else (exception_type or line)


def case_ids(ids: list[str]) -> list[str]:
    """Case ids of one list, each after the first of a function as only its parameters (``[b]`` after
    ``t.py::test_x[a]``), as pytest's ids read in a row: the path and the function are said once."""
    shown: list[str] = []
    previous = ""
    for case_id in ids:
        base, bracket, params = case_id.partition("[")
        same = bracket and previous == base
        shown.append(f"[{params}" if same else case_id)
        previous = base if bracket else ""
    return shown


def _attempts(target: TargetRunModel) -> str:
    """``2/143 failing, retry 2/2``: what each attempt of a target found, the first one's outcome named when
    no case failed, a retry's when it differs."""
    first, *retries = target.attempts
    told = f"{first.failing_cases}/{first.cases_run} failing" if first.failing_cases else first.outcome
    return told + "".join(f", retry {a.failing_cases}/{a.cases_run}" + (f" {a.outcome}" if a.outcome != first.outcome
                                                                        else "") for a in retries)


def _reproduced(target: TargetRunModel) -> bool:
    """Every retry re-ran the first attempt's failing cases and each of them failed again."""
    first, *retries = target.attempts
    return bool(retries) and all(a.outcome == first.outcome and a.failing_cases == a.cases_run == first.failing_cases
                                 for a in retries)


def _flaky_cases(target: TargetRunModel) -> str:
    """``: test_x[a] [b]``, a flaky target's cases after its line, without the target's path (said already)."""
    if not target.flaky_cases:
        return ""
    cases = case_ids([c.removeprefix(f"{target.target_id}::") for c in target.flaky_cases[:MAX_FAILURES]])
    more = len(target.flaky_cases) - MAX_FAILURES
    return ": " + " ".join(cases) + (f" (+{more} more)" if more > 0 else "")


def _target_lines(target: TargetRunModel) -> list[str]:
    """``FAILED target: <attempts>`` (a flaky one's cases after it) and the attempts' own messages; nothing
    for a target that failed only through the failing cases listed after it, its retries failing just them
    again (the head's tally of targets counts it)."""
    attempts = target.attempts
    if not attempts or (not any(a.message for a in attempts) and attempts[0].failing_cases
                        and (len(attempts) == 1 or _reproduced(target))):
        return []
    lines = [f"{target.outcome.upper()} {target.target_id}: {_attempts(target)}" + _flaky_cases(target)]
    lines += ["    " + a.message.rstrip().replace("\n", "\n    ") for a in attempts if a.message]
    return lines


def render_test_run(result: TestRunResult) -> str:
    """One summary line, then what did not pass: each failing target with its attempts on one line (a
    target-level message once), failing cases grouped by identical failure (the brief traceback once),
    flaky cases; passing targets only as counts."""
    c = result.counts
    tallies = ", ".join(f"{n} {name}" for name, n in (("passed", c.passed), ("failed", c.failed),
                                                        ("error", c.error), ("skipped", c.skipped),
                                                        ("xfail", c.xfail)) if n)
    outcomes = result.target_outcomes
    target_lines = [_target_lines(t) for t in result.targets]
    if len(result.targets) == 1 and len(target_lines[0]) == 1 and result.failures and \
            all(case.case_id.startswith(result.targets[0].target_id) for case in result.failures):
        # One target, named by its failing cases: its attempts fit in the head line, and say nothing when
        # every retry failed just the cases the first attempt failed (not flaky: the failures are real).
        told = "" if _reproduced(result.targets[0]) else f" ({_attempts(result.targets[0])})"
        target_lines = []
    elif set(outcomes) != {"passed"} and sum(outcomes.values()) > 1 and \
            sum(1 for block in target_lines if block) < sum(n for k, n in outcomes.items() if k != "passed"):
        told = " (targets: " + ", ".join(f"{n} {k}" for k, n in outcomes.items()) + ")"
    else:
        told = ""  # all passed (the case counts say it), or every other target has its own line below
    # Like pytest's last line (counts, then the time); the state only when the counts do not say it already.
    said = (result.state == "passed" and c.passed and not (c.failed or c.error)) or \
        (result.state == "failed" and c.failed)
    state = "" if said else f" {result.state}"
    progress = "" if result.finished else f" {result.progress_percentage:.0f}%"
    head = f"{result.run_id}{state}{progress}: {tallies or 'no cases'} in {result.duration_s:.1f}s{told}"
    if result.fingerprint:
        head += f" fingerprint={short_fingerprint(result.fingerprint)}"
    lines = [head]
    if result.message:
        lines.append(result.message)
    lines += [line for block in target_lines for line in block]
    groups: dict[tuple[str, str, str], list[CaseModel]] = {}
    for case in result.failures:
        first = _first_line(case.message, case.exception_type)
        opening = case.message.strip().splitlines()[0] if case.message.strip() else ""
        key = (case.outcome, first, _without_type_at_end(brief_traceback(case.traceback, first, opening),
                                                          case.exception_type))
        groups.setdefault(key, []).append(case)
    for (outcome, first, traceback), cases in groups.items():
        lines.append(f"{outcome.upper()} {cases[0].case_id}: {first}".rstrip(": "))
        if len(cases) > 1:
            lines.append("  same: " + " ".join(case_ids([c.case_id for c in cases])[1:]))
        if traceback:
            lines.append(traceback)
    if result.failures_total > len(result.failures):
        lines.append(f"… {result.failures_total - len(result.failures)} more failing cases: "
                     f"get_test_run(run_id={result.run_id!r}, include='cases')")
    # A flaky case under its target's line when that line is shown (its path said once), else on one line.
    shown = {case for t, block in zip(result.targets, target_lines, strict=False) if block
             for case in t.flaky_cases[:MAX_FAILURES]}
    flaky = [case for case in result.flaky if case not in shown]
    if flaky:
        lines.append("flaky: " + " ".join(case_ids(flaky)))
    if result.coverage is not None:
        lines += render_coverage(result.coverage)
    for case in result.cases:
        lines.append(f"{case.outcome} {case.case_id} {case.duration_s:.3f}s")
    # Artifacts (logs, reports) are for people and programs: no tool takes their ids, so the text leaves
    # them to the structured record.
    if result.next_cursor:
        lines.append(f"next cursor: {result.next_cursor}")
    if result.poll_hint:
        lines.append(result.poll_hint)
    return "\n".join(lines)


def render_coverage(c: RunCoverageModel) -> list[str]:
    """The evidence stored, then the changed definitions: the totals, and each one not fully run by name."""
    head = f"coverage: evidence of {c.tests} test(s) stored ({c.untrusted} untrusted), {c.files} file(s) loaded"
    if c.unmapped_total:
        head += f"; {c.unmapped_total} unmapped: " + "; ".join(c.unmapped)
    lines = [head]
    if c.note:
        lines.append(f"  {c.note}")
    if c.changed_total:
        lines.append(f"changed code: {c.changed_run}/{c.changed_total} definition(s) ran, {c.lines_run}/{c.lines} "
                     "changed line(s) of their bodies" + (f"; {c.import_time_lines} changed line(s) run at import, "
                                                          "not measured" if c.import_time_lines else ""))
        for unit in c.changed:
            if not unit.ran:
                lines.append(f"  NOT RUN {unit.name} ({unit.path})")
            elif unit.lines_run < unit.lines:
                lines.append(f"  {unit.name}: {unit.lines_run}/{unit.lines} lines, not run: "
                             + ",".join(str(n) for n in unit.missed))
        if c.changed_total > len(c.changed):
            lines.append(f"  … {c.changed_total - len(c.changed)} more changed definition(s) in the record")
    elif c.import_time_lines:
        lines.append(f"changed code: {c.import_time_lines} changed line(s) run at import, not measured")
    return lines


def _attempt(record: TargetRecord) -> list[AttemptModel]:
    models = []
    previous = None
    for a in record.attempts:
        message = a.result.message
        models.append(AttemptModel(
            number=a.number, batch_id=a.batch_id, outcome=a.result.outcome, duration_s=a.result.duration_s,
            exit_code=a.result.exit_code, message="" if message == previous else bounded(message),
            cases=len(a.result.cases) + a.result.unlisted_passed,
            cases_run=(a.result.cases_run if a.result.cases_run is not None
                       else len(a.result.cases) + a.result.unlisted_passed),
            failing_cases=sum(1 for c in a.result.cases if c.failing),
            artifacts=[x.artifact_id for x in a.artifacts]))
        previous = message
    return models


def render_run(snapshot: RunSnapshot, *, include: str = "summary", cursor: str | None = None,
               limit: int = 100) -> dict[str, Any]:
    """The fields of a :class:`TestRunResult` for ``snapshot``; lists are sorted and bounded."""
    ordered = sorted(snapshot.targets, key=lambda r: (_OUTCOME_ORDER.get(r.outcome, 9), r.target.target_id))
    finals = [(r, r.final) for r in ordered]
    failures = sorted((c for r, final in finals if final is not None and r.outcome != "flaky"
                       for c in final.cases if c.failing), key=lambda c: c.case_id)
    key = query_key("run", snapshot.run_id, include, snapshot.finished)
    cases: list[CaseModel] = []
    targets_page = ordered
    next_cursor = None
    if include == "cases":
        every = sorted((c for _, final in finals if final is not None for c in final.cases), key=lambda c: c.case_id)
        chunk, next_cursor = page(every, key=key, cursor=cursor, limit=limit)
        cases = [CaseModel.from_case(c, detail=c.failing) for c in chunk]
        targets_page = ordered[:limit]
    elif include == "targets":
        targets_page, next_cursor = page(ordered, key=key, cursor=cursor, limit=limit)
    else:
        # An answer scales with what failed, not with the suite: passing targets are counts only.
        unsettled = [r for r in ordered if r.outcome != "passed"]
        targets_page, next_cursor = page(unsettled, key=key, cursor=cursor, limit=limit)
    listed_artifacts = {x.artifact_id for r in targets_page for a in r.attempts for x in a.artifacts}
    artifacts = [a for a in snapshot.artifacts if include != "summary" or a.artifact_id in listed_artifacts]
    outcomes: dict[str, int] = {}
    for record in snapshot.targets:
        outcomes[record.outcome] = outcomes.get(record.outcome, 0) + 1
    counts = snapshot.counts
    end = snapshot.finished_at
    return {
        "run_id": snapshot.run_id, "state": snapshot.state, "finished": snapshot.finished,
        "progress_percentage": snapshot.progress_percentage, "last_progress_at": snapshot.last_progress_at,
        "started_at": snapshot.started_at, "finished_at": end,
        "duration_s": round(((end or snapshot.last_progress_at) - snapshot.started_at) / 1000.0, 3),
        "workers": snapshot.workers, "fail_fast": snapshot.fail_fast, "timeout_sec": snapshot.timeout_sec,
        "message": snapshot.message,
        "counts": CountsModel(passed=counts.passed, failed=counts.failed, error=counts.error, skipped=counts.skipped,
                              xfail=counts.xfail, total=counts.total),
        "target_outcomes": dict(sorted(outcomes.items())),
        "targets": [TargetRunModel(target_id=r.target.target_id, runner=r.target.runner, outcome=r.outcome,
                                   attempts=_attempt(r), flaky_cases=list(r.flaky_cases)) for r in targets_page],
        "targets_total": len(ordered),
        "failures": [CaseModel.from_case(c) for c in failures[:MAX_FAILURES]],
        "failures_total": len(failures),
        "flaky": sorted(c for r in snapshot.targets for c in r.flaky_cases)[:MAX_FAILURES],
        "fingerprint": snapshot.fingerprint,
        "artifacts": [ArtifactModel(kind=a.kind, artifact_id=a.artifact_id, path=a.path, sha256=a.sha256,
                                    bytes=a.bytes) for a in artifacts[:MAX_ARTIFACTS]],
        "artifacts_total": len(artifacts),
        "cases": cases, "next_cursor": next_cursor,
        "coverage": RunCoverageModel.from_coverage(snapshot.coverage) if snapshot.coverage is not None else None,
        "poll_hint": None if snapshot.finished else (
            f"still {snapshot.state}; call get_test_run(run_id={snapshot.run_id!r}, wait_sec=30) to wait for it, "
            "or cancel_test_run to stop it"),
    }
