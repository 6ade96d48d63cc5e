"""QA45 F4: a Java rename never renames an overload the agent did not pick. The planner renames every definition
of one qualified name in a file together (the C/C++ rule), so picking one Java overload by position or def_uid is
refused (4008), and so is any rename of a set holding an override of a method from outside the repository
(``toString()`` beside ``toString(int)``: renamed, ``@Override`` fails to compile, or without it the output
silently changes). A set named by its qualified name is renamed whole, and still compiles."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import CodePlaneError
from tests.builders import call_error, mcp_client, running_server
from tests.refactor_builders import refactor_env

S = "src/com/acme/shop/"
FILES = {
    S + "Item.java": "package com.acme.shop;\n\npublic class Item {\n    private final String title;\n\n"
                     "    public Item(String title) {\n        this.title = title;\n    }\n\n"
                     "    @Override\n    public String toString() {\n        return title;\n    }\n\n"
                     "    public String toString(int width) {\n        String s = toString();\n"
                     "        return s.length() > width ? s.substring(0, width) : s;\n    }\n}\n",
    S + "Cart.java": "package com.acme.shop;\n\nimport java.util.ArrayList;\nimport java.util.List;\n\n"
                     "public class Cart {\n    private final List<Item> items = new ArrayList<>();\n\n"
                     "    public void add(Item item) {\n        items.add(item);\n    }\n\n"
                     "    public void add(String title) {\n        add(new Item(title));\n    }\n\n"
                     "    public int size() {\n        return items.size();\n    }\n}\n",
    "src/com/acme/Main.java": "package com.acme;\n\nimport com.acme.shop.Cart;\nimport com.acme.shop.Item;\n\n"
                              "public class Main {\n    public static void main(String[] args) {\n"
                              "        Cart c = new Cart();\n        c.add(new Item(\"lamp\"));\n"
                              "        c.add(\"desk\");\n"
                              "        Item it = new Item(\"chair\");\n"
                              "        System.out.println(it + \" \" + it.toString(3) + \" \" + c.size());\n    }\n}\n",
}


def _compile_and_run(root: Path) -> str:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac is not installed")
    sources = sorted(str(p.relative_to(root)) for p in root.rglob("*.java"))
    built = subprocess.run(["javac", "-d", "out", *sources], cwd=root, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return subprocess.run(["java", "-cp", "out", "com.acme.Main"], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def test_one_overload_of_an_object_override_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        before = env.snapshot()
        line = FILES[S + "Item.java"].split("\n").index("    public String toString(int width) {") + 1
        for ask in ({"symbol": None, "path": S + "Item.java", "line": line, "column": 19},
                    {"symbol": "com.acme.shop.Item.toString"}):
            with pytest.raises(CodePlaneError) as refused:
                env.service.rename(new_name="render", **ask)
            assert refused.value.code == 4008, ask
            details = refused.value.details
            assert details["overrides"] == "java.lang.Object.toString", ask
            assert [o["line"] for o in details["overloads"]] == [11, 15], ask
        assert env.snapshot() == before


def test_picking_one_overload_is_refused_and_the_set_renames_by_its_name(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        with pytest.raises(CodePlaneError) as refused:
            env.service.rename(None, "put", path=S + "Cart.java", line=9, column=17)
        assert refused.value.code == 4008
        assert "give symbol 'com.acme.shop.Cart.add'" in refused.value.message
        assert [o["line"] for o in refused.value.details["overloads"]] == [9, 13]
        whole = env.service.rename("com.acme.shop.Cart.add", "put")
        assert whole.status == "ready" and {e.reason for e in whole.edits if e.path == S + "Cart.java"} >= {
            "definition", "overload"}
        env.service.apply(whole.refactor_id)
        assert "c.put(\"desk\")" in env.read("src/com/acme/Main.java")
        assert _compile_and_run(env.root) == "chair cha 2\n"


def test_an_overload_without_siblings_outside_still_renames(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename(None, "count", path=S + "Cart.java", line=17, column=17)
        assert preview.status == "ready"
        env.service.apply(preview.refactor_id)
        assert _compile_and_run(env.root) == "chair cha 2\n"


@pytest.mark.anyio
async def test_the_refusal_reaches_the_agent_as_a_catalog_error(tmp_path: Path) -> None:
    from tests.builders import make_repo

    with running_server(make_repo(tmp_path / "repo", FILES)) as server:
        async with mcp_client(server) as client:
            err: dict[str, Any] = await call_error(client, "refactor_rename", {
                "path": S + "Item.java", "line": 15, "column": 19, "new_name": "render"})
    assert err["code"] == 4008 and "java.lang.Object.toString" in err["message"]
    assert (server.root / S / "Item.java").read_text() == FILES[S + "Item.java"]


def test_an_override_annotation_refuses_only_when_no_repository_type_declares_the_method(tmp_path: Path) -> None:
    """``run()`` of a ``Runnable`` (``@Override``, nothing in the repository declares ``run()``) beside ``run(int)``
    is refused; ``Base.step()`` overridden beside an overload ``step(int)`` is the repository's own: renamed."""
    files = {S + "Job.java": "package com.acme.shop;\n\npublic class Job implements Runnable {\n"
                             "    @Override\n    public void run() {}\n\n    public void run(int times) {}\n}\n",
             S + "Base.java": "package com.acme.shop;\n\npublic class Base {\n    public void step() {}\n}\n",
             S + "Walk.java": "package com.acme.shop;\n\npublic class Walk extends Base {\n"
                              "    @Override\n    public void step() {}\n\n    public void step(int n) {}\n}\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        with pytest.raises(CodePlaneError) as refused:
            env.service.rename("com.acme.shop.Job.run", "go")
        assert refused.value.code == 4008 and refused.value.details["overrides"] == "a method run (@Override)"
        assert env.service.rename("com.acme.shop.Walk.step", "move").status == "ready"
