"""Java across files in the structural index: packages, single-type/on-demand/static imports, members through
the hierarchy the repository declares, and what stays unsettled (overloads, outside supertypes, anonymous
classes, two on-demand imports offering one name, a name an import takes from outside)."""

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


J = "src/main/java/com/shop/"
JAVA = {
    J + "Base.java": "package com.shop;\n\npublic abstract class Base {\n    protected int count;\n"
                     "    protected void touch() { count++; }\n}\n",
    J + "Sized.java": "package com.shop;\n\npublic interface Sized {\n    int size();\n}\n",
    J + "Item.java": "package com.shop;\n\npublic record Item(String name, int price) {\n"
                     "    public static Item of(String n) { return new Item(n, 0); }\n"
                     "    public static class Tag { public String label; }\n}\n",
    J + "Cart.java": "package com.shop;\n\nimport java.util.ArrayList;\nimport java.util.List;\n\n"
                     "public class Cart extends Base implements Sized {\n"          # 6
                     "    public static final int LIMIT = 10;\n"
                     "    private final List<Item> items = new ArrayList<>();\n"
                     "    public void add(Item item) { items.add(item); touch(); this.touch(); }\n"  # 9
                     "    public int size() { return count + items.size(); }\n"   # 10
                     "    public void put(Item i) { }\n    public void put(String s) { }\n}\n",
    J + "app/Main.java": "package com.shop.app;\n\nimport com.shop.Cart;\nimport com.shop.*;\n"
                         "import com.shop.Item.Tag;\nimport static com.shop.Cart.LIMIT;\n"
                         "import static com.shop.Item.of;\n\npublic class Main {\n"   # 9
                         "    private Cart cart = new Cart();\n"                       # 10
                         "    public static void main(String[] args) {\n"
                         "        Cart c = new Cart();\n"                              # 12
                         "        c.add(Item.of(\"x\"));\n"                            # 13
                         "        var d = new Cart();\n        d.add(of(\"y\"));\n"     # 14, 15
                         "        int n = c.size() + LIMIT + Cart.LIMIT;\n"            # 16
                         "        Sized s = c;\n        s.size();\n"                    # 17, 18
                         "        c.put(null);\n"                                      # 19
                         "        Tag t = new Tag();\n        String l = t.label;\n"    # 20, 21
                         "        Runnable r = new Runnable() { public void run() { touch(); } };\n"  # 22
                         "    }\n"
                         "    void more() { cart.add(null); this.cart.size(); }\n"     # 24
                         "    static void touch() { }\n}\n",
    J + "app/Saved.java": "package com.shop.app;\n\nimport java.io.*;\nimport com.shop.*;\n\n"
                          "public class Saved implements Serializable {\n"
                          "    Object f() { return Item.of(\"a\"); }\n}\n",
    J + "app/Worker.java": "package com.shop.app;\n\nimport com.shop.Cart;\n\n"
                           "public class Worker extends Thread {\n"
                           "    public void work() { start(); helper(); this.helper(); }\n"   # 6
                           "    void helper() { }\n    Cart cart;\n}\n",
}


def test_same_package_imports_and_static_imports_link_strong(h: Harness) -> None:
    h.apply(JAVA)
    cart = h.uid("com.shop.Cart")
    assert h.ref(J + "Cart.java", 6, "Base") == ("STRONG", h.uid("com.shop.Base"))  # same package, a supertype
    assert h.ref(J + "Cart.java", 6, "Sized") == ("STRONG", h.uid("com.shop.Sized"))
    assert h.ref(J + "app/Main.java", 3, "Cart") == ("STRONG", cart)  # the import statement itself
    assert h.ref(J + "app/Main.java", 12, "Cart") == ("STRONG", cart)  # inside a class body
    assert h.ref(J + "app/Main.java", 13, "Item") == ("STRONG", h.uid("com.shop.Item"))  # on-demand import
    assert h.ref(J + "app/Main.java", 16, "LIMIT") == ("STRONG", h.uid("com.shop.Cart.LIMIT"))  # static import
    assert h.ref(J + "app/Main.java", 15, "of") == ("STRONG", h.uid("com.shop.Item.of"))  # static method import
    assert h.ref(J + "app/Main.java", 20, "Tag") == ("STRONG", h.uid("com.shop.Item.Tag"))  # a nested type
    assert h.ref(J + "app/Main.java", 5, "Item") == ("STRONG", h.uid("com.shop.Item"))
    assert h.ref(J + "app/Main.java", 11, "String") == ("UNKNOWN", None)  # java.lang is not in the repository


