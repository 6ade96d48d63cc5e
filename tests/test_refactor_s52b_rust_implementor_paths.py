"""QA45 (not fixed in F6): ``Vec::from_hex(..)`` inside ``assert_eq!`` where the crate writes
``impl FromHex for Vec<u8>`` (the ``hex`` crate's tests) was ``low unresolved``: renaming ``FromHex::from_hex``
applied everything else and ``cargo test`` failed (E0599 no function ``from_hex`` for ``Vec<u8>``). A path through a
type from outside the repository that the trait is implemented for, in a macro's tokens, is ``medium``, as the same
path outside a macro is; a path through a type with no such impl stays ``low``."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env
from tests.runner_projects import cargo_lib_tests_pass

CARGO = "[package]\nname = \"rshex\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[dependencies]\n"
LIB = """pub trait FromHex: Sized {
    fn from_hex(s: &str) -> Result<Self, String>;
}

pub struct Token(pub Vec<u8>);

impl FromHex for Vec<u8> {
    fn from_hex(s: &str) -> Result<Self, String> {
        Ok(s.bytes().collect())
    }
}

impl FromHex for Token {
    fn from_hex(s: &str) -> Result<Self, String> {
        Vec::from_hex(s).map(Token)
    }
}

pub struct Other;

impl Other {
    pub fn from_hex(s: &str) -> usize {
        s.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        assert_eq!(Vec::from_hex("ab").unwrap(), b"ab");
        assert_eq!(std::vec::Vec::from_hex("ab").unwrap(), b"ab");
        assert_eq!(Token::from_hex("ab").unwrap().0, b"ab");
        assert_eq!(Other::from_hex("ab"), 2);
        assert_eq!(String::from_utf8(Vec::from_hex("ab").unwrap()).unwrap(), "ab");
    }
}
"""


def test_a_std_type_implementing_the_trait_is_a_path_to_its_method_in_a_macro(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": LIB}) as env:
        preview = env.service.rename("src/lib.FromHex.from_hex", "parse_hex")
        edits = {(e.line, e.column): (e.certainty, e.reason) for e in preview.edits if e.kind == "code"}
        assert edits[(33, 24)] == ("medium", "implementor_path"), preview.edits
        assert edits[(34, 34)] == ("medium", "implementor_path"), preview.edits
        assert edits[(37, 42)] == ("medium", "implementor_path"), preview.edits
        assert edits[(36, 26)][0] == "low", preview.edits  # ``Other::from_hex``: no impl of the trait for Other
        env.service.apply(preview.refactor_id)
        assert "assert_eq!(Vec::parse_hex(\"ab\").unwrap(), b\"ab\");" in env.read("src/lib.rs")
        assert "assert_eq!(Other::from_hex(\"ab\"), 2);" in env.read("src/lib.rs")
        cargo_lib_tests_pass(env.root, tmp_path / "target")
