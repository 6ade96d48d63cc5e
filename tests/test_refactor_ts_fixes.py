"""TypeScript/JavaScript refactors a QA pass broke with ``tsc``/``node``: each test is one repro, the edits the plan
must hold and, where typescript is installed, the compiler's verdict on the applied result."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.refactor.models import RefactorPreview
from tests.refactor_builders import assert_tsc_passes, refactor_env, run_node

TSCONFIG = ('{"compilerOptions": {"strict": true, "noEmit": true, "types": [], "target": "es2020", '
            '"module": "esnext", "moduleResolution": "bundler"}, "include": ["src"]}\n')


def _certainties(preview: RefactorPreview) -> dict[tuple[str, int], str]:
    return {(e.path, e.line): e.certainty for e in preview.edits}


def test_an_underscore_name_is_reexported_by_a_ts_star_barrel(tmp_path: Path) -> None:
    """``export * from "./impl"`` re-exports ``_under`` (only Python's star import skips ``_`` names): its uses
    through the barrel, as a namespace member and as a named import, were ``low`` and stayed ``_under``."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": TSCONFIG,
        "src/ns/impl.ts": ("export function _under(x: number): number { return x; }\n"
                           "export function $dollar(x: number): number { return x; }\n"),
        "src/ns/index.ts": 'export * from "./impl";\n',
        "src/ns/use.ts": ('import * as core from "./index.js";\n'
                          "export const s = core.$dollar(1) + core._under(2);\n"),
        "src/ns/use2.ts": 'import { _under } from "./index.js";\nexport const t = _under(2);\n',
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("_under", "_over")
        assert preview.status == "ready", preview
        found = _certainties(preview)
        assert found[("src/ns/use.ts", 2)] == "high" and found[("src/ns/use2.ts", 1)] == "high", preview.edits
        assert found[("src/ns/use2.ts", 2)] == "high"
        env.service.apply(preview.refactor_id)
        assert "core._over(2)" in env.read("src/ns/use.ts")
        assert env.read("src/ns/use2.ts") == 'import { _over } from "./index.js";\nexport const t = _over(2);\n'
        assert_tsc_passes(env)


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the renamed code")
def test_a_commonjs_export_renamed_in_place_renames_the_keys_that_destructure_its_require(tmp_path: Path) -> None:
    """``const { slugify, titleize: tz } = require('./util')`` reads the export keys: a rename of
    ``exports.slugify = function ...`` changed the key but left the pattern's (a ``low`` candidate), and ``slugify``
    was undefined at run time. The key follows the export; a shorthand keeps its local name."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "lib/util.js": ("'use strict'\nexports.slugify = function slugify (s) { return s.toLowerCase() }\n"
                        "module.exports.titleize = (s) => s.toUpperCase()\n"),
        "lib/index.js": ("const util = require('./util')\nconst { slugify, titleize: tz } = require('./util')\n"
                         "function later () {\n  const { slugify = null } = require('./util.js')\n  return slugify\n}\n"
                         "const other = { slugify: (x) => x }\n"
                         "console.log([util.slugify('A'), slugify('B'), tz('c'), later()('D'), other.slugify('e')]"
                         ".join('|'))\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        assert run_node(env) == "a|b|C|d|e\n"
        preview = env.service.rename("lib/util.slugify", "slugifyX")
        assert preview.status == "ready", preview
        env.service.apply(preview.refactor_id)
        renamed = env.read("lib/index.js")
        assert "const { slugifyX: slugify, titleize: tz } = require('./util')" in renamed
        assert "const { slugifyX: slugify = null } = require('./util.js')" in renamed
        assert "other.slugify('e')" in renamed and "slugify('B')" in renamed
        assert run_node(env) == "a|b|C|d|e\n"
        preview = env.service.rename("titleize", "titleizeX")
        assert preview.status == "ready", preview
        env.service.apply(preview.refactor_id)
        assert "const { slugifyX: slugify, titleizeX: tz } = require('./util')" in env.read("lib/index.js")
        assert run_node(env) == "a|b|C|d|e\n"


def test_a_barrels_default_alias_is_its_own_name_and_keeps_its_importers(tmp_path: Path) -> None:
    """``export { default as Badge } from './PriceTag'`` is a public name that only spells the default-exported
    function's own: renaming ``function Badge`` renamed ``import { Badge } from '@components'`` but not the alias
    (TS2305). The barrel and its importers keep ``Badge``; a name re-exported as itself still follows."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": TSCONFIG.replace('"types": []', '"types": [], "baseUrl": ".", '
                                          '"paths": {"@components": ["src/components/index.ts"]}'),
        "src/components/PriceTag.ts": ("export function PriceTag(n: number): string { return `$${n}`; }\n"
                                       "export default function Badge(s: string): string { return `[${s}]`; }\n"),
        "src/components/index.ts": ("export { PriceTag } from './PriceTag'\n"
                                    "export { default as Badge } from './PriceTag'\nexport * from './more'\n"),
        "src/components/more.ts": "export { default as Label } from './PriceTag'\n",
        "src/app.ts": ("import { PriceTag, Badge, Label } from '@components'\nimport Tag from './components/PriceTag'\n"
                       "export const out = PriceTag(1) + Badge('a') + Tag('b') + Label('c')\n"),
        "src/own.ts": "import Badge from './components/PriceTag'\nexport const own = Badge('d')\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/components/PriceTag.Badge", "Chip")
        assert preview.status == "ready", preview
        assert {e.path for e in preview.edits if e.certainty != "low"} <= {
            "src/components/PriceTag.ts", "src/own.ts"}, preview.edits
        env.service.apply(preview.refactor_id)
        assert "export default function Chip(s: string)" in env.read("src/components/PriceTag.ts")
        assert env.read("src/app.ts") == files["src/app.ts"]
        assert env.read("src/components/index.ts") == files["src/components/index.ts"]
        assert_tsc_passes(env)
        preview = env.service.rename("PriceTag", "Price")
        env.service.apply(preview.refactor_id)
        assert "import { Price, Badge, Label } from '@components'" in env.read("src/app.ts")
        assert_tsc_passes(env)


