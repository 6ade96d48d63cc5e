"""JavaScript/TypeScript shorthand keys (``{ merge }``) in a rename: the key and the variable are one token,
and only the half the rename is about may change. Each JavaScript rename is applied and the code is run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.refactor_builders import refactor_env, run_node

CJS = {
    "package.json": '{"name": "cjs"}\n',
    "lib/utils.js": ("'use strict';\n\nfunction merge(a, b) {\n  return Object.assign({}, a, b);\n}\n\n"
                     "const pick = (o, k) => o[k];\n\nmodule.exports = { merge, pick };\n"),
    "lib/index.js": ("const { merge } = require('./utils');\nconst utils = require('./utils');\n\n"
                     "function run({ a, b }) {\n  return [merge(a, b), utils.merge(a, b), utils.pick(a, 'x')];\n}\n\n"
                     "console.log(JSON.stringify(run({ a: { x: 1 }, b: { y: 2 } })));\n"),
}
OUTPUT = '[{"x":1,"y":2},{"x":1,"y":2},1]\n'

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node runs the renamed code")


@needs_node
def test_an_exported_function_keeps_its_key_and_importers_keep_working(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CJS) as env:
        assert run_node(env) == OUTPUT
        preview = env.service.rename("merge", "combine", path="lib/utils.js")
        assert any("shorthand key(s) kept" in w for w in preview.warnings), preview.warnings
        env.service.apply(preview.refactor_id)
        assert "function combine(a, b)" in env.read("lib/utils.js")
        assert "module.exports = { merge: combine, pick };" in env.read("lib/utils.js")
        assert env.read("lib/index.js") == CJS["lib/index.js"]
        assert run_node(env) == OUTPUT


@needs_node
def test_a_destructured_local_and_a_destructured_parameter_keep_their_keys(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CJS) as env:
        local = env.service.rename(None, "mergeAll", path="lib/index.js", line=1, column=8)
        env.service.apply(local.refactor_id)
        param = env.service.rename(None, "first", path="lib/index.js", line=4, column=15)
        env.service.apply(param.refactor_id)
        index = env.read("lib/index.js")
        assert index.startswith("const { merge: mergeAll } = require('./utils');\n"), index
        assert "function run({ a: first, b }) {\n  return [mergeAll(first, b), utils.merge(first, b), " \
               "utils.pick(first, 'x')];" in index, index
        assert run_node(env) == OUTPUT


def test_a_member_shorthand_key_included_by_the_agent_renames_the_key_and_keeps_the_variable(
        tmp_path: Path) -> None:
    files = {"package.json": '{"name": "demo"}\n',
             "src/scope.ts": ("export interface Scope {\n  drafts_: number\n}\n"
                              "const drafts_ = 5\nexport const v: Scope = {drafts_}\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Scope.drafts_", "pending_")
        key = next(e for e in preview.edits if e.line == 5)
        assert key.certainty == "low" and key.new_text == "pending_: drafts_"
        env.service.apply(preview.refactor_id, include=[key.edit_id])
        assert env.read("src/scope.ts").endswith("const drafts_ = 5\nexport const v: Scope = {pending_: drafts_}\n")


IN_PLACE = {
    "package.json": '{"name": "cjs"}\n',
    "lib/util.js": ("'use strict';\n\nexports.isAbsolute = function (p) {\n  return p.charAt(0) === '/';\n};\n\n"
                    "exports.normalize = function (p) {\n  var isAbsolute = exports.isAbsolute(p);\n"
                    "  return isAbsolute ? p : '/' + p;\n};\n\nmodule.exports.VERSION = '1';\n"),
    "lib/index.js": ("var util = require('./util');\n\n"
                     "console.log(JSON.stringify([util.isAbsolute('/a'), util.normalize('b'), util.VERSION]));\n"),
}


@needs_node
def test_an_export_defined_in_place_renames_its_key_and_every_use_through_the_module(tmp_path: Path) -> None:
    # source-map's ``exports.isAbsolute = function ...``: no definition before this session, then a rename whose
    # uses (``util.isAbsolute`` through the require, ``exports.isAbsolute`` in the module) were all ``low``.
    with refactor_env(tmp_path / "repo", IN_PLACE) as env:
        expected = '[true,"/b","1"]\n'
        assert run_node(env) == expected
        preview = env.service.rename("isAbsolute", "isAbsolutePath", path="lib/util.js")
        applied = sorted((e.path, e.line) for e in preview.edits if e.certainty == "high")
        assert applied == [("lib/index.js", 3), ("lib/util.js", 3), ("lib/util.js", 8)], preview.edits
        # the local ``var isAbsolute`` is another binding: proposed, never applied by default
        assert {(e.path, e.line, e.certainty) for e in preview.edits if e.certainty != "high"} == {
            ("lib/util.js", 8, "low"), ("lib/util.js", 9, "low")}
        env.service.apply(preview.refactor_id)
        util = env.read("lib/util.js")
        assert "exports.isAbsolutePath = function (p) {" in util
        assert "var isAbsolute = exports.isAbsolutePath(p);\n  return isAbsolute ? p" in util
        assert "util.isAbsolutePath('/a')" in env.read("lib/index.js")
        assert run_node(env) == expected
