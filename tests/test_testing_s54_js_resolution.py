"""JS/TS imports Node and the test runners resolve into the repository though the index does not (QA s53, R3/R4/P1).

Each test here failed before: the selection was ``complete`` (or ``partial`` with "No test imports the changed
modules") without the tests Jest/Vitest then failed. Bare specifiers through ``package.json`` ``"imports"``, a
package importing itself through ``"exports"``, npm workspaces and Jest ``modulePaths``; ``vi.importActual`` with
type arguments; setup files, manual mocks, snapshots, JSON files and directories with a ``"main"``."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.index_helpers import selecting

_CHECK = "test('k', () => expect(K).toBe(1));\n"
_KMOD = ('{"name": "kmod", "private": true, "exports": {"./k": "./src/k.js"}, "imports": {"#k": "./src/k.js"},\n'
         ' "jest": {"testEnvironment": "node", "modulePaths": ["<rootDir>/src"]}, "devDependencies": {"jest": "29"}}\n')


def _impact(service: TestingService, change: str) -> tuple[dict[str, str], str, str]:
    view = service.discover(affected_by=[change])
    assert view.impact is not None
    return {m.test_file: m.confidence for m in view.impact.matches}, view.impact.confidence, view.impact.hint


def test_bare_specifiers_resolving_inside_the_repository_select_their_tests(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": _KMOD,
        "src/k.js": "exports.K = 1;\n",
        "test/rel.test.js": "const { K } = require('../src/k');\n" + _CHECK,
        "test/hash.test.js": "const { K } = require('#k');\n" + _CHECK,
        "test/self.test.js": "const { K } = require('kmod/k');\n" + _CHECK,
        "test/mp.test.js": "const { K } = require('k');\n" + _CHECK,
        "test/other.test.js": "const lodash = require('lodash');\ntest('o', () => expect(1).toBe(1));\n",
    })
    with selecting(repo, retry_failed=False) as (_, service):
        selected, tier, hint = _impact(service, "src/k.js")
    assert selected == {"test/hash.test.js": "high", "test/mp.test.js": "high", "test/rel.test.js": "high",
                        "test/self.test.js": "high"}, selected
    assert tier == "complete", hint


def test_a_workspace_package_reaches_the_tests_of_the_packages_requiring_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": ('{"name": "mono", "private": true, "workspaces": ["packages/*"],\n'
                         ' "devDependencies": {"jest": "29"}, "jest": {"testEnvironment": "node"}}\n'),
        "packages/a/package.json": '{"name": "@acme/a", "version": "1.0.0", "main": "src/index.js"}\n',
        "packages/a/src/index.js": "exports.rate = () => 0.2;\n",
        "packages/b/package.json": '{"name": "@acme/b", "version": "1.0.0", "main": "src/index.js"}\n',
        "packages/b/src/index.js": "const { rate } = require('@acme/a');\nexports.gross = (n) => n * (1 + rate());\n",
        "packages/b/test/gross.test.js": ("const { gross } = require('../src');\n"
                                          "test('g', () => expect(gross(10)).toBe(12));\n"),
    })
    with selecting(repo, retry_failed=False) as (_, service):
        selected, tier, hint = _impact(service, "packages/a/src/index.js")
    assert selected == {"packages/b/test/gross.test.js": "high"}, selected
    assert tier == "complete", hint


def test_a_specifier_naming_the_own_package_but_no_file_makes_the_selection_partial(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": _KMOD,
        "src/k.js": "exports.K = 1;\n",
        "src/use.js": "const { K } = require('kmod/gone');\nmodule.exports = K;\n",
        "test/rel.test.js": "const { K } = require('../src/k');\n" + _CHECK,
    })
    with selecting(repo, retry_failed=False) as (_, service):
        _, tier, hint = _impact(service, "src/k.js")
    assert tier == "partial", hint
    assert "src/use.js imports 'kmod/gone'" in hint, hint


def test_vi_import_actual_with_type_arguments_is_an_import(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "v", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
        "src/x/w.ts": "export const W = 7;\n",
        "tests/actual.test.ts": ("import { it, expect, vi } from 'vitest';\n"
                                 "it('a', async () => {\n"
                                 "  const m = await vi.importActual<{ W: number }>('../src/x/w');\n"
                                 "  expect(m.W).toBe(7);\n});\n"),
    })
    with selecting(repo, retry_failed=False) as (_, service):
        selected, tier, hint = _impact(service, "src/x/w.ts")
    assert selected == {"tests/actual.test.ts": "high"}, selected
    assert tier == "complete", hint


_JEST_PKG = ('{"name": "geo", "private": true, "devDependencies": {"jest": "29"},\n'
             ' "jest": {"testEnvironment": "node", "setupFiles": ["<rootDir>/test/setup-env.js"]}}\n')


def test_files_the_runner_loads_for_tests_select_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": _JEST_PKG,
        "test/setup-env.js": "process.env.MODE = 'strict';\n",
        "src/db.js": "exports.load = () => 'real';\n",
        "src/__mocks__/db.js": "exports.load = () => 'mocked';\n",
        "src/repo.js": "const db = require('./db');\nexports.fetch = () => db.load();\n",
        "src/lib/package.json": '{"main": "entry.js"}\n',
        "src/lib/entry.js": "exports.L = 1;\n",
        "src/util/config.json": '{"shape": "square"}\n',
        "src/index.js": "const config = require('./util/config.json');\nexports.shape = () => config.shape;\n",
        "test/mode.test.js": "test('m', () => expect(process.env.MODE).toBe('strict'));\n",
        "test/repo.test.js": ("jest.mock('../src/db');\nconst { fetch } = require('../src/repo');\n"
                              "test('f', () => expect(fetch()).toBe('mocked'));\n"),
        "test/lib.test.js": "const { L } = require('../src/lib');\ntest('l', () => expect(L).toBe(1));\n",
        "test/shape.test.js": ("const { shape } = require('../src');\n"
                               "test('s', () => expect(shape()).toBe('square'));\n"),
        "test/snap.test.js": "test('snap', () => expect('x').toMatchSnapshot());\n",
        "test/__snapshots__/snap.test.js.snap": "exports[`snap 1`] = `\"x\"`;\n",
    })
    everything = {"test/lib.test.js", "test/mode.test.js", "test/repo.test.js", "test/shape.test.js",
                  "test/snap.test.js"}
    with selecting(repo, retry_failed=False) as (_, service):
        setup, setup_tier, setup_hint = _impact(service, "test/setup-env.js")
        mock, _, mock_hint = _impact(service, "src/__mocks__/db.js")
        lib, lib_tier, _ = _impact(service, "src/lib/entry.js")
        data, data_tier, data_hint = _impact(service, "src/util/config.json")
        snap, snap_tier, _ = _impact(service, "test/__snapshots__/snap.test.js.snap")
    assert setup == dict.fromkeys(everything, "low") and setup_tier == "complete", setup
    assert "setup files" in setup_hint and "No test imports" not in setup_hint, setup_hint
    assert mock == {"test/repo.test.js": "low"}, mock
    assert "manual mock" in mock_hint, mock_hint
    assert lib == {"test/lib.test.js": "high"} and lib_tier == "complete", lib
    assert data == {"test/shape.test.js": "high"} and data_tier == "complete", data_hint
    assert snap == {"test/snap.test.js": "high"} and snap_tier == "complete", snap


def test_vitest_setup_files_select_every_test_of_the_project(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "v", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
        "vitest.config.ts": ("import { defineConfig } from 'vitest/config';\nexport default defineConfig({\n"
                             "  test: { include: ['tests/**/*.test.ts'], setupFiles: ['./tests/setup.ts'] },\n});\n"),
        "tests/setup.ts": "(globalThis as any).CURRENCY = 'EUR';\n",
        "tests/ledger.test.ts": ("import { it, expect } from 'vitest';\n"
                                 "it('c', () => expect((globalThis as any).CURRENCY).toBe('EUR'));\n"),
    })
    with selecting(repo, retry_failed=False) as (_, service):
        selected, _, hint = _impact(service, "tests/setup.ts")
        view = service.discover(affected_by=["tests/setup.ts"])
    assert selected == {"tests/ledger.test.ts": "low"}, selected
    assert view.impact is not None and "vitest.config.ts setup files" in view.impact.matches[0].reasons[0]
    assert "No test imports" not in hint, hint


def test_a_change_no_test_loads_says_why_the_selection_is_partial(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": _JEST_PKG.replace(', "setupFiles": ["<rootDir>/test/setup-env.js"]', ""),
        "src/alone.js": "exports.A = 1;\n",
        "src/k.js": "exports.K = 1;\n",
        "test/k.test.js": "const { K } = require('../src/k');\n" + _CHECK,
    })
    with selecting(repo, retry_failed=False) as (_, service):
        selected, tier, hint = _impact(service, "src/alone.js")
    assert selected == {} and tier == "partial", (selected, tier)
    assert "computed name" in hint and "consider adding tests" not in hint, hint


def test_only_a_declared_workspace_naming_no_file_makes_the_selection_partial(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "package.json": '{"name": "mono", "private": true, "devDependencies": {"jest": "29"}}\n',
        "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n",
        "packages/a/package.json": '{"name": "@acme/a", "main": "src/index.js"}\n',
        "packages/a/src/index.js": "exports.rate = () => 0.2;\n",
        "packages/a/test/rate.test.js": ("const { rate } = require('../src');\n"
                                         "test('r', () => expect(rate()).toBe(0.2));\n"),
        "packages/a/src/use.js": "module.exports = require('@acme/a/gone');\n",
        # A fixture that happens to carry a published package's name: not what ``require('left-pad')`` loads.
        "packages/a/test/fixtures/pad/package.json": '{"name": "left-pad", "main": "missing.js"}\n',
        "packages/a/test/fixtures/pad/readme.js": "module.exports = 1;\n",
        "packages/a/src/pad.js": "module.exports = require('left-pad/other');\n",
    })
    with selecting(repo, retry_failed=False) as (_, service):
        selected, tier, hint = _impact(service, "packages/a/src/index.js")
    assert selected == {"packages/a/test/rate.test.js": "high"}, selected
    assert tier == "partial" and "packages/a/src/use.js imports '@acme/a/gone'" in hint, hint
    assert "left-pad" not in hint, hint
