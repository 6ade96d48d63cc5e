"""C# across files in the structural index: enclosing namespaces, ``using`` (namespace, alias, static, global),
partial types, members through declared types and the repository's hierarchy, and what stays unsettled."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from codeplane.index.structural import classdeps
from codeplane.index.structural.store import BatchEffect
from tests.test_structural_index import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


CS = {
    "Models/Cart.cs": "namespace Shop.Models;\n\npublic partial class Cart : Base\n{\n"
                      "    public void Add(Item i) { Touch(); Grow(); }\n"                 # 5
                      "    public static Cart Create() => new Cart();\n"
                      "    public void Put(Item i) { }\n    public void Put(string s) { }\n}\n",
    "Models/Cart.More.cs": "namespace Shop.Models\n{\n    public partial class Cart\n    {\n"
                           "        public int Size { get; set; }\n"
                           "        void Grow() { Add(null); this.Size = 2; Size++; }\n"  # 6
                           "    }\n}\n",
    "Models/Base.cs": "namespace Shop.Models\n{\n    public abstract class Base\n    {\n"
                      "        protected void Touch() { }\n    }\n    public class Item { }\n}\n",
    "Util/Helpers.cs": "namespace Shop.Util\n{\n    public static class Helpers\n    {\n"
                       "        public static int Twice(int x) => x * 2;\n    }\n}\n",
    "App/Runner.cs": "using System;\nusing Shop.Models;\nusing M = Shop.Models.Cart;\nusing static Shop.Util.Helpers;\n"
                     "\nnamespace Shop.App\n{\n    public class Runner\n    {\n"            # 9
                     "        private Cart cart = new Cart();\n"                          # 10
                     "        public void Run(Item item)\n        {\n"
                     "            cart.Add(item);\n"                                      # 13
                     "            this.cart.Add(item);\n"                                 # 14
                     "            var c = new M();\n"                                     # 15
                     "            Cart d = c;\n            d.Size = Twice(3);\n"           # 16, 17
                     "            Shop.Models.Cart.Create();\n"                           # 18
                     "            d.Put(null);\n"                                         # 19
                     "        }\n    }\n\n    public class Service : Exception\n    {\n"   # 23
                     "        public void Fail() { Report(); }\n"                         # 25
                     "        void Report() { }\n    }\n}\n",
}


def test_namespaces_usings_and_partial_types_link_strong(h: Harness) -> None:
    h.apply(CS)
    parts = {d.def_uid for d in h.q.list_defs_by_qualified_name("Shop.Models.Cart", limit=5)}
    assert len(parts) == 2  # two partial declarations of one type
    target = h.ref("App/Runner.cs", 10, "Cart")
    assert target[0] == "STRONG" and target[1] == min(parts)  # ``using Shop.Models``: one uid for the type
    assert h.ref("App/Runner.cs", 3, "Cart") == target  # the alias's target
    assert h.ref("App/Runner.cs", 15, "M") == target  # through the alias
    assert h.ref("Models/Cart.cs", 3, "Base") == ("STRONG", h.uid("Shop.Models.Base"))  # the enclosing namespace
    assert h.ref("App/Runner.cs", 11, "Item") == ("STRONG", h.uid("Shop.Models.Item"))
    assert h.ref("App/Runner.cs", 17, "Twice") == ("STRONG", h.uid("Shop.Util.Helpers.Twice"))  # using static
    assert h.ref("App/Runner.cs", 18, "Cart")[0] == "STRONG"  # written out with its namespace


def test_members_across_partial_parts_declared_types_and_bases(h: Harness) -> None:
    h.apply(CS)
    add = h.uid("Shop.Models.Cart.Add")
    size = h.uid("Shop.Models.Cart.Size")
    assert h.ref("Models/Cart.More.cs", 6, "Add") == ("STRONG", add)  # declared in the other part
    assert h.ref("Models/Cart.cs", 5, "Grow") == ("STRONG", h.uid("Shop.Models.Cart.Grow"))
    assert h.ref("Models/Cart.cs", 5, "Touch") == ("STRONG", h.uid("Shop.Models.Base.Touch"))  # inherited
    assert h.ref("Models/Cart.More.cs", 6, "Size")[0] in ("STRONG", "PROVEN")
    assert h.ref("App/Runner.cs", 13, "Add") == ("STRONG", add)  # a field declared ``Cart cart``
    assert [r for r in refs_on(h, "App/Runner.cs", 14) if r[0] == "Add"] == [("Add", "STRONG", add)]
    assert h.ref("App/Runner.cs", 17, "Size") == ("STRONG", size)  # ``Cart d``
    assert h.ref("App/Runner.cs", 18, "Create") == ("STRONG", h.uid("Shop.Models.Cart.Create"))


def refs_on(h: Harness, path: str, line: int) -> list[tuple[str, str, str | None]]:
    return [(r.token_text, r.ref_tier, r.target_uid) for r in h.q.list_refs_in_file(path, limit=1000)
            if r.start_line == line and r.role == "REFERENCE"]


def test_what_the_syntax_does_not_settle_stays_anchored(h: Harness) -> None:
    h.apply(CS)
    assert h.ref("App/Runner.cs", 19, "Put") == ("ANCHORED", None)  # two overloads
    # Exception is listed, so a name it does not have is settled by the class itself...
    assert h.ref("App/Runner.cs", 25, "Report")[0] in ("PROVEN", "STRONG")
    h.apply({"App/Other.cs": "using Shop.Models;\nusing Shop.Extra;\n\nnamespace Shop.App\n{\n"
                             "    class Other : Outside.Base { void F() { Helper(); Item i; Runner r; } }\n}\n",
             "Extra/Item.cs": "namespace Shop.Extra { public class Item { } }\n"})
    # ...an unknown base might declare anything, and two usings both offering ``Item`` settle nothing.
    assert h.ref("App/Other.cs", 6, "Helper") == ("UNKNOWN", None)
    assert h.ref("App/Other.cs", 6, "Item") == ("UNKNOWN", None)
    # ``Runner`` is Shop.App.Runner unless the outside base declares a member type of that name: a candidate
    assert h.ref("App/Other.cs", 6, "Runner") == ("ANCHORED", h.uid("Shop.App.Runner"))


def test_a_using_inside_a_namespace_block_stops_the_lookup_at_that_namespace(h: Harness) -> None:
    h.apply({**CS, "App/Scoped.cs": "namespace Shop.App\n{\n    using Shop.Util;\n"
                                    "    class Scoped { Runner r; Item i; }\n}\n"})
    assert h.ref("App/Scoped.cs", 4, "Runner") == ("STRONG", h.uid("Shop.App.Runner"))  # its own namespace
    assert h.ref("App/Scoped.cs", 4, "Item") == ("UNKNOWN", None)


def test_a_global_using_is_in_effect_in_every_file(h: Harness) -> None:
    h.apply({**CS, "GlobalUsings.cs": "global using Shop.Util;\n",
             "App/Plain.cs": "namespace Shop.App\n{\n    class Plain { int F() => Helpers.Twice(1); }\n}\n"})
    assert h.ref("App/Plain.cs", 3, "Helpers") == ("STRONG", h.uid("Shop.Util.Helpers"))
    assert h.ref("App/Plain.cs", 3, "Twice") == ("STRONG", h.uid("Shop.Util.Helpers.Twice"))


def test_links_follow_edits_and_equal_a_full_rebuild(h: Harness) -> None:
    h.apply(CS)
    h.apply({}, deleted=("Models/Cart.More.cs",))
    assert h.ref("Models/Cart.cs", 5, "Grow") == ("UNKNOWN", None)
    h.apply({"Models/Base.cs": CS["Models/Base.cs"].replace("Touch", "Poke")})
    assert h.ref("Models/Cart.cs", 5, "Touch") == ("UNKNOWN", None)
    final = {**{k: v for k, v in CS.items() if k != "Models/Cart.More.cs"},
             "Models/Base.cs": CS["Models/Base.cs"].replace("Touch", "Poke")}
    fresh = Harness()
    try:
        fresh.apply(final)
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()


def test_the_affected_set_follows_partial_parts_users_and_new_names(h: Harness,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[set[str] | None] = []
    real = classdeps.affected

    def recording(conn: sqlite3.Connection, effect: BatchEffect, language: str,
                  suffixes: tuple[str, ...], *, fold: bool = False) -> set[int] | None:
        ids = real(conn, effect, language, suffixes, fold=fold)
        if language == "csharp":
            paths = dict(conn.execute("SELECT file_id, path FROM st_file").fetchall())
            seen.append(None if ids is None else {paths[i] for i in ids})
        return ids

    monkeypatch.setattr(classdeps, "affected", recording)
    h.apply(CS)
    assert seen[-1] is None
    helpers = CS["Util/Helpers.cs"]
    h.apply({"Util/Helpers.cs": helpers.replace("x * 2", "x + x")})  # a body edit: Helpers and its one user
    assert seen[-1] == {"Util/Helpers.cs", "App/Runner.cs"}
    more = CS["Models/Cart.More.cs"]
    h.apply({"Models/Cart.More.cs": more.replace("void Grow()", "void Touch() { }\n        void Grow()")})
    # a new ``Touch`` in one part hides Base's for the other part; users of the partial Cart's members too
    assert seen[-1] == {"Models/Cart.More.cs", "Models/Cart.cs", "Models/Base.cs", "App/Runner.cs"}
    assert h.ref("Models/Cart.cs", 5, "Touch")[0] == "STRONG"
    assert h.ref("Models/Cart.cs", 5, "Touch")[1] != h.uid("Shop.Models.Base.Touch")
    h.apply({"Models/Cart.cs": CS["Models/Cart.cs"].replace(" : Base", "")})
    assert seen[-1] is None  # a supertype list changed
    final = {**CS, "Util/Helpers.cs": helpers.replace("x * 2", "x + x"),
             "Models/Cart.More.cs": more.replace("void Grow()", "void Touch() { }\n        void Grow()"),
             "Models/Cart.cs": CS["Models/Cart.cs"].replace(" : Base", "")}
    fresh = Harness()
    try:
        fresh.apply(final)
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()
