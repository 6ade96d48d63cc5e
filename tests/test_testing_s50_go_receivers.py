"""Go member uses by name narrowed by the receiver's declared type (QA s50): a change to ``(A) Close()`` selected
every package calling ``Close()`` on anything (``f *os.File`` included). A receiver whose declaration shows another
library's concrete type (a pointer, a composite literal, a field of such a type), or another repository type
with its own ``Close``, cannot hold an ``A`` and is left out; an interface (``io.Closer``), anything not known stays
selected — and every test ``go test`` fails with a fault in ``A.Close`` is still selected."""

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


def _package(name: str, code: str, test: str) -> dict[str, str]:
    return {f"{name}/{name}.go": f"package {name}\n\n{code}",
            f"{name}/{name}_test.go": f'package {name}\n\nimport "testing"\n\nfunc TestDo(t *testing.T) {{\n{test}}}\n'}


FILES: dict[str, str] = {
    "go.mod": "module ex.com/m\n\ngo 1.19\n",
    "res/a.go": (
        "package res\n\n"
        "type A struct{ n int }\n\n"
        "func (a *A) Close() error {\n\ta.n = 0\n\treturn nil\n}\n\n"  # 5-8: line 6 is the body
        "type B struct{}\n\n"
        "func (b B) Close() error {\n\treturn nil\n}\n\n"
        "func NewA() *A { return &A{} }\n"),
    **_package("usea", 'import "ex.com/m/res"\n\nfunc Do() error {\n\tvar a res.A\n\treturn a.Close()\n}\n',
               "\tif Do() != nil {\n\t\tt.Fatal()\n\t}\n"),
    **_package("useb", 'import "ex.com/m/res"\n\nfunc Do() error {\n\tb := res.B{}\n\treturn b.Close()\n}\n',
               "\tif Do() != nil {\n\t\tt.Fatal()\n\t}\n"),
    # Another library's concrete types: a pointer parameter, a composite literal, a field.
    **_package("usef", 'import "os"\n\nfunc Do(f *os.File) error {\n\treturn f.Close()\n}\n', "\t_ = Do(nil)\n"),
    **_package("usec", 'import "os"\n\nfunc Do() error {\n\tx := &os.File{}\n\treturn x.Close()\n}\n',
               "\t_ = Do()\n"),
    **_package("useh", 'import "os"\n\ntype H struct{ f *os.File }\n\n'
                       'func (h H) Do() error {\n\treturn h.f.Close()\n}\n', "\t_ = H{}.Do()\n"),
    # A repository type with a Close of its own on each platform (the index links neither: two declare it).
    "res/k.go": "package res\n\ntype K struct{}\n",
    "res/k_linux.go": "package res\n\nfunc (k K) Close() error {\n\treturn nil\n}\n",
    "res/k_windows.go": "package res\n\nfunc (k K) Close() error {\n\treturn nil\n}\n",
    **_package("usek", 'import "ex.com/m/res"\n\nfunc Do() error {\n\tvar k res.K\n\treturn k.Close()\n}\n',
               "\tif Do() != nil {\n\t\tt.Fatal()\n\t}\n"),
    # An interface may hold an *res.A (this test hands it one): it stays; so does NewA's result, an *A.
    "usei/usei.go": 'package usei\n\nimport "io"\n\nfunc Do(c io.Closer) error {\n\treturn c.Close()\n}\n',
    "usei/usei_test.go": ('package usei\n\nimport (\n\t"testing"\n\n\t"ex.com/m/res"\n)\n\n'
                          "func TestDo(t *testing.T) {\n\tif Do(&res.A{}) != nil {\n\t\tt.Fatal()\n\t}\n}\n"),
    **_package("usen", 'import "ex.com/m/res"\n\nfunc Do() error {\n\treturn res.NewA().Close()\n}\n',
               "\tif Do() != nil {\n\t\tt.Fatal()\n\t}\n"),
}

Shop = tuple[Path, IndexService, TestingService]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    repo = make_repo(tmp_path_factory.mktemp("s50go") / "repo", FILES)
    with selecting(repo, retry_failed=False) as (index, service):
        yield repo, index, service


def test_a_method_change_leaves_out_calls_on_another_librarys_concrete_types(shop: Shop) -> None:
    _, _, service = shop
    assert selected_cases(service, "res/a.go:6") == {"usea": ("TestDo",), "usei": ("TestDo",), "usen": ("TestDo",)}
    view = service.discover(affected_by=["res/a.go:6"])
    assert view.impact is not None
    assert {m.test_file: m.cases[0].confidence for m in view.impact.matches} == {
        "usea": "high", "usen": "high", "usei": "low"}  # ``res.NewA().Close()``: NewA's result is an *A
    # B's own users are linked to B.Close by the index; the interface stays, NewA's result is no B.
    assert selected_cases(service, "res/a.go:13") == {"useb": ("TestDo",), "usei": ("TestDo",)}
    # K's users are K's, by name, whichever platform's Close changed.
    assert selected_cases(service, "res/k_linux.go:4")["usek"] == ("TestDo",)


def test_every_test_go_test_fails_with_a_fault_in_the_method_isselected_cases(shop: Shop) -> None:
    go = require("go")
    repo, index, service = shop
    path = repo / "res" / "a.go"
    original = path.read_text()
    path.write_text(original.replace("\ta.n = 0\n", '\tpanic("fault"); a.n = 0\n'))
    try:
        index.refresh_paths(["res/a.go"])
        chosen = selected_cases(service, "res/a.go:6")
        selected = {(package, case) for package, cases in chosen.items() for case in cases}
        env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
        out = subprocess.run([go, "test", "-count=1", "-json", "./..."], cwd=repo, env=env, capture_output=True,
                             text=True, timeout=300, check=False)  # failing tests are what it is asked for
    finally:
        path.write_text(original)
        index.refresh_paths(["res/a.go"])
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    failed = {(e["Package"].removeprefix("ex.com/m/"), e["Test"]) for e in events
              if e.get("Action") == "fail" and e.get("Test")}
    assert failed == {("usea", "TestDo"), ("usei", "TestDo"), ("usen", "TestDo")}, out.stdout[-2000:]
    assert failed <= selected, (failed, selected)
