"""Go selection that must not drop a test a change breaks (QA 13): a method called through an interface value,
a promoted method reached through an interface parameter, a method added to an interface, and renamed or retyped
declarations, whose old name's users the index no longer links to anything.

Each case edits a clean, indexed repository (so the index records the file's earlier state, as on a running
server), selects as ``affected_by`` with the changed lines, and checks the selection against what ``go test``
really fails."""

from __future__ import annotations

import difflib
import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import TestingService
from codeplane.testing.impact import ImpactResult
from tests.builders import make_repo
from tests.index_helpers import selecting
from tests.runner_projects import require

QA: dict[str, str] = {
    "go.mod": "module example.com/qa\n\ngo 1.19\n",
    "shape/shape.go": (
        "package shape\n\n"
        "type Shape interface{ Area() int }\n\n"
        "type Square struct{ S int }\n\n"
        "func (q Square) Area() int { return q.S * q.S }\n\n"
        "type Rect struct{ W, H int }\n\n"
        "func (r *Rect) Area() int { return r.W * r.H }\n\n"
        "func Total(xs []Shape) int {\n\tt := 0\n\tfor _, s := range xs {\n\t\tt += s.Area()\n\t}\n\treturn t\n}\n"),
    "shape/shape_test.go": (
        'package shape\n\nimport "testing"\n\n'
        "func TestSquare(t *testing.T) {\n\tif (Square{3}).Area() != 9 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestUnrelated(t *testing.T) {}\n"),
    "util/util.go": 'package util\n\nimport "example.com/qa/shape"\n\n'
                    "func Sum(s ...shape.Shape) int { return shape.Total(s) }\n",
    "util/util_test.go": (
        'package util\n\nimport (\n\t"testing"\n\n\t"example.com/qa/shape"\n)\n\n'
        "func TestSumSquares(t *testing.T) {\n\tif Sum(shape.Square{2}, shape.Square{3}) != 13 {\n"
        "\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestSumRect(t *testing.T) {\n\tif Sum(&shape.Rect{2, 3}) != 6 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestNothing(t *testing.T) {}\n"),
    "animal/animal.go": (
        "package animal\n\n"
        "type Base struct{ N string }\n\n"
        'func (b Base) Name() string { return "animal:" + b.N }\n\n'
        "type Dog struct {\n\tBase\n\tLoud bool\n}\n\n"
        "type Namer interface{ Name() string }\n\n"
        'func Describe(n Namer) string { return "<" + n.Name() + ">" }\n'),
    "animal/animal_test.go": (
        'package animal_test\n\nimport (\n\t"testing"\n\n\t"example.com/qa/animal"\n)\n\n'
        "func TestDescribe(t *testing.T) {\n\td := animal.Dog{Base: animal.Base{N: \"rex\"}}\n"
        '\tif animal.Describe(d) != "<animal:rex>" {\n\t\tt.Fatal()\n\t}\n}\n\n'
        "func TestLoud(t *testing.T) {\n\td := animal.Dog{Loud: true}\n\tif !d.Loud {\n\t\tt.Fatal()\n\t}\n}\n"),
    "calc/calc.go": (
        "package calc\n\n"
        "const Rate = 3\n\n"
        "func Apply(x int) int { return x * Rate }\n\n"
        "func Scale(x int) int { return x * 2 }\n"),
    "calc/calc_test.go": (
        'package calc\n\nimport "testing"\n\n'
        "func TestApply(t *testing.T) {\n\tif Apply(2) != 6 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestScale(t *testing.T) {\n\tif Scale(2) != 4 {\n\t\tt.Fatal()\n\t}\n}\n"),
    "app/app.go": 'package app\n\nimport "example.com/qa/calc"\n\nfunc Run(x int) int { return calc.Scale(x) + 1 }\n',
    "app/app_test.go": 'package app\n\nimport "testing"\n\n'
                       "func TestRun(t *testing.T) {\n\tif Run(1) != 3 {\n\t\tt.Fatal()\n\t}\n}\n",
}

Repo = tuple[Path, IndexService, TestingService]


@pytest.fixture(scope="module")
def qa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    repo = make_repo(tmp_path_factory.mktemp("goqa") / "repo", QA)
    with selecting(repo, retry_failed=False) as (index, service):
        yield repo, index, service


@contextmanager
def edited(qa: Repo, path: str, old: str, new: str) -> Iterator[str]:
    """The repository with ``old`` replaced by ``new`` in ``path``, indexed; yields ``path:lines`` as the adapter
    gives a change against HEAD (replaced and added lines, as the file is now)."""
    repo, index, _ = qa
    file = repo / path
    before = file.read_text()
    assert old in before, old
    file.write_text(before.replace(old, new, 1))
    index.refresh_paths([path])
    spans = [f"{j1 + 1}-{max(j1 + 1, j2)}" for tag, _, _, j1, j2 in difflib.SequenceMatcher(
        None, before.splitlines(), file.read_text().splitlines()).get_opcodes() if tag != "equal"]
    try:
        yield f"{path}:{','.join(spans)}"
    finally:
        file.write_text(before)
        index.refresh_paths([path])


def _selected(qa: Repo, change: str) -> tuple[dict[str, tuple[str, ...]], ImpactResult]:
    view = qa[2].discover(affected_by=[change])
    assert view.impact is not None
    return {t.target_id: t.cases for t in view.targets}, view.impact


