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
    # inside an inline ``mod tests``, super:: is the file's module, whose ``use`` binds ``Cart`` (QA18 #6)
    assert h.ref("src/util.rs", 11, "new") == ("STRONG", h.uid("src/cart/mod.Cart.new"))
    assert h.ref("src/util.rs", 10, "total") == ("STRONG", h.uid("src/util.total"))  # the inline mod's own use


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



TYPED = {
    "Cargo.toml": "[package]\nname = \"semverish\"\nversion = \"0.1.0\"\n",
    "src/lib.rs": "pub mod version;\npub mod req;\n",
    "src/version.rs": "pub struct Version {\n    pub major: u64,\n}\n\nimpl Version {\n"
                      "    pub fn bump(&mut self) {\n        self.major += 1;\n    }\n\n"
                      "    pub fn same(&self, other: &Self) -> bool {\n        other.major == 0\n    }\n}\n\n"
                      "impl Clone for Version {\n    fn clone(&self) -> Self {\n"
                      "        Version { major: self.major }\n    }\n}\n",
    "src/req.rs": "use crate::version::Version;\n\npub struct Comparator {\n    pub major: u64,\n}\n\n"
                  "impl Comparator {\n    pub fn matches(&self, v: &Version) -> bool {\n"
                  "        self.major == 0\n            && v.major == 0\n    }\n}\n\n"
                  "pub fn check(c: crate::req::Comparator, v: &mut Version) -> u64 {\n"
                  "    let w: Version = Version { major: 1 };\n    let x = Comparator { major: 2 };\n"
                  "    let y = w.same(&w);\n    let z = c;\n"
                  "    c.major\n        + v.major\n        + w.major\n        + x.major\n        + z.major\n"
                  "        + c.matches(&w) as u64 + y as u64\n}\n\n"
                  "mod tests {\n    fn t(v: super::Version) -> u64 {\n        v.major\n    }\n}\n",
}


def test_members_link_through_the_types_the_syntax_spells(h: Harness) -> None:
    h.apply(TYPED)
    version, comparator = h.uid("src/version.Version.major"), h.uid("src/req.Comparator.major")
    assert h.ref("src/version.rs", 7, "major") == ("STRONG", version)  # self in ``impl Version``
    assert h.ref("src/version.rs", 17, "major") == ("STRONG", version)  # self in ``impl Clone for Version``
    assert h.ref("src/req.rs", 9, "major") == ("STRONG", comparator)  # self: the impl's type decides
    assert h.ref("src/req.rs", 10, "major") == ("STRONG", version)  # v: &Version
    assert h.ref("src/version.rs", 11, "major") == ("STRONG", version)  # other: &Self
    assert h.ref("src/req.rs", 19, "major") == ("STRONG", comparator)  # c: crate::req::Comparator
    assert h.ref("src/req.rs", 20, "major") == ("STRONG", version)  # v: &mut Version
    assert h.ref("src/req.rs", 21, "major") == ("STRONG", version)  # let w: Version
    assert h.ref("src/req.rs", 22, "major") == ("STRONG", comparator)  # let x = Comparator { .. }
    assert h.ref("src/req.rs", 17, "same") == ("STRONG", h.uid("src/version.Version.same"))  # a method
    assert h.ref("src/req.rs", 24, "matches") == ("STRONG", h.uid("src/req.Comparator.matches"))
    assert h.ref("src/req.rs", 23, "major") == ("ANCHORED", None)  # let z = c: the type is not spelled
    assert h.ref("src/req.rs", 29, "major") == ("STRONG", version)  # v: super::Version, from an inline mod


