"""Moving a symbol between CommonJS modules (``require`` / ``module.exports``): each module stays in its own
module system, and the code still runs under node after the move (importers untouched keep working)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.refactor_builders import refactor_env, run_node

CJS = {
    "package.json": '{"name": "cjs"}\n',
    "lib/utils.js": ("'use strict';\n\nconst path = require('path');\nconst { inspect } = require('util');\n\n"
                     "function merge(a, b) {\n  return Object.assign({}, a, b, { base: path.basename('/x/y'), "
                     "shown: inspect(1) });\n}\n\nconst pick = (o, k) => o[k];\n\n"
                     "function shout(o) {\n  return String(pick(o, 'x')).toUpperCase();\n}\n\n"
                     "module.exports = { merge, pick };\n"),
    "lib/tools.js": "'use strict';\n\nconst os = require('os');\n\nmodule.exports = { eol: os.EOL };\n",
    "lib/index.js": ("const { merge } = require('./utils');\nconst utils = require('./utils');\n"
                     "const m = require('./utils').merge;\n\n"
                     "console.log(JSON.stringify([merge({ a: 1 }, {}), utils.merge({}, { b: 2 }), m({}, {}), "
                     "utils.pick({ x: 3 }, 'x')]));\n"),
    "lib/esm.mjs": "export const one = 1;\n",
}
OUTPUT = ('[{"a":1,"base":"y","shown":"1"},{"b":2,"base":"y","shown":"1"},{"base":"y","shown":"1"},3]\n')

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node runs the moved code")


def test_a_function_moves_to_a_new_commonjs_module_with_the_requires_it_reads(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CJS) as env:
        assert run_node(env) == OUTPUT
        preview = env.service.move_symbol("merge", "lib/merge.js", from_path="lib/utils.js")
        assert not preview.warnings, preview.warnings  # every require of lib/utils.js still finds merge there
        env.service.apply(preview.refactor_id)
        assert env.read("lib/merge.js") == (
            "'use strict';\n\nconst path = require('path');\nconst { inspect } = require('util');\n\n"
            "function merge(a, b) {\n  return Object.assign({}, a, b, { base: path.basename('/x/y'), "
            "shown: inspect(1) });\n}\n\nmodule.exports = { merge };\n")
        utils = env.read("lib/utils.js")
        assert "const { inspect } = require('util');\nconst { merge } = require('./merge');\n" in utils
        assert "function merge" not in utils and "import" not in utils
        assert env.read("lib/index.js") == CJS["lib/index.js"]
        assert run_node(env) == OUTPUT


def test_a_function_moves_into_an_existing_commonjs_module_and_is_exported_there(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CJS) as env:
        env.service.apply(env.service.move_symbol("merge", "lib/tools.js", from_path="lib/utils.js").refactor_id)
        tools = env.read("lib/tools.js")
        assert tools.startswith("'use strict';\n\nconst os = require('os');\nconst path = require('path');\n"
                                "const { inspect } = require('util');\n"), tools
        assert tools.endswith("module.exports = { eol: os.EOL };\n\nfunction merge(a, b) {\n"
                              "  return Object.assign({}, a, b, { base: path.basename('/x/y'), shown: inspect(1) "
                              "});\n}\n\nmodule.exports.merge = merge;\n"), tools
        assert "const { merge } = require('./tools');" in env.read("lib/utils.js")
        assert run_node(env) == OUTPUT


def test_moves_across_module_systems_or_needing_the_old_modules_names_are_refused(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CJS) as env:
        before = env.snapshot()
        cases = [("merge", "lib/utils.js", "lib/esm.mjs", "module systems differ"),
                 ("merge", "lib/utils.js", "lib/merge.mjs", "module systems differ"),
                 ("one", "lib/esm.mjs", "lib/tools.js", "module systems differ"),
                 ("shout", "lib/utils.js", "lib/shout.js", "commonjs module-level names")]
        for symbol, source, dest, reason in cases:
            with pytest.raises(CodePlaneError) as refused:
                env.service.move_symbol(symbol, dest, from_path=source)
            assert refused.value.code == 4008 and refused.value.details["reason"] == reason, (symbol, dest)
        assert env.snapshot() == before


def test_code_kept_to_es5_gets_var_and_explicit_keys(tmp_path: Path) -> None:
    files = {"package.json": '{"name": "old"}\n',
             "lib/utils.js": ("'use strict';\n\nvar formats = require('./formats');\n\n"
                              "var isRegExp = function isRegExp(obj) {\n  return obj instanceof RegExp;\n};\n\n"
                              "module.exports = { formats: formats, isRegExp: isRegExp };\n"),
             "lib/formats.js": "module.exports = { RFC: 'x' };\n",
             "lib/index.js": "var u = require('./utils');\nconsole.log(u.isRegExp(/a/), u.formats.RFC);\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("isRegExp", "lib/regexp.js", from_path="lib/utils.js").refactor_id)
        assert env.read("lib/regexp.js") == ("'use strict';\n\nvar isRegExp = function isRegExp(obj) {\n"
                                             "  return obj instanceof RegExp;\n};\n\n"
                                             "module.exports = { isRegExp: isRegExp };\n")
        assert env.read("lib/utils.js").startswith(
            "'use strict';\n\nvar formats = require('./formats');\nvar isRegExp = require('./regexp').isRegExp;\n")
        assert run_node(env) == "true x\n"
