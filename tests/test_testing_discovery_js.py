"""Which JavaScript projects get a runner: a package.json's own test tool decides before the language default."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.config import CodePlaneConfig
from codeplane.testing.discovery import discover
from tests.builders import make_repo

TESTS = {"web/src/sum.js": "exports.sum = (a, b) => a + b;\n",
         "web/src/sum.test.js": "test('sum', () => expect(require('./sum').sum(1, 2)).toBe(3));\n"}


def _runners(tmp_path: Path, package: str) -> dict[str, list[str]]:
    root = make_repo(tmp_path / "repo", {"web/package.json": package, **TESTS})
    found = discover(root, CodePlaneConfig().tests)
    runners: dict[str, list[str]] = {}
    for target in found.targets:
        runners.setdefault(target.runner, []).append(target.target_id)
    return runners


def test_a_package_whose_scripts_run_another_test_tool_is_not_given_jest(tmp_path: Path) -> None:
    # Django's js_tests/*.test.js are QUnit tests run by ``grunt test``: they were Jest targets no Jest could run.
    assert _runners(tmp_path / "grunt", '{"scripts": {"test": "grunt test --verbose"}}\n') == {}
    assert _runners(tmp_path / "tape", '{"scripts": {"test": "npm run tests-only", '
                                       '"tests-only": "nyc tape \'test/**/*.js\'"}}\n') == {}


def test_jest_and_vitest_named_by_scripts_or_dependencies_and_jest_by_default(tmp_path: Path) -> None:
    assert _runners(tmp_path / "default", '{"name": "web"}\n') == {"jest": ["web/src/sum.test.js"]}
    assert _runners(tmp_path / "script", '{"scripts": {"test": "jest --ci", "e2e": "playwright test"}}\n') == {
        "jest": ["web/src/sum.test.js"]}
    assert _runners(tmp_path / "vitest", '{"scripts": {"test": "vitest run"}}\n') == {
        "vitest": ["web/src/sum.test.js"]}
    assert _runners(tmp_path / "dep", '{"devDependencies": {"jest": "29"}, "scripts": {"test": "mocha"}}\n') == {
        "jest": ["web/src/sum.test.js"]}
