"""QA40 §2: without a ``testMatch``/``exclude`` of its own, a JS project's test files are those the runner version it
runs picks by default: Jest 29 never runs ``x.test.cjs`` or ``x.spec.mjs`` (Jest 30 does), so listing them made
every run report "No tests found" errors; Vitest 4 runs files under ``cypress/`` that Vitest 3 skips."""

from __future__ import annotations

import json
from pathlib import Path

from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.runner_projects import link_node_modules, require
from tests.testing_service import finish, service_for

_TEST = "test('x', () => { expect(1).toBe(1); });\n"


def _targets(service: TestingService) -> set[str]:
    return set(service.discovery().owners)


def test_jest_29_lists_and_runs_only_the_files_jest_29_runs(tmp_path: Path, services: list[TestingService]) -> None:
    require("jest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/src/sum.test.js": _TEST,
        "web/src/other.test.cjs": _TEST,
        "web/src/thing.spec.mjs": _TEST,
        "web/src/__tests__/util.cjs": _TEST,
    }, commit=False)
    link_node_modules(repo / "web")
    major = json.loads((repo / "web/node_modules/jest/package.json").read_text())["version"].split(".")[0]
    assert major == "29", "this test checks Jest 29's defaults"
    service = service_for(repo)
    services.append(service)
    assert _targets(service) == {"web/src/sum.test.js"}
    run = finish(service.start_run(), timeout=240)
    assert run.state == "passed", [(r.target.target_id, r.outcome, r.final and r.final.message) for r in run.targets]


def test_jest_30_and_vitest_4_defaults_follow_the_installed_version(
        tmp_path: Path, services: list[TestingService]) -> None:
    """The version comes from the project's ``node_modules/<runner>/package.json`` (here written by hand: only
    discovery reads it, nothing runs)."""
    repo = make_repo(tmp_path / "repo", {
        ".gitignore": "node_modules/\n",
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "30"}}\n',
        "web/node_modules/jest/package.json": '{"name": "jest", "version": "30.2.0"}\n',
        "web/src/sum.test.js": _TEST,
        "web/src/other.test.cjs": _TEST,
        "web/src/thing.spec.mjs": _TEST,
        "ui/package.json": '{"name": "ui", "private": true, "devDependencies": {"vitest": "4"}}\n',
        "ui/node_modules/vitest/package.json": '{"name": "vitest", "version": "4.0.8"}\n',
        "ui/src/a.test.ts": _TEST,
        "ui/cypress/b.test.js": _TEST,
        "old/package.json": '{"name": "old", "private": true, "devDependencies": {"vitest": "3"}}\n',
        "old/node_modules/vitest/package.json": '{"name": "vitest", "version": "3.2.7"}\n',
        "old/src/a.test.ts": _TEST,
        "old/cypress/b.test.js": _TEST,
    }, commit=False)
    service = service_for(repo)
    services.append(service)
    found = _targets(service)
    assert {"web/src/sum.test.js", "web/src/other.test.cjs", "web/src/thing.spec.mjs"} <= found, found
    assert {"ui/src/a.test.ts", "ui/cypress/b.test.js", "old/src/a.test.ts"} <= found, found
    assert "old/cypress/b.test.js" not in found
