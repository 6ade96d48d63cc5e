"""Go test selection precision (s55, QA53 X4): a function or method added during the session, then edited.

Declarations are judged against every earlier state of the file the index recorded (``impact_history.py``). A
one-line ``func (m Mode) String() string { return ... }`` added (or committed after the first index build) was
absent from the earliest state, so a later edit of its body, on its header line, counted as "the declaration of
cfg.Mode.String changed" and selected every importing package whole. It is an addition against that state: its
uses, the interface methods of its name and the standard-library rule carry it, as a fresh index does. Still
whole: an addition hiding a builtin (``func min``), a name whose declaration an earlier state held otherwise, one
another file of the package declared. A method added where a repository interface declares its name reaches its
type (a type switch to the interface now matches it). Every test ``go test`` fails with each fault is selected.

Python has no such rule (a changed ``def`` line is followed through its uses; history only finds removed names):
an added function, edited, and one hiding an import, are selected by their uses (the last test keeps it so).
JavaScript and TypeScript files are selected by their importers, with no history at all.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import TestingService
from tests.builders import git, make_repo
from tests.index_helpers import selected_cases, selecting
from tests.runner_projects import require

FILES: dict[str, str] = {
    "go.mod": "module ex.com/shop\n\ngo 1.19\n",
    "cfg/cfg.go": """\
package cfg

type Mode int

type Flags struct {
    Verbose Mode
}

func Plain() int { return 1 }

func Pick(a, b int) int {
    if a < b {
        return a
    }
    return b
}
""",
    "cfg/cfg_test.go": """\
package cfg

import "testing"

func TestPick(t *testing.T) {
    if Pick(2, 3) != 2 {
        t.Fatal()
    }
}
""",
    "api/api_test.go": """\
package api

import (
    "fmt"
    "testing"

    "ex.com/shop/cfg"
)

func TestFlagsPrint(t *testing.T) {
    if got := fmt.Sprint(cfg.Flags{Verbose: 1}); got != "{1}" && got != "{on}" {
        t.Fatal(got)
    }
}

func TestPlain(t *testing.T) {
    if cfg.Plain() != 1 {
        t.Fatal()
    }
}
""",
    "geo/geo.go": """\
package geo

type Shape interface {
    Area() int
}

type Square struct{ S int }

func Make(s int) any { return Square{S: s} }

func Kind(v any) string {
    switch v.(type) {
    case Shape:
        return "shape"
    }
    return "thing"
}
""",
    "geo/geo_test.go": """\
package geo

import "testing"

func TestKind(t *testing.T) {
    if Kind(Make(2)) != "thing" {
        t.Fatal(Kind(Make(2)))
    }
}

