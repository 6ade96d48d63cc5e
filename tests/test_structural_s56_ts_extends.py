"""A tsconfig's ``paths``/``baseUrl`` and module resolution come through its ``extends`` chain (s56).

The layout Nx and most TypeScript monorepos use: the aliases live in a root ``tsconfig.base.json`` and each
project's ``tsconfig.json`` extends it. The index read each ``tsconfig.json`` alone, so ``import { shout } from
'@org/lib'`` linked to nothing (references, renames and moves missed every use through an alias), and a move in a
project whose base said ``nodenext`` wrote specifiers without the ``.js`` Node needs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.index.structural import tspaths
from tests.refactor_builders import refactor_env
from tests.runner_projects import JS_DIR
from tests.test_structural_index import Harness

BASE = json.dumps({"compilerOptions": {"strict": True, "paths": {"@org/lib": ["./libs/lib/src/index.ts"],
                                                                  "@org/lib/*": ["./libs/lib/src/*"]}}})
NX = {
    "tsconfig.base.json": BASE,
    "apps/web/tsconfig.json": '{\n  // a project of the workspace\n  "extends": "../../tsconfig.base.json",\n'
                              '  "compilerOptions": {"noEmit": true},\n}\n',
    "libs/lib/src/index.ts": "export function shout(s: string) { return s; }\n",
    "libs/lib/src/text/pad.ts": "export function pad(s: string) { return s; }\n",
    "apps/web/src/app.ts": "import { shout } from '@org/lib';\nimport { pad } from '@org/lib/text/pad';\n"
                           "shout(pad('x'));\n",
}


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


def test_aliases_of_an_extended_base_link_and_follow_its_edits(h: Harness) -> None:
    h.apply(NX)
    assert h.ref("apps/web/src/app.ts", 3, "shout") == ("STRONG", h.uid("libs/lib/src/index.shout"))
    assert h.ref("apps/web/src/app.ts", 3, "pad") == ("STRONG", h.uid("libs/lib/src/text/pad.pad"))
    # Only the base changes: every import under the project that extends it is relinked.
    h.apply({"tsconfig.base.json": '{"compilerOptions": {"strict": true}}'})
    assert h.ref("apps/web/src/app.ts", 3, "shout")[0] == "PROVEN"
    h.apply({"tsconfig.base.json": BASE})
    assert h.ref("apps/web/src/app.ts", 3, "shout") == ("STRONG", h.uid("libs/lib/src/index.shout"))
    # The project's own ``paths`` replace the base's whole, as in TypeScript.
    h.apply({"apps/web/tsconfig.json": json.dumps({"extends": "../../tsconfig.base.json",
                                                   "compilerOptions": {"paths": {"~/*": ["./src/*"]}}})})
    assert h.ref("apps/web/src/app.ts", 3, "shout")[0] == "PROVEN"


def test_an_option_comes_from_the_nearest_config_of_the_chain_that_states_it() -> None:
    texts = {
        "tsconfig.base.json": '{"compilerOptions": {"baseUrl": "src", "paths": {"@a/*": ["a/*"]}}}',
        "configs/strict.json": '{"compilerOptions": {"paths": {"@s/*": ["./s/*"]}}}',
        "web/tsconfig.json": '{"extends": ["../tsconfig.base", "../configs/strict.json"]}',
        "api/tsconfig.json": '{"extends": "../tsconfig.base.json", "compilerOptions": {"baseUrl": "."}}',
        "cli/tsconfig.json": '{"extends": "@tsconfig/node20/tsconfig.json", "compilerOptions": {}}',
        "lib/tsconfig.json": '{"extends": "../configs/strict.json"}',
        "loop/tsconfig.json": '{"extends": "./tsconfig.other.json"}',
        "loop/tsconfig.other.json": '{"extends": "./tsconfig.json"}',
    }
    found = tspaths.configs(texts)
    # An array's later entry wins; ``baseUrl`` is relative to the config that states it (the extension-less entry
    # names the ``.json`` file) and ``paths`` to ``baseUrl``, or without one to the config that states them.
    assert found["web"] == ("src", True, [("@s/*", "./s/*")])
    assert tspaths.specifier_path("web/x.ts", "@s/y", found) == "src/s/y"
    assert found["lib"] == ("configs", False, [("@s/*", "./s/*")])
    assert tspaths.specifier_path("lib/x.ts", "@s/y", found) == "configs/s/y"
    # The project's own ``baseUrl`` with the base's ``paths``.
    assert found["api"] == ("api", True, [("@a/*", "a/*")])
    assert tspaths.specifier_path("api/x.ts", "@a/b", found) == "api/a/b"
    # A package's base is outside the repository; a cycle ends where it closes.
    assert "cli" not in found and "loop" not in found
    assert tspaths.compiler_option("web/tsconfig.json", texts, "baseUrl") == "src"
    assert tspaths.compiler_option("loop/tsconfig.json", texts, "baseUrl") is None


def test_a_long_extends_chain_is_cut_not_a_crash() -> None:
    texts = {f"c{i}/tsconfig.json": json.dumps({"extends": f"../c{i + 1}/tsconfig.json"}) for i in range(3000)}
    texts["c3000/tsconfig.json"] = '{"compilerOptions": {"baseUrl": "."}}'
    found = tspaths.configs(texts)
    assert found["c2999"] == ("c3000", True, [])
    assert "c0" not in found  # beyond the depth followed


def _tsc(root: Path) -> None:
    tsc = JS_DIR / "node_modules/.bin/tsc"
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.skip("typescript is not installed (.ci/run installs it with npm)")
    checked = subprocess.run([str(tsc), "-p", "apps/web"], cwd=root, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout


def test_a_move_rewrites_aliases_of_the_base_and_keeps_tsc_passing(tmp_path: Path) -> None:
    files = {**NX, "apps/web/tsconfig.json": json.dumps({
        "extends": "../../tsconfig.base.json",
        "compilerOptions": {"noEmit": True, "types": [], "lib": ["es2020"], "target": "es2020"},
        "include": ["src/**/*.ts", "../../libs/lib/src/**/*.ts"]})}
    with refactor_env(tmp_path / "repo", files) as env:
        _tsc(env.root)
        preview = env.service.move("libs/lib/src/text/pad.ts", "libs/lib/src/strings/pad.ts")
        env.service.apply(preview.refactor_id)
        assert env.read("apps/web/src/app.ts").startswith(
            "import { shout } from '@org/lib';\nimport { pad } from '@org/lib/strings/pad';\n")
        _tsc(env.root)


def test_a_move_under_a_base_that_says_nodenext_writes_the_extension_node_loads(tmp_path: Path) -> None:
    files = {
        "tsconfig.base.json": json.dumps({"compilerOptions": {"module": "nodenext", "moduleResolution": "nodenext",
                                                              "strict": True, "target": "es2020", "noEmit": True,
                                                              "types": [], "lib": ["es2020"]}}),
        "apps/web/package.json": '{"name": "web", "type": "module"}\n',
        "apps/web/tsconfig.json": '{"extends": "../../tsconfig.base.json", "include": ["src/**/*.ts"]}',
        "apps/web/src/rates.ts": "export const rate = 2;\nexport const doubled = rate * 2;\n",
        "apps/web/src/app.ts": "import { rate } from './rates.js';\nexport const twice = rate * 2;\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        _tsc(env.root)
        preview = env.service.move_symbol("rate", "apps/web/src/lib/consts.ts")
        env.service.apply(preview.refactor_id)
        # rates.ts has no relative import of its own to copy a style from: the config chain decides.
        assert env.read("apps/web/src/rates.ts").startswith("import { rate } from './lib/consts.js';\n")
        assert "from './lib/consts.js'" in env.read("apps/web/src/app.ts")
        _tsc(env.root)
