"""A file or directory move keeps the TypeScript configs and the test runners' configs naming it (s56, QA59 F4).

``refactor_move packages/a -> packages/core`` rewrote ``b``'s import but left ``{"path": "../a"}`` in ``b``'s
tsconfig and the solution's ``references``, said "covers 1/1 occurrences", and ``tsc -b`` failed (TS5083,
TS6053); ``tsconfig.base.json``'s ``paths`` targets, ``extends`` and ``include`` stayed too, and moving a Jest
transform said "covers 0/0" while the package's ``jest.config.js`` still named it. Real git repositories, the
real index and service (and the real server once), ``tsc -b`` and ``jest`` on the result.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.refactor.models import RefactorPreview
from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server
from tests.refactor_builders import refactor_env
from tests.runner_projects import JS_DIR, require

pytestmark = pytest.mark.anyio

COMPOSITE = ('{ "compilerOptions": { "composite": true, "strict": true, "types": [], "rootDir": "src", '
             '"outDir": "dist" }, "include": ["src"]%s }\n')
# JSONC as editors write it: comments and trailing commas, which an edit must keep.
SOLUTION = ('{\n  // every package builds with tsc -b\n  "files": [],\n  "references": [\n'
            '    { "path": "packages/a" }, // the library\n    { "path": "packages/b" },\n  ],\n}\n')
REFERENCES = {
    ".gitignore": "node_modules\ndist\n*.tsbuildinfo\n",
    "tsconfig.json": SOLUTION,
    "packages/a/tsconfig.json": COMPOSITE % "",
    "packages/b/tsconfig.json": COMPOSITE % ', /* a is built first */ "references": [{ "path": "../a" },]',
    "packages/a/src/index.ts": "export function double(x: number): number { return x * 2 }\n",
    "packages/b/src/index.ts": 'import { double } from "../../a/src/index"\nexport const four: number = double(2)\n',
}


def _tsc_build(root: Path) -> None:
    """``tsc -b`` of a fresh clone exits 0 (skipped where ``.ci/run`` has not installed typescript): the build
    output of an earlier build is removed first, as a moved package's would be stale."""
    tsc = JS_DIR / "node_modules/.bin/tsc"
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.skip("typescript is not installed (.ci/run installs it with npm)")
    for output in [*root.rglob("dist"), *root.rglob("*.tsbuildinfo")]:
        shutil.rmtree(output) if output.is_dir() else output.unlink()
    built = subprocess.run([str(tsc), "-b"], cwd=root, capture_output=True, text=True, check=False, timeout=300)
    assert built.returncode == 0, built.stdout


def _config_edits(preview: RefactorPreview) -> list[tuple[str, str, str, str]]:
    return sorted((e.path, e.old_text, e.new_text, e.certainty) for e in preview.edits
                  if e.reason in ("tsconfig_path", "runner_config_path"))


