"""A runner's own configuration or build file (QA 13, F4: ``go.mod``, ``Cargo.toml``, ``jest.config.js``,
``package.json``, ``vitest.config.mjs``) selects every target of that runner in its project, with the reason, as
``pytest.ini`` selects every pytest test; another project's targets stay out."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.testing import TestingService
from codeplane.testing.impact import ImpactResult
from tests.builders import make_repo
from tests.index_helpers import selecting
from tests.runner_projects import CARGO_PROJECT, VITEST_PROJECT, require

FILES: dict[str, str] = {
    "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
    "svc/calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "svc/use/use_test.go": 'package use\n\nimport (\n\t"testing"\n\n\t"example.com/svc/calc"\n)\n\n'
                           "func TestUse(t *testing.T) {\n\tif calc.Add(1, 2) != 3 {\n\t\tt.Fatal()\n\t}\n}\n",
    "svc/calc/calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {}\n',
    "other/go.mod": "module example.com/other\n\ngo 1.19\n",
    "other/o_test.go": 'package other\n\nimport "testing"\n\nfunc TestO(t *testing.T) {}\n',
    "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
    "web/jest.config.js": "module.exports = {testEnvironment: 'node'};\n",
    "web/src/sum.test.js": "test('adds', () => { expect(1 + 2).toBe(3); });\n",
    "web/src/other.test.js": "test('ok', () => { expect(true).toBe(true); });\n",
    **VITEST_PROJECT,
    **CARGO_PROJECT,
}

Repo = tuple[Path, TestingService]


@pytest.fixture(scope="module")
def configs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    repo = make_repo(tmp_path_factory.mktemp("configs") / "repo", FILES)
    with selecting(repo) as (_, service):
        yield repo, service


def _selected(configs: Repo, change: str) -> tuple[set[str], ImpactResult]:
    view = configs[1].discover(affected_by=[change])
    assert view.impact is not None
    return {t.target_id for t in view.targets}, view.impact


@pytest.mark.parametrize(("change", "expected"), [
    ("svc/go.mod:1", {"svc/calc", "svc/use"}),
    ("web/jest.config.js:1", {"web/src/sum.test.js", "web/src/other.test.js"}),
    ("web/package.json:1", {"web/src/sum.test.js", "web/src/other.test.js"}),
    ("ui/vitest.config.mjs:1", {"ui/sum.test.mjs"}),
    ("rs/Cargo.toml:4", {"rs/src/lib.rs", "rs/src/lib.rs#doctests", "rs/tests/integration.rs"}),
], ids=["go.mod", "jest.config.js", "package.json", "vitest.config", "Cargo.toml"])
def test_a_runner_configuration_selects_every_target_of_its_project(configs: Repo, change: str,
                                                                    expected: set[str]) -> None:
    selected, impact = _selected(configs, change)
    assert selected == expected, selected
    path = change.partition(":")[0]
    assert path in impact.hint and "configuration" in impact.hint, impact.hint
    assert all(any(path in r for r in m.reasons) for m in impact.matches), impact.matches


def test_a_changed_module_path_breaks_every_package_of_the_module(configs: Repo, tmp_path: Path) -> None:
    """The truth behind the ``go.mod`` case: a new module path leaves the old one's imports unresolved."""
    repo, _ = configs
    mod = repo / "svc" / "go.mod"
    before = mod.read_text()
    mod.write_text(before.replace("example.com/svc", "example.com/svc2"))
    try:
        done = subprocess.run([require("go"), "test", "-count=1", "./..."], cwd=repo / "svc", capture_output=True,
                              text=True, timeout=300, check=False)
    finally:
        mod.write_text(before)
    assert done.returncode != 0 and "example.com/svc/calc" in done.stdout + done.stderr