def test_links_through_spelled_types_follow_edits_like_a_full_rebuild(h: Harness) -> None:
    h.apply(TYPED)
    renamed = TYPED["src/version.rs"].replace("pub major: u64", "pub maj: u64")
    h.apply({"src/version.rs": renamed})
    assert h.ref("src/req.rs", 10, "major") == ("ANCHORED", None)
    assert h.ref("src/req.rs", 9, "major") == ("STRONG", h.uid("src/req.Comparator.major"))
    h.apply({"src/version.rs": TYPED["src/version.rs"]})
    assert h.ref("src/req.rs", 10, "major") == ("STRONG", h.uid("src/version.Version.major"))
    # a second type named Version in the crate: the name no longer decides, nothing links through it
    h.apply({"src/other.rs": "pub struct Version {}\n", "src/lib.rs": TYPED["src/lib.rs"] + "pub mod other;\n"})
    assert h.ref("src/req.rs", 10, "major") == ("ANCHORED", None)
    assert h.ref("src/version.rs", 7, "major") == ("ANCHORED", None)
    h.apply({"src/lib.rs": TYPED["src/lib.rs"]}, deleted=("src/other.rs",))
    fresh = Harness()
    try:
        fresh.apply(TYPED)
        assert h.tiers() == fresh.tiers()
        assert h.ref("src/req.rs", 10, "major") == ("STRONG", h.uid("src/version.Version.major"))
    finally:
        fresh.conn.close()


def test_literal_keys_macro_tokens_and_library_types_link_to_the_named_structs_field(h: Harness) -> None:
    files = {**TYPED,
             "src/build.rs": "use crate::req::Comparator;\nuse crate::version::Version;\n\n"
                             "pub fn build(v: &Version, major: u64) -> Comparator {\n"
                             "    let Version { major: m } = *v;\n    assert!(v.major == m, \"{}\", v.major);\n"
                             "    let c = Comparator { major };\n    Comparator { major: c.major + m }\n}\n",
             "tests/it.rs": "use semverish::version::Version;\n\n#[test]\nfn t() {\n"
                            "    let v = Version { major: 1 };\n    assert_eq!(v.major, 1);\n}\n"}
    files["src/lib.rs"] = TYPED["src/lib.rs"] + "pub mod build;\n"
    h.apply(files)
    version, comparator = h.uid("src/version.Version.major"), h.uid("src/req.Comparator.major")
    assert h.ref("src/build.rs", 5, "major") == ("STRONG", version)  # a pattern key: ``Version { major: m }``
    assert h.ref("src/build.rs", 6, "major") == ("STRONG", version)  # ``v.major`` inside ``assert!``
    assert h.ref("src/build.rs", 8, "major") == ("STRONG", comparator)  # a literal key: the named struct decides
    assert h.ref("src/version.rs", 17, "major") == ("STRONG", version)
    assert h.ref("tests/it.rs", 5, "major") == ("STRONG", version)  # the library's type from an integration test
    assert h.ref("tests/it.rs", 6, "major") == ("STRONG", version)  # ... inside ``assert_eq!``
    shorthand = h.conn.execute(
        "SELECT r.receiver_shape FROM st_ref r JOIN st_file f ON f.file_id = r.file_id WHERE f.path = 'src/build.rs' "
        "AND r.start_line = 7 AND r.token_text = 'major' AND r.is_member = 0").fetchone()
    assert shorthand == ("short:Comparator",)  # ``Comparator { major }``: a variable and a field key


def test_a_name_used_in_its_own_let_is_the_outer_binding_and_chains_follow_field_types(h: Harness) -> None:
    files = {**TYPED,
             "src/chain.rs": "use crate::version::Version;\n\npub struct Pair {\n    pub left: Version,\n}\n\n"
                             "pub fn f(v: &Version, p: Pair) -> bool {\n    let v = v.same(&p.left);\n"
                             "    v && p.left.major == 0\n}\n"}
    files["src/lib.rs"] = TYPED["src/lib.rs"] + "pub mod chain;\n"
    h.apply(files)
    # ``let v = v.same(..)``: the right side's ``v`` is the parameter (the new ``v`` begins after the statement)
    assert h.ref("src/chain.rs", 8, "same") == ("STRONG", h.uid("src/version.Version.same"))
    assert h.ref("src/chain.rs", 9, "left") == ("STRONG", h.uid("src/chain.Pair.left"))
    # ``p.left.major``: through the type field ``left`` is declared with
    assert h.ref("src/chain.rs", 9, "major") == ("STRONG", h.uid("src/version.Version.major"))
