"""The text a model reads for test discovery and impact (issue 16): the ids a next run takes, each command and
each shared reason said once."""

from __future__ import annotations

from codeplane.server.tools.tests_models import ImpactCaseModel, ImpactMatchModel, ImpactModel, TargetModel
from codeplane.server.tools.tests_render import render_impact, render_targets


def _target(target_id: str, *cases: str, cost: float = 1.0) -> TargetModel:
    cmd = ["/venv/bin/python", "-m", "pytest", *([f"{target_id}::{c}" for c in cases] or [target_id])]
    return TargetModel(target_id=target_id, runner="pytest", lang="python", kind="unit", cwd=".", cmd=cmd,
                       estimated_cost=cost, cases=list(cases))


def test_targets_run_alike_share_one_command_line_and_name_their_cases() -> None:
    lines = render_targets([_target("tests/test_a.py", cost=1.25), _target("tests/test_b.py", "test_x", "test_y")])
    assert lines == ["pytest python unit (cwd .): /venv/bin/python -m pytest <target>",
                     "  tests/test_a.py ~1.2s",
                     "  tests/test_b.py ~1.0s: test_x test_y"], lines
    assert render_targets([_target("tests/test_b.py", "test_x")], case_names=False)[1] == \
        "  tests/test_b.py ~1.0s: 1 case(s)"


def _impact(matches: list[ImpactMatchModel]) -> ImpactModel:
    return ImpactModel(confidence="partial", changed_modules=["pkg.util"], unresolved_files=["x.bin"],
                       matches=matches, matches_total=len(matches), high=2, low=1, null_literal_imports=0,
                       source_dirs=["pkg"], changed_symbols=["pkg.util.helper"],
                       agentic_hint="run the low ones too")


def test_impact_says_shared_reasons_once_and_each_case_chain_without_the_test_again() -> None:
    shared = ["imports pkg (exact)", "runs under tests/conftest.py"]
    lines = render_impact(_impact([
        ImpactMatchModel(test_file="tests/test_a.py", confidence="high", reasons=shared),
        ImpactMatchModel(test_file="tests/test_b.py", confidence="high", reasons=shared),
        ImpactMatchModel(test_file="tests/test_c.py", confidence="low",
                         reasons=["tests/test_c.py::test_k → pkg.app.main → pkg.util.helper (changed)"],
                         cases=[ImpactCaseModel(case="test_k", confidence="low",
                                                chain=["tests/test_c.py::test_k", "pkg.app.main",
                                                       "pkg.util.helper (changed)"]),
                                ImpactCaseModel(case="test_m", confidence="high", source="coverage")]),
    ]))
    assert lines == [
        "impact partial: 3 test files (2 high, 1 low) for pkg.util.helper",
        "low tests/test_c.py",
        "  2 case(s): test_k test_m (high, coverage)",
        "  test_k → pkg.app.main → pkg.util.helper (changed)",
        "high, imports pkg (exact); runs under tests/conftest.py:",
        "  tests/test_a.py",
        "  tests/test_b.py",
        "unresolved files: x.bin",
        "source dirs: pkg",
        "hint: run the low ones too",
    ], lines


def test_go_packages_are_counted_as_packages() -> None:
    # go-cmp: "impact complete: 4 test files" named four package directories.
    go = [ImpactMatchModel(test_file=p, confidence="high", reasons=["imports the changed package"])
          for p in ("cmp", "cmp/cmpopts")]
    assert render_impact(_impact(go))[0].startswith("impact partial: 2 test packages ")
    mixed = [*go, ImpactMatchModel(test_file="tests/test_a.py", confidence="high", reasons=["imports pkg"])]
    assert render_impact(_impact(mixed))[0].startswith("impact partial: 3 test targets ")


def test_a_chain_another_file_already_showed_is_said_up_to_where_they_meet() -> None:
    """click's ``utils.py``: nineteen files each printed the same seven calls from ``BaseCommand.main`` down to the
    changed function, ~250 bytes a file."""
    tail = ["click.core.BaseCommand.main", "click.core.BaseCommand._main_shell_completion",
            "click.shell_completion.shell_complete", "click.utils.make_default_short_help (changed)"]

    def match(test: str, helper: str) -> ImpactMatchModel:
        return ImpactMatchModel(test_file=test, confidence="low", reasons=[], cases=[
            ImpactCaseModel(case="test_x", confidence="low", chain=[f"{test}::test_x", helper, *tail])])

    lines = render_impact(_impact([match("tests/test_a.py", "tests.helpers.run"),
                                   match("tests/test_b.py", "tests.helpers.invoke")]))
    chains = [line for line in lines if line.startswith("  test_x")]
    assert chains == [f"  test_x → tests.helpers.run → {' → '.join(tail)}",
                      "  test_x → tests.helpers.invoke → click.core.BaseCommand.main → … (as above)"], chains
