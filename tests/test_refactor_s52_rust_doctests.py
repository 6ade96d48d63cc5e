"""Rust doctests (QA 45 F8): renaming a method edits, in its doctests, the method (``.perimeter()``,
``Sq::perimeter``) and nothing the doctest names itself: a ``let perimeter`` local and its uses, a closure's
parameter, and the inside of a string literal stay as written (``low``, left by ``apply_docs``), so the doctests
still pass after the rename is applied with its docs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.refactor_builders import refactor_env

CARGO = "[package]\nname = \"rsdoc\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[dependencies]\n"

LIB = """pub struct Sq {
    pub side: f64,
}

impl Sq {
    /// ```
    /// let perimeter = rsdoc::Sq { side: 2.0 }.perimeter();
    /// assert_eq!(perimeter, 8.0);
    /// let twice = |perimeter: f64| perimeter * 2.0;
    /// assert_eq!(twice(rsdoc::Sq::perimeter(&rsdoc::Sq { side: 1.0 })), 8.0);
    /// assert_eq!(rsdoc::describe(&rsdoc::Sq { side: 2.0 }), "perimeter=8");
    /// # let sq = rsdoc::Sq { side: 3.0 };
    /// # assert_eq!(sq.perimeter(), 12.0);
    /// ```
    pub fn perimeter(&self) -> f64 {
        4.0 * self.side
    }
}

pub fn describe(sq: &Sq) -> String {
    format!("perimeter={}", sq.perimeter())
}
"""


def test_rust_doctest_locals_and_strings_are_not_renamed_with_the_method(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": LIB}) as env:
        preview = env.service.rename("src/lib.Sq.perimeter", "boundary")
        page = env.service.inspect(preview.refactor_id, certainties=("high", "medium", "low"), kinds=("doc",))
        docs = sorted((i.edit.line, i.edit.column, i.edit.certainty) for i in page.items
                      if i.edit.reason == "doctest")
        assert docs == [(7, 12, "low"), (7, 48, "high"), (8, 19, "low"), (9, 21, "low"), (9, 37, "low"),
                        (10, 36, "high"), (11, 63, "low"), (13, 24, "high")], page.items
        env.service.apply(preview.refactor_id, apply_docs=True)
        text = env.read("src/lib.rs")
        assert "/// let perimeter = rsdoc::Sq { side: 2.0 }.boundary();\n    /// assert_eq!(perimeter, 8.0);" in text
        assert "|perimeter: f64| perimeter * 2.0" in text and "rsdoc::Sq::boundary(&" in text, text
        assert '"perimeter=8");' in text and "# assert_eq!(sq.boundary(), 12.0);" in text, text
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        env_vars = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true"}
        tested = subprocess.run(["cargo", "test", "--offline", "--quiet", "--doc"], cwd=env.root, env=env_vars,
                                capture_output=True, text=True, timeout=300, check=False)
        assert tested.returncode == 0, tested.stdout + tested.stderr
