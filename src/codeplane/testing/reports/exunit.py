"""ExUnit console output (``mix test``). ExUnit ships no machine format, so this is the one text parser.

Only failures are itemised by ExUnit (``  1) test name (Module)`` then ``file:line``); passes are counted
from the summary line ``N tests, M failures[, K skipped|excluded]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codeplane.testing.reports import ParsedCase

_FAILURE = re.compile(r"^\s+\d+\) (?P<kind>test|doctest) (?P<name>.+) \((?P<module>[\w.]+)\)$")
_LOCATION = re.compile(r"^\s+(?P<file>\S+\.exs?):(?P<line>\d+)$")
_SUMMARY = re.compile(r"^(?:(?P<doctests>\d+) doctests?, )?(?P<tests>\d+) tests?, (?P<failures>\d+) failures?"
                      r"(?:.*?(?P<skipped>\d+) (?:skipped|excluded))?")


@dataclass(frozen=True)
class ExUnitReport:
    failures: list[ParsedCase]
    total: int
    failed: int
    skipped: int

    @property
    def passed(self) -> int:
        return max(self.total - self.failed - self.skipped, 0)


def parse_exunit(text: str) -> ExUnitReport:
    lines = text.splitlines()
    failures: list[ParsedCase] = []
    total = failed = skipped = 0
    i = 0
    while i < len(lines):
        match = _FAILURE.match(lines[i])
        if match:
            body: list[str] = []
            j = i + 1
            while j < len(lines) and not _FAILURE.match(lines[j]) and not _SUMMARY.match(lines[j]):
                if lines[j].startswith("Finished in"):
                    break
                body.append(lines[j])
                j += 1
            location = next((_LOCATION.match(b) for b in body if _LOCATION.match(b)), None)
            group = location["file"] if location else ""
            detail = [b.strip() for b in body if b.strip() and not _LOCATION.match(b)]
            failures.append(ParsedCase(group=group, name=f"{match['kind']} {match['name']} ({match['module']})",
                                       outcome="failed", message=detail[0] if detail else "test failed",
                                       exception_type="ExUnit.AssertionError" if any(
                                           "Assertion" in d for d in detail[:1]) else "",
                                       traceback="\n".join(body).strip()))
            i = j
            continue
        summary = _SUMMARY.match(lines[i])
        if summary:
            total = int(summary["tests"]) + int(summary["doctests"] or 0)
            failed = int(summary["failures"])
            skipped = int(summary["skipped"] or 0)
        i += 1
    return ExUnitReport(failures=failures, total=total, failed=failed, skipped=skipped)