def _failing(repo: Path) -> set[tuple[str, str]]:
    """(package directory, test) that ``go test ./...`` fails; the test ``""`` for a package that does not build."""
    done = subprocess.run([require("go"), "test", "-count=1", "-json", "./..."], cwd=repo, capture_output=True,
                          text=True, timeout=300, check=False)
    failed: set[tuple[str, str]] = set()
    for line in done.stdout.splitlines():
        if line.startswith("FAIL\t"):
            failed.add((line.split()[1].removeprefix("example.com/qa/"), ""))
            continue
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event.get("Action") == "fail" and event.get("Test") and "/" not in event["Test"]:
            failed.add((str(event["Package"]).removeprefix("example.com/qa/"), str(event["Test"])))
    return failed


def _covers(selected: dict[str, tuple[str, ...]], failing: set[tuple[str, str]]) -> bool:
    """Whether every failing test runs under the selection (a whole package runs all of its tests; a package that
    does not build fails whatever of it runs)."""
    return all(pkg in selected and (not selected[pkg] or not test or test in selected[pkg]) for pkg, test in failing)


def test_a_method_called_through_an_interface_selects_the_tests_reaching_the_call(qa: Repo) -> None:
    # s.Area() in Total is linked to the interface's method spec: Square.Area is reached through it, by name.
    with edited(qa, "shape/shape.go", "return q.S * q.S", "return q.S*q.S + 1") as change:
        selected, impact = _selected(qa, change)
        failing = _failing(qa[0])
    assert failing == {("shape", "TestSquare"), ("util", "TestSumSquares")}
    assert selected == {"shape": ("TestSquare",), "util": ("TestSumRect", "TestSumSquares")}, selected
    assert _covers(selected, failing)
    util = next(m for m in impact.matches if m.test_file == "util")
    case = next(c for c in util.cases if c.case == "TestSumSquares")
    assert case.confidence == "low" and any("interface call may run shape.Square.Area" in s for s in case.chain)
    assert not impact.fallbacks  # a body edit of a one-line method is no changed declaration


def test_a_pointer_receiver_method_and_a_promoted_method_reached_through_interfaces(qa: Repo) -> None:
    require("go")
    with edited(qa, "shape/shape.go", "return r.W * r.H", "return r.W*r.H + 1") as change:
        selected, _ = _selected(qa, change)
        failing = _failing(qa[0])
    assert failing == {("util", "TestSumRect")}
    assert "TestSumRect" in selected.get("util", ()), selected
    with edited(qa, "animal/animal.go", '"animal:" + b.N', '"animal::" + b.N') as change:
        selected, _ = _selected(qa, change)
        failing = _failing(qa[0])
    assert failing == {("animal", "TestDescribe")}
    assert selected == {"animal": ("TestDescribe",)}, selected


@pytest.mark.parametrize(("path", "old", "new"), [
    ("calc/calc.go", "func Scale(x int) int", "func Scale2(x int) int"),  # a function renamed
    ("calc/calc.go", "func Scale(x int) int", "func Scale(x int64) int64"),  # retyped
    ("shape/shape.go", "func (q Square) Area() int", "func (q Square) Area2() int"),  # a method renamed
    ("shape/shape.go", "func (q Square) Area() int", "func (q Square) Area() int64"),  # retyped
    ("shape/shape.go", "type Rect struct{ W, H int }\n\nfunc (r *Rect)",
     "type Rectangle struct{ W, H int }\n\nfunc (r *Rectangle)"),  # a type renamed
    ("animal/animal.go", "\tLoud bool", "\tNoisy bool"),  # a struct field renamed
    ("animal/animal.go", "interface{ Name() string }", "interface{ Name() string; Age() int }"),  # a method added
    ("animal/animal.go", "\tLoud bool\n", ""),  # a field's line removed: nothing declares it around the lines
], ids=["func-rename", "func-retype", "method-rename", "method-retype", "type-rename", "field-rename",
        "interface-method-added", "field-removed"])
def test_a_changed_declaration_selects_every_package_its_old_users_are_in(qa: Repo, path: str, old: str,
                                                                          new: str) -> None:
    require("go")
    with edited(qa, path, old, new) as change:
        selected, impact = _selected(qa, change)
        failing = _failing(qa[0])
    assert failing, "the change must break something"
    assert _covers(selected, failing), (selected, failing)
    assert any("declaration of" in f for f in impact.fallbacks), impact.fallbacks


def test_a_body_or_value_edit_on_a_declaration_line_stays_precise(qa: Repo) -> None:
    """A one-line function's body and a constant's value share their declaration's line: the index's record of
    the file's earlier state shows the declaration itself unchanged, so the walk still picks test functions."""
    # (Not Scale: the cases above retyped it, and every earlier state of a declaration counts, since which of them
    # the change is against is not known: there a body edit is selected by package imports, wider, never narrower.)
    with edited(qa, "calc/calc.go", "return x * Rate", "return x*Rate + 1") as change:
        selected, impact = _selected(qa, change)
    assert selected == {"calc": ("TestApply",)}, (selected, impact.fallbacks)
    assert not impact.fallbacks
    with edited(qa, "calc/calc.go", "const Rate = 3", "const Rate = 4") as change:
        selected, impact = _selected(qa, change)
    assert selected == {"calc": ("TestApply",)}, (selected, impact.fallbacks)
    assert not impact.fallbacks
