"""A Rust trait implemented inside ``macro_rules!`` (QA 45 F6): ``impl Area for $t { fn area .. }`` in a macro body
was a ``low unresolved`` edit of a ``ready`` plan, so renaming ``Area::area`` left the macro's method under the old
name (E0407, E0046 at every expansion). The method there is the trait's, renamed ``high`` with it, as is
``<T as Area>::area`` in a macro's arguments; an inherent ``impl $t { fn area }`` in a macro says nothing of the
trait and stays ``low``."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env
from tests.runner_projects import cargo_lib_tests_pass

CARGO = "[package]\nname = \"rsmac\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[dependencies]\n"

LIB = """pub mod shapes;

pub trait Area {
    fn area(&self) -> f64;
}

macro_rules! unit_area {
    ($($t:ty)+) => {$(
        impl<'a> crate::Area for $t {
            fn area(&self) -> f64 {
                0.0
            }
        }
    )+};
}

macro_rules! inherent {
    ($t:ty) => {
        impl $t {
            pub fn area(&self) -> u8 {
                1
            }
        }
    };
}

pub struct Dot;
pub struct Pin;
pub struct Other;
unit_area!(Dot Pin);
inherent!(Other);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_have_no_area() {
        assert_eq!(<Dot as crate::Area>::area(&Dot) + <Pin as Area>::area(&Pin), 0.0);
        assert_eq!(Other.area(), 1);
    }
}
"""

SHAPES = """use crate::Area;

pub struct Sq(pub f64);

impl Area for Sq {
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}

macro_rules! scaled {
    ($t:ident) => {
        pub struct $t(pub f64);
        impl Area for $t {
            fn area(&self) -> f64 {
                2.0 * self.0
            }
        }
    };
}

scaled!(Twice);
"""


def test_rust_trait_method_rename_takes_the_impls_written_in_macro_bodies(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": LIB, "src/shapes.rs": SHAPES}) as env:
        preview = env.service.rename("src/lib.Area.area", "surface")
        edits = {(e.path, e.line): e.certainty for e in preview.edits if e.kind == "code"}
        assert edits[("src/lib.rs", 10)] == "high" and edits[("src/shapes.rs", 15)] == "high", preview.edits
        in_assert = [e.certainty for e in preview.edits if (e.path, e.line) == ("src/lib.rs", 39)]
        assert in_assert == ["high", "high"], preview.edits  # ``<Dot as crate::Area>::area`` in a macro's tokens
        assert edits[("src/lib.rs", 20)] == "low", preview.edits  # ``impl $t``: not the trait's
        assert preview.status == "ready", preview
        env.service.apply(preview.refactor_id)
        assert "fn surface(&self) -> f64 {\n                0.0" in env.read("src/lib.rs")
        assert "pub fn area(&self) -> u8" in env.read("src/lib.rs")
        assert "fn surface(&self) -> f64 {\n                2.0" in env.read("src/shapes.rs")
        assert "<Dot as crate::Area>::surface(&Dot) + <Pin as Area>::surface(&Pin)" in env.read("src/lib.rs")
        cargo_lib_tests_pass(env.root, tmp_path / "target")
