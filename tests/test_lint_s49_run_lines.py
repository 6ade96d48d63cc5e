"""QA33 #10: a linter's run line says ``ok`` only when it reported nothing; "mypy: ok (5)" read as no problems
when mypy had reported five (on later pages)."""

from __future__ import annotations

from codeplane.lint import ToolRun
from codeplane.server.tools.lint import LintCheckResult, render_lint_check


def _lines(*runs: ToolRun) -> list[str]:
    result = LintCheckResult(diagnostics=[], runs=list(runs), total=5, errors=5, warnings=0, fixable=0, offset=0)
    return render_lint_check(result).splitlines()


def test_run_lines_count_what_a_linter_reported_and_say_ok_only_for_none() -> None:
    lines = _lines(ToolRun(tool="mypy", root=".", status="ok", diagnostics=5),
                   ToolRun(tool="ruff", root=".", status="ok"),
                   ToolRun(tool="ruff", root="web", status="ok", diagnostics=1),
                   ToolRun(tool="eslint", root=".", status="failed", diagnostics=2, message="exit 2"),
                   ToolRun(tool="tsc", root=".", status="timed_out", message="killed after 60s"),
                   ToolRun(tool="biome", root=".", status="missing", message="npm i biome"))
    assert lines[:6] == ["mypy: 5 diagnostics", "ruff: ok", "ruff@web: 1 diagnostic",
                         "eslint: failed, 2 diagnostics - exit 2", "tsc: timed_out - killed after 60s",
                         "biome: missing - npm i biome"]
    assert not any("ok (" in line for line in lines)