def test_a_symbol_move_writes_js_suffixed_specifiers_where_ts_files_do(tmp_path: Path) -> None:
    """``import * as util from "./util.js"; util.fmt(1)`` gained ``import { fmt } from './format.ts'`` (TS5097):
    a TypeScript file naming its ``.ts`` modules ``.js`` names the destination so too, as the named importer's
    rewrite already did; so does the old module's own new import when its other imports say ``.js``."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": TSCONFIG,
        "src/base.ts": "export const unit = 'px';\n",
        "src/util.ts": ('import { unit } from "./base.js";\n\n'
                        "export function fmt(x: number): string { return String(x) + unit; }\n\n"
                        "export function other(): string { return fmt(2); }\n"),
        "src/user.ts": ('import * as util from "./util.js";\n\n'
                        "export const a = util.fmt(1) + util.other();\n"),
        "src/named.ts": 'import { fmt } from "./util.js";\n\nexport const b = fmt(3);\n',
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("fmt", "src/format.ts", from_path="src/util.ts")
        env.service.apply(preview.refactor_id)
        user = env.read("src/user.ts")
        assert 'import { fmt } from "./format.js";' in user and "fmt(1) + util.other()" in user, user
        assert env.read("src/named.ts").startswith('import { fmt } from "./format.js";')
        assert 'import { fmt } from "./format.js";' in env.read("src/util.ts"), env.read("src/util.ts")
        assert ".ts'" not in env.read("src/format.ts") and '.ts"' not in env.read("src/format.ts")
        assert_tsc_passes(env)


def test_an_enum_member_used_as_a_type_is_renamed_with_its_values(tmp_path: Path) -> None:
    """``interface AlphaDef { kind: Kind.Alpha }`` names the member in a type: it was a plain ``Alpha`` resolved to
    nothing (``low``), while the value ``Kind.Alpha`` was ``high``; renamed alone, the type no longer existed."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": TSCONFIG,
        "src/a.ts": ('export enum Kind {\n  Alpha = "Alpha",\n  Beta = "Beta",\n}\n'
                     "export interface AlphaDef { kind: Kind.Alpha }\n"
                     "export const alpha: AlphaDef = { kind: Kind.Alpha };\n"),
        "src/b.ts": ('import { Kind } from "./a";\nimport * as a from "./a";\n'
                     "export const k: Kind.Alpha | a.Kind.Beta = Kind.Alpha;\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Kind.Alpha", "First")
        assert preview.status == "ready", preview
        assert {(e.path, e.line, e.certainty) for e in preview.edits} >= {
            ("src/a.ts", 5, "high"), ("src/a.ts", 6, "high"), ("src/b.ts", 3, "high")}, preview.edits
        assert [e.reason for e in preview.edits if e.certainty == "low"] == ["string"], preview.edits
        env.service.apply(preview.refactor_id)
        assert "export interface AlphaDef { kind: Kind.First }" in env.read("src/a.ts")
        assert "export const k: Kind.First | a.Kind.Beta = Kind.First;" in env.read("src/b.ts")
        assert_tsc_passes(env)


