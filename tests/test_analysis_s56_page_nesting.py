"""``semantic_diff`` pages cut inside a changed class keep its structure: a change on the next page whose class an
earlier page showed names it (``parent``: its kind, qualified name and entity id), and the text puts such changes
under one ``… (continued)`` line naming the class, indented as they would be on its page. Before, a class and two of
its changed methods on page 1 left its other methods on page 2 as top-level changes that said no class. Through the
real server and the official client (the index real)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio


def _methods(args: str, body: str, names: range) -> str:
    return "".join(f"        def m{i}(self{args}):\n            return {i}{body}\n\n" for i in names)


_BASE = ("class Outer:\n    class Inner:\n" + _methods("", "", range(3)) + "\n    def k(self):\n        return 0\n\n\n"
         "def z():\n    return 0\n")
# Every definition changes: Outer and Inner get a base, the methods a parameter, k and z a body.
_TARGET = ("class Outer(object):\n    class Inner(object):\n" + _methods(", x", " + x", range(3))
           + "\n    def k(self):\n        return 1\n\n\n" + "def z():\n    return 1\n")


def _tree(changes: list[dict[str, Any]]) -> list[Any]:
    """(qualified name, its parent's qualified name when it names one, nested) of each change, at every depth."""
    return [(c["qualified_name"], c.get("parent", {}).get("qualified_name"), _tree(c.get("nested_changes", [])))
            for c in changes]


async def test_a_page_cut_inside_a_class_names_the_class_of_its_first_changes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": _BASE})
    write_files(repo, {"a.py": _TARGET})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            pages: list[tuple[dict[str, Any], str]] = []
            args: dict[str, Any] = {"limit": 3}
            while True:
                res = await client.call_tool("semantic_diff", args)
                assert not res.is_error, envelope(res)
                pages.append((envelope(res)["result"], answer_text(res)))
                cursor = pages[-1][0]["pagination"].get("next_cursor")
                if cursor is None:
                    break
                args = {"limit": 3, "cursor": cursor}
    assert [_tree(record["structural_changes"]) for record, _ in pages] == [
        [("Outer", None, [("Outer.Inner", None, [("Outer.Inner.m0", None, [])])])],
        # Page 2 starts inside Inner, itself inside Outer: the methods name Inner, k names Outer.
        [("Outer.Inner.m1", "Outer.Inner", []), ("Outer.Inner.m2", "Outer.Inner", []), ("Outer.k", "Outer", [])],
        [("z", None, [])],
    ]
    outer = pages[0][0]["structural_changes"][0]
    inner = outer["nested_changes"][0]
    second = pages[1][0]["structural_changes"]
    # The containers are named by the ids page 1 gave them.
    assert [c["parent"] for c in second] == [
        {"kind": "class", "qualified_name": "Outer.Inner", "entity_id": inner["entity_id"]},
        {"kind": "class", "qualified_name": "Outer.Inner", "entity_id": inner["entity_id"]},
        {"kind": "class", "qualified_name": "Outer", "entity_id": outer["entity_id"]}]
    text = pages[1][1].splitlines()
    body = [line for line in text if line.lstrip().startswith(("… ", "~ ", "+ ", "- ", "> "))]
    assert [line.split("  risk:")[0].split("  signature_changed")[0].split("  body_changed")[0] for line in body] == [
        f"… a.py  class Outer.Inner  (continued)  {inner['entity_id']}",
        "  ~ a.py  method Outer.Inner.m1(self) -> Outer.Inner.m1(self, x)",
        "  ~ a.py  method Outer.Inner.m2(self) -> Outer.Inner.m2(self, x)",
        f"… a.py  class Outer  (continued)  {outer['entity_id']}",
        "  ~ a.py  method Outer.k(self)"]
    # Counted as the page's three changes: the lines naming the classes are not items.
    assert text[-1].startswith("3 of 7 items; next cursor: "), text[-1]
    # Changes whose class is on their own page say no parent (page 1), nor do top-level ones (page 3).
    assert "(continued)" not in pages[0][1] + pages[2][1]
