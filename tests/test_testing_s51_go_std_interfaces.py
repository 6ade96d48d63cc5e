"""A Go method the standard library calls through its own interface (s51): ``fmt.Sprint(c)`` runs ``c.String()``,
``sort.Sort(b)`` runs ``b.Less``, and no code of the repository names the call. A change in such a method's body
selected nothing, ``complete``, while ``go test`` failed the tests printing or sorting those values. Now it reaches
whatever uses the method's type (``low``), and every test ``go test`` fails with the fault is selected."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.index_helpers import selected_cases, selecting
from tests.runner_projects import require


def _test(package: str, body: str) -> str:
    return f'package {package}\n\nimport "testing"\n\n{body}'


FILES: dict[str, str] = {
    "go.mod": "module ex.com/m\n\ngo 1.19\n",
    "money/money.go": (
        'package money\n\nimport "fmt"\n\n'
        "type Cents struct{ n int }\n\n"
        'func (c Cents) String() string {\n\treturn fmt.Sprintf("$%d.%02d", c.n/100, c.n%100)\n}\n\n'  # 7-9
        "func New(n int) Cents { return Cents{n} }\n\n"  # 11
        "type Bag []int\n\n"  # 13
        "func (b Bag) Len() int { return len(b) }\n"  # 15
        "func (b Bag) Less(i, j int) bool {\n\treturn b[i] < b[j]\n}\n"  # 16-18
        "func (b Bag) Swap(i, j int) { b[i], b[j] = b[j], b[i] }\n\n"
        "func (b Bag) Total() int {\n\tt := 0\n\tfor _, x := range b {\n\t\tt += x\n\t}\n\treturn t\n}\n"),
    "report/report.go": ('package report\n\nimport (\n\t"fmt"\n\n\t"ex.com/m/money"\n)\n\n'
                         "func Line(n int) string {\n\treturn fmt.Sprint(money.New(n))\n}\n"),
    "report/report_test.go": _test("report", 'func TestLine(t *testing.T) {\n\tif Line(150) != "$1.50" {\n'
                                             "\t\tt.Fatal(Line(150))\n\t}\n}\n"),
    "sorted/sorted.go": ('package sorted\n\nimport (\n\t"sort"\n\n\t"ex.com/m/money"\n)\n\n'
                         "func Sort(xs []int) []int {\n\tsort.Sort(money.Bag(xs))\n\treturn xs\n}\n"),
    "sorted/sorted_test.go": _test("sorted", "func TestSort(t *testing.T) {\n\tif Sort([]int{3, 1})[0] != 1 {\n"
                                             "\t\tt.Fatal()\n\t}\n}\n\nfunc TestNothing(t *testing.T) {}\n"),
    "money/money_test.go": _test("money", "func TestNew(t *testing.T) {\n\tif New(5).n != 5 {\n"
                                          "\t\tt.Fatal()\n\t}\n}\n"),
    "other/other.go": "package other\n\nfunc Two() int { return 2 }\n",
    "other/other_test.go": _test("other", "func TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal()\n\t}\n}\n"),
}

Shop = tuple[Path, IndexService, TestingService]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    repo = make_repo(tmp_path_factory.mktemp("s51go") / "repo", FILES)
    with selecting(repo, retry_failed=False) as (index, service):
        yield repo, index, service


def test_a_method_the_standard_library_calls_reaches_the_users_of_its_type(shop: Shop) -> None:
    _, _, service = shop
    # TestNew makes a Cents (through New) and might print it: kept, as wide as is safe.
    assert selected_cases(service, "money/money.go:8") == {"money": ("TestNew",), "report": ("TestLine",)}
    view = service.discover(affected_by=["money/money.go:8"])
    assert view.impact is not None
    [match] = [m for m in view.impact.matches if m.test_file.startswith("report")]
    assert match.cases[0].confidence == "low"
    assert any("may call String on any value of it" in step for step in match.cases[0].chain), match.cases[0].chain
    assert selected_cases(service, "money/money.go:17") == {"sorted": ("TestSort",)}
    # A method no standard-library interface has is still followed by its uses only: nobody calls Total.
    assert selected_cases(service, "money/money.go:23") == {}


def test_every_test_go_test_fails_with_a_fault_in_such_a_method_isselected_cases(shop: Shop) -> None:
    go = require("go")
    repo, index, service = shop
    path = repo / "money" / "money.go"
    original = path.read_text()
    selected: set[tuple[str, str]] = set()
    failed: set[tuple[str, str]] = set()
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    for line, fault in ((8, ('\treturn fmt.Sprintf("$%d.%02d"', '\treturn fmt.Sprintf("€%d.%02d"')),
                        (17, ("\treturn b[i] < b[j]", "\treturn b[i] > b[j]"))):
        path.write_text(original.replace(*fault))
        try:
            index.refresh_paths(["money/money.go"])
            chosen = selected_cases(service, f"money/money.go:{line}")
            selected |= {(p, c) for p, cases in chosen.items() for c in cases}
            out = subprocess.run([go, "test", "-count=1", "-json", "./..."], cwd=repo, env=env, capture_output=True,
                                 text=True, timeout=300, check=False)  # failing tests are what it is asked for
        finally:
            path.write_text(original)
            index.refresh_paths(["money/money.go"])
        events = [json.loads(text) for text in out.stdout.splitlines() if text.startswith("{")]
        failed |= {(e["Package"].removeprefix("ex.com/m/"), e["Test"]) for e in events
                   if e.get("Action") == "fail" and e.get("Test")}
    assert failed == {("report", "TestLine"), ("sorted", "TestSort")}, failed
    assert failed <= selected, (failed, selected)


def test_a_test_file_changed_without_lines_runs_its_own_package_only(shop: Shop) -> None:
    """QA s51: a new or deleted ``_test.go`` (no lines) selected every package importing its package, ``high``;
    a test file is compiled into its own package's tests only."""
    _, _, service = shop
    assert selected_cases(service, "money/money_test.go") == {"money": ()}
    # A non-test file of the package still reaches its importers.
    assert set(selected_cases(service, "money/money.go")) == {"money", "report", "sorted"}
