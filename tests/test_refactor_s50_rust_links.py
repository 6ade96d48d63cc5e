"""Rust renames (QA 37 items 2 and 7): a struct's field types are not its base classes, and ``Type::assoc``
written through a glob import (``use super::*`` of a test module, ``use crate::m::*``, a ``pub use m::*``
re-export) is linked like one through a named import, so the rename is high and ``cargo test`` still builds."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env
from tests.runner_projects import cargo_lib_tests_pass

CARGO = "[package]\nname = \"rsyn\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[dependencies]\n"


def test_rust_field_rename_leaves_the_same_named_field_of_its_fields_struct(tmp_path: Path) -> None:
    """``struct Node { src: Item, id: u32 }``: ``Item`` was taken for a base of ``Node``, so ``Node.id`` → ``key``
    renamed ``Item``'s public field and its literal too, with an "overrides" warning."""
    files = {
        "Cargo.toml": CARGO,
        "src/lib.rs": "pub struct Item {\n    pub id: u32,\n}\n\npub struct Node {\n    pub src: Item,\n"
                      "    pub id: u32,\n}\n\npub fn total(n: &Node) -> u32 {\n    n.id + n.src.id\n}\n\n"
                      "pub fn make() -> Node {\n    Node { src: Item { id: 1 }, id: 2 }\n}\n\n"
                      "#[cfg(test)]\nmod tests {\n    #[test]\n    fn sums() {\n"
                      "        assert_eq!(super::total(&super::make()), 3);\n    }\n}\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/lib.Node.id", "key")
        assert not preview.warnings and not preview.collisions, preview.warnings
        assert {(e.line, e.certainty) for e in preview.edits if e.certainty != "low"} == {(7, "high"), (11, "high"),
                                                                                          (15, "high")}, preview.edits
        env.service.apply(preview.refactor_id)
        text = env.read("src/lib.rs")
        assert "pub struct Item {\n    pub id: u32," in text and "n.key + n.src.id" in text, text
        assert "Node { src: Item { id: 1 }, key: 2 }" in text, text
        cargo_lib_tests_pass(env.root, tmp_path / "target")


def test_rust_associated_item_through_glob_imports_is_renamed_high(tmp_path: Path) -> None:
    """``Config::load()`` after ``use super::*`` (a test module) and ``use crate::cfg::*`` stayed low and was not
    applied (E0599); through ``pub use cfg::*`` too. Each is high now and the crate's tests build and pass."""
    files = {
        "Cargo.toml": CARGO,
        "src/lib.rs": "pub mod app;\npub mod cfg;\n\npub use cfg::*;\n\n"
                      "pub fn again() -> u32 {\n    crate::Config::load().depth\n}\n",
        "src/cfg.rs": "pub struct Config {\n    pub depth: u32,\n}\n\nimpl Config {\n"
                      "    pub fn load() -> Config {\n        Config { depth: 1 }\n    }\n}\n\n"
                      "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn loads() {\n"
                      "        assert_eq!(Config::load().depth, 1);\n    }\n}\n",
        "src/app.rs": "use crate::cfg::*;\n\npub fn run() -> u32 {\n    let c = Config::load();\n"
                      "    c.depth + crate::again()\n}\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/cfg.Config.load", "fetch")
        assert sorted((e.path, e.line, e.certainty) for e in preview.edits) == [
            ("src/app.rs", 4, "high"), ("src/cfg.rs", 6, "high"), ("src/cfg.rs", 17, "high"),
            ("src/lib.rs", 7, "high")], preview.edits
        env.service.apply(preview.refactor_id)
        assert "Config::fetch().depth, 1" in env.read("src/cfg.rs")
        cargo_lib_tests_pass(env.root, tmp_path / "target")
