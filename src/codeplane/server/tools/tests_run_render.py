"""Text rendering of a test run: one summary line like pytest's last, then only what did not pass (failing
targets with their attempts, failing cases grouped by identical failure with a brief traceback, flaky cases),
and the coverage a coverage run stored. The structured record is built in ``tests_run_models``."""

from __future__ import annotations

import re

from codeplane.repo.universe import quoted_path
from codeplane.server.answers import short_fingerprint
from codeplane.server.tools.git_render import path_text
from codeplane.server.tools.tests_run_models import (
    MAX_DETAIL_CHARS,
    MAX_FAILURES,
    CaseModel,
    RunCoverageModel,
    TargetRunModel,
    TestRunResult,
    bounded,
)
from codeplane.testing.reports import clip_ends

#: A failure's traceback in the text: its last frames, at most this many characters.
TEXT_TRACEBACK_CHARS = 800


#: Lines after which a traceback holds only a runtime's own frames.
_BACKTRACE_HEADS = frozenset({"stack backtrace:",
                              "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"})


def brief_traceback(traceback: str, *said: str) -> str:
    """The part of a traceback an agent acts on: from a few lines above the last failing line (pytest's
    ``>`` marker, else the last ``File`` frame) to the end, bounded, without blank lines or an ``E`` line
    that only repeats what ``said`` (the failure's head line) says. The full one is in the record."""
    lines = traceback.rstrip().splitlines()
    # A Rust panic's own lines come first (where it panicked, ``left: 3``/``right: 2``); the standard library's
    # frames after ``stack backtrace:`` are what bounding kept instead of them.
    cut = next((i for i, line in enumerate(lines) if line.strip() in _BACKTRACE_HEADS), None)
    lines = lines[:cut] if cut else lines
    marks = [i for i, line in enumerate(lines) if line.startswith(">")] or \
            [i for i, line in enumerate(lines) if line.lstrip().startswith("File ")]
    start = max(0, marks[-1] - 3) if marks else 0
    told = {text.strip() for text in said if text.strip()}
    kept = [line.rstrip() for line in lines[start:]
            if line.strip() not in ("", "E") and not (line.startswith("E ") and line[1:].strip() in told)
            and line.strip() not in told]  # a Go failure's message, printed again as its trace's first line
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
    ``t.py::test_x[a]``), as pytest's ids read in a row: the path and the function are said once. An id holding
    a control character (its file's path does) is quoted as that path is."""
    shown: list[str] = []
    previous = ""
    for case_id in ids:
        base, bracket, params = case_id.partition("[")
        same = bracket and previous == base
        shown.append(path_text(f"[{params}" if same else case_id))
        previous = base if bracket else ""
    return shown


def _attempts(target: TargetRunModel) -> str:
    """``2/143 failing, retry 2/2``: what each attempt of a target found, the first one's outcome named when
    no case failed, a retry's when it differs."""
    first, *retries = target.attempts
    told = f"{first.failing_cases}/{first.cases_run} failing" if first.failing_cases else first.outcome
    # A retry that ran no case (a collection or build error again), or whose cases all passed, is named by its
    # outcome: "retry 0/0" said nothing, and "retry 0/1 passed" read as a contradiction.
    return told + "".join(f", retry {a.outcome}" if not a.cases_run or not a.failing_cases else
                          f", retry {a.failing_cases}/{a.cases_run}" + (f" {a.outcome}" if a.outcome != first.outcome
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


#: The line naming a failure's exception, type and message: pytest's ``E   ModuleNotFoundError: ...`` or the last
#: line of Python's own traceback.
_EXCEPTION_LINE = re.compile(
    r"^(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?)$")
#: A frame's place in pytest's long traceback (``tests/t.py:5: in test_x``, ``src/m.py:9: ValueError``) and in
#: Python's (``File "src/m.py", line 9, in f``).
_PYTEST_FRAME = re.compile(r"^([^\s:][^:]*):(\d+): ")
_NATIVE_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


def final_exception(text: str) -> str:
    """The exception a traceback ends in, ``Type: message`` (pytest's ``E`` dropped), else ""."""
    last = text.rstrip().rpartition("\n")[2].strip()
    found = _EXCEPTION_LINE.match(last)
    return found.group(1) if found else ""


def _failing_place(case: CaseModel) -> str | None:
    """Where a case failed once its own file's frames are left out: the deepest frame outside the test file
    (``src/m.py:9``), "" when every frame is the test's own, None when the traceback names no frame."""
    frames = [(m.group(1), m.group(2)) for m in (_PYTEST_FRAME.match(line) or _NATIVE_FRAME.match(line)
                                                 for line in case.traceback.splitlines()) if m]
    if not frames:
        return None
    own = case.target_id
    outside = [f"{path}:{line}" for path, line in frames if path != own and not path.endswith("/" + own)]
    return outside[-1] if outside else ""


_IMPORT_HINT = "Hint: make sure your test modules/packages have valid Python names."


def _indented(message: str) -> str:
    """A target's message under its line, indented, at most ``MAX_DETAIL_CHARS``: when longer, its first lines
    (what stopped the file: ``SyntaxError … (3:25)`` and its code frame, the first compile errors) and its last
    (where: the loader's frames, the exception line of a collection error), with ``…`` between."""
    # pytest's hint under every module it could not import says nothing about a missing dependency.
    lines = ["    " + line for line in message.rstrip().splitlines() if line.strip() != _IMPORT_HINT]
    if sum(len(line) + 1 for line in lines) <= MAX_DETAIL_CHARS:
        return "\n".join(lines)
    head: list[str] = []
    budget = MAX_DETAIL_CHARS * 2 // 3
    for line in lines:
        if sum(len(kept) + 1 for kept in head) + len(line) + 1 > budget:
            break
        head.append(line)
    tail: list[str] = []
    budget = MAX_DETAIL_CHARS - sum(len(kept) + 1 for kept in head) - len("    …") - 1
    for line in reversed(lines[len(head):]):
        if sum(len(kept) + 1 for kept in tail) + len(line) + 1 > budget:
            break
        tail.insert(0, line)
    if not head and not tail:  # one line longer than the bound (a minified bundle's frame)
        return clip_ends("\n".join(lines), MAX_DETAIL_CHARS)
    return bounded("\n".join([*head, "    …", *tail]), MAX_DETAIL_CHARS)


def _folded(targets: list[TargetRunModel], blocks: list[list[str]]) -> list[str]:
    """The targets' blocks, each cause said once: blocks saying the same thing after their head line (a build
    every target shares failed the same way for each: five cargo targets printed one 900-byte network error five
    times), and blocks whose every message ends in the same exception line (ten test files importing a module
    the environment lacks, each through its own chain of imports: ``same cause:``, the first one's shown)."""
    shown: dict[tuple[str, ...], tuple[list[str], list[str], list[str]]] = {}
    for target, block in zip(targets, blocks, strict=False):
        if not block:
            continue
        head = block[0].split(" ", 1)[0] + " " + block[0].split(": ", 1)[-1]  # the outcome and the attempts
        causes = tuple(final_exception(a.message) for a in target.attempts if a.message)
        if causes and all(causes):
            key: tuple[str, ...] = ("cause", head, *causes)
        else:
            key = (head, *block[1:]) if len(block) > 1 else (block[0],)
        if key not in shown:
            shown[key] = (block, [], [])
        else:
            # Told apart by whether the target's own lines are the first's again or only end the same way.
            shown[key][1 if block[1:] == shown[key][0][1:] else 2].append(quoted_path(target.target_id))
    lines: list[str] = []
    for block, same, alike in shown.values():
        lines.append(block[0])
        if same:
            lines.append("  same: " + " ".join(same))
        if alike:
            lines.append("  same cause: " + " ".join(alike))
        lines += block[1:]
    return lines


def _target_lines(target: TargetRunModel) -> list[str]:
    """``FAILED target: <attempts>`` (a flaky one's cases after it) and the attempts' own messages; nothing
    for a target that failed only through the failing cases listed after it, its retries failing just them
    again (the head's tally of targets counts it)."""
    attempts = target.attempts
    if not attempts or (not any(a.message for a in attempts) and attempts[0].failing_cases
                        and (len(attempts) == 1 or _reproduced(target))):
        return []
    first = attempts[0]
    if target.outcome == "skipped" and len(attempts) == 1 and first.message and "\n" not in first.message.strip():
        # pytest's reason in place of the outcome the head already says (``SKIPPED x.py: could not import 'y'``).
        return [f"SKIPPED {quoted_path(target.target_id)}: {first.message.strip()}"]
    lines = [f"{target.outcome.upper()} {quoted_path(target.target_id)}: {_attempts(target)}" + _flaky_cases(target)]
    lines += [_indented(a.message) for a in attempts if a.message]
    return lines


def render_test_run(result: TestRunResult) -> str:
    """One summary line, then what did not pass: each failing target with its attempts on one line (a
    target-level message once), failing cases grouped by identical failure (the brief traceback once),
    flaky cases; passing targets only as counts."""
    if result.not_cancelled:
        return f"run {result.run_id} already finished ({result.state}): nothing cancelled (its report: get_test_run)"
    if result.continued:
        return _continued(result)
    c = result.counts
    tallies = ", ".join(f"{n} {name}" for name, n in (("passed", c.passed), ("failed", c.failed),
                                                        ("error", c.error), ("skipped", c.skipped),
                                                        ("xfail", c.xfail), ("xpassed", c.xpass)) if n)
    outcomes = result.target_outcomes
    target_lines = [_target_lines(t) for t in result.targets]
    # include='targets': the passing ones on one line (``PASSED x: passed`` seventeen times said the outcome twice).
    passing = [t.target_id for t, block in zip(result.targets, target_lines, strict=True)
               if t.outcome == "passed" and len(block) == 1]
    if passing:
        target_lines = [[] if t.target_id in passing else block
                        for t, block in zip(result.targets, target_lines, strict=True)]
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
    if result.finished:
        head = f"{result.run_id}{state}: {tallies or 'no cases'} in {result.duration_s:.1f}s{told}"
    else:
        head = _in_flight_head(result, tallies)
    if result.fingerprint:
        head += f" fingerprint={short_fingerprint(result.fingerprint)}"
    lines = [head]
    if result.message and result.message != result.state:  # a running run's phase "running" is its state again
        lines.append(result.message)
    lines += _folded(result.targets, target_lines)
    if passing:
        lines.append(f"passed ({len(passing)}): " + " ".join(quoted_path(t) for t in passing))
    # A cases page lists the failing cases itself (each with its head line): the failure report is the summary's.
    if not result.cases:
        lines += _failure_groups(result.failures)
    if result.failures_cursor and not result.cases:
        lines.append(f"… {result.failures_total - len(result.failures)} more failing cases: get_test_run(run_id="
                     f"{result.run_id!r}, include='cases', status='failed', cursor={result.failures_cursor!r})")
    # A flaky case under its target's line when that line is shown (its path said once), else on one line.
    shown = {case for t, block in zip(result.targets, target_lines, strict=False) if block
             for case in t.flaky_cases[:MAX_FAILURES]}
    flaky = [case for case in result.flaky if case not in shown]
    if flaky:
        lines.append("flaky (failed, then passed on retry): " + " ".join(case_ids(flaky)))
    # How each flaky case failed: a pass on retry may hide a real bug (its traceback is in the record).
    lines += [f"FLAKY {path_text(case.case_id)} failed first: "
              f"{_first_line(case.message, case.exception_type)}".rstrip(": ") for case in result.flaky_failures]
    if result.coverage is not None:
        lines += render_coverage(result.coverage)
    lines += [_case_line(case) for case in result.cases]
    # Artifacts (logs, reports) are for people and programs: no tool takes their ids, so the text leaves
    # them to the structured record.
    if result.next_cursor:
        lines.append(f"next cursor: {result.next_cursor}")
    if result.poll_hint:
        lines.append(result.poll_hint)
    return "\n".join(lines)


def _in_flight_head(result: TestRunResult, tallies: str) -> str:
    """A run still going: its percentage, the cases its ended targets reported, and every target by where it is
    (ended ones by outcome, then ``running`` and ``queued``). A target's cases are reported when it ends, so a
    percentage with none yet comes from the cases the running targets finished; the head says so."""
    outcomes = result.target_outcomes
    told = [f"{n} {k}" for k, n in outcomes.items() if k not in ("running", "queued")]
    told += [f"{outcomes[k]} {k}" for k in ("running", "queued") if outcomes.get(k)]
    why = "; cases are reported as each target ends" if not tallies and result.progress_percentage >= 1 else ""
    return (f"{result.run_id} {result.state} {result.progress_percentage:.0f}%: {tallies or 'no case reported yet'}"
            f" in {result.duration_s:.1f}s" + (f" (targets: {', '.join(told)}{why})" if told else ""))


def _failure_groups(failures: list[CaseModel]) -> list[str]:
    """Failing cases, one entry per cause: cases whose head line (exception and message) is the same and that
    failed at the same place once their own test file's frames are left out (ten tests each importing a missing
    module in their body). The first case's brief traceback is shown; the others are named after ``same:`` when
    their brief tracebacks are the first's again, after ``same cause:`` when only their own frames differ."""
    groups: dict[tuple[str, str, str], list[tuple[CaseModel, str]]] = {}
    for case in failures:
        first = _first_line(case.message, case.exception_type)
        opening = case.message.strip().splitlines()[0] if case.message.strip() else ""
        traceback = _without_type_at_end(brief_traceback(case.traceback, first, opening), case.exception_type)
        place = _failing_place(case) if first else None
        # No frame to tell the test's own from the code's (or no head line): only an identical traceback folds.
        key = (case.outcome, first, f"\0{place}" if place is not None else traceback)
        groups.setdefault(key, []).append((case, traceback))
    lines: list[str] = []
    for (outcome, first, _), members in groups.items():
        (case, traceback), others = members[0], members[1:]
        lines.append(f"{outcome.upper()} {path_text(case.case_id)}: {first}".rstrip(": "))
        same = [c.case_id for c, t in others if t == traceback]
        alike = [c.case_id for c, t in others if t != traceback]
        if same:
            lines.append("  same: " + " ".join(case_ids([case.case_id, *same])[1:]))
        if alike:
            lines.append("  same cause: " + " ".join(case_ids(alike)))
        if traceback:
            lines.append(traceback)
    return lines


def _continued(result: TestRunResult) -> str:
    """A later page of ``include='cases'`` or ``'targets'``: its items and the next cursor, not the summary and the
    failures again (2.6 KB a page)."""
    lines = [f"{result.run_id} (continued)"]
    lines += [_case_line(case) for case in result.cases]
    if not result.cases:
        lines += [f"{t.outcome.upper()} {quoted_path(t.target_id)}: {_attempts(t)}" if t.attempts else
                  f"{t.outcome.upper()} {quoted_path(t.target_id)}" for t in result.targets]
    if result.next_cursor:
        lines.append(f"next cursor: {result.next_cursor}")
    return "\n".join(lines)


#: A failing case's head line in a cases listing, at most (characters): its traceback is in the record.
_CASE_HEAD_CHARS = 200


def _case_line(case: CaseModel) -> str:
    """``failed t.py::test_x 0.002s: ValueError: bad``, as ``pytest -rf`` names a failure: a failing case with
    its exception's head line (the listing is where failures past the summary's are read)."""
    line = f"{case.outcome} {path_text(case.case_id)} {case.duration_s:.3f}s"
    head = _first_line(case.message, case.exception_type) if case.outcome in ("failed", "error") else ""
    if len(head) > _CASE_HEAD_CHARS:
        head = head[:_CASE_HEAD_CHARS - 1] + "…"
    return f"{line}: {head}" if head else line


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
                lines.append(f"  NOT RUN {path_text(unit.name)} ({quoted_path(unit.path)})")
            elif unit.lines_run < unit.lines:
                lines.append(f"  {path_text(unit.name)}: {unit.lines_run}/{unit.lines} lines, not run: "
                             + ",".join(str(n) for n in unit.missed))
        if c.changed_total > len(c.changed):
            lines.append(f"  … {c.changed_total - len(c.changed)} more changed definition(s) in the record")
    elif c.import_time_lines:
        lines.append(f"changed code: {c.import_time_lines} changed line(s) run at import, not measured")
    return lines
