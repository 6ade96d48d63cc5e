"""QA45 F4 on the QA's own Java project (``jp``, copied): renaming one overload renames it, the methods overriding
that signature and the calls its argument count picks, nothing else; the result compiles (``javac``) and prints
what it printed before. ``super.add(item)`` in a subclass overriding the chosen overload is its call too."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env
from tests.runner_projects import javac_run

S = "src/com/acme/shop/"
PRINTED = "$12.00 for 2 items 1200 4\nwiping gift cart\nlamp@2500 lamp@2\n$0.50 for 0 items 8 3\n"
FILES = {
    "src/com/acme/util/Fmt.java": "package com.acme.util;\n\npublic final class Fmt {\n    private Fmt() {}\n\n"
                                  "    public static String money(int cents) {\n"
                                  "        return String.format(\"$%d.%02d\", cents / 100, cents % 100);\n    }\n}\n",
    S + "Priced.java": "package com.acme.shop;\n\npublic interface Priced {\n    int price();\n}\n",
    S + "Item.java": "package com.acme.shop;\n\npublic class Item implements Priced {\n"
                     "    private final String title;\n    private final int cents;\n\n"
                     "    public Item(String title, int cents) {\n        this.title = title;\n"
                     "        this.cents = cents;\n"
                     "    }\n\n    @Override\n    public int price() {\n        return cents;\n    }\n\n"
                     "    @Override\n    public String toString() {\n        return title + \"@\" + cents;\n    }\n\n"
                     "    public String toString(int width) {\n        String s = toString();\n"
                     "        return s.length() > width ? s.substring(0, width) : s;\n    }\n}\n",
    S + "Cart.java": "package com.acme.shop;\n\nimport java.util.ArrayList;\nimport java.util.List;\n"
                     "import static com.acme.util.Fmt.money;\n\npublic class Cart implements Priced {\n"
                     "    protected final List<Item> items = new ArrayList<>();\n    protected int count;\n\n"
                     "    public void add(Item item) {\n        items.add(item);\n        count++;\n    }\n\n"
                     "    public void add(String title, int cents) {\n        add(new Item(title, cents));\n    }\n\n"
                     "    public int scale(int factor) {\n        return count * factor;\n    }\n\n"
                     "    @Override\n    public int price() {\n        int total = 0;\n"
                     "        for (Item i : items) {\n            total += i.price();\n        }\n"
                     "        return total;\n"
                     "    }\n\n    public void clear() {\n        items.clear();\n        count = 0;\n    }\n\n"
                     "    public String show() {\n        return money(price()) + \" for \" + count + \" items\";\n"
                     "    }\n}\n",
    S + "GiftCart.java": "package com.acme.shop;\n\npublic class GiftCart extends Cart {\n"
                         "    private int wrapping = 50;\n\n    @Override\n    public void add(Item item) {\n"
                         "        super.add(item);\n    }\n\n    @Override\n"
                         "    public void add(String title, int cents) {\n        super.add(title, cents);\n    }\n\n"
                         "    @Override\n    public int price() {\n"
                         "        return super.price() + wrapping;\n    }\n}\n",
    "src/com/acme/Main.java": "package com.acme;\n\nimport com.acme.shop.Cart;\nimport com.acme.shop.GiftCart;\n"
                              "import com.acme.shop.Item;\n\npublic class Main {\n"
                              "    public static void main(String[] args) {\n        Cart c = new GiftCart();\n"
                              "        c.add(\"pen\", 150);\n        c.add(new Item(\"book\", 1000));\n"
                              "        System.out.println(c.show() + \" \" + c.price() + \" \" + c.scale(2));\n"
                              "        System.out.println(\"wiping gift cart\");\n"
                              "        Item it = new Item(\"lamp\", 2500);\n"
                              "        System.out.println(it + \" \" + it.toString(6));\n        c.clear();\n"
                              "        System.out.println(c.show() + \" 8 3\");\n    }\n}\n",
}


def _line(path: str, text: str) -> int:
    return FILES[path].split("\n").index(text) + 1


def test_the_project_prints_what_the_tests_expect(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert javac_run(env.root) == PRINTED


def test_to_string_int_alone_becomes_render(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        line = _line(S + "Item.java", "    public String toString(int width) {")
        preview = env.service.rename(None, "render", path=S + "Item.java", line=line, column=19)
        assert sorted((e.path, e.line, e.certainty) for e in preview.edits) == [
            ("src/com/acme/Main.java", 15, "high"), (S + "Item.java", line, "high")]
        assert not isinstance(env.service.apply_when_certain(preview), str), "every edit high: applied"
        assert "public String toString() {" in env.read(S + "Item.java")
        assert javac_run(env.root) == PRINTED


def test_cart_add_item_alone_becomes_add_item_with_its_override_and_calls(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        line = _line(S + "Cart.java", "    public void add(Item item) {")
        preview = env.service.rename(None, "addItem", path=S + "Cart.java", line=line, column=17)
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits == {
            (S + "Cart.java", line): ("high", "definition"),
            (S + "Cart.java", line + 1): ("low", "other_binding"),  # items.add(item): a java.util.List
            (S + "Cart.java", line + 6): ("high", "self_member"),  # add(new Item(title, cents)): one argument
            (S + "GiftCart.java", 7): ("high", "override"),
            (S + "GiftCart.java", 8): ("high", "super_member"),  # super.add(item)
            ("src/com/acme/Main.java", 11): ("high", "declared_receiver"),  # c.add(new Item("book", 1000))
        }, edits
        env.service.apply(preview.refactor_id)
        assert "    public void add(String title, int cents) {\n        addItem(new Item(title, cents));" \
            in env.read(S + "Cart.java")
        assert "super.add(title, cents);" in env.read(S + "GiftCart.java")
        assert "c.add(\"pen\", 150);\n        c.addItem(new Item" in env.read("src/com/acme/Main.java")
        assert javac_run(env.root) == PRINTED


def test_the_other_overload_alone_leaves_add_item_calls(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        line = _line(S + "Cart.java", "    public void add(String title, int cents) {")
        preview = env.service.rename(None, "addTitled", path=S + "Cart.java", line=line, column=17)
        assert sorted((e.path, e.line, e.certainty) for e in preview.edits if e.certainty != "low") == [
            ("src/com/acme/Main.java", 10, "high"), (S + "Cart.java", line, "high"),
            (S + "GiftCart.java", 12, "high"), (S + "GiftCart.java", 13, "high")]
        env.service.apply(preview.refactor_id)
        assert javac_run(env.root) == PRINTED


OVERLOADS = {
    S + "Log.java": "package com.acme.shop;\n\nimport java.util.Map;\n\npublic class Log {\n"
                    "    public void put(String key) {}\n\n    public void put(String key, String... values) {}\n\n"
                    "    public void note(Map<String, Integer> counts) {}\n\n"
                    "    public void note(int a, int b) {}\n}\n",
    S + "Use.java": "package com.acme.shop;\n\nimport java.util.HashMap;\nimport java.util.function.Consumer;\n\n"
                    "public class Use {\n    void go(Log log) {\n        log.put(\"a\", \"b\", \"c\");\n"
                    "        log.note(new HashMap<String, Integer>());\n        log.note(1, 2);\n"
                    "        Consumer<String> f = log::put;\n    }\n}\n",
}


def test_varargs_generic_arguments_and_method_references(tmp_path: Path) -> None:
    """``put(String)`` beside ``put(String, String...)``: a one-argument call both take is low, a three-argument
    call is the varargs one's. ``note(Map<String, Integer>)``: the comma of its type arguments is no parameter; a
    call whose arguments hold a ``<`` is unsure (low), and a method reference has no arguments to count (low)."""
    with refactor_env(tmp_path / "repo", OVERLOADS) as env:
        varargs = env.service.rename(None, "putAll", path=S + "Log.java", line=8, column=17)
        assert {(e.path, e.line): e.certainty for e in varargs.edits} == {
            (S + "Log.java", 8): "high", (S + "Use.java", 8): "high", (S + "Use.java", 11): "low"}
        one = env.service.rename(None, "putOne", path=S + "Log.java", line=6, column=17)
        assert {(e.path, e.line): e.certainty for e in one.edits} == {
            (S + "Log.java", 6): "high", (S + "Use.java", 11): "low"}
        note = env.service.rename(None, "noteAll", path=S + "Log.java", line=10, column=17)
        assert {(e.path, e.line): (e.certainty, e.reason) for e in note.edits} == {
            (S + "Log.java", 10): ("high", "definition"), (S + "Use.java", 9): ("low", "overload")}