func TestOther(t *testing.T) {
    if Kind(3) != "thing" {
        t.Fatal()
    }
}
""",
}
STRING = 'func (m Mode) String() string { return [...]string{"off", "on"}[m] }\n'

Shop = tuple[Path, IndexService, TestingService]


@pytest.fixture()
def shop(tmp_path: Path) -> Iterator[Shop]:
    repo = make_repo(tmp_path / "repo", FILES)
    with selecting(repo, retry_failed=False) as (index, service):
        yield repo, index, service


def _write(repo: Path, index: IndexService, path: str, old: str, new: str) -> str:
    """Replace ``old`` (empty: append) in ``path``, tell the index; the line ``new`` starts on, as ``path:line``."""
    text = (repo / path).read_text()
    assert old in text
    text = text.replace(old, new, 1) if old else text + new
    (repo / path).write_text(text)
    index.refresh_paths([path])
    return f"{path}:{text[:text.index(new)].count(chr(10)) + 1}"


def _failing(repo: Path) -> set[tuple[str, str]]:
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    out = subprocess.run([require("go"), "test", "-count=1", "-json", "./..."], cwd=repo, env=env,
                         capture_output=True, text=True, timeout=300, check=False)  # failures are what is asked
    events = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    failed = {(e["Package"].removeprefix("ex.com/shop/"), e["Test"]) for e in events
              if e.get("Action") == "fail" and e.get("Test")}
    assert failed, out.stdout[-2000:] + out.stderr[-2000:]
    return failed


def _covers(chosen: dict[str, tuple[str, ...]], failed: set[tuple[str, str]]) -> bool:
    return all(package in chosen and (not chosen[package] or test in chosen[package]) for package, test in failed)


def test_a_body_edit_of_a_method_added_in_the_session_selects_the_tests_reaching_it(shop: Shop) -> None:
    repo, index, service = shop
    change = _write(repo, index, "cfg/cfg.go", "", STRING)
    # The addition itself: fmt now prints "on" (the standard library calls String), a use of Flags reaches it.
    assert selected_cases(service, change) == {"api": ("TestFlagsPrint",)}
    _write(repo, index, "cfg/cfg.go", '"off", "on"', '"off", "ON"')
    chosen = selected_cases(service, change)
    assert chosen == {"api": ("TestFlagsPrint",)}, chosen  # was: api whole ("declaration changed")
    assert _covers(chosen, _failing(repo))
    view = service.discover(affected_by=[change])
    assert view.impact is not None and not view.impact.fallbacks


def test_a_method_committed_after_the_first_index_build_stays_precise_after_a_restart(shop: Shop) -> None:
    repo, index, _ = shop
    _write(repo, index, "cfg/cfg.go", "", STRING)
    git(repo, "commit", "-qam", "String")
    index.stop()
    with selecting(repo, retry_failed=False) as (again, later):
        change = _write(repo, again, "cfg/cfg.go", 'return [...]string{"off", "on"}[m]',
                        'return [...]string{"off", "on"}[m] + "!"')
        chosen = selected_cases(later, change)
        assert chosen == {"api": ("TestFlagsPrint",)}, chosen
        assert _covers(chosen, _failing(repo))


def test_a_plain_function_added_then_edited_selects_its_callers(shop: Shop) -> None:
    repo, index, service = shop
    _write(repo, index, "api/api_test.go", "func TestPlain(", "func TestTwice(t *testing.T) {\n"
           "    if cfg.Twice(2) != 4 {\n        t.Fatal()\n    }\n}\n\nfunc TestPlain(")
    change = _write(repo, index, "cfg/cfg.go", "", "func Twice(n int) int { return 2 * n }\n")
    _write(repo, index, "cfg/cfg.go", "return 2 * n", "return 3 * n")
    chosen = selected_cases(service, change)
    assert chosen == {"api": ("TestTwice",)}, chosen
    assert _failing(repo) == {("api", "TestTwice")}


def test_a_method_a_repository_interface_names_reaches_its_type_when_added(shop: Shop) -> None:
    """``Square`` gains ``Area``: ``Kind``'s ``case Shape:`` now matches it, and no code calls ``Area``."""
    repo, index, service = shop
    change = _write(repo, index, "geo/geo.go", "", "func (q Square) Area() int { return q.S * q.S }\n")
    _write(repo, index, "geo/geo.go", "q.S * q.S", "q.S + q.S")
    chosen = selected_cases(service, change)
    assert chosen == {"geo": ("TestKind",)}, chosen
    assert _covers(chosen, _failing(repo))
    view = service.discover(affected_by=[change])
    assert view.impact is not None
    chain = next(c.chain for m in view.impact.matches for c in m.cases if c.case == "TestKind")
    assert any("repository interface it now satisfies" in step for step in chain), chain


def test_additions_that_change_what_existing_code_resolves_to_stay_whole(shop: Shop) -> None:
    repo, index, service = shop
    # A package-level ``min`` hides the builtin from every file of cfg.
    change = _write(repo, index, "cfg/cfg.go", "", "func min(a, b int) int { return a }\n")
    _write(repo, index, "cfg/cfg.go", "{ return a }", "{ return b }")
    assert selected_cases(service, change) == {"cfg": (), "api": ()}
    # An existing declaration retyped on a one-line function is still a changed declaration.
    change = _write(repo, index, "cfg/cfg.go", "func Plain() int { return 1 }", "func Plain() int64 { return 1 }")
    assert selected_cases(service, change) == {"cfg": (), "api": ()}


def test_a_function_moved_from_another_file_of_its_package_is_no_addition(shop: Shop) -> None:
    repo, index, service = shop
    (repo / "cfg/more.go").write_text("package cfg\n\nfunc Other() {}\n")
    index.refresh_paths(["cfg/more.go"])
    # Moved with another result type: new in more.go, but cfg.go declared it otherwise.
    _write(repo, index, "cfg/cfg.go", "func Plain() int { return 1 }\n", "")
    change = _write(repo, index, "cfg/more.go", "", "func Plain() int64 { return 1 }\n")
    _write(repo, index, "cfg/more.go", "{ return 1 }", "{ return 2 }")
    assert selected_cases(service, change) == {"cfg": (), "api": ()}


