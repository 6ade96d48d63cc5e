"""Visual Studio TRX (``dotnet test --logger trx``). Grouping key: the test class name."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from codeplane.testing.model import CaseOutcome
from codeplane.testing.reports import ParsedCase, exception_type_of

_OUTCOMES: dict[str, CaseOutcome] = {
    "Passed": "passed", "Failed": "failed", "NotExecuted": "skipped", "Inconclusive": "skipped",
    "Error": "error", "Timeout": "error", "Aborted": "error",
}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _duration(text: str | None) -> float:
    """``00:00:01.2345678`` → seconds."""
    if not text:
        return 0.0
    try:
        hours, minutes, seconds = text.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + float(seconds)
    except ValueError:
        return 0.0


def parse_trx(xml_text: str) -> list[ParsedCase]:
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"malformed TRX: {exc}") from exc
    classes: dict[str, str] = {}
    for node in root.iter():
        if _local(node.tag) == "UnitTest":
            method = next((c for c in node if _local(c.tag) == "TestMethod"), None)
            if method is not None:
                classes[node.get("id", "")] = method.get("className", "")
    cases = []
    for node in root.iter():
        if _local(node.tag) != "UnitTestResult":
            continue
        outcome = _OUTCOMES.get(node.get("outcome", ""), "error")
        message = trace = ""
        for child in node.iter():
            if _local(child.tag) == "Message":
                message = child.text or ""
            elif _local(child.tag) == "StackTrace":
                trace = child.text or ""
        group = classes.get(node.get("testId", ""), "")
        name = node.get("testName", "")
        cases.append(ParsedCase(group=group, name=name, outcome=outcome, duration_s=_duration(node.get("duration")),
                                message=message, exception_type=exception_type_of(message) if message else "",
                                traceback=f"{message}\n{trace}".strip() if outcome != "passed" else ""))
    return cases
