"""QA45 F5: renaming a Java interface method reaches what the syntax settles — the ``@Override`` method of an
anonymous ``new Priced() {...}``, a method reference ``Item::price`` and a call on a value whose type is a type
variable bounded by the interface (``T extends Priced``). The index links them (``javalink``), so the plan
renames them and ``javac`` still compiles the project."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env
from tests.runner_projects import javac_run

S = "src/com/acme/shop/"
FILES = {
    S + "Priced.java": "package com.acme.shop;\n\npublic interface Priced {\n    int price();\n}\n",
    S + "Item.java": "package com.acme.shop;\n\npublic class Item implements Priced {\n    private final int cents;\n\n"
                     "    public Item(int cents) {\n        this.cents = cents;\n    }\n\n"
                     "    @Override\n    public int price() {\n        return cents;\n    }\n}\n",
    S + "Promo.java": "package com.acme.shop;\n\nimport java.util.List;\n\npublic class Promo {\n"
                      "    public static int sum(List<Item> items) {\n"
                      "        return items.stream().mapToInt(Item::price).sum();\n    }\n\n"
                      "    public static Priced fixed(final int cents) {\n        return new Priced() {\n"
                      "            @Override\n            public int price() {\n                return cents;\n"
                      "            }\n        };\n    }\n}\n",
    S + "Cheapest.java": "package com.acme.shop;\n\nimport java.util.List;\n\n"
                         "public class Cheapest<T extends Priced> {\n    public T pick(List<T> xs) {\n"
                         "        T best = null;\n        for (T x : xs) {\n"
                         "            if (best == null || x.price() < best.price()) {\n                best = x;\n"
                         "            }\n        }\n        return best;\n    }\n\n"
                         "    public static <U extends Priced> int twice(U u) {\n"
                         "        return 2 * u.price();\n    }\n}\n",
    "src/com/acme/Main.java": "package com.acme;\n\nimport com.acme.shop.*;\nimport java.util.List;\n\n"
                              "public class Main {\n    public static void main(String[] args) {\n"
                              "        List<Item> items = List.of(new Item(3), new Item(2));\n"
                              "        Priced cheap = new Cheapest<Item>().pick(items);\n"
                              "        System.out.println(Promo.sum(items) + \" \" + cheap.price() + \" \""
                              " + Promo.fixed(7).price() + \" \" + Cheapest.twice(new Item(4)));\n    }\n}\n",
}
#: (path, line) of each use the QA report found left ``low``.
_SETTLED = {(S + "Promo.java", 7), (S + "Promo.java", 13), (S + "Cheapest.java", 9), (S + "Cheapest.java", 17)}


def test_interface_method_rename_reaches_anonymous_classes_method_references_and_bounded_generics(
        tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert javac_run(env.root) == "5 2 7 8\n"
        preview = env.service.rename("com.acme.shop.Priced.price", "cost")
        assert preview.status == "ready"
        shown = [(e.path, e.line, e.certainty, e.reason) for e in preview.edits]
        assert not [e for e in shown if e[2] == "low"], shown
        assert {(e.path, e.line) for e in preview.edits if e.certainty == "high"} >= _SETTLED, shown
        env.service.apply(preview.refactor_id)
        assert "mapToInt(Item::cost)" in env.read(S + "Promo.java")
        assert javac_run(env.root) == "5 2 7 8\n"


def test_renaming_the_anonymous_classes_method_renames_the_interface_method(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename(None, "cost", path=S + "Promo.java", line=13, column=24)
        assert preview.status == "ready"
        assert (S + "Priced.java", 4) in {(e.path, e.line) for e in preview.edits if e.certainty == "high"}
        env.service.apply(preview.refactor_id)
        assert javac_run(env.root) == "5 2 7 8\n"


def test_a_method_reference_to_an_overloaded_method_stays_unsettled(tmp_path: Path) -> None:
    """``Cart::add`` with ``add(Item)`` and ``add(String)``: which one the reference names depends on the target
    functional type, which the index does not model, so it is no ``high`` edit of a rename of one of them."""
    files = {**FILES, S + "Cart.java": "package com.acme.shop;\n\npublic class Cart {\n"
                                       "    public void add(Item item) {}\n    public void add(String name) {}\n"
                                       "    public static void fill(java.util.List<Item> xs, Cart c) {\n"
                                       "        xs.forEach(c::add);\n    }\n}\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename(None, "put", path=S + "Cart.java", line=4, column=17)  # add(Item)
        edit = next(e for e in preview.edits if e.path == S + "Cart.java" and e.line == 7)
        assert edit.certainty != "high", edit
