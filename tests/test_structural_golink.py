"""Go across files in the structural index: package blocks shared by a directory, imports of repository
packages through go.mod, and what stays unresolved (ambiguous siblings, shadowing locals, outside packages)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.test_structural_index import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


GO = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "cart/cart.go": "package cart\n\ntype Cart struct{ Items []int }\n\nfunc (c *Cart) Add(i int) { c.Items = "
                    "append(c.Items, i) }\n\nfunc New() *Cart { return &Cart{Items: nil} }\n",
    "cart/total.go": "package cart\n\nconst Limit = 10\n\nfunc Total(c *Cart) int {\n\tn := 0\n"
                     "\tfor _, i := range c.Items {\n\t\tn += i\n\t}\n\treturn n\n}\n",
    "cart/os_linux.go": "package cart\n\nfunc platform() string { return \"linux\" }\n",
    "cart/os_other.go": "package cart\n\nfunc platform() string { return \"other\" }\n",
    "cart/use.go": "package cart\n\nfunc use() string { _ = New(); return platform() }\n",
    "cmd/main.go": "package main\n\nimport (\n\t\"fmt\"\n\tc \"example.com/shop/cart\"\n"
                   "\t\"example.com/shop/cart\"\n)\n\nfunc main() {\n\tx := cart.New()\n"
                   "\tfmt.Println(cart.Total(x), c.Limit)\n\tvar y *cart.Cart = x\n\t_ = y\n}\n",
    "cmd/shadow.go": "package main\n\nimport \"example.com/shop/cart\"\n\nfunc shadow() {\n"
                     "\tcart := struct{ New int }{1}\n\t_ = cart.New\n\tmain()\n}\n",
}


def test_siblings_of_one_package_link_strong(h: Harness) -> None:
    h.apply(GO)
    assert h.ref("cart/total.go", 5, "Cart") == ("STRONG", h.uid("cart.Cart"))
    assert h.ref("cart/use.go", 3, "New") == ("STRONG", h.uid("cart.New"))
    # two build-tag variants both declare platform(): ambiguous, so it stays unresolved
    assert h.ref("cart/use.go", 3, "platform") == ("UNKNOWN", None)
    # a struct literal key is a field of the literal's type, not a package-level name
    assert h.ref("cart/cart.go", 7, "Items") == ("STRONG", h.uid("cart.Cart.Items"))


def test_imports_of_repository_packages_link_exported_names(h: Harness) -> None:
    h.apply(GO)
    assert h.ref("cmd/main.go", 10, "New") == ("STRONG", h.uid("cart.New"))
    assert h.ref("cmd/main.go", 11, "Total") == ("STRONG", h.uid("cart.Total"))
    assert h.ref("cmd/main.go", 11, "Limit") == ("STRONG", h.uid("cart.Limit"))  # through the alias c
    assert h.ref("cmd/main.go", 11, "Println") == ("ANCHORED", None)  # fmt is outside the repository
    assert h.ref("cmd/main.go", 12, "Cart") == ("STRONG", h.uid("cart.Cart"))  # a qualified type
    # a local named like the package shadows it
    assert h.ref("cmd/shadow.go", 7, "New") == ("ANCHORED", None)
    # a method is known by its receiver type; a call on a value stays ANCHORED
    assert h.uid("cart.Cart.Add")


def test_go_links_follow_edits_deletions_and_go_mod(h: Harness) -> None:
    h.apply(GO)
    h.apply({}, deleted=("cart/os_other.go",))
    assert h.ref("cart/use.go", 3, "platform") == ("STRONG", h.uid("cart.platform"))
    h.apply({"cart/total.go": "package cart\n\nfunc Other() {}\n"})
    assert h.ref("cmd/main.go", 11, "Total") == ("ANCHORED", None)
    assert h.ref("cmd/main.go", 11, "Limit") == ("ANCHORED", None)
    h.apply({"cart/total.go": GO["cart/total.go"]})
    assert h.ref("cmd/main.go", 11, "Total") == ("STRONG", h.uid("cart.Total"))
    h.apply({"go.mod": "module example.com/other\n"})
    assert h.ref("cmd/main.go", 11, "Total") == ("ANCHORED", None)
    assert h.ref("cart/total.go", 5, "Cart")[0] == "STRONG"  # siblings do not depend on go.mod
    h.apply({"go.mod": GO["go.mod"]})
    assert h.ref("cmd/main.go", 10, "New") == ("STRONG", h.uid("cart.New"))


def test_test_files_see_the_package_but_not_the_other_way(h: Harness) -> None:
    h.apply({**GO, "cart/cart_test.go": "package cart\n\nfunc helper() *Cart { return New() }\n",
             "cart/late.go": "package cart\n\nfunc late() { helper() }\n"})
    assert h.ref("cart/cart_test.go", 3, "New") == ("STRONG", h.uid("cart.New"))
    assert h.ref("cart/late.go", 3, "helper") == ("UNKNOWN", None)


def test_incremental_go_links_equal_a_full_rebuild(h: Harness) -> None:
    final = {**GO, "cart/total.go": "package cart\n\nconst Limit = 4\n\nfunc Total(c *Cart) int { return 0 }\n",
             "report/r.go": "package report\n\nimport \"example.com/shop/cart\"\n\nvar X = cart.Limit\n"}
    final.pop("cart/os_other.go")
    h.apply(GO)
    h.apply({"cart/total.go": "package cart\n\nfunc Other() {}\n"}, deleted=("cart/os_other.go",))
    h.apply({"report/r.go": final["report/r.go"], "go.mod": "module example.com/other\n"})
    h.apply({"go.mod": GO["go.mod"]})
    h.apply({"cart/total.go": final["cart/total.go"]})
    fresh = Harness()
    try:
        fresh.apply(final)
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()


def test_a_methods_receiver_reaches_its_types_methods_and_fields(h: Harness) -> None:
    h.apply({**GO, "cart/more.go": "package cart\n\nfunc (c *Cart) Twice(i int) {\n\tc.Add(i)\n\tc.Add(i)\n"
                                   "\t_ = c.Items\n\t_ = c.Missing\n}\n\nfunc (Cart) Bare() {}\n"})
    assert h.ref("cart/more.go", 4, "Add") == ("STRONG", h.uid("cart.Cart.Add"))  # a method in a sibling file
    assert h.ref("cart/more.go", 6, "Items") == ("STRONG", h.uid("cart.Cart.Items"))  # a field
    assert h.ref("cart/more.go", 7, "Missing") == ("ANCHORED", None)  # promoted from an embedded type, maybe
    assert h.ref("cart/cart.go", 5, "Items") == ("STRONG", h.uid("cart.Cart.Items"))


TYPED = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "money/money.go": "package money\n\ntype Amount struct{ Cents int }\n\nfunc (a Amount) Double() Amount "
                      "{ return a }\n\nfunc Zero() (Amount, error) { return Amount{}, nil }\n",
    "cart/cart.go": "package cart\n\nimport \"example.com/shop/money\"\n\ntype Cart struct {\n"
                    "\tTotal money.Amount\n\tnext  *Cart\n}\n\nfunc (c *Cart) Add(i int) {}\n\n"
                    "func New() *Cart { return &Cart{} }\n",
    "cart/use.go": "package cart\n\nimport \"example.com/shop/money\"\n\nfunc use(p *Cart, m money.Amount) {\n"
                   "\tp.Add(1)\n\t_ = m.Cents\n\tvar v Cart\n\tv.Add(2)\n\tw := &Cart{}\n\tw.Add(3)\n"
                   "\tx := new(Cart)\n\tx.Add(4)\n\ty := New()\n\ty.Add(5)\n\tz, err := money.Zero()\n"
                   "\t_, _ = z.Double(), err\n\t_ = p.Total.Cents\n\tp.next.Add(6)\n\tq := p.Total.Double()\n"
                   "\t_ = q.Cents\n}\n",
    # imports cart only: money's Amount is reached through Cart.Total, but money is not this file's import
    "shop/shop.go": "package shop\n\nimport \"example.com/shop/cart\"\n\nfunc run(c *cart.Cart) {\n"
                    "\tc.Add(1)\n\t_ = c.Total.Cents\n\tfor _, e := range []cart.Cart{} {\n\t\te.Add(2)\n\t}\n}\n",
}


def test_members_link_through_the_types_declarations_spell(h: Harness) -> None:
    h.apply(TYPED)
    add = h.uid("cart.Cart.Add")
    for line in (6, 9, 11, 13, 15):  # a parameter, var x T, &T{}, new(T), a function's result
        assert h.ref("cart/use.go", line, "Add") == ("STRONG", add), line
    assert h.ref("cart/use.go", 7, "Cents") == ("STRONG", h.uid("money.Amount.Cents"))  # pkg.T parameter
    assert h.ref("cart/use.go", 17, "Double") == ("STRONG", h.uid("money.Amount.Double"))  # x, err := pkg.F()
    assert h.ref("cart/use.go", 18, "Cents") == ("STRONG", h.uid("money.Amount.Cents"))  # through field Total
    assert h.ref("cart/use.go", 19, "Add") == ("STRONG", add)  # through a *Cart field
    assert h.ref("cart/use.go", 18, "Total") == ("STRONG", h.uid("cart.Cart.Total"))
    # q := p.Total.Double(): a method's result is not followed
    assert h.ref("cart/use.go", 21, "Cents") == ("ANCHORED", None)
    assert h.ref("shop/shop.go", 6, "Add") == ("STRONG", add)
    # money is not imported by shop.go: a change there would not relink it, so no link is made through it
    assert h.ref("shop/shop.go", 7, "Cents") == ("ANCHORED", None)
    assert h.ref("shop/shop.go", 9, "Add") == ("ANCHORED", None)  # a range value's type is not spelled


def test_links_through_declared_types_follow_edits_like_a_full_rebuild(h: Harness) -> None:
    h.apply(TYPED)
    renamed = TYPED["money/money.go"].replace("Cents", "Units")
    h.apply({"money/money.go": renamed})
    assert h.ref("cart/use.go", 7, "Cents") == ("ANCHORED", None)
    assert h.ref("cart/use.go", 18, "Cents") == ("ANCHORED", None)
    retyped = TYPED["cart/cart.go"].replace("Total money.Amount", "Total int")
    h.apply({"money/money.go": TYPED["money/money.go"], "cart/cart.go": retyped})
    assert h.ref("cart/use.go", 18, "Cents") == ("ANCHORED", None)
    assert h.ref("cart/use.go", 7, "Cents") == ("STRONG", h.uid("money.Amount.Cents"))
    fresh = Harness()
    try:
        fresh.apply({**TYPED, "cart/cart.go": retyped})
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()


def test_range_values_take_the_element_type_of_a_spelled_slice(h: Harness) -> None:
    ranges = ("package cart\n\ntype Shelf struct {\n\tcarts []*Cart\n}\n\n"
              "func each(cs []*Cart, s Shelf, n map[string]*Cart) {\n\tfor _, c := range cs {\n\t\tc.Add(1)\n\t}\n"
              "\tfor _, c := range s.carts {\n\t\tc.Add(2)\n\t}\n\tfor _, c := range n {\n\t\tc.Add(3)\n\t}\n}\n")
    h.apply({**TYPED, "cart/ranges.go": ranges})
    add = h.uid("cart.Cart.Add")
    assert h.ref("cart/ranges.go", 9, "Add") == ("STRONG", add)  # cs []*Cart
    assert h.ref("cart/ranges.go", 12, "Add") == ("STRONG", add)  # s.carts, a field of type []*Cart
    assert h.ref("cart/ranges.go", 15, "Add") == ("ANCHORED", None)  # a map's values: not followed
