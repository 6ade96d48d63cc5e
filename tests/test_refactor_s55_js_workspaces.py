"""Renames, references and impact across the packages of an npm workspace, through the real server (s55).

``packages/b`` imports ``packages/a`` by its name (``@acme/a``: ``"exports"`` subpaths and patterns), ``a`` imports
itself by name and through ``#imports``. Before, the index left those imports external: ``search`` references
listed the definition alone, ``refactor_impact`` said 0 references, and ``refactor_rename`` proposed the other
package's uses ``low`` (``other_binding``), so ``apply: true`` changed nothing and a reviewed apply broke ``tsc``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.builders import answer_text, call, make_repo, mcp_client, running_server
from tests.runner_projects import JS_DIR

pytestmark = pytest.mark.anyio

TSCONFIG = ('{"compilerOptions": {"strict": true, "target": "es2020", "module": "nodenext", '
            '"moduleResolution": "nodenext", "noEmit": true, "types": [], "lib": ["es2020"]}, '
            '"include": ["packages/*/src/**/*.ts"]}\n')
FILES = {
    ".gitignore": "node_modules\n",
    "package.json": '{"name": "mono", "private": true, "workspaces": ["packages/*"]}\n',
    "tsconfig.json": TSCONFIG,
    "packages/a/package.json": json.dumps({
        "name": "@acme/a", "version": "1.0.0", "type": "module",
        "exports": {".": {"types": "./src/index.ts", "default": "./dist/index.js"}, "./math": "./src/math.ts",
                    "./util/*": "./src/util/*.ts"},
        "imports": {"#internal": "./src/internal.ts"}}) + "\n",
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
}


def _tsc(root: Path) -> None:
    """``tsc -p .`` exits 0, with the workspace linked into node_modules as npm install links it."""
    tsc = JS_DIR / "node_modules/.bin/tsc"
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.skip("typescript is not installed (.ci/run installs it with npm)")
    scope = root / "node_modules/@acme"
    if not scope.exists():
        scope.mkdir(parents=True)
        for name in ("a", "b"):
            (scope / name).symlink_to(root / "packages" / name, target_is_directory=True)
    checked = subprocess.run([str(tsc), "-p", "."], cwd=root, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout


async def test_a_rename_reaches_every_package_of_the_workspace_and_tsc_agrees(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    _tsc(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            found = await client.call_tool("search", {"query": "rate", "mode": "references"})
            text = answer_text(found)
            assert "packages/b/src/index.ts\n1:[IMPORT STRONG] import { rate } from '@acme/a';" in text, text
            assert "packages/a/src/self.ts" in text, text
            impact = answer_text(await client.call_tool("refactor_impact", {"target": "packages/a/src/index.ts"}))
            assert impact.startswith("file packages/a/src/index.ts: 4 references (strong 4)"), impact
            for symbol, path, new in (("rate", "packages/a/src/index.ts", "ratio"),
                                      ("double", "packages/a/src/math.ts", "twice"),
                                      ("base", "packages/a/src/internal.ts", "root")):
                applied = await call(client, "refactor_rename", {"symbol": symbol, "path": path, "new_name": new,
                                                                 "apply": True})
                assert applied["applied"]["applied_edits"] >= 3 and "not_applied" not in applied, (symbol, applied)
            preview = await call(client, "refactor_rename", {"symbol": "pad", "path": "packages/a/src/util/pad.ts",
                                                             "new_name": "padded"})
            # The specifier names the file, not the function: listed for review, never renamed.
            assert preview["counts"]["high"] == 3, preview
            await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"], "min_certainty": "high"})
    b = (repo / "packages/b/src/index.ts").read_text()
    assert "import { ratio } from '@acme/a';" in b and "import { twice } from '@acme/a/math';" in b, b
    assert "import { padded } from '@acme/a/util/pad';" in b, b
    assert "import { root } from '#internal';" in (repo / "packages/a/src/math.ts").read_text()
    _tsc(repo)