async def test_a_moved_package_keeps_the_project_references_naming_it_and_tsc_b_builds(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", REFERENCES)
    _tsc_build(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("refactor_move", {"from_path": "packages/a", "to_path": "packages/core"})
            preview, text = envelope(res)["result"], answer_text(res)
            assert sorted((e["path"], e["new_text"]) for e in preview["edits"]) == [
                ("packages/b/src/index.ts", "../../core/src/index"), ("packages/b/tsconfig.json", "../core"),
                ("tsconfig.json", "packages/core")], text
            # The plan covers the configs' occurrences too: "covers 1/1" read complete with two left behind.
            assert "\ncovers 3/3 occurrences" in text, text
            applied = await client.call_tool("refactor_apply", {"refactor_id": preview["refactor_id"]})
            assert not applied.is_error, answer_text(applied)
    assert (repo / "tsconfig.json").read_text() == SOLUTION.replace('"packages/a"', '"packages/core"')
    assert (repo / "packages/b/tsconfig.json").read_text() == \
        REFERENCES["packages/b/tsconfig.json"].replace('"../a"', '"../core"')
    _tsc_build(repo)


BASE = ('{\n  "compilerOptions": {\n    "strict": true, "types": [], "composite": true, "declaration": true,\n'
        '    "baseUrl": ".",\n    "paths": {\n      "@acme/ui/*": ["packages/ui/src/*"], // the components\n'
        '      "@acme/core": ["packages/core/src/index.ts"],\n    },\n  },\n}\n')
ALIASED = {
    ".gitignore": "node_modules\ndist\n*.tsbuildinfo\n",
    "tsconfig.base.json": BASE,
    "tsconfig.json": '{ "files": [], "references": [{ "path": "packages/ui" }, { "path": "packages/app" }] }\n',
    "tsconfig.check.json": ('{ "extends": "./tsconfig.base.json", "compilerOptions": { "noEmit": true, '
                            '"composite": false }, "include": ["packages/ui/src/**/*.ts", "packages/app/src"] }\n'),
    "packages/ui/tsconfig.json": ('{ "extends": "../../tsconfig.base", "compilerOptions": { "rootDir": "src", '
                                  '"outDir": "dist" }, "include": ["src"] }\n'),
    "packages/ui/src/button.ts": "export const label = (s: string): string => `[${s}]`\n",
    "packages/app/tsconfig.json": ('{ "extends": "../../tsconfig.base.json", "compilerOptions": { "rootDir": "src", '
                                   '"outDir": "dist" }, "include": ["src"], "references": [{ "path": "../ui" }] }\n'),
    "packages/app/src/main.ts": "import { label } from '@acme/ui/button'\nexport const shown: string = label('ok')\n",
}


def test_extends_paths_targets_and_include_follow_a_package_moved_deeper(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", ALIASED) as env:
        _tsc_build(env.root)
        preview = env.service.move("packages/ui", "libs/web/ui")
        # A moved config's edits are made where it lies before the move (then it moves).
        assert _config_edits(preview) == [
            ("packages/app/tsconfig.json", "../ui", "../../libs/web/ui", "high"),
            ("packages/ui/tsconfig.json", "../../tsconfig.base", "../../../tsconfig.base", "high"),
            ("tsconfig.base.json", "packages/ui/src/*", "libs/web/ui/src/*", "high"),
            ("tsconfig.check.json", "packages/ui/src/**/*.ts", "libs/web/ui/src/**/*.ts", "high"),
            ("tsconfig.json", "packages/ui", "libs/web/ui", "high")]
        # The alias still names the file once its target moves with it: the import stays as written.
        assert not [e for e in preview.edits if e.path == "packages/app/src/main.ts"], preview.edits
        assert preview.warnings == []
        env.service.apply(preview.refactor_id)
        assert env.read("tsconfig.base.json") == BASE.replace('"packages/ui/src/*"', '"libs/web/ui/src/*"')
        _tsc_build(env.root)
        checked = subprocess.run([str(JS_DIR / "node_modules/.bin/tsc"), "-p", "tsconfig.check.json"], cwd=env.root,
                                 capture_output=True, text=True, check=False, timeout=300)
        assert checked.returncode == 0, checked.stdout


def test_a_moved_base_config_keeps_its_base_url_and_every_extends_naming_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", ALIASED) as env:
        preview = env.service.move("tsconfig.base.json", "config/tsconfig.base.json")
        # Its "paths" targets stay relative to the same "baseUrl", which now says "..".
        assert _config_edits(preview) == [
            ("packages/app/tsconfig.json", "../../tsconfig.base.json", "../../config/tsconfig.base.json", "high"),
            ("packages/ui/tsconfig.json", "../../tsconfig.base", "../../config/tsconfig.base", "high"),
            ("tsconfig.base.json", ".", "..", "high"),
            ("tsconfig.check.json", "./tsconfig.base.json", "./config/tsconfig.base.json", "high")]
        env.service.apply(preview.refactor_id)
        _tsc_build(env.root)


def test_a_glob_that_no_longer_takes_in_the_moved_sources_is_a_warning_not_an_edit(tmp_path: Path) -> None:
    files = {**REFERENCES, "tsconfig.lint.json": '{ "include": ["packages/*/src"], "compilerOptions": {} }\n'}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move("packages/a", "libs/a")
        assert not [e for e in preview.edits if e.path == "tsconfig.lint.json"]
        assert preview.warnings == ['tsconfig.lint.json: libs/a/src/index.ts no longer matched by its "include" '
                                    'packages/*/src after the move (a glob is not rewritten)']
        # Within the glob's reach nothing is said.
        assert env.service.move("packages/a", "packages/core").warnings == []


TRANSFORM = "module.exports = { process(src) { return { code: src.replace('__ANSWER__', '42') } } }\n"
JEST = {
    ".gitignore": "node_modules\n",
    "scripts/plain-transform.js": TRANSFORM,
    "packages/store/package.json": '{ "name": "store", "private": true, "scripts": { "test": "jest" } }\n',
    "packages/store/jest.config.js": ('module.exports = {\n  testEnvironment: "node",\n'
                                      '  transform: { "^.+\\\\.js$": "<rootDir>/../../scripts/plain-transform.js" },\n'
                                      '  // the transform\'s own tests live in "scripts/"\n}\n'),
    "packages/store/answer.test.js": "test('answer', () => { expect(__ANSWER__).toBe(42) })\n",
    "vitest.config.ts": ('import { defineConfig } from "vitest/config"\n'
                         'export default defineConfig({ test: { include: ["packages/{core,ui}/test/**/*.test.ts"] } '
                         '})\n'),
    "packages/ui/test/a.test.ts": "import { it } from 'vitest'\nit('a', () => {})\n",
}


def _jest(root: Path) -> None:
    jest = require("jest")
    ran = subprocess.run([jest, "--ci"], cwd=root / "packages/store", capture_output=True, text=True, check=False,
                         timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_moved_jest_transform_is_proposed_in_the_jest_config_naming_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", JEST) as env:
        (env.root / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)
        _jest(env.root)
        preview = env.service.move("scripts/plain-transform.js", "tools/plain-transform.js")
        # A string in code is a path only by how Jest reads it: medium, applied by default like other mediums.
        assert _config_edits(preview) == [
            ("packages/store/jest.config.js", "<rootDir>/../../scripts/plain-transform.js",
             "<rootDir>/../../tools/plain-transform.js", "medium")]
        assert preview.coverage is not None and preview.coverage.in_plan == 1
        env.service.apply(preview.refactor_id)
        _jest(env.root)


def _vitest(root: Path) -> str:
    ran = subprocess.run([require("vitest"), "run"], cwd=root, capture_output=True, text=True, check=False, timeout=300)
    return f"rc={ran.returncode} " + ran.stdout + ran.stderr


def test_a_vitest_include_alternative_follows_a_package_renamed_in_place(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", JEST) as env:
        (env.root / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)
        preview = env.service.move("packages/ui", "packages/web")
        assert _config_edits(preview) == [("vitest.config.ts", "packages/{core,ui}/test/**/*.test.ts",
                                           "packages/{core,web}/test/**/*.test.ts", "medium")]
        assert preview.warnings == []
        env.service.apply(preview.refactor_id)
        ran = _vitest(env.root)
        assert ran.startswith("rc=0 ") and "1 passed" in ran, ran


def test_a_runner_glob_that_no_longer_matches_moved_tests_is_warned(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", JEST) as env:
        preview = env.service.move("packages/ui", "libs/ui")
        assert preview.warnings == ["vitest.config.ts:2: 'packages/{core,ui}/test/**/*.test.ts' no longer matches "
                                    "libs/ui/test/a.test.ts after the move (a glob is not rewritten)"]
        assert not [e for e in preview.edits if e.path == "vitest.config.ts"]