def test_python_selects_an_added_function_and_one_hiding_an_import_by_their_uses(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/core.py": "from os.path import join\n\ndef plain():\n    return 1\n",
             "tests/test_core.py": "from pkg.core import plain, twice\n\ndef test_plain():\n    assert plain() == 1\n"
                                   "\n\ndef test_twice():\n    assert twice(2) == 4\n",
             "tests/test_other.py": "from pkg import core\n\n\ndef test_other():\n    assert core.join('a', 'b')\n"}
    repo = make_repo(tmp_path / "repo", files)
    with selecting(repo, retry_failed=False) as (index, service):
        _write(repo, index, "pkg/core.py", "", "\n\ndef twice(n): return 2 * n\n")
        change = f"pkg/core.py:{len((repo / 'pkg/core.py').read_text().splitlines())}"
        _write(repo, index, "pkg/core.py", "2 * n", "3 * n")
        assert selected_cases(service, change) == {"tests/test_core.py": ("test_twice",)}
        # ``def join`` now hides ``from os.path import join``: ``core.join`` in test_other resolves to it.
        _write(repo, index, "pkg/core.py", "", "\n\ndef join(a, b): return a\n")
        change = f"pkg/core.py:{len((repo / 'pkg/core.py').read_text().splitlines())}"
        _write(repo, index, "pkg/core.py", "return a\n", "return b\n")
        assert selected_cases(service, change) == {"tests/test_other.py": ("test_other",)}


def test_a_method_added_to_an_embedded_type_is_no_addition(tmp_path: Path) -> None:
    """``Mid.Name`` added: promoted into ``Outer``, it shadows the deeper ``Deep.Name`` that ``Outer{}.Name()`` ran,
    and that use stays linked to ``Deep.Name``. Its body edited later must still select the test reaching it."""
    files = {"go.mod": "module ex.com/emb\n\ngo 1.19\n",
             "emb/emb.go": "package emb\n\ntype Deep struct{}\n\nfunc (Deep) Name() string { return \"deep\" }\n\n"
                           "type Mid struct{ Deep }\n\ntype Outer struct{ Mid }\n",
             "use/use_test.go": "package use\n\nimport (\n    \"testing\"\n\n    \"ex.com/emb/emb\"\n)\n\n"
                                "func TestName(t *testing.T) {\n    o := emb.Outer{}\n    if o.Name() != \"deep\" {\n"
                                "        t.Fatal(o.Name())\n    }\n}\n"}
    repo = make_repo(tmp_path / "repo", files)
    with selecting(repo, retry_failed=False) as (index, service):
        change = _write(repo, index, "emb/emb.go", "", "func (Mid) Name() string { return \"mid\" }\n")
        _write(repo, index, "emb/emb.go", '"mid"', '"middle"')
        chosen = selected_cases(service, change)
        failed = {(p.replace("ex.com/emb/", ""), t) for p, t in _failing(repo)}
        assert failed == {("use", "TestName")} and _covers(chosen, failed), chosen


def test_a_method_that_makes_a_promoted_selector_ambiguous_is_no_addition(tmp_path: Path) -> None:
    """``A.Name`` added beside ``B.Name``, both embedded in ``Outer`` at one depth: ``o.Name()`` no longer compiles."""
    files = {"go.mod": "module ex.com/amb\n\ngo 1.19\n",
             "amb/amb.go": "package amb\n\ntype A struct{}\n\ntype B struct{}\n\n"
                           "func (B) Name() string { return \"b\" }\n\ntype Outer struct {\n    A\n    B\n}\n",
             "use/use_test.go": "package use\n\nimport (\n    \"testing\"\n\n    \"ex.com/amb/amb\"\n)\n\n"
                                "func TestName(t *testing.T) {\n    o := amb.Outer{}\n    if o.Name() != \"b\" {\n"
                                "        t.Fatal(o.Name())\n    }\n}\n\nfunc TestOther(t *testing.T) {}\n"}
    repo = make_repo(tmp_path / "repo", files)
    with selecting(repo, retry_failed=False) as (index, service):
        change = _write(repo, index, "amb/amb.go", "", "func (A) Name() string { return \"a\" }\n")
        _write(repo, index, "amb/amb.go", '"a"', '"aa"')
        chosen = selected_cases(service, change)
        # The package no longer builds: TestOther fails too (go test reports it with the package).
        assert "use" in chosen and not chosen["use"], chosen
