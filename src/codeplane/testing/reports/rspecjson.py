"""RSpec ``--format json``. Grouping key: the spec file (``./spec/x_spec.rb`` without the ``./``)."""

from __future__ import annotations

import json
from typing import Any

from codeplane.testing.model import CaseOutcome
from codeplane.testing.reports import ParsedCase

_STATUS: dict[str, CaseOutcome] = {"passed": "passed", "failed": "failed", "pending": "skipped"}


def parse_rspec_json(text: str) -> list[ParsedCase]:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed RSpec JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("examples"), list):
        raise ValueError("not an RSpec JSON report (no examples)")
    cases = []
    for example in data["examples"]:
        path = str(example.get("file_path", "")).removeprefix("./")
        outcome = _STATUS.get(str(example.get("status")), "error")
        error = example.get("exception") or {}
        message = str(error.get("message") or example.get("pending_message") or "")
        trace = "\n".join(str(line) for line in error.get("backtrace") or [])
        cases.append(ParsedCase(group=path, name=str(example.get("full_description") or example.get("id")),
                                outcome=outcome, duration_s=float(example.get("run_time") or 0.0),
                                message=message, exception_type=str(error.get("class") or ""),
                                traceback=f"{message}\n{trace}".strip() if outcome == "failed" else ""))
    errors = int(data.get("summary", {}).get("errors_outside_of_examples_count") or 0)
    if errors and not cases:
        messages = "\n".join(str(m) for m in data.get("messages") or [])
        cases.append(ParsedCase(group="", name="(load)", outcome="error",
                                message=messages.split("\n", 1)[0] or "errors outside of examples",
                                traceback=messages))
    return cases
