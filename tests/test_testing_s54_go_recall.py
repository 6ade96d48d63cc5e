"""Go test selection recall (s54, QA53 R1, R2, X2, X1) on a real module.

R1: a method the standard library calls through its interfaces (``MarshalText``, ``String``) reached the users of
its type, but not of the structs holding a value of it: ``json.Marshal(cfg.Settings{Name: "x"})`` runs
``Level.MarshalText`` on the zero ``Lvl`` it never names, and ``go test`` failed tests selected by nothing. Now the
structs with a field of the type (embedded, in an array, in another package, nested) are reached too.
R2: a method only a ``text/template`` calls (``{{.Heading}}``) selected nothing, ``complete``.
X2: ``var sb strings.Builder`` then ``sb.String()`` counted as a use of every repository ``String``.
X1: a use by name selected tests of packages whose test binaries cannot link the changed package.
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
from codeplane.testing.impact_goreceivers import library_kind
from tests.builders import make_repo
from tests.index_helpers import selected_cases, selecting
from tests.runner_projects import require

# Go needs no tabs: the sources are indented with spaces.
FILES: dict[str, str] = {
    "go.mod": """\
module ex.com/shop

go 1.19
""",
    "cfg/cfg.go": """\
package cfg

type Level int

func (l Level) MarshalText() ([]byte, error) {
    if l == 0 {
        return []byte("info"), nil
    }
    return []byte("debug"), nil
}

type Settings struct {
    Name string
    Lvl  Level
}

type Mode int

func (m Mode) String() string {
    return [...]string{"off", "on"}[m]
}

type Flags struct {
    Verbose Mode
}

type Tag struct{ V string }

func (t Tag) String() string {
    return "#" + t.V
}

type Labeled struct {
    Tag
    N int
}
""",
    "wrap/wrap.go": """\
package wrap

import "ex.com/shop/cfg"

type Outer struct {
    Pair [2]cfg.Settings
}

type Holder struct {
    O Outer
}
""",
    "api/api_test.go": """\
package api

import (
    "encoding/json"
    "fmt"
    "strings"
    "testing"

    "ex.com/shop/cfg"
    "ex.com/shop/wrap"
)

func TestSettingsJSON(t *testing.T) {
    b, _ := json.Marshal(cfg.Settings{Name: "x"})
    if string(b) != `{"Name":"x","Lvl":"info"}` {
        t.Fatal(string(b))
    }
}

func TestHolderJSON(t *testing.T) {
    b, _ := json.Marshal(wrap.Holder{})
    if !strings.Contains(string(b), `"Lvl":"info"`) {
        t.Fatal(string(b))
    }
}

func TestFlagsZero(t *testing.T) {
    if got := fmt.Sprint(cfg.Flags{}); got != "{off}" {
        t.Fatal(got)
    }
}

func TestLabeledZero(t *testing.T) {
    if got := fmt.Sprint(cfg.Labeled{}); got != "#" {
        t.Fatal(got)
    }
}
""",
    "render/render.go": """\
package render

import (
    "strings"
    "text/template"

    _ "ex.com/shop/cfg" // linked into render's tests: only the receiver's type leaves its String() out
)

var tmpl = template.Must(template.New("page").Parse("{{.Heading}}"))

type Page struct {
    Title string
}

func (p Page) Heading() string {
    return strings.ToUpper(p.Title)
}

func (p *Page) Reset() {
    p.Title = ""
}

func Render(p Page) string {
    var sb strings.Builder
    if err := tmpl.Execute(&sb, p); err != nil {
        return err.Error()
    }
    return sb.String()
}
""",
    "render/render_test.go": """\
package render

import "testing"

func TestRender(t *testing.T) {
    if got := Render(Page{Title: "shop"}); got != "SHOP" {
        t.Fatal(got)
    }
}
""",
    "other/other.go": """\
package other

func Two() int {
    return 2
}
""",
    "other/other_test.go": """\
package other

import "testing"

func TestTwo(t *testing.T) {
    if Two() != 2 {
        t.Fatal()
    }
}
""",
    "show/show.go": """\
package show

import (
    "fmt"

    _ "ex.com/shop/cfg" // linked into show's tests: a value of cfg's may reach Show
)

func Show(s fmt.Stringer) string {
    return s.String()
}
""",
    "show/show_test.go": """\
package show

import "testing"

type local int

func (l local) String() string { return "L" }

func TestShow(t *testing.T) {
    if Show(local(1)) != "L" {
        t.Fatal()
    }
}
""",
    "notes/notes.go": """\
package notes

import "fmt"

func Show(s fmt.Stringer) string {
    return s.String()
}
""",
    "notes/notes_test.go": """\
package notes

import "testing"

type local int

func (l local) String() string { return "L" }

func TestShow(t *testing.T) {
    if Show(local(1)) != "L" {
        t.Fatal()
    }
}
""",
    "cli/go.mod": """\
module ex.com/shop/cli

go 1.19

require ex.com/shop v0.0.0

replace ex.com/shop => ../
""",
    "cli/cli.go": """\
package cli

import (
    "fmt"

    "ex.com/shop/cfg"
)

func Banner(f cfg.Flags) string {
    return fmt.Sprint(f)
}
""",
    "cli/cli_test.go": """\
package cli

import (
    "testing"

    "ex.com/shop/cfg"
)

