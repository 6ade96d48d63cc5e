"""A Jest/Vitest config that cannot be read (QA s50): one that throws when loaded, one with a syntax error, a
``package.json`` whose ``"jest"`` key is of the wrong type. Discovery then follows the runner's default patterns,
so the project's test files may be others: an ``affected_by`` selection for a change its tests may load is
``partial`` and says which config and why, where it read ``complete`` and trusted the defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.testing.runners.jsscan import load_problem
from tests.builders import make_repo
from tests.index_helpers import selecting

SOURCE = {
    "src/sum.js": "function sum(a, b) {\n  return a + b;\n}\nmodule.exports = { sum };\n",
    "src/sum.test.js": "const { sum } = require('./sum');\ntest('adds', () => { expect(sum(1, 2)).toBe(3); });\n",
    "checks/sum.check.js": ("const { sum } = require('../src/sum');\n"
                            "test('adds', () => { expect(sum(1, 2)).toBe(3); });\n"),
}
JEST = '{"name": "web", "devDependencies": {"jest": "29"}}\n'
VITEST = '{"name": "web", "devDependencies": {"vitest": "1"}}\n'

BROKEN: dict[str, tuple[dict[str, str], str]] = {
    # The patterns after the throw were trusted: the config never loads, so jest runs nothing of them.
    "throws": ({"package.json": JEST, "jest.config.js": (
        "throw new Error('set CONFIG first');\nmodule.exports = { testMatch: ['**/*.check.js'] };\n")},
        "jest.config.js cannot be read: it throws when loaded (a throw at line 1)"),
    "syntax": ({"package.json": JEST, "jest.config.js": "module.exports = { testMatch: ['**/*.check.js'] ;\n"},
               "jest.config.js cannot be read: it has a syntax error ('{' on line 1 is never closed)"),
    "jest key": ({"package.json": '{"name": "web", "devDependencies": {"jest": "29"}, "jest": "./cfg.js"}\n'},
                 'package.json cannot be read: its "jest" key is a string, not an object'),
    "missing import": ({"package.json": JEST, "jest.config.js": (
        "const base = require('./jest.base');\nmodule.exports = { ...base };\n")},
        "jest.config.js cannot be read: it throws when loaded (./jest.base, loaded at line 1, does not exist)"),
    "vitest syntax": ({"package.json": VITEST, "vitest.config.ts": (
        "import { defineConfig } from 'vitest/config'\n"
        "export default defineConfig({ test: { include: ['**/*.check.js'] }\n")},
        "vitest.config.ts cannot be read: it has a syntax error ('{' on line 2 is never closed)"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_an_unreadable_js_config_makes_the_selection_partial_with_its_reason(tmp_path: Path, case: str) -> None:
    config, reason = BROKEN[case]
    repo = make_repo(tmp_path / "repo", {**SOURCE, **config})
    with selecting(repo) as (_, service):
        view = service.discover(affected_by=["src/sum.js:2"])
    assert view.impact is not None
    assert view.impact.confidence == "partial", view.impact
    assert reason in view.impact.hint, view.impact.hint
    assert "default test patterns were used" in view.impact.hint and "Selection is complete" not in view.impact.hint
    assert {t.target_id for t in view.targets} == {"src/sum.test.js"}  # nothing added to compensate (§11.9.7)


def test_a_readable_config_keeps_the_selection_complete(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**SOURCE, "package.json": JEST, "jest.config.js": (
        "// the checks are the tests here\nmodule.exports = {\n  testMatch: ['**/*.check.js'],\n"
        "  transform: { '^.+\\\\.js$': 'babel-jest' },\n};\n")})
    with selecting(repo) as (_, service):
        view = service.discover(affected_by=["src/sum.js:2"])
    assert view.impact is not None and view.impact.confidence == "complete", view.impact
    assert {t.target_id for t in view.targets} == {"checks/sum.check.js"}


def test_a_python_change_is_not_made_partial_by_a_broken_jest_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\npythonpath = .\n", "calc/__init__.py": "",
        "calc/ops.py": "def add(a, b):\n    return a + b\n",
        "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "web/package.json": JEST, "web/jest.config.js": "throw new Error('x');\n",
        "web/src/sum.test.js": "test('adds', () => { expect(1 + 2).toBe(3); });\n"})
    with selecting(repo) as (_, service):
        view = service.discover(affected_by=["calc/ops.py:2"])
        unread = service.discovery().unread
    assert view.impact is not None and view.impact.confidence == "complete", view.impact
    assert [(u.runner, u.project, u.path) for u in unread] == [("jest", "web", "web/jest.config.js")]


def test_a_run_of_an_empty_selection_behind_a_broken_config_does_not_pass(tmp_path: Path) -> None:
    """No test of the defaults imports the changed file, and the config that would name the real tests throws."""
    repo = make_repo(tmp_path / "repo", {
        "package.json": JEST,
        "jest.config.js": "throw new Error('no');\nmodule.exports = { testMatch: ['**/*.t.js'] };\n",
        "lib/util.js": "module.exports = (a) => a;\n",
        "spec/util.t.js": "const u = require('../lib/util');\ntest('u', () => { expect(u(1)).toBe(1); });\n"})
    with selecting(repo) as (_, service):
        record = service.start_run(affected_by=["lib/util.js:1"])
        while not record.finished:
            record.wait(record.version, 1.0)
        snapshot = record.snapshot()
    assert snapshot.state == "failed" and not snapshot.targets, snapshot
    assert "jest.config.js cannot be read" in snapshot.message, snapshot.message


@pytest.mark.parametrize("text", [
    # Well-formed configs in the shapes projects write them: none may read as broken.
    "import type { Config } from 'jest';\nconst config: Config = {\n  testRegex: /\\.spec\\.ts$/.source,\n"
    "  roots: ['<rootDir>/src'],\n};\nexport default config;\n",
    "const path = require('path');\nfunction fail(x) {\n  if (!x) { throw new Error(`missing ${x}`); }\n"
    "  return x;\n}\n"
    "module.exports = { rootDir: path.resolve(__dirname), ratio: (1 + 2) / 3, setup: () => { throw 1 } };\n",
    "import { defineConfig } from 'vite'\nexport default defineConfig({\n  plugins: [{ name: 'x', transform(code, id) "
    "{ if (!id) throw new Error(`no ${id}`); return code.replace(/\\/\\*.*?\\*\\//g, '') } }],\n"
    "  test: { include: ['src/**/*.test.ts'], exclude: [`${'dist'}/**`] },\n})\n",
    "#!/usr/bin/env node\n/* a comment { */\nmodule.exports = { a: '}', b: \"[\", c: `)` };\n",
    "module.exports = { throw: false, thrown: x.throw, re: [/[/(]/, /\\//], div: a[1] / b / c };\n",
])
def test_a_well_formed_config_loads(text: str) -> None:
    assert load_problem(text) == ""


def test_only_a_relative_import_of_a_missing_file_counts(tmp_path: Path) -> None:
    (tmp_path / "jest.base.js").write_text("module.exports = {};\n")
    present = ("// const old = require('./jest.old');\nimport type { Config } from './types';\n"
               "const base = require('./jest.base');\nconst path = require('path');\n")
    assert load_problem(present, tmp_path) == ""
    assert load_problem(present + "import setup from '../setup';\n", tmp_path) == (
        "it throws when loaded (../setup, loaded at line 5, does not exist)")
