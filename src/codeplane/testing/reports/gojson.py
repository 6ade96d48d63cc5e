"""``go test -json`` event streams (``test2json``), parsed incrementally as lines arrive.

Grouping key: the import path (``Package``). Package-level ``pass``/``fail``/``skip`` events close a
package; a failing package without a failing test is a build or setup error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from codeplane.testing.model import CaseOutcome
from codeplane.testing.reports import ParsedCase

_OUTCOMES: dict[str, CaseOutcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}
_NOISE_PREFIXES = ("=== RUN", "=== PAUSE", "=== CONT", "--- PASS", "--- FAIL", "--- SKIP", "PASS", "FAIL", "ok ")


@dataclass
class PackageState:
    outcome: str | None = None
    elapsed_s: float = 0.0
    output: list[str] = field(default_factory=list)
    tests: dict[str, tuple[str | None, float]] = field(default_factory=dict)
    test_output: dict[str, list[str]] = field(default_factory=dict)


class GoJsonStream:
    """Feed stdout lines; read packages' states at any time. Non-JSON lines are kept as package-less noise."""

    def __init__(self) -> None:
        self.packages: dict[str, PackageState] = {}
        self.order: list[str] = []
        self.current: str | None = None
        self.stray: list[str] = []

    def _pkg(self, name: str) -> PackageState:
        if name not in self.packages:
            self.packages[name] = PackageState()
            self.order.append(name)
        return self.packages[name]

    def feed(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            self.stray.append(line)
            return
        if not isinstance(event, dict) or "Package" not in event:
            return
        pkg = self._pkg(str(event["Package"]))
        action = event.get("Action")
        test = event.get("Test")
        if action not in ("pass", "fail", "skip") or test:
            self.current = str(event["Package"])
        if action == "output":
            text = str(event.get("Output", ""))
            (pkg.test_output.setdefault(str(test), []) if test else pkg.output).append(text)
        elif action in ("run",) and test:
            pkg.tests.setdefault(str(test), (None, 0.0))
        elif action in ("pass", "fail", "skip"):
            elapsed = float(event.get("Elapsed") or 0.0)
            if test:
                pkg.tests[str(test)] = (action, elapsed)
            else:
                pkg.outcome, pkg.elapsed_s = action, elapsed
                if self.current == event["Package"]:
                    self.current = None

    def finished(self) -> set[str]:
        return {name for name, state in self.packages.items() if state.outcome is not None}

    def cases(self, package: str) -> list[ParsedCase]:
        state = self.packages.get(package)
        if state is None:
            return []
        cases = []
        for test in sorted(state.tests):
            action, elapsed = state.tests[test]
            outcome: CaseOutcome = _OUTCOMES.get(action or "", "error")
            lines = [ln for ln in state.test_output.get(test, []) if not ln.strip().startswith(_NOISE_PREFIXES)]
            text = "".join(lines)
            message = ""
            if outcome in ("failed", "skipped", "error"):
                message = next((ln.strip() for ln in lines if ln.strip()), "")
            if action is None:
                message = "test did not finish (the package was killed or crashed)"
            cases.append(ParsedCase(group=package, name=test, outcome=outcome, duration_s=elapsed,
                                    message=message, exception_type="panic" if "panic:" in text else "",
                                    traceback=text if outcome != "passed" else ""))
        return cases

    def package_output(self, package: str) -> str:
        state = self.packages.get(package)
        return "".join(state.output) if state else ""
