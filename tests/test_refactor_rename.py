"""Renames through the refactor service on real repositories (index + structural facts + mutation engine)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import CodePlaneError
from tests.refactor_builders import assert_tsc_passes, refactor_env, run_node

TWINS = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": (
        "class Circle:\n"
        "    def area(self):\n"
        "        return 3.14 * self.r\n"
        "\n"
        "    def describe(self):\n"
        "        return f'circle {self.area()}'\n"
        "\n"
        "\n"
        "class Square:\n"
        "    def area(self):\n"
        "        return self.side ** 2\n"
        "\n"
        "    def describe(self):\n"
        "        return f'square {self.area()}'\n"
    ),
    "pkg/report.py": (
        "from pkg.shapes import Circle, Square\n"
        "\n"
        "\n"
        "def total(c: Circle, s: Square) -> float:\n"
        "    made = Circle()\n"
        "    return c.area() + s.area() + Square().area() + made.area()\n"
    ),
}


def test_same_named_methods_in_two_classes_only_the_target_changes(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", TWINS) as env:
        preview = env.service.rename("pkg.shapes.Circle.area", "surface")
        assert preview.status == "ready" and preview.symbol is not None
        assert preview.symbol.qualified_name == "pkg.shapes.Circle.area"
        by_pos = {(e.path, e.line, e.column): e for e in preview.edits}
        # Square's def and Square receivers are other bindings: proposed low, never applied.
        assert by_pos[("pkg/shapes.py", 10, 8)].certainty == "low"
        assert by_pos[("pkg/report.py", 6, 24)].reason == "other_binding"  # s: Square
        assert by_pos[("pkg/report.py", 6, 13)].reason == "annotated_receiver"  # c: Circle
        assert by_pos[("pkg/shapes.py", 14, 30)].reason == "other_binding"  # self in Square
        outcome = env.service.apply(preview.refactor_id)
        assert outcome.applied_edits >= 4
        shapes = env.read("pkg/shapes.py")
        assert "    def surface(self):\n        return 3.14" in shapes
        assert "circle {self.surface()}" in shapes
        assert "    def area(self):\n        return self.side" in shapes
        assert "square {self.area()}" in shapes
        assert env.read("pkg/report.py").endswith(
            "return c.surface() + s.area() + Square().area() + made.surface()\n")


def test_ambiguous_symbol_needs_a_decision_and_commit_applies_the_chosen_candidate(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", TWINS) as env:
        preview = env.service.rename("area", "surface")
        assert preview.status == "needs_decision"
        assert [c.symbol.qualified_name for c in preview.candidates] == ["pkg.shapes.Circle.area",
                                                                         "pkg.shapes.Square.area"]
        assert preview.witness is not None and len(preview.witness.facts) == 2
        assert preview.decision_capsules[0].capsule_type == "scope_resolution"
        with pytest.raises(CodePlaneError) as undecided:
            env.service.apply(preview.refactor_id)
        assert undecided.value.code == 1003
        page = env.service.inspect(preview.refactor_id, candidate_id="c2", certainties=["high"])
        assert {i.edit.path for i in page.items} == {"pkg/shapes.py", "pkg/report.py"}
        env.service.apply(preview.refactor_id, candidate_id="c2")
        shapes = env.read("pkg/shapes.py")
        assert "square {self.surface()}" in shapes and "circle {self.area()}" in shapes


def test_shadowed_local_and_parameter_are_not_renamed(tmp_path: Path) -> None:
    files = {
        "mod.py": (
            "def helper(x):\n"
            "    return x * 2\n"
            "\n"
            "\n"
            "def uses():\n"
            "    return helper(1)\n"
            "\n"
            "\n"
            "def shadows(helper):\n"
            "    return helper + 1\n"
            "\n"
            "\n"
            "def local():\n"
            "    helper = 3\n"
            "    return helper\n"
        ),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("mod.helper", "assist")
        assert preview.counts["high"] == 2
        env.service.apply(preview.refactor_id)
        text = env.read("mod.py")
        assert text.startswith("def assist(x):")
        assert "    return assist(1)\n" in text
        assert "def shadows(helper):\n    return helper + 1\n" in text
        assert "    helper = 3\n    return helper\n" in text


def test_import_aliases_keep_their_local_names(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "def process(x):\n    return x\n",
        "pkg/a.py": "from pkg.core import process as run\n\nrun(1)\n",
        "pkg/b.py": "import pkg.core as c\nimport pkg.core\n\nc.process(2)\npkg.core.process(3)\n",
        "pkg/c.py": "from pkg.core import process\n\nprocess(4)\n",
        "pkg/d.py": "from pkg import core\n\ncore.process(5)\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.core.process", "handle")
        assert preview.counts["low"] == 0, preview.edits
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/a.py") == "from pkg.core import handle as run\n\nrun(1)\n"
        assert env.read("pkg/b.py") == "import pkg.core as c\nimport pkg.core\n\nc.handle(2)\npkg.core.handle(3)\n"
        assert env.read("pkg/c.py") == "from pkg.core import handle\n\nhandle(4)\n"
        assert env.read("pkg/d.py") == "from pkg import core\n\ncore.handle(5)\n"


def test_an_import_whose_local_name_is_bound_twice_keeps_it_with_an_alias(tmp_path: Path) -> None:
    use = ("try:\n    from pkg.fast import loads\nexcept ImportError:\n    from pkg.slow import loads\n\n\n"
           "def go(x):\n    return loads(x)\n")
    fallback_def = ("try:\n    from pkg.fast import loads\nexcept ImportError:\n"
                    "    def loads(s):\n        return s\n\n\nprint(loads(1))\n")
    files = {"pkg/__init__.py": "", "pkg/fast.py": "def loads(s):\n    return s\n",
             "pkg/slow.py": "def loads(s):\n    return s\n", "pkg/use.py": use, "pkg/other.py": fallback_def,
             "pkg/plain.py": "from pkg.fast import loads\n\nloads(2)\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.fast.loads", "fast_loads")
        lows = sorted((e.path, e.line) for e in preview.edits if e.certainty == "low")
        # Only the other module's own definition and the fallback bindings remain candidates; the uses of the
        # contested local name are accounted as kept, not offered for renaming.
        assert lows == [("pkg/other.py", 4), ("pkg/slow.py", 1), ("pkg/use.py", 4)], preview.edits
        assert preview.coverage is not None and preview.coverage.kept == ["pkg/other.py:8:6", "pkg/use.py:8:11"]
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/use.py") == use.replace("fast import loads", "fast import fast_loads as loads")
        assert env.read("pkg/other.py") == fallback_def.replace("fast import loads", "fast import fast_loads as loads")
        assert env.read("pkg/plain.py") == "from pkg.fast import fast_loads\n\nfast_loads(2)\n"
        assert env.read("pkg/slow.py") == "def loads(s):\n    return s\n"


def test_star_and_explicit_re_exports_follow_the_rename(tmp_path: Path) -> None:
    files = {
        "lib/__init__.py": "from .impl import *\nfrom .extra import Widget as Gadget\n",
        "lib/impl.py": "__all__ = ['make_widget']\n\n\ndef make_widget():\n    return 1\n",
        "lib/extra.py": "class Widget:\n    pass\n",
        "app.py": "from lib import make_widget, Gadget\n\nmake_widget()\nGadget()\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("lib.impl.make_widget", "build_widget")
        env.service.apply(preview.refactor_id)
        assert env.read("lib/impl.py").startswith("__all__ = ['build_widget']\n\n\ndef build_widget():")
        assert env.read("app.py") == "from lib import build_widget, Gadget\n\nbuild_widget()\nGadget()\n"
        preview = env.service.rename("lib.extra.Widget", "Part")
        env.service.apply(preview.refactor_id)
        assert env.read("lib/__init__.py") == "from .impl import *\nfrom .extra import Part as Gadget\n"
        assert env.read("app.py").endswith("Gadget()\n")


def test_file_changed_between_preview_and_apply_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    files = {
        "a.py": "def old():\n    return 1\n",
        "b.py": "from a import old\n\nold()\n",
        "c.py": "from a import old\n\nprint(old())\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("a.old", "new")
        assert {f.path for f in preview.affected_files} == {"a.py", "b.py", "c.py"}
        (env.root / "c.py").write_text("from a import old\n\nprint(old(), 2)\n")
        (env.root / "b.py").write_text("from a import old\n\nold()  # touched\n")
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as refused:
            env.service.apply(preview.refactor_id)
        assert refused.value.code == 5002
        assert [c["path"] for c in refused.value.details["changed"]] == ["b.py", "c.py"]
        assert env.snapshot() == before


def test_coverage_reports_every_other_mention_with_a_reason(tmp_path: Path) -> None:
    files = {
        "calc.py": (
            "def compute(x):\n"
            "    '''compute twice.'''\n"
            "    return x\n"
            "\n"
            "\n"
            "HANDLERS = {'compute': compute}\n"
            "# compute is registered above\n"
            "value = getattr(object(), 'compute', None)\n"
        ),
        "tests/test_calc.py": "from calc import compute\n\n\ndef test_it():\n    assert compute(2) == 2\n",
        "vendor/legacy.py": "def compute():\n    pass\n",
        "docs/guide.md": "Use `compute` to compute.\n",
        ".cplignore": "vendor/\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("calc.compute", "evaluate")
        coverage = preview.coverage
        assert coverage is not None
        assert coverage.excluded_files_with_hits == ["vendor/legacy.py"]
        assert coverage.by_reason["excluded_path"] == 1
        assert coverage.by_reason["string"] >= 1 and coverage.by_reason["dynamic_access"] == 1
        assert coverage.by_reason["docstring"] == 1 and coverage.by_reason["comment"] == 1
        assert coverage.lexical_occurrences == coverage.in_plan + coverage.low_candidates + preview.doc_edits.count \
            - sum(1 for e in preview.edits if e.certainty == "low" and e.reason in ("other_binding",))
        assert preview.verification_required
        high_paths = {e.path for e in preview.edits if e.certainty == "high"}
        assert high_paths == {"calc.py", "tests/test_calc.py"}
        page = env.service.inspect(preview.refactor_id, certainties=["low"], kinds=["code"], context_lines=1)
        assert {i.edit.reason for i in page.items} >= {"string", "dynamic_access", "excluded_path"}
        assert all(i.context for i in page.items if i.edit.path != "vendor/legacy.py")
        env.service.apply(preview.refactor_id)
        assert "HANDLERS = {'compute': evaluate}" in env.read("calc.py")
        assert env.read("vendor/legacy.py") == "def compute():\n    pass\n"
        assert env.read("docs/guide.md") == "Use `compute` to compute.\n"


def test_invalid_names_collisions_and_plan_lifecycle(tmp_path: Path) -> None:
    files = {"m.py": "def a():\n    return 1\n\n\ndef b():\n    return a()\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        with pytest.raises(CodePlaneError) as bad:
            env.service.rename("m.a", "class")
        assert bad.value.code == 4006
        with pytest.raises(CodePlaneError) as missing:
            env.service.rename("m.nothing", "x")
        assert missing.value.code == 3007
        preview = env.service.rename("m.a", "b")
        assert preview.collisions and preview.collisions[0].kind == "same_scope"
        with pytest.raises(CodePlaneError) as clash:
            env.service.apply(preview.refactor_id)
        assert clash.value.code == 4007
        env.service.cancel(preview.refactor_id)
        with pytest.raises(CodePlaneError) as gone:
            env.service.apply(preview.refactor_id)
        assert gone.value.code == 4004
        assert env.read("m.py") == files["m.py"]


JS_FILES = {
    "package.json": "{\"name\": \"demo\"}\n",
    "src/math.ts": ("export function clamp(n: number): number {\n  return Math.max(0, n);\n}\n"
                    "export class Box {\n  size(): number { return this.area(); }\n  area(): number { return 1; }\n}\n"
                    "export class Ring {\n  area(): number { return 2; }\n}\n"),
    "src/use.ts": ("import { clamp, Box, Ring } from './math';\nimport * as m from './math';\n"
                   "import { clamp as bounded } from './math';\nconst b = new Box();\nconst r = new Ring();\n"
                   "export const v = clamp(2) + m.clamp(3) + bounded(4) + b.area() + r.area();\n"),
}


def test_js_ts_rename_follows_imports_namespaces_and_aliases(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", JS_FILES) as env:
        preview = env.service.rename("src/math.clamp", "limit")
        env.service.apply(preview.refactor_id)
        assert env.read("src/math.ts").startswith("export function limit(n: number)")
        use = env.read("src/use.ts")
        assert use.startswith("import { limit, Box, Ring } from './math';\nimport * as m from './math';\n"
                              "import { limit as bounded } from './math';\n")
        assert "= limit(2) + m.limit(3) + bounded(4)" in use
        preview = env.service.rename("Box.area", "surface")
        by_reason = {(e.path, e.line, e.column): e.reason for e in preview.edits}
        assert by_reason[("src/math.ts", 5, 31)] == "self_member"
        env.service.apply(preview.refactor_id)
        assert "b.surface() + r.area()" in env.read("src/use.ts")
        assert "  area(): number { return 2; }" in env.read("src/math.ts")


def test_a_ts_constructor_parameter_property_is_a_field_renamed_with_its_plain_uses(tmp_path: Path) -> None:
    """``constructor(private readonly x: number)`` declares the field ``x``: before schema 23 a rename of
    ``Point.x`` found no definition (3007). The parameter's plain uses in the constructor are the same name."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "types": []}, "include": ["src"]}\n',
        "src/point.ts": ("export class Point {\n  constructor(private readonly x: number, public y?: number) {\n"
                         "    if (x < 0) { throw new Error('negative'); }\n  }\n"
                         "  norm(): number { return this.x * this.x + (this.y ?? 0); }\n}\n"
                         "export class Other {\n  x = 1;\n}\n"),
        "src/use.ts": ("import { Point, Other } from './point';\n"
                       "export function area(p: Point): number {\n"
                       "  return p.norm() + (p.y ?? 0) + new Other().x;\n}\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Point.x", "abscissa")
        assert preview.symbol is not None and preview.symbol.kind == "field"
        env.service.apply(preview.refactor_id)
        point = env.read("src/point.ts")
        assert "constructor(private readonly abscissa: number, public y?: number)" in point
        assert "if (abscissa < 0)" in point and "this.abscissa * this.abscissa" in point
        assert "  x = 1;" in point and "new Other().x" in env.read("src/use.ts")  # another class's x stays
        preview = env.service.rename("src/point.ts:2:56", "ordinate")  # by position, on the optional one
        env.service.apply(preview.refactor_id)
        assert "(p.ordinate ?? 0)" in env.read("src/use.ts") and "(this.ordinate ?? 0)" in env.read("src/point.ts")
        assert_tsc_passes(env)


