"""Rust libtest's stable console format (``cargo test``), the only stable machine-readable output.

libtest's JSON format needs nightly (``-Z unstable-options``); its pretty format is fixed and line based:
``test <name> ... ok|FAILED|ignored``, then ``---- <name> stdout ----`` sections, then ``test result:``.

A failing test's captured output is printed verbatim inside its section, so it may hold lines shaped like results
or a summary (a test that logs a sub-runner's output): inside the failures part, only a ``---- <failed test>
stdout ----`` header or the closing ``failures:`` list ends a section. Output no test captured (a child process
writing without a newline) can precede a result line on the same line, so a result line that does not start the
line is still read, when what follows ``test `` is a test name's shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from codeplane.testing.model import CaseOutcome
from codeplane.testing.reports import ParsedCase

# A doc-test's name has spaces (``src/lib.rs - add (line 3)``, with `` - compile fail`` for such an example).
_RESULT = re.compile(r"^test (?P<name>.+?)(?: - (?:should panic|compile fail))? \.\.\. "
                     r"(?P<status>ok|FAILED|ignored(?:, .*)?)$")
#: A result line after output that did not end its line: the name must look like a test path or a doc-test.
_LATE_RESULT = re.compile(r"test (?P<name>[A-Za-z_][\w:#]*|\S+ - .+? \(line \d+\))"
                          r"(?: - (?:should panic|compile fail))? \.\.\. (?P<status>ok|FAILED|ignored(?:, .*)?)$")
_RUNNING = re.compile(r"^running \d+ tests?$")
_SECTION = re.compile(r"^---- (?P<name>.+?) stdout ----$")
_SUMMARY = re.compile(r"^test result: (?P<status>ok|FAILED)\. .*finished in (?P<secs>[0-9.]+)s$")
_PANIC = re.compile(r"^thread '.*' panicked at ")
_OLD_PANIC = re.compile(r"^thread '.*' panicked at '(?P<message>.*)', \S+:\d+:\d+$")
#: Rust ≥ 1.87 prints the thread id (``thread 'x' (12345) panicked``): run-specific, so dropped.
_THREAD_ID = re.compile(r"^(thread '[^']*') \(\d+\)")


@dataclass
class LibtestStream:
    """Feed stdout lines of one test binary run (or several in a row)."""

    results: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    details: dict[str, list[str]] = field(default_factory=dict)
    summaries: list[tuple[str, float]] = field(default_factory=list)
    _section: str | None = None
    #: ``results`` (test lines), ``failures`` (the captured output of each failed test), ``listing`` (the
    #: closing list of failed names, up to the summary).
    _phase: str = "results"

    def feed(self, line: str) -> None:
        line = line.rstrip("\n")
        if self._phase == "results":
            match = _RESULT.match(line) or _LATE_RESULT.search(line)
            if match:
                name = match["name"]
                if name not in self.results:
                    self.order.append(name)
                self.results[name] = match["status"]
                return
        section = _SECTION.match(line)
        if section and self._phase != "listing" and self.results.get(section["name"]) == "FAILED":
            self._phase = "failures"
            self._section = section["name"]
            self.details[self._section] = []
            return
        if line == "failures:":
            # The first one opens the failed tests' output; the one after a section opens the closing list.
            self._phase = "listing" if self._section is not None else "failures"
            self._section = None
            return
        summary = _SUMMARY.match(line)
        if summary and self._section is None:
            self.summaries.append((summary["status"], float(summary["secs"])))
            self._phase = "results"
            return
        if self._section is not None:
            self.details[self._section].append(_THREAD_ID.sub(r"\1", line))
        elif _RUNNING.match(line):
            self._phase = "results"

    def cases(self, group: str) -> list[ParsedCase]:
        cases = []
        for name in self.order:
            status = self.results[name]
            outcome: CaseOutcome = "passed" if status == "ok" else "failed" if status == "FAILED" else "skipped"
            body = "\n".join(self.details.get(name, [])).strip()
            message = ""
            if outcome == "failed":
                lines = body.splitlines()
                # The line after "thread '...' panicked at file:line:col:" is the panic message.
                for i, text in enumerate(lines):
                    old_style = _OLD_PANIC.match(text)
                    if old_style:  # Rust < 1.73: the message is quoted on the panic line itself
                        message = old_style["message"]
                        break
                    if _PANIC.match(text):
                        message = lines[i + 1].strip() if i + 1 < len(lines) else text
                        break
                message = message or (lines[0] if lines else "test failed")
            elif outcome == "skipped" and "," in status:
                message = status.split(",", 1)[1].strip()
            cases.append(ParsedCase(group=group, name=name, outcome=outcome, message=message,
                                    exception_type="panic" if outcome == "failed" else "",
                                    traceback=body if outcome == "failed" else ""))
        return cases

    @property
    def duration_s(self) -> float:
        return sum(secs for _, secs in self.summaries)