def test_members_through_declared_types_and_the_hierarchy(h: Harness) -> None:
    h.apply(JAVA)
    add, size = h.uid("com.shop.Cart.add"), h.uid("com.shop.Cart.size")
    assert h.ref(J + "app/Main.java", 13, "add") == ("STRONG", add)  # ``Cart c``
    assert h.ref(J + "app/Main.java", 15, "add") == ("STRONG", add)  # ``var d = new Cart()``
    assert h.ref(J + "app/Main.java", 16, "size") == ("STRONG", size)
    assert h.ref(J + "app/Main.java", 18, "size") == ("STRONG", h.uid("com.shop.Sized.size"))  # the static type
    assert h.ref(J + "app/Main.java", 24, "add") == ("STRONG", add)  # a field's declared type
    assert h.ref(J + "app/Main.java", 24, "size") == ("STRONG", size)  # ``this.cart.size()``
    assert h.ref(J + "app/Main.java", 21, "label") == ("STRONG", h.uid("com.shop.Item.Tag.label"))
    touch = h.uid("com.shop.Base.touch")
    assert h.ref(J + "Cart.java", 9, "touch") == ("STRONG", touch)  # inherited, called bare
    assert h.ref(J + "Cart.java", 10, "count") == ("STRONG", h.uid("com.shop.Base.count"))  # inherited field
    assert [t for t, _ in refs_on(h, J + "Cart.java", 9, "touch")] == ["STRONG", "STRONG"]  # and ``this.touch()``
    # java.io.Serializable (through ``import java.io.*``) is a listed JDK type: it brings no member named Item
    assert h.ref(J + "app/Saved.java", 7, "Item") == ("STRONG", h.uid("com.shop.Item"))
    assert h.ref(J + "app/Saved.java", 7, "of") == ("STRONG", h.uid("com.shop.Item.of"))


def refs_on(h: Harness, path: str, line: int, token: str) -> list[tuple[str, str | None]]:
    return [(r.ref_tier, r.target_uid) for r in h.q.list_refs_in_file(path, limit=1000)
            if r.start_line == line and r.token_text == token]


def test_what_the_syntax_does_not_settle_stays_anchored(h: Harness) -> None:
    h.apply(JAVA)
    assert h.ref(J + "app/Main.java", 19, "put") == ("ANCHORED", None)  # two overloads
    assert refs_on(h, J + "Cart.java", 9, "add")[1] == ("ANCHORED", None)  # ``items.add``: a java.util.List
    # An anonymous class inherits from a type the file does not declare: ``touch()`` could be Runnable's.
    assert h.ref(J + "app/Main.java", 22, "touch") == ("ANCHORED", None)
    # Thread is outside the repository and not one of the listed JDK types: its members are unknown, so even
    # the class's own ``helper`` could meet an inherited overload.
    assert h.ref(J + "app/Worker.java", 6, "start") == ("ANCHORED", None)
    assert refs_on(h, J + "app/Worker.java", 6, "helper") == [("ANCHORED", None), ("ANCHORED", None)]
    # Thread could declare a member type ``Cart``: the import's class is only the candidate, never STRONG.
    assert h.ref(J + "app/Worker.java", 8, "Cart") == ("ANCHORED", h.uid("com.shop.Cart"))


def test_import_precedence_and_ambiguity(h: Harness) -> None:
    h.apply({**JAVA,
             J + "other/Cart.java": "package com.shop.other;\n\npublic class Cart { }\n",
             J + "other/Use.java": "package com.shop.other;\n\nimport com.shop.*;\n\n"
                                   "class Use { Cart mine; Item item; }\n",
             J + "more/Pick.java": "package com.shop.more;\n\nimport com.shop.*;\nimport com.shop.other.*;\n\n"
                                   "class Pick { Cart which; }\n",
             J + "more/Ext.java": "package com.shop.more;\n\nimport org.outside.Item;\n\nclass Ext { Item i; }\n"})
    other = h.uid("com.shop.other.Cart")
    assert h.ref(J + "other/Use.java", 5, "Cart") == ("STRONG", other)  # the same package beats ``com.shop.*``
    assert h.ref(J + "other/Use.java", 5, "Item") == ("STRONG", h.uid("com.shop.Item"))
    assert h.ref(J + "more/Pick.java", 6, "Cart") == ("UNKNOWN", None)  # two on-demand imports offer it
    assert h.ref(J + "more/Ext.java", 5, "Item") == ("UNKNOWN", None)  # the single-type import wins


