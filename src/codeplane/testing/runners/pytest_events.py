"""Parsing the event stream of CodePlane's pytest plugin (``_pytest_plugin``) for one batch process.

One event per line: ``collected`` (cases and collection seconds per file), ``start``/``report`` per test
phase, ``collect_error``, ``ignored``, ``pool``/``claimed`` (the process shares a pool, ``testing/pool.py``,
and took these files: the others are another process's to report), ``collecting`` (the file being imported:
a hang there is that file's), ``interrupted`` (``KeyboardInterrupt``/``pytest.exit()``: why, and the tests that
never started) and ``finish`` (with ``stopped`` when ``-x``/``--maxfail`` ended the session early). JUnit XML is
the fallback when no event arrived.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from codeplane.testing.model import CaseOutcome, CaseResult, Target, TargetResult
from codeplane.testing.reports import ParsedCase, exception_type_of
from codeplane.testing.reports.junit import parse_junit
from codeplane.testing.runners.base import BatchParser, Invocation, error_result, result_from_cases
from codeplane.testing.runners.unmatched import unmatched_message

#: pytest exit code 5: no tests were collected.
NO_TESTS_COLLECTED = 5
#: The plugin's switch for sharing a pool directory (``testing/pool.py``).
POOL_ENV = "CODEPLANE_PYTEST_POOL"
#: A dead process's error at most: the answer keeps a message's last 1,500 characters, and the head line (the
#: test, the signal) must survive that.
_DEATH_MESSAGE_CHARS = 1_400
#: A frame of pytest's or pluggy's own in faulthandler's dump: the same dozen lines for every crash.
_RUNNER_FRAME = re.compile(r'^\s*File "[^"]*[\\/](?:_pytest|pluggy)[\\/]')


#: pytest's words for a conftest.py it could not import (before any plugin hook ran: no event says which).
_CONFTEST_ERROR = re.compile(r"while loading conftest '([^']+)'")

#: A collection error no re-run changes: the file (or a conftest) does not compile.
_SYNTAX_ERROR = re.compile(r"^(?:E\s+)?(?:SyntaxError|IndentationError|TabError)\b", re.MULTILINE)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _file_key(path: str) -> str:
    return os.path.normpath(path)


class _Attempt:
    """The phase reports of a batch's tests."""

    def __init__(self) -> None:
        self.phases: dict[str, list[dict[str, Any]]] = {}
        self.case_target: dict[str, str] = {}
        self.finished: dict[str, int] = {}
        self.first_t: dict[str, float] = {}
        self.last_t: dict[str, float] = {}
        #: Targets with a failed phase (kept as reports arrive: the watchdog asks at every poll).
        self.failed: set[str] = set()

    def start(self, target: str, t: float) -> None:
        self.first_t.setdefault(target, t)

    def report(self, target: str, event: dict[str, Any]) -> None:
        nodeid = str(event.get("nodeid"))
        self.case_target[nodeid] = target
        self.phases.setdefault(nodeid, []).append(event)
        self.last_t[target] = float(event.get("t", 0.0))
        if event.get("outcome") == "failed":
            self.failed.add(target)
        if event.get("when") == "teardown":
            self.finished[target] = self.finished.get(target, 0) + 1

    def span(self, target: str) -> float:
        return max(self.last_t.get(target, 0.0) - self.first_t.get(target, 0.0), 0.0)


