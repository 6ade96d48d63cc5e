"""A JS/TS symbol move lists the run-time loads of the old module it does not rewrite (``require()``,
dynamic ``import()``): real git repository, real index, the refactor service."""

from __future__ import annotations

from pathlib import Path

from codeplane.refactor.jsdynamic import MAX_LOAD_WARNINGS
from tests.refactor_builders import refactor_env

FILES = {
    "src/old.ts": ("export function scale(n: number): number {\n  return n * 2;\n}\n\n"
                   "export function keep(n: number): number {\n  return n;\n}\n"),
    "src/other.ts": "export const scale = 3;\n",
    "src/static.ts": "import { scale } from './old';\n\nexport const s = scale(1);\n",
    "src/cjs.js": "const old = require('./old');\n\nmodule.exports = () => old.scale(2);\n",
    "src/lazy.ts": ("export async function later(): Promise<number> {\n"
                    "  const { scale } = await import(`./old`);\n  return scale(3);\n}\n"),
    "src/sub/deep.js": "// the old scale, loaded lazily\nmodule.exports = () => require('../old').scale(4);\n",
    "src/legacy.ts": "import old = require('./old');\n\nexport const l = old.scale(5);\n",
    "src/unrelated.js": "const o = require('./other');\n\nmodule.exports = o.scale;\n",
    "src/dyn.js": "const name = process.env.MOD;\nconst m = require(name);\n\nmodule.exports = m.scale;\n",
    # Loads something unresolvable but never names the moved symbol (read: it spells "old").
    "src/quiet.js": "// not the old module\nconst m = require(process.env.X);\n\nmodule.exports = m.keep;\n",
    "src/tpl.js": "module.exports = (v) => import(`./${v}`).then((m) => m.scale);\n",
}


def test_require_and_dynamic_import_of_the_old_module_are_warned_and_static_imports_rewritten(
        tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        kept = env.service.move_symbol("src/old.ts:1", "src/scale.ts", keep_reexport=True)
        assert kept.warnings == []  # the old module re-exports it: every load still finds it
        preview = env.service.move_symbol("src/old.ts:1", "src/scale.ts")
        assert preview.coverage is not None and preview.coverage.files_scanned == len(FILES)  # quiet.js is read
        assert preview.warnings == [
            "src/cjs.js:1: require('./old') not rewritten: scale moves to './scale'",
            "src/dyn.js:2: require(name) not resolved and the file names scale: it may load src/old.ts",
            "src/lazy.ts:2: import(`./old`) not rewritten: scale moves to './scale'",
            "src/legacy.ts:1: import = require('./old') not rewritten: scale moves to './scale'",
            "src/sub/deep.js:2: require('../old') not rewritten: scale moves to '../scale'",
            "src/tpl.js:1: import(`./${v}`) not resolved and the file names scale: it may load src/old.ts",
        ]
        assert preview.verification_required
        env.service.apply(preview.refactor_id)
        assert env.read("src/static.ts").startswith("import { scale } from './scale';\n")
        for path in ("src/cjs.js", "src/lazy.ts", "src/unrelated.js", "src/quiet.js", "src/legacy.ts"):
            assert env.read(path) == FILES[path]


def test_a_default_export_move_warns_its_loads_and_not_unresolved_ones_in_files_not_naming_it(
        tmp_path: Path) -> None:
    files = {
        "web/greetings.mjs": "export default function greet() {\n  return 'hi';\n}\n",
        "web/main.mjs": "// greetings are picked at run time\nconst m = await import(process.argv[2]);\nm.default();\n",
        "web/pick.mjs": "const mod = process.argv[2];\nconst { default: greet } = await import(mod);\ngreet();\n",
        "web/cjs.cjs": "const greet = require('./greetings.mjs');\nmodule.exports = greet;\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("web/greetings.mjs:1", "web/hello.mjs")
        assert preview.coverage is not None and preview.coverage.files_scanned == len(files)
        assert preview.warnings == [
            "web/cjs.cjs:1: require('./greetings.mjs') not rewritten: greet moves to './hello.mjs'",
            "web/pick.mjs:2: import(mod) not resolved and the file names greet: it may load web/greetings.mjs",
        ]


def test_load_warnings_are_bounded_and_ordered(tmp_path: Path) -> None:
    files = {"lib/old.js": "export function scale(n) {\n  return n * 2;\n}\n"}
    count = MAX_LOAD_WARNINGS + 5
    files |= {f"lib/u{i:02d}.js": "\n\nmodule.exports = require('./old').scale;\n" for i in range(count)}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("scale", "lib/scale.js")
        listed = [f"lib/u{i:02d}.js:3: require('./old') not rewritten: scale moves to './scale'"
                  for i in range(MAX_LOAD_WARNINGS)]
        assert preview.warnings == [*listed, "5 more require()/import() of lib/old.js not listed"]
