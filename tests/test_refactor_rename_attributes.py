"""Instance attributes (``self.count = 0`` in a Python method, ``this.count = 0`` in a JavaScript one) as rename and
impact targets (``refactor/attributes.py``).

The index has no definition row for them, so ``refactor_rename K.count`` answered 3007, by name and by position.
Each rename here is applied and the code is run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.builders import call, call_error, make_repo, mcp_client, running_server
from tests.refactor_builders import refactor_env, run_node

FILES = {
    "pkg/__init__.py": "",
    "pkg/counter.py": ("class Counter:\n    def __init__(self, start=0):\n        self.count = start\n\n"
                       "    def inc(self):\n        self.count += 1\n        return self if self.count else None\n\n"
                       "    class Inner:\n        def __init__(self):\n            self.count = 'inner'\n\n\n"
                       "class Other:\n    def __init__(self):\n        self.count = -1\n"),
    "pkg/use.py": ("from pkg.counter import Counter, Other\n\n\ndef total(c: Counter) -> int:\n    return c.count\n\n\n"
                   "print(total(Counter(2).inc()), Other().count, Counter.Inner().count)\n"),
}


def _run(root: Path) -> str:
    proc = subprocess.run([sys.executable, "-m", "pkg.use"], cwd=root, capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("how", ["name", "position", "a use's position"])
def test_an_attribute_a_method_assigns_is_renamed_with_its_uses_in_its_class_only(tmp_path: Path, how: str) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _run(env.root) == "3 -1 inner\n"
        line, column = (7, 28) if how == "a use's position" else (3, 13)  # ``return self if self.count``
        preview = (env.service.rename("Counter.count", "total") if how == "name"
                   else env.service.rename(None, "total", path="pkg/counter.py", line=line, column=column))
        assert preview.status == "ready", preview
        cov = preview.coverage
        assert cov is not None and cov.low_candidates == sum(  # every low candidate has its reason counted
            n for reason, n in cov.by_reason.items() if reason not in ("other_symbol", "comment", "docstring",
                                                                      "doc_file", "doctest")), cov
        by_line = {(e.path, e.line): e.certainty for e in preview.edits}
        assert by_line[("pkg/counter.py", 3)] == by_line[("pkg/counter.py", 6)] == by_line[("pkg/counter.py", 7)] \
            == "high"
        assert by_line[("pkg/use.py", 5)] == "medium"  # ``c: Counter``: an annotation may lie
        # Other's and Inner's own ``count`` are not Counter's
        assert ("pkg/counter.py", 11) not in by_line or by_line[("pkg/counter.py", 11)] == "low"
        assert ("pkg/counter.py", 16) not in by_line or by_line[("pkg/counter.py", 16)] == "low"
        reasons = {(e.path, e.line): e.reason for e in preview.edits}
        assert reasons.get(("pkg/counter.py", 16), "other_binding") == "other_binding"  # Other's own ``count``
        env.service.apply(preview.refactor_id, include=[e.edit_id for e in preview.edits if e.certainty == "medium"])
        counter = env.read("pkg/counter.py")
        assert "self.total = start" in counter and "self.total += 1" in counter
        assert "self.count = 'inner'" in counter and "self.count = -1" in counter
        assert "return c.total" in env.read("pkg/use.py")
        assert _run(env.root) == "3 -1 inner\n"


def test_an_attribute_has_an_impact_but_no_deletion_plan_and_is_not_moved(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        report = env.service.impact("Counter.count")
        assert report.symbol is not None and report.symbol.qualified_name == "pkg.counter.Counter.count"
        assert {(r.path, r.line) for r in report.references if r.certainty != "low"} == {
            ("pkg/counter.py", 6), ("pkg/counter.py", 7), ("pkg/use.py", 5)}, report.references
        # its first assignment is a statement of ``__init__``: deleting that line is no deletion of the attribute
        assert report.delete_refactor_id is None
        with pytest.raises(CodePlaneError) as moved:
            env.service.move_symbol("Counter.count", "pkg/other.py")
        assert moved.value.code == 4008
        with pytest.raises(CodePlaneError) as missing:
            env.service.rename("Counter.missing", "x")
        assert missing.value.code == 3007


@pytest.mark.anyio
async def test_search_lists_an_attributes_uses_under_the_id_the_rename_uses(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", dict(FILES))
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            found = await call(client, "search", {"query": "Counter.count", "mode": "references"})
            renamed = await call(client, "refactor_rename", {"symbol": "Counter.count", "new_name": "total"})
            missing = await call_error(client, "search", {"query": "Counter.missing", "mode": "references"})
    uids = {h["symbol"]["def_uid"] for h in found["results"]}
    assert uids == {renamed["symbol"]["def_uid"]}, (found, renamed)
    where = {(h["path"], h["line"]) for h in found["results"]}
    assert {("pkg/counter.py", 3), ("pkg/counter.py", 6), ("pkg/use.py", 5)} <= where, found
    assert missing["code"] == 3007


def test_the_position_of_self_attr_names_the_class_attribute_when_the_body_declares_it(tmp_path: Path) -> None:
    files = {"k.py": "class K:\n    count = 0\n\n    def inc(self):\n        self.count += 1\n"
                     "        return self.count\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename(None, "total", path="k.py", line=6, column=20)
        by_name = env.service.rename("K.count", "x").symbol
        assert preview.symbol is not None and by_name is not None and preview.symbol.def_uid == by_name.def_uid
        assert sorted(e.line for e in preview.edits if e.certainty == "high") == [2, 5, 6]


JS_FILES = {
    "package.json": '{"name": "demo"}\n',
    "lib/counter.mjs": ("export class Counter {\n  constructor(start) {\n    if (start >= 0) {\n"
                        "      this.count = start;\n    }\n  }\n"
                        "  inc() {\n    this.count += 1;\n    return this;\n  }\n}\n"
                        "export class Other {\n  constructor() {\n    this.count = -1;\n  }\n}\n"
                        "export function helper() {\n  this.count = 'loose';\n}\n"),
    "lib/index.mjs": ("import { Counter, Other } from './counter.mjs';\n"
                      "const c = new Counter(2);\nc.inc();\nconsole.log(c.count, new Other().count);\n"),
}


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the renamed code")
@pytest.mark.parametrize("how", ["name", "a use's position"])
def test_a_js_attribute_the_constructor_assigns_is_renamed_in_its_class_and_through_typed_locals(
        tmp_path: Path, how: str) -> None:
    """``this.count = start`` (in a block of the constructor) declares ``Counter.count``: before, 3007. Another
    class's ``this.count`` and a plain function's are not Counter's."""
    with refactor_env(tmp_path / "repo", JS_FILES) as env:
        assert run_node(env, "lib/index.mjs") == "3 -1\n"
        preview = (env.service.rename("Counter.count", "total") if how == "name"
                   else env.service.rename(None, "total", path="lib/counter.mjs", line=8, column=9))
        assert preview.status == "ready", preview
        by_place = {(e.path, e.line, e.column): e.certainty for e in preview.edits}
        assert by_place[("lib/counter.mjs", 4, 11)] == by_place[("lib/counter.mjs", 8, 9)] == "high"
        assert by_place[("lib/index.mjs", 4, 14)] == "high"  # ``c = new Counter(2)``: a local the syntax types
        assert by_place.get(("lib/index.mjs", 4, 33), "low") == "low"  # ``new Other().count``
        assert by_place.get(("lib/counter.mjs", 14, 9), "low") == "low"  # Other's own
        assert by_place.get(("lib/counter.mjs", 18, 7), "low") == "low"  # a plain function's ``this``
        env.service.apply(preview.refactor_id)
        counter = env.read("lib/counter.mjs")
        assert "this.total = start" in counter and "this.total += 1" in counter
        assert "this.count = -1" in counter and "this.count = 'loose'" in counter
        assert "console.log(c.total, new Other().count)" in env.read("lib/index.mjs")
        assert run_node(env, "lib/index.mjs") == "3 -1\n"


