"""Rust across files in the structural index: the module tree of a crate (``mod a;`` → ``a.rs`` /
``a/mod.rs``), ``use crate::``/``super::``/``self::`` paths, ``a::b::f`` paths and ``Type::assoc`` items."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.test_structural_index import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


RUST = {
    "Cargo.toml": "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    "src/lib.rs": "pub mod cart;\npub mod util;\n\nuse crate::cart::Cart;\n\n"
                  "pub fn run() -> i32 {\n    let c = Cart::new();\n    util::total(&c) + cart::LIMIT\n}\n",
    "src/cart/mod.rs": "pub mod item;\n\npub const LIMIT: i32 = 3;\n\npub struct Cart { pub items: Vec<i32> }\n\n"
                       "impl Cart {\n    pub fn new() -> Self { Cart { items: vec![] } }\n}\n",
    "src/cart/item.rs": "use super::Cart;\nuse crate::util::total as sum;\n\n"
                        "pub fn count(c: &Cart) -> i32 { sum(c) }\n",
    "src/util.rs": "use crate::cart::{Cart, LIMIT};\n\npub fn total(c: &Cart) -> i32 {\n"
                   "    c.items.iter().sum::<i32>().min(LIMIT)\n}\n\n"
                   "pub fn twice(c: &Cart) -> i32 { self::total(c) * 2 + crate::cart::item::count(c) }\n\n"
                   "mod tests {\n    use super::total;\n    fn t() { total(&super::Cart::new()); }\n}\n",
}


def test_use_paths_and_module_paths_link_strong(h: Harness) -> None:
    h.apply(RUST)
    cart = h.uid("src/cart/mod.Cart")
    assert h.ref("src/lib.rs", 4, "Cart") == ("STRONG", cart)  # use crate::cart::Cart
    assert h.ref("src/lib.rs", 7, "Cart") == ("STRONG", cart)  # a use of the imported name
    assert h.ref("src/lib.rs", 7, "new") == ("STRONG", h.uid("src/cart/mod.Cart.new"))  # Type::assoc
    assert h.ref("src/lib.rs", 8, "total") == ("STRONG", h.uid("src/util.total"))  # util::total (mod util;)
    assert h.ref("src/lib.rs", 8, "LIMIT") == ("STRONG", h.uid("src/cart/mod.LIMIT"))  # cart/mod.rs
    assert h.ref("src/cart/item.rs", 1, "Cart") == ("STRONG", cart)  # use super::Cart
    assert h.ref("src/cart/item.rs", 4, "sum") == ("STRONG", h.uid("src/util.total"))  # through an alias
    assert h.ref("src/util.rs", 7, "total") == ("STRONG", h.uid("src/util.total"))  # self::total
    assert h.ref("src/util.rs", 7, "count") == ("STRONG", h.uid("src/cart/item.count"))
    # inside an inline ``mod tests``, super:: is the file's module: not modelled, left alone
    assert h.ref("src/util.rs", 11, "new")[0] == "ANCHORED"


def test_rust_links_follow_edits(h: Harness) -> None:
    h.apply(RUST)
    h.apply({"src/cart/mod.rs": "pub mod item;\n\npub const LIMIT: i32 = 3;\n\npub struct Basket {}\n"})
    assert h.ref("src/lib.rs", 4, "Cart")[0] == "PROVEN"  # bound to the import, no definition behind it
    assert h.ref("src/lib.rs", 8, "LIMIT") == ("STRONG", h.uid("src/cart/mod.LIMIT"))
    h.apply({"src/cart/mod.rs": RUST["src/cart/mod.rs"]})
    assert h.ref("src/lib.rs", 4, "Cart") == ("STRONG", h.uid("src/cart/mod.Cart"))
    # two definitions reachable by one path (cfg variants) stay unresolved
    h.apply({"src/util.rs": RUST["src/util.rs"] + "\n#[cfg(test)]\npub fn total(c: &Cart) -> i32 { 0 }\n"})
    assert h.ref("src/lib.rs", 8, "total")[0] == "ANCHORED"


def test_incremental_rust_links_equal_a_full_rebuild(h: Harness) -> None:
    final = {**RUST, "src/cart/item.rs": "use super::Cart;\n\npub fn count(c: &Cart) -> i32 { 0 }\n",
             "src/extra.rs": "use crate::util::total;\n\npub fn e(c: &crate::cart::Cart) -> i32 { total(c) }\n"}
    h.apply(RUST)
    h.apply({"src/cart/mod.rs": "pub mod item;\n\npub struct Basket {}\n"})
    h.apply({"src/extra.rs": final["src/extra.rs"]}, deleted=("src/lib.rs",))
    h.apply({"src/lib.rs": RUST["src/lib.rs"], "src/cart/mod.rs": RUST["src/cart/mod.rs"]})
    h.apply({"src/cart/item.rs": final["src/cart/item.rs"]})
    fresh = Harness()
    try:
        fresh.apply(final)
        tiers = "SELECT f.path, r.start_line, r.start_col, r.token_text, r.ref_tier, r.target_uid FROM st_ref r " \
                "JOIN st_file f ON f.file_id = r.file_id"
        assert set(h.conn.execute(tiers)) == set(fresh.conn.execute(tiers))
    finally:
        fresh.conn.close()


def test_integration_tests_and_sibling_crates_name_the_library(h: Harness) -> None:
    files = {**RUST,
             "tests/util/mod.rs": "use shop::cart::Cart;\n\npub fn make() -> Cart { Cart::new() }\n",
             "tests/run.rs": "mod util;\n\nuse shop::util::total;\n\n#[test]\nfn t() { total(&util::make()); "
                             "shop::run(); }\nfn u(c: &shop::Cart) {}\n",
             "app/Cargo.toml": "[package]\nname = \"shop-app\"\n",
             "app/src/main.rs": "use shop::cart;\n\nfn main() { cart::item::count(&cart::Cart::new()); }\n"}
    h.apply(files)
    cart = h.uid("src/cart/mod.Cart")
    assert h.ref("tests/util/mod.rs", 1, "Cart") == ("STRONG", cart)
    assert h.ref("tests/util/mod.rs", 3, "new") == ("STRONG", h.uid("src/cart/mod.Cart.new"))
    assert h.ref("tests/run.rs", 3, "total") == ("STRONG", h.uid("src/util.total"))
    assert h.ref("tests/run.rs", 6, "make") == ("STRONG", h.uid("tests/util/mod.make"))
    assert h.ref("tests/run.rs", 6, "run") == ("STRONG", h.uid("src/lib.run"))
    assert h.ref("app/src/main.rs", 3, "count") == ("STRONG", h.uid("src/cart/item.count"))
    assert h.ref("tests/run.rs", 7, "Cart") == ("STRONG", cart)  # through lib.rs's ``use crate::cart::Cart``
    # renaming the package: its old name names nothing in the repository any more
    h.apply({"Cargo.toml": "[package]\nname = \"store\"\n"})
    assert h.ref("tests/run.rs", 6, "run")[0] == "ANCHORED"
    fresh = Harness()
    try:
        fresh.apply({**files, "Cargo.toml": "[package]\nname = \"store\"\n"})
        tiers = "SELECT f.path, r.start_line, r.start_col, r.token_text, r.ref_tier, r.target_uid FROM st_ref r " \
                "JOIN st_file f ON f.file_id = r.file_id"
        assert set(h.conn.execute(tiers)) == set(fresh.conn.execute(tiers))
    finally:
        fresh.conn.close()
