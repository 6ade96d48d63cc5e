"""Jest ``--json`` and Vitest ``--reporter=json`` reports (Vitest writes Jest's shape).

Grouping key: the suite's absolute file path (``testResults[].name``). A suite that failed to run
(syntax error, missing module) has no assertions and a ``message``: it becomes one ``error`` case. So does a
suite marked failed whose cases all passed or were skipped (a throwing ``beforeAll``/``afterAll``: vitest skips the
cases, jest passes them, and both runners fail the file and exit 1).
"""

from __future__ import annotations

import json
import re
from typing import Any

from codeplane.testing.model import TRACEBACK_CHARS, CaseOutcome
from codeplane.testing.reports import ParsedCase, clip_ends, exception_type_of

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STATUS: dict[str, CaseOutcome] = {
    "passed": "passed", "failed": "failed", "pending": "skipped", "skipped": "skipped", "todo": "skipped",
    "disabled": "skipped", "focused": "passed",
}


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


_RUNNER_FRAME = re.compile(r"^\s*at .*(?:/node_modules/|\(node:|node:internal)")


def _own_frames(failure: str) -> str:
    """The failure with the test runner's own stack frames (``node_modules``, ``node:internal``) folded into one
    line: they were a dozen lines after the test's own frame, and a bounded excerpt kept them and cut the
    ``Expected``/``Received`` lines and the test's ``file:line``."""
    lines = failure.split("\n")
    kept = [line for line in lines if not _RUNNER_FRAME.match(line)]
    folded = len(lines) - len(kept)
    return "\n".join(kept) + (f"\n    … {folded} frames in node_modules" if folded else "")


#: Jest's heading of a file-level failure, not the failure itself.
_SUITE_HEADING = re.compile(r"^\s*●\s*Test suite failed to run\s*$")
#: A line naming an error (``SyntaxError: /x.test.js: Unexpected token (2:0)``).
_ERROR_LINE = re.compile(r"^\s*[A-Z]\w*(?:Error|Exception)\b[^\n]*:")


def _suite_reason(message: str) -> str:
    """The line that says why a file failed: its error line when there is one, else its first line of text."""
    lines = [line.strip() for line in message.split("\n") if line.strip() and not _SUITE_HEADING.match(line)]
    named = next((line for line in lines if _ERROR_LINE.match(line)), "")
    return named or (lines[0] if lines else "test suite failed to run")


def parse_jest_json(text: str) -> tuple[list[ParsedCase], dict[str, float]]:
    """(cases, per-file duration in seconds). Raises ``ValueError`` if the text is not such a report."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed jest/vitest JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("testResults"), list):
        raise ValueError("not a jest/vitest JSON report (no testResults)")
    cases: list[ParsedCase] = []
    durations: dict[str, float] = {}
    for suite in data["testResults"]:
        path = str(suite.get("name", ""))
        start, end = suite.get("startTime"), suite.get("endTime")
        if isinstance(start, int | float) and isinstance(end, int | float) and end >= start:
            durations[path] = (end - start) / 1000.0
        assertions = suite.get("assertionResults") or []
        for item in assertions:
            titles = [*item.get("ancestorTitles", []), item.get("title", "")]
            name = " > ".join(t for t in titles if t) or str(item.get("fullName", ""))
            outcome = _STATUS.get(str(item.get("status")), "error")
            failure = _own_frames(strip_ansi("\n".join(str(m) for m in item.get("failureMessages") or [])))
            message = failure.strip().split("\n", 1)[0] if failure else ""
            duration = item.get("duration") or 0
            cases.append(ParsedCase(group=path, name=name, outcome=outcome,
                                    duration_s=float(duration) / 1000.0 if isinstance(duration, int | float) else 0.0,
                                    message=message, exception_type=exception_type_of(message) if failure else "",
                                    traceback=failure))
        suite_message = strip_ansi(str(suite.get("message") or "")).strip()
        own_failure = not any(_STATUS.get(str(item.get("status"))) in ("failed", None) for item in assertions)
        if suite.get("status") == "failed" and own_failure:
            reason = _suite_reason(suite_message)
            cases.append(ParsedCase(group=path, name="(suite)", outcome="error", message=reason,
                                    exception_type=exception_type_of(reason),
                                    traceback=clip_ends(suite_message, TRACEBACK_CHARS)))
    return cases, durations
