"""QA45 F4: a Java rename renames the overload picked and no other, as Java IDEs do. ``toString(int)`` is renamed
without ``toString()`` (which overrides ``Object.toString``: picking it is refused, 4008); calls of one arity both
overloads take are ``low`` (``overload``, never applied by ``apply: true``); a qualified name naming several
overloads is a decision between them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import CodePlaneError
from tests.builders import call_error, mcp_client, running_server
from tests.refactor_builders import refactor_env
from tests.runner_projects import javac_run

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


def _line(path: str, text: str) -> int:
    return FILES[path].split("\n").index(text) + 1


def test_one_overload_beside_an_object_override_is_renamed_alone(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        line = _line(S + "Item.java", "    public String toString(int width) {")
        for ask in ({"symbol": None, "path": S + "Item.java", "line": line, "column": 19},
                    {"symbol": "com.acme.shop.Item.toString"}):  # toString() is no candidate: Object's
            preview = env.service.rename(new_name="render", **ask)
            assert preview.status == "ready", ask
            assert sorted((e.path, e.line, e.certainty) for e in preview.edits) == [
                ("src/com/acme/Main.java", 12, "high"), (S + "Item.java", line, "high")], ask
        env.service.apply(preview.refactor_id)
        assert "    public String toString() {" in env.read(S + "Item.java")
        assert "String s = toString();" in env.read(S + "Item.java")
        assert "it.render(3)" in env.read("src/com/acme/Main.java")
        assert javac_run(env.root) == "chair cha 2\n"


def test_picking_the_object_override_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as refused:
            env.service.rename(None, "render", path=S + "Item.java", line=11, column=19)
        assert refused.value.code == 4008
        assert refused.value.details["overrides"] == "java.lang.Object.toString"
        assert [o["line"] for o in refused.value.details["overloads"]] == [11, 15]
        assert env.snapshot() == before


def test_calls_both_overloads_take_are_low_and_the_set_is_a_decision(tmp_path: Path) -> None:
    """``add(Item)`` and ``add(String)`` take one argument each: the arity does not tell their calls apart."""
    with refactor_env(tmp_path / "repo", FILES) as env:
        whole = env.service.rename("com.acme.shop.Cart.add", "put")
        assert whole.status == "needs_decision"
        assert [c.symbol.line for c in whole.candidates if c.symbol is not None] == [9, 13]
        env.service.cancel(whole.refactor_id)
        preview = env.service.rename(None, "put", path=S + "Cart.java", line=9, column=17)
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits == {(S + "Cart.java", 9): ("high", "definition"), (S + "Cart.java", 10): ("low", "other_binding"),
                         (S + "Cart.java", 14): ("low", "overload"), ("src/com/acme/Main.java", 9): ("low", "overload"),
                         ("src/com/acme/Main.java", 10): ("low", "overload")}
        assert isinstance(env.service.apply_when_certain(preview), str)
        assert env.read(S + "Cart.java") == FILES[S + "Cart.java"], "apply: true leaves the lows to the agent"
        # The agent reads the calls: ``add(new Item(...))`` are add(Item)'s, ``c.add("desk")`` is add(String)'s.
        chosen = [e.edit_id for e in preview.edits if (e.path, e.line) in {
            ("src/com/acme/Main.java", 9), (S + "Cart.java", 14)}]
        env.service.apply(preview.refactor_id, include=chosen)
        assert "c.put(new Item(\"lamp\"));\n        c.add(\"desk\");" in env.read("src/com/acme/Main.java")
        assert javac_run(env.root) == "chair cha 2\n"


def test_an_overload_without_siblings_outside_still_renames(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename(None, "count", path=S + "Cart.java", line=17, column=17)
        assert preview.status == "ready"
        env.service.apply(preview.refactor_id)
        assert javac_run(env.root) == "chair cha 2\n"


@pytest.mark.anyio
async def test_the_refusal_reaches_the_agent_and_one_overload_applies_in_the_call(tmp_path: Path) -> None:
    from tests.builders import call, make_repo

    with running_server(make_repo(tmp_path / "repo", FILES)) as server:
        async with mcp_client(server) as client:
            err: dict[str, Any] = await call_error(client, "refactor_rename", {
                "path": S + "Item.java", "line": 11, "column": 19, "new_name": "render"})
            done = await call(client, "refactor_rename", {
                "path": S + "Item.java", "line": 15, "column": 19, "new_name": "render", "apply": True})
    assert err["code"] == 4008 and "java.lang.Object.toString" in err["message"]
    assert done["applied"]["applied_edits"] == 2, done
    assert (server.root / S / "Item.java").read_text() == FILES[S + "Item.java"].replace(
        "toString(int width)", "render(int width)")


def test_an_override_annotation_refuses_only_when_no_repository_type_declares_the_method(tmp_path: Path) -> None:
    """``run()`` of a ``Runnable`` (``@Override``, nothing in the repository declares ``run()``) beside ``run(int)``
    is refused, ``run(int)`` renamed alone; ``Walk.step()`` overriding ``Base.step()`` beside ``step(int)`` is the
    repository's own: renamed from ``Base.step``, ``step(int)`` stays."""
    files = {S + "Job.java": "package com.acme.shop;\n\npublic class Job implements Runnable {\n"
                             "    @Override\n    public void run() {}\n\n    public void run(int times) {}\n}\n",
             S + "Base.java": "package com.acme.shop;\n\npublic class Base {\n    public void step() {}\n}\n",
             S + "Walk.java": "package com.acme.shop;\n\npublic class Walk extends Base {\n"
                              "    @Override\n    public void step() {}\n\n    public void step(int n) {}\n}\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        with pytest.raises(CodePlaneError) as refused:
            env.service.rename(None, "go", path=S + "Job.java", line=5, column=17)
        assert refused.value.code == 4008 and refused.value.details["overrides"] == "a method run (@Override)"
        one = env.service.rename("com.acme.shop.Job.run", "go")
        assert [(e.line, e.certainty) for e in one.edits] == [(7, "high")]
        step = env.service.rename(None, "move", path=S + "Walk.java", line=5, column=17)
        assert sorted((e.path, e.line) for e in step.edits) == [(S + "Base.java", 4), (S + "Walk.java", 5)]
