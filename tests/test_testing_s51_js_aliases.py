"""A JS test importing through its runner's module aliases (QA s51): Jest's ``moduleNameMapper`` or Vite/Vitest's
``resolve.alias`` let ``require('@lib/math')`` load ``src/math.js``; the index does not evaluate those maps, so a
change to ``src/math.js`` answered ``complete`` without the test, which Jest then failed. Now such a test is
selected (``low``, naming the specifier and the config), and a non-test file importing through an alias makes the
selection ``partial`` (what imports it is not followed)."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.index_helpers import selecting

_MATH = "function sum(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\nmodule.exports = { sum };\n"
_TEST = "test('s', () => expect(1).toBe(1));\n"
_JEST_PKG = ('{"name": "jp", "private": true, "devDependencies": {"jest": "29"},\n'
             ' "jest": {"moduleNameMapper": {"^@lib/(.*)$": "<rootDir>/src/$1"}}}\n')
_VITEST_CONFIG = ("import path from 'path';\nimport { defineConfig } from 'vitest/config';\n"
                  "export default defineConfig({\n  resolve: { alias: { '@lib': path.resolve(__dirname, 'src') } },\n"
                  "});\n")


def _selected(service: TestingService, change: str) -> tuple[dict[str, str], str]:
    view = service.discover(affected_by=[change])
    assert view.impact is not None
    return {m.test_file: m.confidence for m in view.impact.matches}, view.impact.confidence


def test_jest_and_vitest_tests_importing_through_aliases_are_selected(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "jp/package.json": _JEST_PKG,
        "jp/src/math.js": _MATH,
        "jp/__tests__/alias.test.js": "const { sum } = require('@lib/math');\n" + _TEST,
        "jp/__tests__/math.test.js": "const { sum } = require('../src/math');\n" + _TEST,
        "jp/__tests__/other.test.js": "const lodash = require('lodash');\ntest('o', () => expect(1).toBe(1));\n",
        "vp/package.json": '{"name": "vp", "private": true, "devDependencies": {"vitest": "3"}}\n',
        "vp/vitest.config.js": _VITEST_CONFIG,
        "vp/src/math.js": "export function sum(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n",
        "vp/test/alias.test.js": ("import { sum } from '@lib/math';\nimport { test, expect } from 'vitest';\n"
                                  "test('s', () => expect(sum([2])).toBe(2));\n"),
        "vp/test/plain.test.js": "import { test, expect } from 'vitest';\ntest('p', () => expect(1).toBe(1));\n",
    })
    with selecting(repo, retry_failed=False) as (_, service):
        jest, jest_tier = _selected(service, "jp/src/math.js")
        vitest, vitest_tier = _selected(service, "vp/src/math.js")
        view = service.discover(affected_by=["jp/src/math.js"])
    assert jest == {"jp/__tests__/alias.test.js": "low", "jp/__tests__/math.test.js": "high"}, jest
    assert jest_tier == "complete"  # only test files import through the alias: each of them is selected
    assert view.impact is not None
    reasons = [reason for m in view.impact.matches for reason in m.reasons]
    assert any("'@lib/math' through jp/package.json's moduleNameMapper" in reason for reason in reasons), reasons
    assert vitest == {"vp/test/alias.test.js": "low"}, vitest
    assert vitest_tier == "complete"


def test_a_source_file_importing_through_an_alias_makes_the_selection_partial(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "jp/package.json": _JEST_PKG,
        "jp/src/math.js": _MATH,
        "jp/src/total.js": "const { sum } = require('@lib/math');\nmodule.exports = (xs) => sum(xs);\n",
        "jp/__tests__/total.test.js": "const total = require('../src/total');\n" + _TEST,
    })
    with selecting(repo, retry_failed=False) as (_, service):
        view = service.discover(affected_by=["jp/src/math.js"])
    assert view.impact is not None and view.impact.confidence == "partial", view.impact
    assert "jp/src/total.js imports '@lib/math'" in view.impact.hint, view.impact.hint
