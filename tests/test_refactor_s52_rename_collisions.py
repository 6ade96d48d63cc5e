"""Renames that looked "ready" yet broke the build or changed behaviour (QA45 F1-F3): onto a predeclared name a
use still means (Go's ``len``, TypeScript's ``Math``, Java's ``String``, Python's ``len``, Rust's ``Option``),
onto a name only a base class has (a silent override), and a Rust method onto another item of its type. Each is a
collision: listed in the preview, refused by ``refactor_apply`` with 4007, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.refactor.models import RefactorPreview
from tests.refactor_builders import RefactorEnv, refactor_env

GO = {
    "go.mod": "module example.com/ex\n\ngo 1.21\n",
    "p/a.go": "package p\n\nfunc uniqueVars(s []string) error { return nil }\n\n"
              "func Use(s []string) int {\n\t_ = uniqueVars(s)\n\treturn len(s)\n}\n\n"
              "type T struct{ n int }\n\nfunc (t T) Size() int { return t.n }\n",
    "p/b.go": "package p\n\nfunc other() string { return string(rune(65)) }\n",
    # An external test package sees none of p's package-level names: its ``len`` is never captured.
    "p/a_test.go": "package p_test\n\nimport \"example.com/ex/p\"\n\nfunc f() int { return cap(nil) + p.Use(nil) }\n",
}
TS = {
    "tsconfig.json": "{}\n",
    "src/shapes.ts": "export class Shape {\n  describe(): string { return 'shape'; }\n}\n"
                     "export class Square extends Shape {\n  summary(): string { return this.describe(); }\n"
                     "  area(): number { return Math.PI; }\n}\n",
    "src/use.ts": "import { Square } from './shapes';\nexport const s = new Square();\n"
                  "console.log(JSON.stringify(s.summary()));\n",
}
JAVA = {
    "src/com/acme/Item.java": "package com.acme;\n\npublic class Item {\n    String name = \"x\";\n}\n",
    "src/com/acme/Cart.java": "package com.acme;\n\npublic class Cart {\n    public void clear() { }\n"
                              "    int size;\n    public String label() { return \"c\"; }\n}\n",
    "src/com/acme/GiftCart.java": "package com.acme;\n\npublic class GiftCart extends Cart {\n"
                                  "    public void wipe() { clear(); }\n    public int count() { return size; }\n}\n",
}
PY = {
    "m.py": "def helper(xs):\n    return len(xs)\n\n\nclass Base:\n    def clear(self):\n        pass\n\n\n"
            "class Sub(Base):\n    def wipe(self):\n        self.clear()\n",
    "n.py": "from m import helper\n\nprint(helper([1]))\n",
}
OTHERS = {
    "src/A.kt": "package a\n\nopen class Cart {\n    open fun clear() {}\n}\n\n"
                "class Gift : Cart() {\n    fun wipe() { clear() }\n}\n",
    "src/b.php": "<?php\nclass Cart {\n    public function clear() {}\n}\nclass Gift extends Cart {\n"
                 "    public function wipe() { $this->clear(); }\n}\n",
    "src/C.cs": "namespace N {\n  public class Cart {\n    public virtual void Clear() {}\n  }\n"
                "  public class Gift : Cart {\n    public void Wipe() { Clear(); }\n  }\n}\n",
}
RUST = {
    "Cargo.toml": "[package]\nname = \"rsp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    "src/lib.rs": "pub trait Area {\n    fn area(&self) -> f64;\n}\n\n"
                  "pub struct Sq {\n    pub side: f64,\n}\n\n"
                  "impl Sq {\n    pub fn perimeter(&self) -> f64 {\n        4.0 * self.side\n    }\n}\n\n"
                  "impl Area for Sq {\n    fn area(&self) -> f64 {\n        self.side * self.side\n    }\n}\n\n"
                  "pub enum Either<L, R> {\n    Left(L),\n    Right(R),\n}\n\n"
                  "impl<L, R> Either<L, R> {\n    pub fn left(self) -> Option<L> {\n        None\n    }\n\n"
                  "    pub fn right(self) -> Option<R> {\n        None\n    }\n}\n\n"
                  "pub fn describe(sq: &Sq) -> String {\n    format!(\"{} {}\", sq.area(), sq.perimeter())\n}\n",
}


def _refused(env: RefactorEnv, preview: RefactorPreview) -> None:
    """``refactor_apply`` refuses the plan with 4007 and writes nothing."""
    before = env.snapshot()
    with pytest.raises(CodePlaneError) as refused:
        env.service.apply(preview.refactor_id)
    assert refused.value.code == 4007
    assert env.snapshot() == before


def _at(preview: RefactorPreview) -> list[tuple[str, int, str]]:
    return [(c.path, c.line, c.kind) for c in preview.collisions]


def test_go_rename_onto_a_predeclared_name_the_package_uses_is_a_collision(tmp_path: Path) -> None:
    """``uniqueVars`` → ``len`` made ``len(s)`` call it (gopls: "would shadow this reference to builtin len"),
    ``string`` broke ``string(rune(65))`` in another file of the package, and a package-level ``init`` may not
    take parameters nor be called. An unused predeclared name, and any name for a method, stay fine."""
    with refactor_env(tmp_path / "repo", GO) as env:
        cases = [("len", [("p/a.go", 7, "shadowed")]), ("string", [("p/a.go", 3, "shadowed"),
                                                                   ("p/b.go", 3, "shadowed")]),
                 ("init", [("p/a.go", 3, "shadowed")])]
        for new_name, expected in cases:
            preview = env.service.rename("p.uniqueVars", new_name)
            assert _at(preview) == expected, (new_name, preview.collisions)
        _refused(env, preview)
        for symbol, new_name in [("p.uniqueVars", "cap"), ("p.T.Size", "len")]:
            ok = env.service.rename(symbol, new_name)
            assert not ok.collisions and ok.status == "ready", (symbol, ok.collisions)


def test_ts_java_python_rename_onto_a_global_a_use_still_means_is_a_collision(tmp_path: Path) -> None:
    """TypeScript ``Square`` → ``Math`` (``Math.PI`` then reads the class: TS2339), → ``JSON`` in the importer
    that calls ``JSON.stringify``; Java ``Item`` → ``String`` (a class of the package hides ``java.lang.String``
    in each of its files); Python ``helper`` → ``len`` in its module, → ``print`` in the importer. A class member
    named ``Math`` is looked up in its object and hides nothing."""
    with refactor_env(tmp_path / "ts", TS) as env:
        assert _at(env.service.rename("src/shapes.Square", "Math")) == [("src/shapes.ts", 6, "shadowed")]
        preview = env.service.rename("src/shapes.Square", "JSON")
        assert _at(preview) == [("src/use.ts", 3, "shadowed")]
        _refused(env, preview)
        assert not env.service.rename("src/shapes.Square.area", "Math").collisions
    with refactor_env(tmp_path / "java", JAVA) as env:
        preview = env.service.rename("com.acme.Item", "String")
        assert _at(preview) == [("src/com/acme/Cart.java", 6, "shadowed"), ("src/com/acme/Item.java", 4, "shadowed")]
        assert "java.lang's String" in preview.collisions[0].detail
        _refused(env, preview)
    with refactor_env(tmp_path / "py", PY) as env:
        assert _at(env.service.rename("m.helper", "len")) == [("m.py", 2, "shadowed")]
        assert _at(env.service.rename("m.helper", "print")) == [("n.py", 3, "shadowed")]


def test_rust_rename_onto_a_prelude_name_a_use_still_means_is_a_collision(tmp_path: Path) -> None:
    """``Sq`` → ``Option`` would make ``Option<L>`` name the struct; → ``String`` the return type of
    ``describe``."""
    with refactor_env(tmp_path / "repo", RUST) as env:
        assert _at(env.service.rename("src/lib.Sq", "Option")) == [("src/lib.rs", 27, "shadowed")]
        assert _at(env.service.rename("src/lib.Sq", "String")) == [("src/lib.rs", 36, "shadowed")]


def test_subclass_method_renamed_onto_a_name_only_the_base_has_is_a_collision(tmp_path: Path) -> None:
    """``GiftCart.wipe`` → ``clear`` silently overrode ``Cart.clear`` (its body's ``clear()`` then recursed
    forever); TypeScript's ``Square.summary`` → ``describe`` too (TS4114); Python's ``Sub.wipe`` → ``clear``. A
    Java method may share its name with a base's field (they live apart). Kotlin, PHP and C# share the check."""
    with refactor_env(tmp_path / "java", JAVA) as env:
        preview = env.service.rename("com.acme.GiftCart.wipe", "clear")
        assert _at(preview) == [("src/com/acme/Cart.java", 4, "member")]
        assert "com.acme.Cart.clear" in preview.collisions[0].detail
        _refused(env, preview)
        assert not env.service.rename("com.acme.GiftCart.count", "size").collisions
    with refactor_env(tmp_path / "ts", TS) as env:
        assert _at(env.service.rename("src/shapes.Square.summary", "describe")) == [("src/shapes.ts", 2, "member")]
    with refactor_env(tmp_path / "py", PY) as env:
        assert _at(env.service.rename("m.Sub.wipe", "clear")) == [("m.py", 6, "member")]
    with refactor_env(tmp_path / "others", OTHERS) as env:
        for symbol, new_name, base in [("a.Gift.wipe", "clear", ("src/A.kt", 4, "member")),
                                       ("src/b.php:6:21", "clear", ("src/b.php", 3, "member")),
                                       ("N.Gift.Wipe", "Clear", ("src/C.cs", 3, "member"))]:
            assert _at(env.service.rename(symbol, new_name)) == [base], symbol


def test_rust_method_renamed_onto_another_item_of_its_type_is_a_collision(tmp_path: Path) -> None:
    """``Either.left`` → ``right`` is E0592 (two inherent ``right``); ``Sq.perimeter`` → ``area`` compiles but
    every ``sq.area()`` then calls the inherent method; the trait's ``Area.area`` (renamed with ``Sq``'s impl) →
    ``perimeter`` the same the other way round."""
    with refactor_env(tmp_path / "repo", RUST) as env:
        preview = env.service.rename("src/lib.Either.left", "right")
        assert _at(preview) == [("src/lib.rs", 31, "member")]
        _refused(env, preview)
        assert _at(env.service.rename("src/lib.Sq.perimeter", "area")) == [("src/lib.rs", 2, "member"),
                                                                           ("src/lib.rs", 16, "member")]
        assert _at(env.service.rename("src/lib.Area.area", "perimeter")) == [("src/lib.rs", 10, "member")]
        assert not env.service.rename("src/lib.Either.left", "first").collisions