def test_a_merged_interface_and_const_are_one_symbol_renamed_with_every_use(tmp_path: Path) -> None:
    """``interface Thing`` beside ``const Thing`` is one merged symbol: the two bindings were rivals, so every use
    (types, values, importers) was ``low`` and the plan said ``ready`` with the two declarations alone."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": TSCONFIG,
        "src/a.ts": ("export interface Box<T> { v: T }\nexport interface Thing { kind: string }\n"
                     'export const Thing: Box<Thing> = { v: { kind: "x" } };\n'
                     "export function makeThing(): Thing {\n  return Thing.v;\n}\n"
                     "export type Shape = { sides: number };\n"
                     "export const Shape = (sides: number): Shape => ({ sides });\n"),
        "src/b.ts": ('import { Thing, makeThing, Shape } from "./a";\nconst t: Thing = makeThing();\n'
                     "export const s: Shape = Shape(3);\nconsole.log(Thing, t, s);\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/a.Thing", "Item")
        assert preview.status == "ready", preview
        assert not [e for e in preview.edits if e.certainty == "low"], preview.edits
        assert preview.counts["high"] == 8, [(e.path, e.line, e.column, e.certainty) for e in preview.edits]
        env.service.apply(preview.refactor_id)
        assert "export const Item: Box<Item> = " in env.read("src/a.ts")
        assert "function makeThing(): Item {\n  return Item.v;" in env.read("src/a.ts")
        assert env.read("src/b.ts").startswith('import { Item, makeThing, Shape } from "./a";\nconst t: Item =')
        preview = env.service.rename("src/a.Shape", "Polygon")
        assert not [e for e in preview.edits if e.certainty == "low"], preview.edits
        env.service.apply(preview.refactor_id)
        assert "export const s: Polygon = Polygon(3);" in env.read("src/b.ts")
        assert_tsc_passes(env)


def test_a_file_move_rewrites_importers_that_use_tsconfig_path_aliases(tmp_path: Path) -> None:
    """``import { formatPrice } from '@lib/format'`` under ``"@lib/*": ["app/lib/*"]`` was ignored by a move of
    ``app/lib/format.ts`` (the preview said 0 edits, then TS2307). Under the alias's target the alias style stays;
    elsewhere the importer gets a relative specifier."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": ('{"compilerOptions": {"strict": true, "noEmit": true, "types": [], "module": "esnext", '
                          '"moduleResolution": "bundler", "baseUrl": ".", "paths": {"@lib/*": ["app/lib/*"]}}, '
                          '"include": ["app"]}\n'),
        "app/lib/format.ts": "export function formatPrice(v: number): string { return v.toFixed(2); }\n",
        "app/lib/other.ts": "export const other = 1;\n",
        "app/main.ts": ("import { formatPrice } from '@lib/format'\nimport { other } from '@lib/other'\n"
                        "export const out = formatPrice(other)\n"),
        "app/ui/view.ts": "import { formatPrice } from '@lib/format'\nexport const v = formatPrice(2)\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move("app/lib/format.ts", "app/lib/text/format.ts")
        assert preview.counts["high"] == 2, preview.edits
        env.service.apply(preview.refactor_id)
        assert env.read("app/main.ts").startswith(
            "import { formatPrice } from '@lib/text/format'\nimport { other } from '@lib/other'\n")
        assert env.read("app/ui/view.ts").startswith("import { formatPrice } from '@lib/text/format'\n")
        assert_tsc_passes(env)
        preview = env.service.move("app/lib/text/format.ts", "app/shared/format.ts")
        env.service.apply(preview.refactor_id)
        assert env.read("app/main.ts").startswith("import { formatPrice } from './shared/format'\n")
        assert env.read("app/ui/view.ts").startswith("import { formatPrice } from '../shared/format'\n")
        assert_tsc_passes(env)


def test_a_symbol_move_rewrites_importers_that_use_tsconfig_path_aliases(tmp_path: Path) -> None:
    """The symbol-move half of the alias case: ``import { fmt } from '@lib/format'`` and ``import * as f from
    '@lib/format'`` follow ``fmt`` to ``app/lib/text.ts`` as ``@lib/text``."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": ('{"compilerOptions": {"strict": true, "noEmit": true, "types": [], "module": "esnext", '
                          '"moduleResolution": "bundler", "baseUrl": ".", "paths": {"@lib/*": ["app/lib/*"]}}, '
                          '"include": ["app"]}\n'),
        "app/lib/format.ts": ("export function fmt(v: number): string { return v.toFixed(2); }\n\n"
                              "export const other = 1;\n"),
        "app/main.ts": "import { fmt, other } from '@lib/format'\n\nexport const out = fmt(other)\n",
        "app/ns.ts": "import * as f from '@lib/format'\n\nexport const n = f.fmt(f.other)\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("fmt", "app/lib/text.ts", from_path="app/lib/format.ts")
        env.service.apply(preview.refactor_id)
        assert env.read("app/main.ts").startswith(
            "import { other } from '@lib/format'\nimport { fmt } from '@lib/text'\n"), env.read("app/main.ts")
        assert "import { fmt } from '@lib/text'" in env.read("app/ns.ts"), env.read("app/ns.ts")
        assert_tsc_passes(env)
