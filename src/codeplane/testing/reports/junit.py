"""JUnit XML (pytest ``--junitxml``, Maven Surefire, Gradle, ``mix`` JUnitFormatter).

Grouping key: the ``file`` attribute when present (pytest), else ``classname`` (Surefire, Gradle).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from codeplane.testing.model import CaseOutcome
from codeplane.testing.reports import ParsedCase, exception_type_of


def _seconds(text: str | None) -> float:
    try:
        return float(text or 0.0)
    except ValueError:
        return 0.0


def _case(node: ET.Element) -> ParsedCase:
    classname = node.get("classname", "")
    name = node.get("name", "")
    group = node.get("file") or classname
    outcome: CaseOutcome = "passed"
    message = exc = trace = ""
    for child in node:
        tag = child.tag.rsplit("}", 1)[-1]
        if tag in ("failure", "error"):
            outcome = "failed" if tag == "failure" else "error"
            message = child.get("message", "") or (child.text or "").strip().split("\n", 1)[0]
            exc = child.get("type", "") or exception_type_of(message)
            trace = child.text or ""
            break
        if tag == "skipped":
            kind = child.get("type", "")
            outcome = "xfail" if kind == "pytest.xfail" else "skipped"
            message = child.get("message", "") or (child.text or "")
    qualified = f"{classname}::{name}" if classname else name
    file = node.get("file")
    if file:
        # pytest xunit1: classname is ``pkg.module.Class``; keep only the part after the file's module.
        module = file.removesuffix(".py").replace("/", ".")
        inner = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
        qualified = f"{inner.replace('.', '::')}::{name}" if inner else name
    return ParsedCase(group=group, name=qualified, outcome=outcome, duration_s=_seconds(node.get("time")),
                      message=message, exception_type=exc, traceback=trace)


def parse_junit(xml_text: str) -> list[ParsedCase]:
    """Every ``<testcase>`` in document order. Raises ``ValueError`` on malformed XML."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"malformed JUnit XML: {exc}") from exc
    return [_case(node) for node in root.iter() if node.tag.rsplit("}", 1)[-1] == "testcase"]
