"""Go test selection at test-function level (issue 22): changed Go definitions → the ``Test*`` functions that
reach them through the structural index's references, run with ``go test -run '^(TestA|TestB)$'``; what runs
when a package loads selects whole every test package that imports it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.testing import ImpactIndex, TestingService
from codeplane.testing.impact import ImpactResult
from tests.builders import make_repo
from tests.runner_projects import require

SHOP: dict[str, str] = {
    "go.mod": "module example.com/shop\n\ngo 1.19\n",
    "calc/calc.go": (
        "package calc\n\n"                                   # 1-2
        "func Add(a, b int) int {\n\treturn a + b\n}\n\n"    # 3-6
        "func Mul(a, b int) int {\n\treturn a * b\n}\n\n"    # 7-10
        "func Twice(a int) int {\n\treturn Add(a, a)\n}\n\n"  # 11-14
        "type Acc struct{ n int }\n\n"                       # 15-16
        "func (c *Acc) Push(v int) {\n\tc.n = Add(c.n, v)\n}\n\n"  # 17-20
        "var Base = one()\n\n"                               # 21
        "func one() int { return 1 }\n\n"                    # 23
        # A one-line method's body is on its header line; a function literal stored, not called, never runs at
        # import time: neither is package-level code.
        "func (c *Acc) Get() int { return Add(c.n, 1) }\n\n"  # 25
        "var _ = func(a Acc) {\n\ta.Get()\n}\n"),             # 27-29
    "calc/calc_test.go": (
        'package calc\n\nimport (\n\t"fmt"\n\t"testing"\n)\n\n'
        # Reach Add too, and go test runs neither: not cases (-run would miss them, an error).
        "func BenchmarkAdd(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tAdd(1, 2)\n\t}\n}\n\n"
        "func ExampleTwice() {\n\tTwice(1)\n}\n\n"
        "func ExampleAdd() {\n\tfmt.Println(Add(1, 2))\n\t// Output: 3\n}\n\n"
        "func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestTwice(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestGet(t *testing.T) {\n\tvar a Acc\n\tif a.Get() != 1 {\n\t\tt.Fatal()\n\t}\n}\n\n"
        "func TestAcc(t *testing.T) {\n\tvar a Acc\n\ta.Push(2)\n\tif a.n != 2 {\n\t\tt.Fatal()\n\t}\n}\n"),
    "use/use.go": 'package use\n\nimport "example.com/shop/calc"\n\nfunc Sum3(a, b, c int) int {\n'
                  "\treturn calc.Add(calc.Add(a, b), c)\n}\n\n"
                  # A blank at package level, whose ``_`` is no use of calc's ``var _``.
                  "var (\n\t_ int = calc.Base\n)\n",
    "use/use_test.go": ('package use_test\n\nimport (\n\t"testing"\n\n\t"example.com/shop/use"\n)\n\n'
                        "func TestSum3(t *testing.T) {\n\tif use.Sum3(1, 2, 3) != 6 {\n\t\tt.Fatal()\n\t}\n}\n\n"
                        "func TestNothing(t *testing.T) {}\n"),
    "other/other.go": "package other\n\nfunc Same() int { return 1 }\n",
    "other/other_test.go": 'package other\n\nimport "testing"\n\nfunc TestSame(t *testing.T) {\n'
                           "\tif Same() != 1 {\n\t\tt.Fatal()\n\t}\n}\n",
}


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService, TestingService]]:
    repo = make_repo(tmp_path_factory.mktemp("go") / "repo", SHOP)
    index = IndexService(repo, RepoLayout(repo), CodePlaneConfig().index)
    index.register_indexer(StructuralIndexer())
    index.start()
    assert index.wait_ready(60)
    layout = RepoLayout(repo)
    service = TestingService(repo, CodePlaneConfig().tests.model_copy(update={"retry_failed": False}), layout,
                             ArtifactStore(layout.artifacts_dir, 1), impact=ImpactIndex(index.read_connection))
    try:
        yield repo, index, service
    finally:
        service.close()
        index.stop()


def _selected(service: TestingService, *changes: str) -> tuple[dict[str, tuple[str, ...]], ImpactResult]:
    view = service.discover(affected_by=list(changes))
    assert view.impact is not None
    return {t.target_id: t.cases for t in view.targets}, view.impact


def test_a_changed_function_selects_the_test_functions_that_reach_it(
        shop: tuple[Path, IndexService, TestingService]) -> None:
    _, _, service = shop
    selected, impact = _selected(service, "calc/calc.go:4")
    # TestAcc: a.Push() on a local is matched by name (low); TestSum3 reaches calc.Add through use.Sum3.
    assert selected == {"calc": ("ExampleAdd", "TestAcc", "TestAdd", "TestGet", "TestTwice"), "use": ("TestSum3",)}
    assert not impact.fallbacks, impact.fallbacks
    assert "calc.Add" in impact.changed_symbols
    calc = next(m for m in impact.matches if m.test_file == "calc")
    twice = next(c for c in calc.cases if c.case == "TestTwice")
    assert twice.chain == ("calc/calc_test.go::TestTwice", "calc.Twice", "calc.Add (changed)")
    target = next(t for t in service.discover(affected_by=["calc/calc.go:4"]).targets if t.target_id == "calc")
    assert target.cmd[-3:] == ("-run", "^(ExampleAdd|TestAcc|TestAdd|TestGet|TestTwice)$", "./calc")

    selected, _ = _selected(service, "calc/calc.go:8")
    assert selected == {"calc": ("TestMul",)}


def test_package_level_code_selects_every_package_that_loads_it(
        shop: tuple[Path, IndexService, TestingService]) -> None:
    _, _, service = shop
    selected, impact = _selected(service, "calc/calc.go:21")
    assert selected == {"calc": (), "use": ()}  # use imports calc: its tests load calc's package variables
    assert any("calc/calc.go" in f and "package-level" in f for f in impact.fallbacks), impact.fallbacks
    selected, impact = _selected(service, "calc/calc.go:23")  # one() runs in Base's initializer
    assert selected == {"calc": (), "use": ()}
    assert any("calls calc.one at import time" in f for f in impact.fallbacks), impact.fallbacks
    selected, _ = _selected(service, "calc/calc.go")  # no changed lines: by package imports
    assert selected == {"calc": (), "use": ()}


def test_a_changed_test_function_selects_itself(shop: tuple[Path, IndexService, TestingService]) -> None:
    _, _, service = shop
    selected, _ = _selected(service, "use/use_test.go:15")
    assert selected == {"use": ("TestNothing",)}


def test_a_selected_run_runs_only_the_selected_tests_and_catches_the_fault(
        shop: tuple[Path, IndexService, TestingService]) -> None:
    require("go")
    repo, index, service = shop
    clean = service.start_run(affected_by=["calc/calc.go:4"])  # benchmarks and examples without output never run
    while not clean.finished:
        clean.wait(clean.version, 1.0)
    assert {r.target.target_id: r.outcome for r in clean.snapshot().targets} == {"calc": "passed", "use": "passed"}
    path = repo / "calc" / "calc.go"
    original = path.read_text()
    path.write_text(original.replace("return a + b", "return a - b"))
    try:
        index.refresh_paths(["calc/calc.go"])
        record = service.start_run(affected_by=["calc/calc.go:4"])
        while not record.finished:
            record.wait(record.version, 1.0)
        ran = {c.case_id: c.outcome for r in record.snapshot().targets for c in (r.final.cases if r.final else ())}
        explicit = service.start_run(["calc::TestMul"])
        while not explicit.finished:
            explicit.wait(explicit.version, 1.0)
        only = {c.case_id: c.outcome for r in explicit.snapshot().targets for c in (r.final.cases if r.final else ())}
    finally:
        path.write_text(original)
        index.refresh_paths(["calc/calc.go"])
    assert ran == {"calc::ExampleAdd": "failed", "calc::TestAcc": "failed", "calc::TestAdd": "failed",
                   "calc::TestGet": "failed", "calc::TestTwice": "failed", "use::TestSum3": "failed"}, ran
    assert only == {"calc::TestMul": "passed"}
