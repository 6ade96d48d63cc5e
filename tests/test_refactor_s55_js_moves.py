"""Symbol and file moves keep every JS/TS importer compiling, whatever specifier it uses (s55).

The index resolves ``'@acme/a'`` (a workspace member, or the package itself, through ``"exports"``/``"main"``) and
``'#internal'`` (``"imports"``) since 455fe6b, but the move code resolved relative paths and tsconfig aliases
only: moving ``rate`` out of the package's entry point left ``import { rate } from '@acme/a'`` as it was, said
nothing, and ``tsc`` failed with TS2305; moving ``math.ts`` left ``"exports": {"./math": "./src/math.ts"}``
naming nothing (TS2307). Real git repositories, the real index and service, ``tsc`` on the result.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.refactor.models import RefactorPreview
from tests.builders import call, make_repo, mcp_client, running_server
from tests.refactor_builders import RefactorEnv, refactor_env
from tests.runner_projects import JS_DIR

pytestmark = pytest.mark.anyio

NODENEXT = ('{"compilerOptions": {"strict": true, "target": "es2020", "module": "nodenext", '
            '"moduleResolution": "nodenext", "noEmit": true, "types": [], "lib": ["es2020"]}, '
            '"include": ["packages/*/src/**/*.ts"]}\n')
WORKSPACE = {
    ".gitignore": "node_modules\n",
    "package.json": '{"name": "mono", "private": true, "workspaces": ["packages/*"]}\n',
    "tsconfig.json": NODENEXT,
    "packages/a/package.json": json.dumps({
        "name": "@acme/a", "version": "1.0.0", "type": "module",
        "exports": {".": {"types": "./src/index.ts", "default": "./dist/index.js"}, "./math": "./src/math.ts",
                    "./util/*": "./src/util/*.ts"},
        "imports": {"#internal": "./src/internal.ts", "#lib/*": "./src/lib/*.ts"}}) + "\n",
    "packages/a/src/index.ts": "export function rate(): number { return 0.2; }\n",
    "packages/a/src/math.ts": ("import { base } from '#internal';\n"
                               "export function double(n: number): number { return n * base; }\n"),
    "packages/a/src/internal.ts": "export const base = 2;\n",
    "packages/a/src/util/pad.ts": "export function pad(s: string): string { return s.padStart(4); }\n",
    "packages/a/src/self.ts": "import { rate } from '@acme/a';\nexport const selfRate = rate();\n",
    "packages/b/package.json": json.dumps({"name": "@acme/b", "version": "1.0.0", "type": "module",
                                           "exports": "./src/index.ts", "dependencies": {"@acme/a": "1.0.0"}}) + "\n",
    "packages/b/src/index.ts": ("import { rate } from '@acme/a';\nimport { double } from '@acme/a/math';\n"
                                "import { pad } from '@acme/a/util/pad';\n"
                                "export const gross = (n: number): number => n * (1 + rate()) + double(n);\n"
                                "export const shown = pad('x');\n"),
    "packages/b/src/ns.ts": "import * as A from '@acme/a';\nexport const r = A.rate();\n",
    "packages/b/src/re.ts": "export { rate } from '@acme/a';\n",
}


def _tsc(root: Path, *members: str) -> None:
    """``tsc -p .`` exits 0, with the workspace members linked into node_modules as npm links them."""
    tsc = JS_DIR / "node_modules/.bin/tsc"
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.skip("typescript is not installed (.ci/run installs it with npm)")
    scope = root / "node_modules/@acme"
    if not scope.exists():
        scope.mkdir(parents=True)
        for name in members or ("a", "b"):
            (scope / name).symlink_to(root / "packages" / name, target_is_directory=True)
    checked = subprocess.run([str(tsc), "-p", "."], cwd=root, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout


def _applied(env: RefactorEnv, preview: RefactorPreview) -> None:
    env.service.apply(preview.refactor_id)
    _tsc(env.root)


async def test_a_symbol_moved_out_of_a_package_entry_point_stays_exported_there_for_importers_by_name(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", WORKSPACE)
    _tsc(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            args = {"symbol": "rate", "from_path": "packages/a/src/index.ts", "to_path": "packages/a/src/rates.ts"}
            held = await call(client, "refactor_move", {**args, "apply": True})
            # No "exports" entry names rates.ts: the importers keep '@acme/a', which re-exports it. Said, so
            # ``apply: true`` leaves the choice (re-export or a new "exports" entry) to the agent.
            assert held["not_applied"] == "warnings", held
            assert held["warnings"] == [
                "packages/a/src/index.ts keeps exporting rate (export { rate } from './rates.js';) for "
                "packages/a/src/self.ts:1 '@acme/a', packages/b/src/index.ts:1 '@acme/a', "
                "packages/b/src/ns.ts:2 '@acme/a', packages/b/src/re.ts:1 '@acme/a': no specifier of their kind "
                "names packages/a/src/rates.ts (an \"exports\"/\"imports\" entry for it would)"], held
            assert (repo / "packages/a/src/index.ts").read_text() == WORKSPACE["packages/a/src/index.ts"]
            await call(client, "refactor_apply", {"refactor_id": held["refactor_id"]})
    assert (repo / "packages/a/src/index.ts").read_text() == "export { rate } from './rates.js';\n"
    assert (repo / "packages/a/src/rates.ts").read_text() == WORKSPACE["packages/a/src/index.ts"]
    for path in ("packages/b/src/index.ts", "packages/a/src/self.ts", "packages/b/src/ns.ts", "packages/b/src/re.ts"):
        assert (repo / path).read_text() == WORKSPACE[path], path
    _tsc(repo)


def test_importers_by_name_follow_a_symbol_to_where_an_exports_pattern_reaches(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", WORKSPACE) as env:
        preview = env.service.move_symbol("rate", "packages/a/src/util/rates.ts", from_path="packages/a/src/index.ts")
        assert preview.warnings == []
        _applied(env, preview)
        assert env.read("packages/b/src/index.ts").startswith("import { rate } from '@acme/a/util/rates';\n")
        assert env.read("packages/a/src/self.ts").startswith("import { rate } from '@acme/a/util/rates';\n")
        assert env.read("packages/b/src/re.ts") == "export { rate } from '@acme/a/util/rates';\n"
        assert env.read("packages/b/src/ns.ts") == ("import * as A from '@acme/a';\n"
                                                    "import { rate } from '@acme/a/util/rates';\n"
                                                    "export const r = rate();\n")


def test_a_dynamic_import_by_name_of_the_old_module_is_warned_with_the_specifier_that_now_names_it(
        tmp_path: Path) -> None:
    lazy = ("export async function later(): Promise<number> {\n"
            "  const { rate } = await import('@acme/a');\n  return rate();\n}\n")
    with refactor_env(tmp_path / "repo", {**WORKSPACE, "packages/b/src/lazy.ts": lazy}) as env:
        preview = env.service.move_symbol("rate", "packages/a/src/util/rates.ts", from_path="packages/a/src/index.ts")
        assert preview.warnings == [
            "packages/b/src/lazy.ts:2: import('@acme/a') not rewritten: rate moves to '@acme/a/util/rates'"]


def test_a_hash_import_follows_a_symbol_through_an_imports_pattern(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", WORKSPACE) as env:
        preview = env.service.move_symbol("base", "packages/a/src/lib/consts.ts",
                                          from_path="packages/a/src/internal.ts")
        assert preview.warnings == []
        _applied(env, preview)
        assert env.read("packages/a/src/math.ts").startswith("import { base } from '#lib/consts';\n")


def test_keep_reexport_leaves_importers_by_name_as_they_are_without_a_warning(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", WORKSPACE) as env:
        preview = env.service.move_symbol("rate", "packages/a/src/rates.ts", from_path="packages/a/src/index.ts",
                                          keep_reexport=True)
        assert preview.warnings == []
        _applied(env, preview)
        assert env.read("packages/b/src/index.ts") == WORKSPACE["packages/b/src/index.ts"]


def test_file_moves_carry_the_package_json_paths_that_name_them(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", WORKSPACE) as env:
        for old, new in (("packages/a/src/math.ts", "packages/a/src/calc/math.ts"),
                         ("packages/a/src/internal.ts", "packages/a/src/core/internal.ts"),
                         ("packages/a/src/index.ts", "packages/a/src/main.ts"),
                         ("packages/a/src/util", "packages/a/src/helpers")):
            preview = env.service.move(old, new)
            assert preview.warnings == [], (old, preview.warnings)
            _applied(env, preview)
        manifest = json.loads(env.read("packages/a/package.json"))
        assert manifest["exports"] == {".": {"types": "./src/main.ts", "default": "./dist/index.js"},
                                       "./math": "./src/calc/math.ts", "./util/*": "./src/helpers/*.ts"}
        assert manifest["imports"] == {"#internal": "./src/core/internal.ts", "#lib/*": "./src/lib/*.ts"}
        # Every importer kept its specifier: the package.json now maps it to the new place.
        assert env.read("packages/b/src/index.ts") == WORKSPACE["packages/b/src/index.ts"]
        assert env.read("packages/a/src/calc/math.ts") == WORKSPACE["packages/a/src/math.ts"]


def test_a_file_move_no_package_entry_can_follow_is_warned_and_not_applied_unseen(tmp_path: Path) -> None:
    after = "after the move (package.json \"exports\"/\"imports\"/\"workspaces\" decide which do)"
    with refactor_env(tmp_path / "repo", WORKSPACE) as env:
        preview = env.service.move("packages/a/src/util/pad.ts", "packages/a/src/pad.ts")
        # ``./src/util/*.ts`` made ``./src/*.ts`` would export every file of src: not a rewrite to make unasked.
        assert preview.warnings == [f"packages/b/src/index.ts:3: '@acme/a/util/pad' not rewritten: no specifier of "
                                    f"its kind names packages/a/src/pad.ts {after}"]
        assert not [e for e in preview.edits if e.path.endswith("package.json")]
        assert isinstance(env.service.apply_when_certain(preview), str)
        # Out of the workspace's "packages/*": its name names nothing any more, nor does the root tsconfig's glob
        # take its sources in.
        preview = env.service.move("packages/a", "libs/a")
        assert preview.warnings == [
            "tsconfig.json: libs/a/src/index.ts, libs/a/src/internal.ts, libs/a/src/math.ts (+2 more) no longer "
            "matched by its \"include\" packages/*/src/**/*.ts after the move (a glob is not rewritten)"] + [
            f"packages/b/src/{path}: '{spec}' not rewritten: no specifier of its kind names libs/a/src/{new} {after}"
            for path, spec, new in (("index.ts:1", "@acme/a", "index.ts"), ("index.ts:2", "@acme/a/math", "math.ts"),
                                    ("index.ts:3", "@acme/a/util/pad", "util/pad.ts"),
                                    ("ns.ts:1", "@acme/a", "index.ts"), ("re.ts:1", "@acme/a", "index.ts"))]
        assert env.read("packages/a/src/util/pad.ts") == WORKSPACE["packages/a/src/util/pad.ts"]


def test_code_moved_into_another_package_warns_of_the_hash_import_it_cannot_take_along(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", WORKSPACE) as env:
        preview = env.service.move_symbol("double", "packages/b/src/double.ts", from_path="packages/a/src/math.ts")
        assert preview.warnings[0] == (
            "'#internal' (imported with the moved code) name(s) another file or nothing in packages/b/src/double.ts, "
            "and no specifier of that kind names the file packages/a/src/math.ts means; fix it there")


BUNDLER = ('{"compilerOptions": {"strict": true, "target": "es2020", "module": "esnext", '
           '"moduleResolution": "bundler", "noEmit": true, "types": [], "lib": ["es2020"]}, '
           '"include": ["packages/*/src/**/*.ts", "app/**/*.ts"]}\n')
BUNDLED = {
    ".gitignore": "node_modules\n",
    "package.json": '{"name": "mono", "private": true, "workspaces": ["packages/*"]}\n',
    "tsconfig.json": BUNDLER,
    "packages/a/package.json": '{"name": "@acme/a", "version": "1.0.0", "main": "./src/index.ts"}\n',
    "packages/a/src/index.ts": ("export function tax(): number { return 0.1; }\n"
                                "export function keep(): number { return 1; }\n"),
    "packages/b/package.json": '{"name": "@acme/b", "version": "1.0.0", "main": "./src/index.ts"}\n',
    "packages/b/src/index.ts": "import { tax } from '@acme/a';\nexport const t = tax();\n",
    "lib/package.json": '{"main": "./src/entry.ts"}\n',
    "lib/src/entry.ts": "export function hello(): string { return 'hi'; }\n",
    "app/main.ts": "import { hello } from '../lib';\nexport const h = hello();\n",
}


def test_packages_without_exports_and_directories_imported_by_their_main_follow_moves(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", BUNDLED) as env:
        _tsc(env.root)
        # No "exports": a subpath of the package names any of its files.
        preview = env.service.move_symbol("tax", "packages/a/src/tax.ts", from_path="packages/a/src/index.ts")
        assert preview.warnings == []
        _applied(env, preview)
        assert env.read("packages/b/src/index.ts").startswith("import { tax } from '@acme/a/src/tax';\n")
        preview = env.service.move("packages/a/src/index.ts", "packages/a/src/main.ts")
        _applied(env, preview)
        assert json.loads(env.read("packages/a/package.json"))["main"] == "./src/main.ts"
        # ``'../lib'`` names lib/src/entry.ts through lib/package.json's "main".
        preview = env.service.move("lib/src/entry.ts", "lib/src/start.ts")
        _applied(env, preview)
        assert env.read("lib/package.json") == '{"main": "./src/start.ts"}\n'
        assert env.read("app/main.ts") == BUNDLED["app/main.ts"]
        preview = env.service.move("lib", "shared/lib")
        _applied(env, preview)
        assert env.read("app/main.ts").startswith("import { hello } from '../shared/lib';\n")
        preview = env.service.move_symbol("hello", "shared/lib/src/greet.ts", from_path="shared/lib/src/start.ts")
        _applied(env, preview)
        assert env.read("app/main.ts").startswith("import { hello } from '../shared/lib/src/greet';\n")


def test_an_alias_that_cannot_follow_into_another_package_goes_through_the_package_not_a_relative_path(
        tmp_path: Path) -> None:
    config = BUNDLER.replace('"lib": ["es2020"]}', '"lib": ["es2020"], "baseUrl": ".", '
                             '"paths": {"@acme/*": ["packages/*/src"]}}')
    with refactor_env(tmp_path / "repo", {**BUNDLED, "tsconfig.json": config}) as env:
        preview = env.service.move_symbol("tax", "packages/a/src/tax.ts", from_path="packages/a/src/index.ts")
        assert preview.warnings == []
        _applied(env, preview)
        # Not '../../a/src/tax': one package importing another's files by relative path.
        assert env.read("packages/b/src/index.ts").startswith("import { tax } from '@acme/a/src/tax';\n")