def test_a_ts_signatures_parameters_are_its_own_not_the_enclosing_scopes(tmp_path: Path) -> None:
    """An overload's, a declared method's and a function type's parameters bound in the enclosing scope: the file's
    own ``options`` was ambiguous (its uses unresolved) and a field renamed ``options`` collided with a signature's
    parameter."""
    files = {
        "package.json": '{"name": "demo"}\n',
        "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "types": []}, "include": ["src"]}\n',
        "src/a.ts": ("export let options = 1;\nexport type Handler = (options: number) => number;\n"
                     "export function run(options: string): number;\nexport function run(options: number): number;\n"
                     "export function run(value: string | number): number {\n  return Number(value) + options;\n}\n"
                     "export const twice: Handler = (n) => n * options;\n"),
        "src/k.d.ts": "export declare class K {\n  opts: number;\n  constructor(options?: number);\n}\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/a.options", "factor")
        assert preview.status == "ready" and preview.counts["high"] == 3, preview
        env.service.apply(preview.refactor_id)
        source = env.read("src/a.ts")
        assert "Number(value) + factor;" in source and "let factor = 1;" in source and "n * factor;" in source
        assert "(options: number) => number;" in source and "run(options: string)" in source
        field = env.service.rename("K.opts", "options")
        assert not field.collisions, field.collisions
        assert_tsc_passes(env)


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the renamed code")
def test_a_js_constant_declared_below_the_functions_that_use_it_is_renamed_in_them(tmp_path: Path) -> None:
    """``function get() { return CONFIG.x }`` above ``const CONFIG = ...``: the body runs when called, so its
    ``CONFIG`` is the module's. It was left unresolved (a low candidate the apply skips) and the renamed module
    threw ReferenceError."""
    files = {"package.json": '{"name": "demo"}\n',
             "lib/index.js": ("function get() {\n  return CONFIG.x + helper();\n}\nconst helper = () => LIMIT;\n"
                              "class Box {\n  size() { return CONFIG.x * 2; }\n}\n"
                              "function early() {\n  return later;\n  let later = 1;\n}\n"
                              "const CONFIG = { x: 1 };\nlet LIMIT = 3;\n"
                              "console.log(get(), new Box().size(), typeof early);\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        assert run_node(env) == "4 2 function\n"
        preview = env.service.rename("lib/index.CONFIG", "SETTINGS")
        assert preview.counts["high"] == 3 and not preview.counts.get("low"), preview.counts
        env.service.apply(preview.refactor_id)
        preview = env.service.rename("lib/index.LIMIT", "CAP")
        assert preview.counts["high"] == 2, preview.counts
        env.service.apply(preview.refactor_id)
        source = env.read("lib/index.js")
        assert "return SETTINGS.x + helper();" in source and "return SETTINGS.x * 2;" in source
        assert "() => CAP;" in source
        assert run_node(env) == "4 2 function\n"
        # In its own function a use before ``let`` is the temporal dead zone: left as it was (not resolved).
        later = env.service.rename(None, "after", path="lib/index.js", line=10, column=6)
        assert later.counts["high"] == 1 and {(e.line, e.certainty) for e in later.edits} <= {
            (10, "high"), (9, "low")}, later.edits


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the renamed code")
def test_a_member_of_a_js_global_object_is_never_a_repository_classs(tmp_path: Path) -> None:
    """``Symbol.iterator`` beside the repository's only ``iterator`` method was a ``medium`` (anchored) edit, applied
    by default: ``Symbol.iteratorRenamed`` is undefined."""
    files = {"package.json": '{"name": "demo"}\n',
             "lib/index.js": ("class Bag {\n  constructor() { this.items = [1, 2]; }\n"
                              "  iterator() { return this.items[Symbol.iterator](); }\n}\n"
                              "function walk(b) { return [...b.iterator()]; }\n"
                              "const bag = new Bag();\nconsole.log(walk(bag).join(','), typeof Symbol.iterator);\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        assert run_node(env) == "1,2 symbol\n"
        preview = env.service.rename("Bag.iterator", "each")
        reasons = {(e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert reasons[(3, 40)] == ("low", "builtin_receiver") and reasons[(7, 47)] == ("low", "builtin_receiver")
        assert reasons[(5, 32)] == ("medium", "anchored")  # ``b``: an untyped parameter
        env.service.apply(preview.refactor_id)
        assert run_node(env) == "1,2 symbol\n"


def test_ts_interface_property_is_a_definition_that_renames_across_files(tmp_path: Path) -> None:
    files = {
        "package.json": "{\"name\": \"demo\"}\n",
        "src/scope.ts": ("export interface Scope {\n  drafts_: number\n  other: string\n}\n"
                         "export function make(): Scope {\n  return {drafts_: 0, other: 'x'}\n}\n"
                         "export const t = ({drafts_: 2, other: 'z'}) as Scope\n"
                         "export const u = {drafts_: 3}\n"
                         "const drafts_ = 5\nexport const v: Scope = {drafts_, other: 'w'}\n"),
        "src/use.ts": ("import { Scope } from './scope';\n"
                       "export function grow(s: Scope): number {\n  s.drafts_ += 1;\n  return s.drafts_;\n}\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Scope.drafts_", "pending_")
        assert {(e.path, e.line) for e in preview.edits} >= {("src/scope.ts", 2)}
        reasons = {(e.line, e.certainty, e.reason) for e in preview.edits if e.path == "src/scope.ts"}
        # Keys of literals typed Scope by the syntax are renamed; an untyped literal and a shorthand key (renaming
        # it would read another variable) are listed, not renamed.
        assert {(6, "medium", "typed_object_key"), (8, "medium", "typed_object_key"),
                (9, "low", "unresolved")} <= reasons
        assert not any(line == 11 and certainty != "low" for line, certainty, _ in reasons)
        env.service.apply(preview.refactor_id)
        scope = env.read("src/scope.ts")
        assert "  pending_: number\n  other: string\n" in scope
        assert "return {pending_: 0, other: 'x'}" in scope and "({pending_: 2, other: 'z'}) as Scope" in scope
        assert "export const u = {drafts_: 3}" in scope and "{drafts_, other: 'w'}" in scope
        use = env.read("src/use.ts")
        assert "s.pending_ += 1;" in use and "return s.pending_;" in use and "drafts_" not in use


def test_ts_keys_typed_by_a_family_union_alias_or_a_declared_class_field_are_renamed(tmp_path: Path) -> None:
    files = {
        "package.json": "{\"name\": \"demo\"}\n",
        "src/state.ts": ("export interface Base {\n  manual_: boolean\n}\n"
                         "export interface ObjState extends Base {\n  kind: 'o'\n}\n"
                         "export interface ArrState extends Base {\n  kind: 'a'\n}\n"
                         "type Both = ObjState | ArrState\n"
                         "type Loose = ObjState | { manual_: boolean; kind: 'x' }\n"
                         "const KEY = Symbol('k')\n"
                         "export function make(): Both {\n"
                         "  const s: Both = {kind: 'o', manual_: false}\n  return s\n}\n"
                         "export const loose: Loose = {kind: 'x', manual_: true}\n"
                         "export class Holder {\n  [KEY]: ObjState\n  other: number = 0\n"
                         "  constructor() {\n    this[KEY] = {kind: 'o', manual_: true}\n  }\n"
                         "  reset(): void {\n    this.other = 1\n"
                         "    const f = function (this: any) { this[KEY] = {manual_: 1} }\n"
                         "    f.call(this)\n  }\n}\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Base.manual_", "pinned_")
        keys = {(e.line, e.certainty, e.reason) for e in preview.edits if e.reason == "typed_object_key"}
        assert keys == {(14, "medium", "typed_object_key"), (22, "medium", "typed_object_key")}, preview.edits
        # A union with a member outside the family, and a plain function's ``this``, stay low candidates.
        lows = {e.line for e in preview.edits if e.certainty == "low"}
        assert {17, 26} <= lows, preview.edits
        env.service.apply(preview.refactor_id)
        text = env.read("src/state.ts")
        assert "const s: Both = {kind: 'o', pinned_: false}" in text
        assert "this[KEY] = {kind: 'o', pinned_: true}" in text
        assert "{kind: 'x', manual_: true}" in text and "this[KEY] = {manual_: 1}" in text


def test_local_variable_and_parameter_rename_by_position(tmp_path: Path) -> None:
    files = {"calc.py": ("def scale(value, factor=2):\n    result = value * factor\n    return result\n\n\n"
                         "def other(value):\n    return value\n\n\nscale(value=3)\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename(None, "amount", path="calc.py", line=1, column=10)
        assert preview.symbol is not None and preview.symbol.kind == "local"
        assert preview.counts["high"] == 3  # ``scale(value=3)``: the call's keyword (tests/test_refactor_qa16.py)
        assert {e.reason for e in preview.edits if e.certainty == "low"} == {"other_binding"}
        env.service.apply(preview.refactor_id)
        assert env.read("calc.py").startswith("def scale(amount, factor=2):\n    result = amount * factor\n")
        assert env.read("calc.py").endswith("scale(amount=3)\n")
        assert "def other(value):\n    return value\n" in env.read("calc.py")
        collide = env.service.rename("calc.py:2:4", "factor")
        assert collide.collisions and collide.collisions[0].kind == "same_scope"


def test_receivers_typed_by_attribute_declarations_and_annotations(tmp_path: Path) -> None:
    files = {"car.py": (
        "class Engine:\n    def start(self):\n        return 1\n\n\n"
        "class Motor:\n    def start(self):\n        return 2\n\n\n"
        "class Car:\n    def __init__(self, engine: Engine, motor: Motor | None):\n"
        "        self.engine = engine\n        self.motor = motor\n\n"
        "    def go(self):\n        return self.engine.start() + self.motor.start()\n\n\n"
        "def drive(e: Engine, m: Motor):\n    return e.start() + m.start()\n"
    )}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("car.Engine.start", "ignite")
        reasons = {(e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert reasons[(17, 27)] == ("medium", "attribute_receiver")
        assert reasons[(17, 48)] == ("low", "other_binding")
        assert reasons[(21, 13)] == ("medium", "annotated_receiver")
        assert reasons[(21, 25)] == ("low", "other_binding")
        env.service.apply(preview.refactor_id)
        text = env.read("car.py")
        assert "return self.engine.ignite() + self.motor.start()" in text
        assert "return e.ignite() + m.start()" in text


def test_a_local_bound_only_by_a_constructor_statement_is_a_certain_receiver(tmp_path: Path) -> None:
    # ``e = c.Engine()`` and nothing else binds ``e``: the object is an Engine made there, as certain as
    # ``c.Engine().start()``. A binding that does more than construct keeps the receiver medium.
    files = {
        "car.py": ("class Engine:\n    def start(self):\n        return 1\n\n"
                   "    def tuned(self):\n        return self\n\n\n"
                   "class Motor:\n    def start(self):\n        return 2\n"),
        "user.py": (
            "import car as c\nfrom car import Engine\n\n\n"
            "def exact():\n    e = c.Engine()  # made here\n    return e.start()\n\n\n"
            "def spanning():\n    w = Engine(\n        ')(',\n    )\n    return w.start()\n\n\n"
            "def semicolon():\n    z = Engine(); return z.start()\n\n\n"
            "def chained():\n    x = Engine().tuned()\n    return x.start()\n\n\n"
            "def either(flag):\n    y = Engine() if flag else Engine()\n    return y.start()\n"
        ),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("car.Engine.start", "ignite")
        reasons = {e.line: (e.certainty, e.reason) for e in preview.edits if e.path == "user.py"}
        assert reasons[7] == ("high", "assigned_receiver")
        assert reasons[14] == ("high", "assigned_receiver")
        assert reasons[18] == ("high", "assigned_receiver")
        assert reasons[23] == ("medium", "assigned_receiver")
        assert reasons[28] == ("medium", "assigned_receiver")
        env.service.apply(preview.refactor_id)
        text = env.read("user.py")
        assert "return e.ignite()" in text and "return w.ignite()" in text and "return z.ignite()" in text
        assert "return x.ignite()" in text and "return y.ignite()" in text


def test_a_typescript_const_bound_to_new_cls_is_a_certain_receiver_and_a_let_is_not(tmp_path: Path) -> None:
    # ``const c = new Cart()`` is the one binding ``c`` will ever have; ``let`` may be assigned again.
    files = {
        "src/cart.ts": "export class Cart {\n  add(i: number): number {\n    return i;\n  }\n}\n",
        "src/use.ts": ("import { Cart } from './cart';\n\nconst c = new Cart();\nc.add(1);\n"
                       "export const d: Cart = new Cart();\nd.add(2);\nlet e = new Cart();\ne.add(3);\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/cart.Cart.add", "insert")
        reasons = {e.line: (e.certainty, e.reason) for e in preview.edits if e.path == "src/use.ts"}
        assert reasons == {4: ("high", "assigned_receiver"), 6: ("high", "assigned_receiver"),
                           8: ("medium", "assigned_receiver")}, reasons


def test_a_typescript_function_with_overload_signatures_is_one_symbol_across_files(tmp_path: Path) -> None:
    # immer's ``each``: two ``export function each`` (a signature, then the implementation) were two rival
    # definitions, so every importer's ``each`` was a low "other binding" and the rename left them all.
    files = {
        "src/common.ts": ("export function each(obj: string[], iter: (k: string) => void): void\n"
                          "export function each(obj: any, iter: any) {\n  return obj.forEach(iter);\n}\n\n"
                          "export function twice() {\n  each([], () => {});\n}\n"),
        "src/index.ts": "export * from './common';\n",
        "src/use.ts": "import { each } from './index';\n\neach(['a'], (k) => k);\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("each", "forEachEntry")
        edits = sorted((e.path, e.line, e.certainty) for e in preview.edits)
        assert edits == [("src/common.ts", 1, "high"), ("src/common.ts", 2, "high"), ("src/common.ts", 7, "high"),
                         ("src/use.ts", 1, "high"), ("src/use.ts", 3, "high")], edits
        env.service.apply(preview.refactor_id)
        assert env.read("src/use.ts") == "import { forEachEntry } from './index';\n\nforEachEntry(['a'], (k) => k);\n"
        assert env.read("src/common.ts").count("forEachEntry") == 3


def test_a_python_function_with_overload_signatures_is_one_symbol_across_files(tmp_path: Path) -> None:
    # ``@overload`` twice, then the implementation: three bindings of one name were rival definitions, so the
    # importer's uses were low "other binding" / "unresolved receiver" edits.
    files = {
        "pkg/__init__.py": "",
        "pkg/m.py": ("from typing import overload\nimport typing as t\n\n\n@overload\ndef conv(x: int) -> int: ...\n"
                     "@t.overload\ndef conv(x: str) -> str: ...\ndef conv(x):\n    return x\n"),
        "pkg/use.py": "from pkg.m import conv\nfrom pkg import m\n\n\ndef go():\n    return conv(1) + m.conv(2)\n",
        # Defined twice without ``@overload``: the later one wins, which is no reason to rename the first.
        "pkg/twice.py": "def conv(x):\n    return 0\n\n\ndef conv(x):\n    return 1\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.m.conv", "convert")
        edits = sorted((e.path, e.line, e.certainty) for e in preview.edits if e.path != "pkg/twice.py")
        assert edits == [("pkg/m.py", 6, "high"), ("pkg/m.py", 8, "high"), ("pkg/m.py", 9, "high"),
                         ("pkg/use.py", 1, "high"), ("pkg/use.py", 6, "high"), ("pkg/use.py", 6, "high")], edits
        assert {e.certainty for e in preview.edits if e.path == "pkg/twice.py"} == {"low"}


def test_doc_sweep_edits_are_separate_and_applied_only_on_request(tmp_path: Path) -> None:
    files = {
        "util.py": "def parse_config(path):\n    # parse_config reads the file\n    return path\n",
        "README.md": "Call `parse_config` first.\n\n```python\nparse_config('a.toml')\n```\n\nWe parse_config later.\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("util.parse_config", "load_config")
        assert preview.doc_edits.count == 4 and preview.doc_edits.review_recommended
        assert preview.doc_edits.by_confidence == {"high": 2, "medium": 2}
        page = env.service.inspect(preview.refactor_id, kinds=["doc"], certainties=["high", "medium", "low"])
        assert {i.edit.path for i in page.items} == {"README.md", "util.py"}
        env.service.apply(preview.refactor_id, apply_docs=True)
        assert env.read("README.md") == ("Call `load_config` first.\n\n```python\nload_config('a.toml')\n```\n\n"
                                         "We load_config later.\n")
        assert env.read("util.py").startswith("def load_config(path):\n    # load_config reads the file\n")


def test_a_python_doctest_mention_is_a_doctest_edit(tmp_path: Path) -> None:
    # packaging's ``Version.is_prerelease`` docstring: ``>>> Version("1.2.3").is_prerelease`` is code doctest runs,
    # not prose (it was a medium ``docstring`` edit); the prose line stays a docstring mention.
    files = {"util.py": ('def parse_config(path):\n    """Read it; parse_config reads the file.\n\n'
                         '    >>> parse_config("a.toml")\n    \'a.toml\'\n    """\n    return path\n')}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("util.parse_config", "load_config")
        page = env.service.inspect(preview.refactor_id, kinds=["doc"], certainties=["high", "medium", "low"])
        found = {(i.edit.line, i.edit.reason, i.edit.certainty) for i in page.items}
        assert found == {(2, "docstring", "medium"), (4, "doctest", "high")}, found


def test_a_doc_mention_qualified_by_another_packages_path_is_low_and_stays(tmp_path: Path) -> None:
    """werkzeug's ``Headers.get_all`` docstring points at ``wsgiref.headers.Headers.get_all``, the standard
    library's: renaming werkzeug's must leave it (low, not applied with the docs), and rename the others."""
    files = {
        "pkg/__init__.py": "",
        "pkg/headers.py": ('class Headers:\n    def get_all(self, name):\n'
                           '        """Like :meth:`~wsgiref.headers.Headers.get_all`; see :meth:`Headers.get_all`,\n'
                           '        ``pkg.headers.Headers.get_all`` and ``response.headers.get_all``."""\n'
                           '        return [name]\n'),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.headers.Headers.get_all", "getall")
        assert preview.doc_edits.by_confidence == {"high": 3, "low": 1}, preview.doc_edits
        env.service.apply(preview.refactor_id, apply_docs=True)
        assert env.read("pkg/headers.py") == (
            'class Headers:\n    def getall(self, name):\n'
            '        """Like :meth:`~wsgiref.headers.Headers.get_all`; see :meth:`Headers.getall`,\n'
            '        ``pkg.headers.Headers.getall`` and ``response.headers.getall``."""\n        return [name]\n')


def test_renaming_an_override_of_a_builtin_method_is_a_collision(tmp_path: Path) -> None:
    files = {"codes.py": ("class Lookup(dict):\n    def get(self, key, default=None):\n"
                          "        return self.__dict__.get(key, default)\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("codes.Lookup.get", "lookup")
        assert [c.kind for c in preview.collisions] == ["overrides_builtin"]
        with pytest.raises(CodePlaneError) as refused:
            env.service.apply(preview.refactor_id)
        assert refused.value.code == 4007


def test_self_call_in_a_mixin_reaches_the_only_implementer(tmp_path: Path) -> None:
    files = {"svc.py": ("class RetryMixin:\n    def retry(self):\n        return self.send(1)\n\n\n"
                        "class Client(RetryMixin):\n    def send(self, x):\n        return x\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("svc.Client.send", "transmit")
        assert {(e.line, e.reason) for e in preview.edits if e.certainty == "medium"} == {(3, "mixin_self")}
        env.service.apply(preview.refactor_id)
        assert "return self.transmit(1)" in env.read("svc.py")


def test_a_bare_name_outside_a_class_body_is_never_its_member_and_is_set_aside(tmp_path: Path) -> None:
    """Renaming werkzeug's ``Request.args`` proposed 173 low edits, 138 of them bare ``args``: parameters
    (``def url_for(self, endpoint, **args)``), locals, keyword arguments. Python never looks a bare name up in a
    class outside its body: those are counted apart (``coverage.set_aside``); ``x.args`` stays a candidate, and so
    does a bare ``args`` in the class body itself."""
    files = {
        "pkg/__init__.py": "",
        "pkg/req.py": ("class Request:\n    @property\n    def args(self):\n        return {}\n\n"
                       "    params = args\n"),                                                    # 6: class body
        "pkg/use.py": ("args = [1]\n\n\ndef url_for(endpoint, **args):\n"
                       "    return [a for a in args], call(args=1)\n\n\n"
                       "def call(**kw):\n    return kw\n\n\ndef read(r):\n    return r.args\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.req.Request.args", "query_args")
        low = {(e.path, e.line) for e in preview.edits if e.certainty == "low"}
        coverage = preview.coverage
        assert coverage is not None
        aside = set(coverage.set_aside)
    assert ("pkg/use.py", 13) in low and ("pkg/req.py", 6) in {(e.path, e.line) for e in preview.edits}
    assert not any(path == "pkg/use.py" and line in (1, 4, 5) for path, line in low), low
    assert {"pkg/use.py:1:0", "pkg/use.py:4:24", "pkg/use.py:5:23", "pkg/use.py:5:35"} <= aside, aside
    assert coverage.by_reason["other_symbol"] == len(aside)


def test_renaming_an_override_renames_the_hierarchy_from_the_method_it_overrides(tmp_path: Path) -> None:
    """``Square.area`` overrides ``Shape.area``: renamed alone, ``total`` would still call ``area`` and get the
    base's answer for every shape. The rename starts from ``Shape.area`` and takes every override with it; a
    method of the same name in an unrelated class stays."""
    files = {"shapes.py": ("class Shape:\n    def area(self):\n        return 0\n\n\n"
                           "class Square(Shape):\n    def area(self):\n        return 4\n\n\n"
                           "class Circle(Shape):\n    def area(self):\n        return 3\n\n\n"
                           "class Room:\n    def area(self):\n        return 9\n\n\n"
                           "def total(a: Shape, b: Shape) -> int:\n    return a.area() + b.area()\n"),
             "test_shapes.py": ("from shapes import Circle, Square, total\n\n\n"
                                "def test_total():\n    assert total(Square(), Circle()) == 7\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("shapes.Square.area", "surface")
        assert any(w.startswith("shapes.Square.area overrides shapes.Shape.area: renamed with it")
                   for w in preview.warnings), preview.warnings
        assert {e.line for e in preview.edits if e.path == "shapes.py" and e.certainty == "high"} >= {2, 7, 12}
        env.service.apply(preview.refactor_id)
        text = env.read("shapes.py")
        assert text.count("def surface(self):") == 3 and "    def area(self):\n        return 9" in text
        assert "return a.surface() + b.surface()" in text


def test_a_string_that_is_exactly_the_qualified_name_follows_the_rename(tmp_path: Path) -> None:
    """``mock.patch("pkg.core.helper")`` was a ``low`` string, so the default apply left it and the test patching
    the function failed with ``AttributeError`` (``refactor_move`` already rewrote such strings). A string that is
    exactly the qualified name is ``medium``; a bare word or a longer dotted name stays ``low`` or out."""
    import subprocess
    import sys

    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": "def helper():\n    return 1\n\n\ndef run():\n    return helper()\n",
        "tests/test_core.py": ("from unittest import mock\n\nimport pkg.core\n\n\ndef test_patch():\n"
                               "    with mock.patch(\"pkg.core.helper\", return_value=5):\n"
                               "        assert pkg.core.run() == 5\n    assert 'helper' and 'pkg.core.helper_x'\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.core.helper", "assist")
        by_line = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert by_line[("tests/test_core.py", 7)] == ("medium", "qualified_string"), by_line
        assert by_line[("tests/test_core.py", 9)] == ("low", "string"), by_line
        env.service.apply(preview.refactor_id)
        assert 'mock.patch("pkg.core.assist"' in env.read("tests/test_core.py")
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=env.root,
                             capture_output=True, text=True, check=False)
        assert run.returncode == 0, run.stdout + run.stderr


def test_an_apply_that_loses_a_race_with_another_write_says_preview_again(tmp_path: Path) -> None:
    """Another write landing between the apply's check of the preview's hashes and its batch got the batch's own
    5002 ("changed since it was read; now: edit_index=0 ..."), where the same conflict found a moment earlier says
    "nothing was applied — preview again". Both say the latter now, and nothing is applied."""
    with refactor_env(tmp_path / "repo", {"m.py": "def alpha():\n    return 1\n\n\nX = alpha()\n"}) as env:
        preview = env.service.rename("m.alpha", "first")
        applier = env.service._applier
        apply_batch = applier._apply_batch

        def other_write_lands_first(edits: Any) -> Any:
            (env.root / "m.py").write_text("def alpha():\n    return 2\n\n\nX = alpha()\n")
            return apply_batch(edits)

        applier._apply_batch = other_write_lands_first
        with pytest.raises(CodePlaneError) as lost:
            env.service.apply(preview.refactor_id)
    assert lost.value.code == 5002 and "nothing was applied — preview again" in lost.value.message, lost.value
    assert "edit_index" not in lost.value.details
    assert (env.root / "m.py").read_text() == "def alpha():\n    return 2\n\n\nX = alpha()\n"