def test_links_follow_edits_and_equal_a_full_rebuild(h: Harness) -> None:
    h.apply(JAVA)
    renamed = JAVA[J + "Base.java"].replace("touch()", "poke()")
    h.apply({J + "Base.java": renamed})
    assert h.ref(J + "Cart.java", 9, "touch") == ("ANCHORED", None)  # no longer declared anywhere we know
    h.apply({J + "Base.java": JAVA[J + "Base.java"]}, deleted=(J + "Sized.java",))
    assert h.ref(J + "Cart.java", 6, "Sized") == ("UNKNOWN", None)
    assert h.ref(J + "app/Main.java", 16, "size") == ("ANCHORED", None)  # Cart now has an unknown supertype
    final = {k: v for k, v in JAVA.items() if k != J + "Sized.java"}
    fresh = Harness()
    try:
        fresh.apply(final)
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()


def test_edits_reach_the_files_they_can_change_and_only_those(h: Harness) -> None:
    main = J + "app/Uses.java"
    uses = ("package com.shop.app;\n\nimport com.shop.*;\n\nclass Uses {\n    Extra extra;\n"
            "    void f(Cart c) { c.add(null); int k = c.count; extra.touch(); }\n}\n")   # line 7
    h.apply({**JAVA, main: uses})
    assert h.ref(main, 7, "count") == ("STRONG", h.uid("com.shop.Base.count"))
    assert h.ref(main, 7, "touch") == ("ANCHORED", None)  # Extra does not exist yet
    cart = JAVA[J + "Cart.java"]
    # An overload makes ``c.add`` open; a field of the subclass hides the inherited ``count``.
    h.apply({J + "Cart.java": cart.replace("    public void put(Item i)", "    protected int count;\n"
                                          "    public void add(String s) { }\n    public void put(Item i)")})
    assert h.ref(main, 7, "add") == ("ANCHORED", None)
    assert h.ref(main, 7, "count") == ("STRONG", h.uid("com.shop.Cart.count"))
    h.apply({J + "Extra.java": "package com.shop;\n\npublic class Extra extends Base { }\n"})
    assert h.ref(main, 7, "touch") == ("STRONG", h.uid("com.shop.Base.touch"))  # through a field typed Extra
    h.apply({J + "Cart.java": cart})
    final = {**JAVA, main: uses, J + "Extra.java": "package com.shop;\n\npublic class Extra extends Base { }\n"}
    fresh = Harness()
    try:
        fresh.apply(final)
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()


def test_the_affected_set_is_the_changed_files_their_users_and_the_spellers_of_new_names(
        h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[set[str] | None] = []
    real = classdeps.affected

    def recording(conn: sqlite3.Connection, effect: BatchEffect, language: str,
                  suffixes: tuple[str, ...], *, fold: bool = False) -> set[int] | None:
        ids = real(conn, effect, language, suffixes, fold=fold)
        if language == "java":
            paths = dict(conn.execute("SELECT file_id, path FROM st_file").fetchall())
            seen.append(None if ids is None else {paths[i].removeprefix(J) for i in ids})
        return ids

    monkeypatch.setattr(classdeps, "affected", recording)
    h.apply(JAVA)
    assert seen[-1] is None  # the first batch records every file's declarations and links them all
    cart = JAVA[J + "Cart.java"]
    h.apply({J + "Cart.java": cart.replace("touch(); this.touch();", "this.touch();")})  # a body edit
    # Cart itself and the files with a reference into Cart (not Base, Item, Sized or Saved)
    assert seen[-1] == {"Cart.java", "app/Main.java", "app/Worker.java"}
    h.apply({J + "Item.java": JAVA[J + "Item.java"].replace("public String label;",
                                                            "public String label;\n        int size;")})
    # ``size`` is a new name: every file spelling it is relinked, with Item's users
    assert seen[-1] == {"Item.java", "Sized.java", "Cart.java", "app/Main.java", "app/Saved.java"}
    h.apply({J + "Cart.java": cart.replace(" implements Sized", "")})
    assert seen[-1] is None  # a changed supertype list changes inherited members wherever they are used
    h.apply({J + "Cart.java": cart}, deleted=(J + "Sized.java",))
    assert seen[-1] is None
    h.apply({J + "Other.java": "package com.shop;\n\nclass Other { }\n"})
    assert seen[-1] == {"Other.java"}  # a new type nobody spells or extends
    fresh = Harness()
    try:
        fresh.apply({**{k: v for k, v in JAVA.items() if k != J + "Sized.java"},
                     J + "Item.java": JAVA[J + "Item.java"].replace("public String label;",
                                                                     "public String label;\n        int size;"),
                     J + "Other.java": "package com.shop;\n\nclass Other { }\n"})
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()