@pytest.mark.anyio
async def test_search_lists_a_js_attributes_uses_and_a_store_is_a_definition(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", dict(JS_FILES))
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            found = await call(client, "search", {"query": "Counter.count", "mode": "references"})
            renamed = await call(client, "refactor_rename", {"symbol": "Counter.count", "new_name": "total"})
    assert {h["symbol"]["def_uid"] for h in found["results"]} == {renamed["symbol"]["def_uid"]}, (found, renamed)
    where = {(h["path"], h["line"]) for h in found["results"]}
    assert {("lib/counter.mjs", 4), ("lib/counter.mjs", 8), ("lib/index.mjs", 4)} <= where, found


@pytest.mark.parametrize("stub", ["js", "python"])
def test_a_member_declared_in_a_stub_renames_the_runtime_class_it_describes(tmp_path: Path, stub: str) -> None:
    """``index.d.ts`` (``mod.pyi``) declares the field the runtime class of the same name in ``index.js``
    (``mod.py``) assigns in its constructor: ``K.count`` finds the declaration, and the runtime class's own
    ``this.count`` are the same member (before, they were another class's: ``low``, so the applied rename
    changed the declaration alone)."""
    if stub == "js":
        files = {"package.json": '{"name": "demo"}\n',
                 "lib/index.d.ts": ("declare class K {\n  count: number;\n  constructor(start: number);\n}\n"
                                    "export = K;\n"),
                 "lib/index.js": ("class K {\n  constructor(start) {\n    this.count = start;\n  }\n"
                                  "  inc() {\n    this.count += 1;\n    return this.count;\n  }\n}\n"
                                  "module.exports = K;\n"),
                 "lib/use.js": "const K = require('./index.js');\nconsole.log(new K(2).inc());\n"}
        declared, runtime = ("lib/index.d.ts", 2), [("lib/index.js", 3), ("lib/index.js", 6), ("lib/index.js", 7)]
    else:
        files = {"pkg/__init__.py": "",
                 "pkg/mod.pyi": "class K:\n    count: int\n    def __init__(self, start: int) -> None: ...\n",
                 "pkg/mod.py": ("class K:\n    def __init__(self, start):\n        self.count = start\n\n"
                                "    def inc(self):\n        self.count += 1\n        return self.count\n"),
                 "pkg/use.py": "from pkg.mod import K\n\nprint(K(2).inc())\n"}
        declared, runtime = ("pkg/mod.pyi", 2), [("pkg/mod.py", 3), ("pkg/mod.py", 6), ("pkg/mod.py", 7)]
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("K.count", "total")
        by_line = {(e.path, e.line): e.certainty for e in preview.edits}
        assert by_line.get(declared) == "high" and all(by_line.get(place) == "high" for place in runtime), by_line
        env.service.apply(preview.refactor_id)
        if stub == "js":
            assert "  total: number;" in env.read("lib/index.d.ts")
            assert run_node(env, "lib/use.js") == "3\n"
        else:
            assert "    total: int\n" in env.read("pkg/mod.pyi")
            proc = subprocess.run([sys.executable, "-m", "pkg.use"], cwd=env.root, capture_output=True, text=True,
                                  check=False, timeout=60)
            assert proc.returncode == 0 and proc.stdout == "3\n", proc.stderr


def test_a_runtime_methods_declaration_file_twin_is_renamed_as_its_stub(tmp_path: Path) -> None:
    files = {"package.json": '{"name": "demo"}\n',
             "lib/index.d.ts": "declare class K {\n  run(): number;\n}\nexport = K;\n",
             "lib/index.js": "class K {\n  run() { return 1; }\n}\nmodule.exports = K;\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("lib/index.js:2:2", "go")
        assert {(e.path, e.certainty, e.reason) for e in preview.edits} == {
            ("lib/index.d.ts", "high", "stub"), ("lib/index.js", "high", "definition")}


def test_a_class_attribute_is_not_the_module_constant_a_dotted_module_path_names(tmp_path: Path) -> None:
    """``Widget.TIMEOUT`` renamed: ``pkg.core.TIMEOUT`` after ``import pkg.core`` is the module's own constant of
    that name, and was renamed as ``medium anchored`` (applied by default): ``AttributeError`` at run time. It is
    ``other_binding`` now, and ``pkg.core.Widget.TIMEOUT`` names the class through its module: high."""
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": ("TIMEOUT = 10\n\n\nclass Widget:\n    TIMEOUT = 99\n\n"
                        "    def get(self):\n        return self.TIMEOUT\n"),
        "pkg/extra.py": ("import pkg.core\nfrom pkg import core\n\n\n"
                         "def total():\n    return core.TIMEOUT + pkg.core.TIMEOUT + pkg.core.Widget.TIMEOUT\n"),
        "run.py": "from pkg.extra import total\n\nprint(total())\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("pkg.core.Widget.TIMEOUT", "CLASS_T")
        edits = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert edits[("pkg/extra.py", 6, 35)] == ("low", "other_binding"), edits
        assert edits[("pkg/extra.py", 6, 61)] == ("high", "class_receiver"), edits
        env.service.apply(preview.refactor_id)
        out = subprocess.run([sys.executable, "run.py"], cwd=env.root, capture_output=True, text=True, check=False)
        assert out.returncode == 0 and out.stdout == "119\n", out.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the renamed program")
def test_a_js_method_rename_leaves_an_object_literal_s_own_member_alone(tmp_path: Path) -> None:
    """``Shape.area`` renamed: ``obj.area()`` on ``const obj = { area: () => 5 }`` was ``medium anchored`` and
    renamed by default while the literal's key was not: ``obj.surface is not a function``. A ``const`` bound to an
    untyped object literal has the literal's members: ``other_binding``."""
    files = {
        "lib/shape.js": "class Shape {\n  area() { return 1; }\n}\nmodule.exports = { Shape };\n",
        "main.js": ("const { Shape } = require('./lib/shape');\n\nconst obj = { area: () => 5 };\n"
                    "console.log(obj.area() + new Shape().area());\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        assert run_node(env, "main.js") == "6\n"
        preview = env.service.rename("Shape.area", "surface")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits if e.column == 16}
        assert edits == {("main.js", 4): ("low", "other_binding")}, preview.edits
        env.service.apply(preview.refactor_id)
        assert "  surface() { return 1; }" in env.read("lib/shape.js")
        assert run_node(env, "main.js") == "6\n"