class PytestParser(BatchParser):
    def __init__(self, repo_root: Path, targets: Sequence[Target], invocation: Invocation) -> None:
        self.repo_root = repo_root
        self.invocation = invocation
        self.targets = {t.target_id: t for t in targets}
        self.by_file: dict[str, str] = {}
        for t in targets:
            for candidate in (repo_root / t.path, (repo_root / t.path).resolve()):
                self.by_file[_file_key(str(candidate))] = t.target_id
        self.collected: dict[str, int] = {}
        #: Seconds pytest spent collecting each target (importing the module, generating parameters).
        self.collect_s: dict[str, float] = {}
        self.collect_errors: dict[str, str] = {}
        #: Cases asked for by name that the target's file does not hold, and (some of) the cases it holds.
        self.unmatched: dict[str, tuple[list[str], list[str], int]] = {}
        #: Files pytest's own collection rules exclude (``collect_ignore``): reported as skipped.
        self.ignored: set[str] = set()
        #: Files skipped whole while pytest imported them (``importorskip``), with the reason.
        self.collect_skips: dict[str, str] = {}
        self.main = _Attempt()
        self.current: str | None = None
        #: The test started and not yet torn down: the one running when the process died, if it did.
        self.running: str | None = None
        self.exitstatus: int | None = None
        self.saw_events = False
        #: Shared targets (another process may take them), those this one took, and whether the plugin
        #: shared at all (pytest-xdist in the repo's options: it then ran every target itself).
        self.pooled = self._pooled(invocation)
        self.claimed: set[str] = set()
        self.pool_seen = False
        #: Top-level modules the tests imported from outside the project that holds their source → where from.
        self.outside: dict[str, str] = {}
        #: The file being imported (collected) before any test started: the one to blame for a hang there.
        self.collecting: str | None = None
        #: ``KeyboardInterrupt``/``pytest.exit()`` ended the session: what, why, and the tests never started.
        self.interrupted: tuple[str, str, list[str], int] | None = None
        #: Why pytest stopped before the end (``-x``/``--maxfail``: "stopping after 1 failures"), else "".
        self.stopped = ""
        #: Targets left out of the answer because another's conftest broke the process: they run again alone.
        self.innocent = False

    def _pooled(self, invocation: Invocation) -> set[str]:
        directory = invocation.env.get(POOL_ENV)
        if not directory:
            return set()
        try:
            lines = (Path(directory) / "pool.txt").read_text(encoding="utf-8").splitlines()
        except OSError:
            return set()
        return {t for t in (self._target(line) for line in lines if line) if t is not None}

    def _mine(self, target: str) -> bool:
        return target not in self.pooled or target in self.claimed or (
            self.exitstatus is not None and not self.pool_seen)

    def claimed_targets(self) -> set[str] | None:
        return set(self.claimed) if self.pool_seen else None

    @property
    def live(self) -> bool:
        return True

    def _target(self, file: str) -> str | None:
        return self.by_file.get(_file_key(file))

    def feed_event(self, line: str) -> None:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return
        self.saw_events = True
        kind = event.get("ev")
        if kind == "collecting":
            self.collecting = self._target(str(event.get("file", "")))
        elif kind == "collected":
            self.collecting = None
            for file, count in (event.get("files") or {}).items():
                target = self._target(file)
                if target:
                    self.collected[target] = self.collected.get(target, 0) + int(count)
            for file, seconds in (event.get("collect_s") or {}).items():
                target = self._target(file)
                if target:
                    self.collect_s[target] = self.collect_s.get(target, 0.0) + float(seconds)
        elif kind == "outside":
            self.outside.update((str(k), str(v)) for k, v in (event.get("modules") or {}).items())
        elif kind == "ignored":
            target = self._target(str(event.get("file", "")))
            if target:
                self.ignored.add(target)
        elif kind == "unmatched":
            target = self._target(str(event.get("file", "")))
            if target:
                held = [str(c) for c in event.get("held") or ()]
                self.unmatched[target] = ([str(c) for c in event.get("cases") or ()], held,
                                          int(event.get("held_total") or len(held)))
        elif kind == "collect_skip":
            target = self._target(str(event.get("file", "")))
            if target:
                self.collect_skips[target] = str(event.get("reason", ""))
        elif kind == "collect_error":
            target = self._target(str(event.get("file", "")))
            if target:
                self.collect_errors[target] = str(event.get("longrepr", ""))
        elif kind in ("start", "report"):
            self._test_event(kind, event)
        elif kind == "pool":
            self.pool_seen = True
        elif kind == "claimed":
            target = self._target(str(event.get("file", "")))
            if target:
                self.claimed.add(target)
        elif kind == "interrupted":
            self.interrupted = (str(event.get("kind") or "KeyboardInterrupt"), str(event.get("reason") or ""),
                                [f"{self._target(str(f)) or ''}\0{n}" for f, n in event.get("not_run") or ()],
                                int(event.get("not_run_total") or 0))
        elif kind == "finish":
            self.exitstatus = int(event.get("exitstatus", 0))
            self.stopped = str(event.get("stopped") or "")
            self.current = self.collecting = None

    def _test_event(self, kind: str, event: dict[str, Any]) -> None:
        target = self._target(str(event.get("file", "")))
        record = self.main
        if kind == "start":
            self.current = target
            self.running = str(event.get("nodeid") or "") or None
            if target:
                record.start(target, float(event.get("t", 0.0)))
        elif target is not None:
            subtest = event.get("subtest")
            if subtest is not None:
                # pytest lists each failing subtest on its own (``SUBFAILED(i=1) file::test``) beside its test.
                if event.get("outcome") != "failed":
                    return
                event = {**event, "nodeid": f"{event.get('nodeid')} {subtest}".rstrip()}
            record.report(target, event)
            if event.get("when") == "teardown" and event.get("nodeid") == self.running:
                self.running = None

    def current_target(self) -> str | None:
        return self.current or self.collecting

    def importing(self) -> bool:
        return self.current is None and self.collecting is not None

    def done_targets(self) -> set[str]:
        done = set(self.collect_errors) | self.ignored | set(self.collect_skips)
        for target, count in self.collected.items():
            if self.main.finished.get(target, 0) >= count:
                done.add(target)
        if self.exitstatus is not None:
            done |= set(self.targets)
        return {t for t in done if self._mine(t)}

    def failed_targets(self) -> set[str]:
        return self.main.failed | {t for t in self.collect_errors if self._mine(t)}

    def case_progress(self) -> dict[str, tuple[int, int]]:
        return {t: (self.main.finished.get(t, 0), n) for t, n in self.collected.items() if self._mine(t)}

    def _case(self, nodeid: str, target: str, phases: list[dict[str, Any]]) -> CaseResult:
        outcome: CaseOutcome = "passed"
        message = longrepr = ""
        for phase in phases:
            when, result = phase.get("when"), phase.get("outcome")
            if outcome in ("failed", "error"):
                if result == "failed":
                    # pytest reports both a failed test and its fixture's teardown error (FAILED and ERROR).
                    message += f"\n(and an error in {when}: {phase.get('crash') or ''})"
                    longrepr += f"\n\n--- error in {when} ---\n{phase.get('longrepr') or ''}"
                continue
            if result == "failed":
                outcome = "failed" if when == "call" else "error"
                message = str(phase.get("crash") or "")
                longrepr = str(phase.get("longrepr") or "")
            elif result == "skipped":
                outcome = "xfail" if phase.get("wasxfail") is not None else "skipped"
                message = str(phase.get("wasxfail") or phase.get("skip_reason") or "")
            elif when == "call" and phase.get("wasxfail") is not None:
                # A non-strict xfail that passed (pytest's XPASS): not a plain pass, the marker may be stale.
                outcome, message = "xpass", str(phase.get("wasxfail") or "")
        duration = sum(float(p.get("duration") or 0.0) for p in phases)
        path = self.targets[target].path
        rest = nodeid.split("::", 1)[1] if "::" in nodeid else nodeid
        parsed = ParsedCase(group=path, name=rest, outcome=outcome, duration_s=duration, message=message,
                            exception_type=exception_type_of(message) if outcome in ("failed", "error") else "",
                            traceback=longrepr)
        return parsed.to_case(target, f"{path}::{rest}")

    def _cases(self, record: _Attempt) -> dict[str, dict[str, CaseResult]]:
        by_target: dict[str, dict[str, CaseResult]] = {}
        for nodeid, phases in record.phases.items():
            target = record.case_target[nodeid]
            case = self._case(nodeid, target, phases)
            by_target.setdefault(target, {})[case.case_id] = case
        return by_target

    def died(self) -> bool:
        # An interrupted session is the interrupting file's doing: the others it did not finish go again.
        return self.innocent or (self.saw_events and (self.exitstatus is None or self.interrupted is not None))

    def partial(self, target_id: str) -> tuple[list[CaseResult], str | None]:
        cases = sorted(self._cases(self.main).get(target_id, {}).values(), key=lambda c: c.case_id)
        # A test's reports are flushed at the next start: the hung one is known by its start (``current``) alone.
        owner = self.main.case_target.get(self.running or "") or self.current
        running = self.running if self.running and owner == target_id else None
        return cases, running

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        if not self.saw_events:
            return self._from_junit(exit_code, stdout, stderr, killed)
        by_target = self._cases(self.main)
        results = []
        done = self.done_targets()
        # The process ended without pytest's finish (``os._exit``, a segfault, the OOM killer): the target whose
        # test was running is the one that died; the others it did not finish ran into that and go again.
        died = self.saw_events and self.exitstatus is None and not killed
        interrupted = self.interrupted is not None and not killed
        culprit = self.main.case_target.get(self.running or "") or (self.current if self.running else None)
        if interrupted and culprit is None:
            culprit = self.collecting
        if (died or interrupted) and culprit is None and len(self.targets) == 1:
            culprit = next(iter(self.targets))
        for target_id in self.targets:
            if interrupted and target_id != culprit and not self._complete(target_id):
                continue  # the interruption was another file's: this one runs again in a process of its own
            if (target_id not in done and (killed or (died and target_id != culprit))) or not self._mine(target_id):
                continue
            if died and target_id == culprit:
                cases = sorted(by_target.get(target_id, {}).values(), key=lambda c: c.case_id)
                results.append(error_result(target_id, self._death(exit_code, stderr or stdout, target_id, cases),
                                            exit_code=exit_code, cases=cases))
                continue
            if interrupted and target_id == culprit:
                results.append(self._interruption(target_id, by_target.get(target_id, {}), exit_code))
                continue
            cases = sorted(by_target.get(target_id, {}).values(), key=lambda c: c.case_id)
            duration = self.collect_s.get(target_id, 0.0) + self.main.span(target_id)
            if target_id in self.collect_skips and not cases:
                # pytest counts the file as one skip (``SKIPPED [1] tests/x.py:14: could not import 'y'``)
                path = self.targets[target_id].path
                skip = ParsedCase(group=path, name="", outcome="skipped", duration_s=0.0,
                                  message=self.collect_skips[target_id], exception_type="", traceback="")
                # The reason is the target's message too: the answer lists passing and skipped cases by count
                # only, and "SKIPPED tests/x.py: skipped" said nothing pytest's own line does.
                results.append(result_from_cases(target_id, [skip.to_case(target_id, path)], exit_code=exit_code,
                                                 duration_s=duration, message=self.collect_skips[target_id]))
            elif target_id in self.ignored and not cases:
                results.append(TargetResult(target_id=target_id, outcome="skipped", exit_code=exit_code,
                                            message="ignored by pytest's collection rules (collect_ignore/--ignore)"))
            elif target_id in self.collect_errors:
                message = self.collect_errors[target_id]
                results.append(replace(error_result(target_id, message, exit_code=exit_code, duration_s=duration,
                                                    cases=cases), settled=_SYNTAX_ERROR.search(message) is not None))
            elif target_id in self.unmatched:
                missing, held, held_total = self.unmatched[target_id]
                results.append(replace(error_result(
                    target_id, unmatched_message(self.targets[target_id].path, missing, held, held_total),
                    exit_code=exit_code,
                    duration_s=duration, cases=cases), settled=True))
            elif not cases and exit_code not in (0, 1, NO_TESTS_COLLECTED, None) and self.exitstatus != 0:
                results.append(error_result(target_id, f"pytest exited {exit_code}\n{stderr or stdout}",
                                            exit_code=exit_code))
            elif self.stopped and self.main.finished.get(target_id, 0) < self.collected.get(target_id, 0):
                results.append(self._stopped(target_id, cases, exit_code, duration))
            else:
                results.append(result_from_cases(target_id, cases, exit_code=exit_code, duration_s=duration,
                                                 message=_skip_reason(cases)))
        return results

    def _complete(self, target_id: str) -> bool:
        """Every collected case of the target ran (or it could not run at all: a collection error, skip)."""
        if target_id in self.collect_errors or target_id in self.ignored or target_id in self.collect_skips:
            return True
        return target_id in self.collected and self.main.finished.get(target_id, 0) >= self.collected[target_id]

    def _stopped(self, target_id: str, cases: list[CaseResult], exit_code: int | None,
                 duration: float) -> TargetResult:
        """pytest stopped early (``-x``/``--maxfail`` in the repository's options): what did not run is not_run,
        never skipped (nothing skipped it) and never passed."""
        left = self.collected.get(target_id, 0) - len(cases)
        why = f"pytest stopped ({self.stopped}: -x/--maxfail in the repository's pytest options)"
        if not cases:
            return TargetResult(target_id=target_id, outcome="not_run", exit_code=exit_code,
                                message=f"{why} before this file ran; {left} cases did not run")
        return replace(result_from_cases(target_id, cases, exit_code=exit_code, duration_s=duration),
                       message=f"{why}; {left} of {self.collected[target_id]} cases did not run")

    def _interruption(self, target_id: str, cases: dict[str, CaseResult], exit_code: int | None) -> TargetResult:
        """``KeyboardInterrupt``/``pytest.exit()`` in the target: an error naming the test that raised it (it has
        no report of its own: its setup's "passed" must not stand) and the cases that never ran."""
        assert self.interrupted is not None
        kind, reason, not_run, total = self.interrupted
        path = self.targets[target_id].path
        running = self.running if self.main.case_target.get(self.running or "") == target_id else None
        finished = dict(cases)
        if running is not None:
            rest = running.split("::", 1)[1] if "::" in running else running
            case_id = f"{path}::{rest}"
            finished[case_id] = CaseResult(case_id=case_id, target_id=target_id, outcome="error",
                                           message=f"{kind}: {reason}".rstrip(": "), exception_type=kind)
        own = [n.split("::", 1)[1] for t, _, n in (e.partition("\0") for e in not_run) if t == target_id and "::" in n]
        where = f"while running {running}" if running else "outside any test (collection or session hooks)"
        message = f"pytest was interrupted by {kind} {where}" + (f": {reason}" if reason else "")
        if own:
            more = f" (+{len(own) - 20} more)" if len(own) > 20 else ""
            message += f"\nnot run ({len(own)}): " + ", ".join(own[:20]) + more
        elif total > len(not_run):
            message += f"\n{total} collected tests did not run"
        return error_result(target_id, message, exit_code=exit_code,
                            cases=sorted(finished.values(), key=lambda c: c.case_id))

    def _death(self, exit_code: int | None, output: str, target_id: str, cases: Sequence[CaseResult]) -> str:
        """Which test the process died in, how, and how much of the file ran; then the head of what it printed
        (faulthandler's ``Fatal Python error`` and the test's frame come first, pytest's own frames after)."""
        how = (f"exited {exit_code}" if exit_code is None or exit_code >= 0
               else f"was killed by {_signal_name(-exit_code)}")
        where = f"while running {self.running}" if self.running else "outside any test (collection or session hooks)"
        ran = f"; {len(cases)} of {self.collected[target_id]} cases had finished" if target_id in self.collected else ""
        header = f"the pytest process {how} {where}{ran}"
        kept: list[str] = []
        hidden = 0
        for line in output.strip().splitlines():
            if _RUNNER_FRAME.match(line):
                hidden += 1
                continue
            if hidden:
                kept.append(f"  … {hidden} frames of pytest and pluggy")
                hidden = 0
            kept.append(line)
        if hidden:
            kept.append(f"  … {hidden} frames of pytest and pluggy")
        body = "\n".join(kept)
        room = _DEATH_MESSAGE_CHARS - len(header) - 1
        if len(body) > room:
            body = body[:max(room - 1, 0)] + "…"
        return f"{header}\n{body}".strip()

    def warnings(self) -> list[str]:
        return [outside_warning(sorted(self.outside.items()))] if self.outside else []

    def _conftest_blamed(self, output: str) -> set[str]:
        """Targets in the directory (or below) of a conftest.py pytest could not load."""
        blamed: set[str] = set()
        for match in _CONFTEST_ERROR.finditer(output):
            directory = os.path.dirname(_file_key(match.group(1)))
            for file, target in self.by_file.items():
                if file.startswith(directory + os.sep):
                    blamed.add(target)
        return blamed

    def _from_junit(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        junit = next((p for p in self.invocation.report_files if p.suffix == ".xml"), None)
        if killed or junit is None or not junit.is_file():
            if killed:
                return []
            reason = f"pytest exited {exit_code} without a report\n{stderr or stdout}"
            blamed = self._conftest_blamed(stderr + "\n" + stdout)
            # Only the files under the broken conftest: the others shared the process, not its fault.
            self.innocent = bool(blamed) and len(blamed) < len(self.targets)
            return [error_result(t, reason, exit_code=exit_code) for t in self.targets if not blamed or t in blamed]
        try:
            parsed = parse_junit(junit.read_text(encoding="utf-8", errors="replace"))
        except ValueError as exc:
            return [error_result(t, str(exc), exit_code=exit_code) for t in self.targets]
        by_target: dict[str, list[CaseResult]] = {}
        for case in parsed:
            target = self._target(str(self.invocation.cwd / case.group))
            if target is not None:
                path = self.targets[target].path
                by_target.setdefault(target, []).append(case.to_case(target, f"{path}::{case.name}"))
        return [result_from_cases(t, sorted(by_target.get(t, []), key=lambda c: c.case_id), exit_code=exit_code,
                                  duration_s=sum(c.duration_s for c in by_target.get(t, [])))
                for t in self.targets]


def _skip_reason(cases: list[CaseResult]) -> str:
    """The reason every case of a wholly skipped target was skipped for, when they share one (``skipif`` on the
    module); "" otherwise, the cases keep their own."""
    reasons = {c.message for c in cases if c.outcome in ("skipped", "xfail")}
    if len(reasons) != 1 or not all(c.outcome == "skipped" for c in cases):
        return ""
    return reasons.pop().removeprefix("Skipped: ")  # pytest's exception name, not the reason


def outside_warning(modules: list[tuple[str, str]]) -> str:
    """One warning for every module the tests took from elsewhere: the advice is the same for all (attrs ships
    ``attr`` and ``attrs``, and the advice was said twice in one line)."""
    names = " and ".join(name for name, _ in modules)
    copies = "that copy" if len(modules) == 1 else "those copies"
    imported = ", ".join(f"{name} from {where}" for name, where in modules)
    return (f"the tests imported {imported}, not the repository's {names}: they ran {copies}; install the "
            "project into the test environment (pip install -e .) or set tests.runners.pytest.cmd")