func TestBanner(t *testing.T) {
    if Banner(cfg.Flags{}) != "{off}" {
        t.Fatal()
    }
}
""",
}
#: Lines of the method bodies the tests change.
LEVEL, MODE, TAG, HEADING, RESET = "cfg/cfg.go:7", "cfg/cfg.go:20", "cfg/cfg.go:30", "render/render.go:17", \
    "render/render.go:21"

Shop = tuple[Path, IndexService, TestingService]


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    repo = make_repo(tmp_path_factory.mktemp("s54go") / "repo", FILES)
    with selecting(repo, retry_failed=False) as (index, service):
        yield repo, index, service


def _chains(service: TestingService, change: str) -> dict[str, tuple[str, ...]]:
    view = service.discover(affected_by=[change])
    assert view.impact is not None
    return {c.case: c.chain for m in view.impact.matches for c in m.cases}


def _sets(chosen: dict[str, tuple[str, ...]]) -> dict[str, set[str]]:
    return {target: set(cases) for target, cases in chosen.items()}


def test_a_std_called_method_reaches_every_struct_holding_its_type(shop: Shop) -> None:
    _, _, service = shop
    # A field of the type, an array of a struct holding it in another package, nested once more.
    assert _sets(selected_cases(service, LEVEL)) == {"api": {"TestSettingsJSON", "TestHolderJSON"}}
    chain = _chains(service, LEVEL)["TestHolderJSON"]
    assert any("wrap.Outer (its field Pair" in step for step in chain), chain
    # The zero value of a field the test never names (also from the nested module joined by ``replace``).
    assert _sets(selected_cases(service, MODE)).items() >= {"api": {"TestFlagsZero"}, "cli": {"TestBanner"}}.items()
    # An embedded field: spelled by the type's name alone, no use of the type links it.
    assert _sets(selected_cases(service, TAG))["api"] == {"TestLabeledZero"}
    assert any("(embeds Tag)" in step for step in _chains(service, TAG)["TestLabeledZero"])


def test_a_method_only_a_template_calls_reaches_the_users_of_its_type(shop: Shop) -> None:
    _, _, service = shop
    assert selected_cases(service, HEADING) == {"render": ("TestRender",)}
    chain = _chains(service, HEADING)["TestRender"]
    assert any("text/template or html/template template may call Heading" in step for step in chain), chain
    # A template calls no method without a result: nothing calls Reset.
    assert selected_cases(service, RESET) == {}


def test_a_receiver_declared_with_a_standard_library_struct_calls_none_of_the_repository(shop: Shop) -> None:
    _, _, service = shop
    # ``var sb strings.Builder`` in render.Render: ``sb.String()`` is the Builder's, never cfg.Mode's.
    assert "render" not in selected_cases(service, MODE)
    assert "render" not in selected_cases(service, TAG)
    # An interface may hold a repository value: ``s.String()`` on ``s fmt.Stringer`` in show (linked with cfg).
    assert selected_cases(service, MODE)["show"] == ("TestShow",)
    assert library_kind("strings", "Builder") == "concrete"
    assert library_kind("net/http", "HandlerFunc") == "concrete"
    assert library_kind("fmt", "Stringer") == "interface"
    assert library_kind("io", "Writer") == "interface"
    assert library_kind("github.com/x/y", "T") is None


def test_a_test_package_that_cannot_link_the_change_is_left_out(shop: Shop) -> None:
    """QA53 X1: notes calls ``s.String()`` as show does, but its test binary links no cfg (``go list -deps -test``):
    a change to cfg cannot run there. show imports cfg (blank), the nested module cli through ``replace``."""
    _, _, service = shop
    chosen = selected_cases(service, MODE)
    assert {"show", "cli", "api"} <= set(chosen) and "notes" not in chosen, chosen
    # A change in notes itself still selects its test.
    assert selected_cases(service, "notes/notes.go:6") == {"notes": ("TestShow",)}


def test_every_test_go_test_fails_with_these_faults_is_selected(shop: Shop) -> None:
    go = require("go")
    repo, index, service = shop
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off"}
    faults = ((LEVEL, '"info"', '"INFO"'), (MODE, '"off", "on"', '"OFF", "ON"'), (TAG, '"#" + t.V', '"@" + t.V'),
              (HEADING, "ToUpper", "ToLower"))
    for change, before, after in faults:
        relative = change.split(":")[0]
        path = repo / relative
        original = path.read_text()
        assert before in original
        path.write_text(original.replace(before, after))
        try:
            index.refresh_paths([relative])
            chosen = selected_cases(service, change)
            # The nested module's tests run from its own directory.
            runs = [subprocess.run([go, "test", "-count=1", "-json", "./..."], cwd=where, env=env,
                                   capture_output=True, text=True, timeout=300, check=False)
                    for where in (repo, repo / "cli")]  # failing tests are what it is asked for
        finally:
            path.write_text(original)
            index.refresh_paths([relative])
        events = [json.loads(text) for out in runs for text in out.stdout.splitlines() if text.startswith("{")]
        failed = {(e["Package"].removeprefix("ex.com/shop/"), e["Test"]) for e in events
                  if e.get("Action") == "fail" and e.get("Test")}
        assert failed, (change, runs[0].stdout[-2000:])
        selected = {(p, c) for p, cases in chosen.items() for c in cases}
        assert failed <= selected, (change, failed, chosen)
