"""Parsers for runners' machine-readable reports. Pure functions: text in, :class:`ParsedCase` out.

Each parser knows one format (JUnit XML, ``go test -json``, libtest, jest/vitest JSON, TRX, RSpec JSON,
ExUnit). A parser never decides target identity: it reports the format's own grouping key (a file, a
package, a class) and the runner maps that to a target id.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeplane.testing.model import (
    MESSAGE_CHARS,
    TRACEBACK_CHARS,
    CaseOutcome,
    CaseResult,
    clip_head,
    clip_tail,
)


@dataclass(frozen=True)
class ParsedCase:
    """One test case as a report describes it."""

    #: The report's grouping key: a file path, a Go package, a class name.
    group: str
    #: The case name inside the group (``Class::test_x``, ``TestFoo/sub``, ``mod::tests::it_works``).
    name: str
    outcome: CaseOutcome
    duration_s: float = 0.0
    message: str = ""
    exception_type: str = ""
    traceback: str = ""

    def to_case(self, target_id: str, case_id: str) -> CaseResult:
        return CaseResult(
            case_id=case_id, target_id=target_id, outcome=self.outcome, duration_s=round(self.duration_s, 6),
            message=clip_head(self.message.strip(), MESSAGE_CHARS),
            exception_type=clip_head(self.exception_type.strip(), 200),
            traceback=clip_tail(self.traceback.rstrip(), TRACEBACK_CHARS),
        )


def clip_ends(text: str, limit: int) -> str:
    """The first and last parts of ``text`` within ``limit`` characters: a file that fails to load says what went
    wrong at the start (``SyntaxError …`` and its code frame) and ends in the loader's frames, so a tail alone
    kept only the frames."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return text[:head] + "\n…\n" + text[-(limit - head - 3):]


def exception_type_of(message: str) -> str:
    """``ValueError`` from ``ValueError: boom``; ``AssertionError`` for a bare ``assert`` message."""
    head = message.strip().split("\n", 1)[0]
    name, sep, _ = head.partition(":")
    if sep and name and " " not in name.strip() and len(name) < 120:
        return name.strip()
    return "AssertionError" if head.startswith("assert") else ""
