"""Renames across files in Go (and Rust) are high-certainty edits, and the renamed project still builds
with the language's own compiler when it is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.refactor_builders import RefactorEnv, refactor_env

GO_PROJECT = {
    "go.mod": "module example.com/shop\n\ngo 1.18\n",
    "cart/cart.go": "package cart\n\n// Cart holds items.\ntype Cart struct{ Items []int }\n\n"
                    "func (c *Cart) Add(i int) { c.Items = append(c.Items, i) }\n\n"
                    "func New() *Cart { return &Cart{Items: nil} }\n",
    "cart/total.go": "package cart\n\nconst Limit = 10\n\nfunc Total(c *Cart) int {\n\tn := 0\n"
                     "\tfor _, i := range c.Items {\n\t\tn += i\n\t}\n\treturn n\n}\n\n"
                     "func capped(c *Cart) bool { return Total(c) > Limit }\n",
    "cart/total_test.go": "package cart\n\nimport \"testing\"\n\nfunc TestTotal(t *testing.T) {\n"
                          "\tc := New()\n\tc.Add(2)\n\tif Total(c) != 2 || capped(c) {\n"
                          "\t\tt.Fatal(Total(c))\n\t}\n}\n",
    "cmd/shop/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\tbasket \"example.com/shop/cart\"\n"
                        "\t\"example.com/shop/report\"\n)\n\nfunc main() {\n\tc := basket.New()\n\tc.Add(3)\n"
                        "\tvar keep *basket.Cart = c\n"
                        "\tfmt.Println(report.Line(keep), basket.Total(c), basket.Limit)\n}\n",
    "report/report.go": "package report\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/shop/cart\"\n)\n\n"
                        "// Line renders a cart.\nfunc Line(c *cart.Cart) string {\n"
                        "\treturn fmt.Sprintf(\"%d/%d\", cart.Total(c), cart.Limit)\n}\n",
}


def _go(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
           "GOCACHE": str(root.parent / "gocache"), "GOPATH": str(root.parent / "gopath")}
    return subprocess.run(["go", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)


def _rename_all_high(env: RefactorEnv, symbol: str, new_name: str, old_name: str) -> None:
    preview = env.service.rename(symbol, new_name)
    assert preview.status == "ready", preview
    assert {e.certainty for e in preview.edits if e.kind == "code"} == {"high"}, [
        (e.path, e.line, e.column, e.certainty, e.reason) for e in preview.edits]
    env.service.apply(preview.refactor_id)
    for path in env.snapshot():
        if path.endswith(".go"):
            text = env.read(path)
            assert f".{old_name}(" not in text and f" {old_name}(" not in text, (path, text)


@pytest.mark.parametrize(("symbol", "new_name", "old_name"), [
    ("cart.Total", "Sum", "Total"),
    ("cart.Cart", "Basket", "Cart"),
    ("cart.Limit", "Max", "Limit"),
    ("cart.New", "Make", "New"),
    ("report.Line", "Render", "Line"),
])
def test_go_renames_across_packages_are_high_and_build(tmp_path: Path, symbol: str, new_name: str,
                                                      old_name: str) -> None:
    with refactor_env(tmp_path / "repo", GO_PROJECT) as env:
        _rename_all_high(env, symbol, new_name, old_name)
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr
        tested = _go(env.root, "test", "./cart/")
        assert tested.returncode == 0, tested.stdout + tested.stderr


def test_go_rename_that_unexports_a_name_other_packages_use_is_refused(tmp_path: Path) -> None:
    """``cart.Limit`` → ``max``: every edit was high and the plan applied cleanly, but ``basket.max`` in another
    package is no longer visible there (``undefined: basket.max``). Refused with 4006 naming a use; a name only its
    own package uses may go lower-case."""
    with refactor_env(tmp_path / "repo", GO_PROJECT) as env:
        with pytest.raises(CodePlaneError) as refused:
            env.service.rename("cart.Limit", "max")
        assert refused.value.code == 4006 and "unexport" in refused.value.message
        assert any(u.startswith(("cmd/shop/main.go:", "report/report.go:")) for u in refused.value.details["uses"])
        preview = env.service.rename("cart.capped", "overLimit")  # unexported already: no rule applies
        assert preview.status == "ready"


def test_go_rename_onto_a_name_another_file_of_the_package_declares_is_a_collision(tmp_path: Path) -> None:
    """Go declares a package's names, and a type's methods and fields, once across the package's files: renaming
    ``cart.Total`` (total.go) to ``New`` (cart.go) or ``Cart.Add`` to ``String`` built ``New redeclared in this
    block`` with a "ready" plan. Each is a collision at the existing declaration, and refactor_apply refuses it."""
    method = "\nfunc (c *Cart) String() string { return \"\" }\n"
    files = {**GO_PROJECT, "cart/cart.go": GO_PROJECT["cart/cart.go"] + method}
    with refactor_env(tmp_path / "repo", files) as env:
        for symbol, new_name, existing in [("cart.Total", "New", ("cart/cart.go", 8)),
                                           ("cart.Cart.Add", "String", ("cart/cart.go", 10)),
                                           ("cart.capped", "Cart", ("cart/cart.go", 4))]:
            preview = env.service.rename(symbol, new_name)
            assert [(c.path, c.line) for c in preview.collisions] == [existing], (symbol, preview.collisions)
            with pytest.raises(CodePlaneError) as refused:
                env.service.apply(preview.refactor_id)
            assert refused.value.code == 4007
        ok = env.service.rename("cart.Total", "Sum")  # a name the package does not declare
        assert not ok.collisions and ok.status == "ready"


RUST_PROJECT = {
    "Cargo.toml": "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    "src/lib.rs": "pub mod cart;\npub mod util;\n\nuse crate::cart::Cart;\n\n"
                  "pub fn run() -> i32 {\n    let c = Cart::new();\n    util::total(&c) + cart::LIMIT\n}\n",
    "src/cart/mod.rs": "pub mod item;\n\npub const LIMIT: i32 = 3;\n\n"
                       "pub struct Cart {\n    pub items: Vec<i32>,\n}\n\n"
                       "impl Cart {\n    pub fn new() -> Self {\n        Cart { items: vec![] }\n    }\n}\n",
    "src/cart/item.rs": "use super::Cart;\nuse crate::util::total as sum;\n\n"
                        "pub fn count(c: &Cart) -> i32 {\n    sum(c)\n}\n",
    "src/util.rs": "use crate::cart::{Cart, LIMIT};\n\npub fn total(c: &Cart) -> i32 {\n"
                   "    c.items.iter().sum::<i32>().min(LIMIT)\n}\n\n"
                   "pub fn twice(c: &Cart) -> i32 {\n    self::total(c) * 2 + crate::cart::item::count(c)\n}\n",
}


@pytest.mark.parametrize(("symbol", "new_name", "old_name"), [
    ("src/util.total", "sum_all", "total"),
    ("src/cart/mod.Cart", "Basket", "Cart"),
    ("src/cart/mod.LIMIT", "MAX", "LIMIT"),
    ("src/cart/item.count", "tally", "count"),
    ("src/cart/mod.Cart.new", "empty", "new"),
])
def test_rust_renames_across_modules_are_high_and_check(tmp_path: Path, symbol: str, new_name: str,
                                                        old_name: str) -> None:
    with refactor_env(tmp_path / "repo", RUST_PROJECT) as env:
        _rename_all_high(env, symbol, new_name, old_name)
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        env_vars = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true"}
        checked = subprocess.run(["cargo", "check", "--offline", "--quiet"], cwd=env.root, env=env_vars,
                                 capture_output=True, text=True, timeout=300, check=False)
        assert checked.returncode == 0, checked.stderr


def test_go_method_rename_warns_of_the_repositorys_interfaces_requiring_it(tmp_path: Path) -> None:
    """``Cart.Sum`` → ``Amount`` broke ``*cart.Cart does not implement Summer``: Go types satisfy interfaces
    implicitly, so nothing links them; the preview says so (and ``apply: true`` holds back)."""
    files = {**GO_PROJECT, "report/sum.go": "package report\n\ntype Adder interface {\n\tAdd(i int)\n}\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("cart.Cart.Add", "Put")
        assert preview.warnings == ["cart.Cart.Add may satisfy report.Adder (report/sum.go:3), which requires Add: "
                                    "a type that satisfies it stops doing so after the rename"], preview.warnings
        assert not env.service.rename("cart.Total", "Sum").warnings  # a function: no interface requires it


TRAIT_PROJECT = {
    "Cargo.toml": "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    "src/lib.rs": "pub mod count;\npub mod stock;\n\nuse crate::count::Counted;\n\n"
                  "pub fn total(items: &[&dyn Counted]) -> u64 {\n    items.iter().map(|c| c.count()).sum()\n}\n",
    "src/count.rs": "pub trait Counted {\n    fn count(&self) -> u64;\n    fn twice(&self) -> u64 {\n"
                    "        self.count() * 2\n    }\n}\n",
    "src/stock.rs": "use crate::count::Counted;\n\npub struct Stock {\n    pub n: u64,\n}\n\n"
                    "impl Counted for Stock {\n    fn count(&self) -> u64 {\n        self.n\n    }\n}\n\n"
                    "pub struct Square(pub u64);\n\nimpl Counted for Square {\n    fn count(&self) -> u64 {\n"
                    "        self.0 * self.0\n    }\n}\n\n"
                    "pub fn demo() -> u64 {\n    let s = Stock { n: 3 };\n    s.count() + Square(2).twice()\n}\n",
}


@pytest.mark.parametrize("symbol", ["Counted.count", "src/stock.Stock.count"])
def test_rust_trait_method_rename_renames_every_impl_of_it(tmp_path: Path, symbol: str) -> None:
    """``impl Counted for Stock { fn count .. }`` implements ``Counted::count``: renaming the trait's method left
    both impls behind (``low other_binding``: E0407, E0046), and renaming an impl's alone broke it the same way.
    Either way the trait's method and every impl of it are renamed, high, and the crate still checks."""
    with refactor_env(tmp_path / "repo", TRAIT_PROJECT) as env:
        preview = env.service.rename(symbol, "tally")
        by_pos = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits}
        assert by_pos[("src/count.rs", 2, 7)] == ("high", "definition"), by_pos
        assert by_pos[("src/stock.rs", 8, 7)] == ("high", "override") and by_pos[("src/stock.rs", 16, 7)] == (
            "high", "override"), by_pos
        if symbol != "Counted.count":
            assert any("overrides src/count.Counted.count" in w for w in preview.warnings), preview.warnings
        env.service.apply(preview.refactor_id)
        assert "fn count" not in env.read("src/stock.rs") and "s.tally()" in env.read("src/stock.rs")
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        env_vars = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true"}
        checked = subprocess.run(["cargo", "check", "--offline", "--quiet"], cwd=env.root, env=env_vars,
                                 capture_output=True, text=True, timeout=300, check=False)
        assert checked.returncode == 0, checked.stderr


CFG_PROJECT = {
    "Cargo.toml": "[package]\nname = \"semverish\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    "src/lib.rs": "pub struct VersionReq {\n    pub n: u32,\n}\n\n"
                  "impl VersionReq {\n    pub const STAR: VersionReq = VersionReq { n: 0 };\n}\n",
    "tests/node/mod.rs": "pub(super) struct VersionReq(pub semverish::VersionReq);\n\n"
                         "impl VersionReq {\n    pub const STAR: Self = VersionReq(semverish::VersionReq::STAR);\n}\n",
    "tests/req.rs": "mod node;\n\n#[cfg(test_node_semver)]\nuse node::VersionReq;\n"
                    "#[cfg(not(test_node_semver))]\nuse semverish::VersionReq;\n\n"
                    "#[test]\nfn star() {\n    let _r: VersionReq = VersionReq::STAR;\n}\n",
}


def test_rust_use_under_opposite_cfgs_keeps_its_local_name_with_an_alias(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CFG_PROJECT) as env:
        preview = env.service.rename("src/lib.VersionReq", "Requirement")
        lows = sorted((e.path, e.line, e.reason) for e in preview.edits if e.certainty == "low")
        # The other cfg's import and the wrapper's own type are other bindings; the uses of the contested name
        # are kept, whichever cfg is compiled.
        assert lows == [("tests/node/mod.rs", line, "other_binding") for line in (1, 3, 4)] + [
            ("tests/req.rs", 4, "other_binding")], preview.edits
        assert preview.coverage is not None and preview.coverage.kept == ["tests/req.rs:10:12", "tests/req.rs:10:25"]
        env.service.apply(preview.refactor_id)
        assert "use semverish::Requirement as VersionReq;\n" in env.read("tests/req.rs")
        assert "let _r: VersionReq = VersionReq::STAR;" in env.read("tests/req.rs")
        assert env.read("tests/node/mod.rs").startswith("pub(super) struct VersionReq(pub semverish::Requirement);")
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        for flags in ("", "--cfg test_node_semver"):
            env_vars = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true",
                        "RUSTFLAGS": flags}
            checked = subprocess.run(["cargo", "check", "--tests", "--offline", "--quiet"], cwd=env.root,
                                     env=env_vars, capture_output=True, text=True, timeout=300, check=False)
            assert checked.returncode == 0, (flags, checked.stderr)


MEMBERS_PROJECT = {
    "Cargo.toml": "[package]\nname = \"semverish\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    "src/lib.rs": "//! ```\n//! let v = semverish::Version::parse(\"1\");\n"
                  "//! let r = semverish::Req::parse(\"1\");\n//! assert_eq!(r.major, 1);\n//! ```\n\n"
                  "pub struct Version {\n    pub major: u64,\n}\n\npub struct Req {\n    pub major: u64,\n}\n\n"
                  "impl Version {\n    pub fn parse(text: &str) -> Version {\n"
                  "        let major = text.len() as u64;\n        Version { major }\n    }\n\n"
                  "    pub fn bumped(&self) -> Version {\n        let Version { major } = self;\n"
                  "        assert!(self.major < 100, \"{}\", self.major);\n        Version { major: major + 1 }\n"
                  "    }\n}\n\nimpl Req {\n    pub fn parse(text: &str) -> Req {\n"
                  "        Req { major: text.len() as u64 }\n    }\n\n"
                  "    pub fn matches(&self, v: &Version) -> bool {\n        self.major == v.major\n    }\n}\n\n"
                  "/// ```\n/// # fn f(major: u64) -> semverish::Version {\n/// semverish::Version {\n///     major,\n"
                  "/// }\n/// # }\n/// ```\npub fn documented() {}\n",
    "tests/it.rs": "use semverish::{Req, Version};\n\n#[test]\nfn t() {\n    let v = Version::parse(\"ab\");\n"
                   "    let w: Version = v.bumped();\n    assert!(Req::parse(\"abc\").matches(&w));\n"
                   "    assert_eq!(w.major, 3);\n}\n",
}


def _cargo_test(root: Path, target: Path) -> subprocess.CompletedProcess[str]:
    env_vars = {**os.environ, "CARGO_TARGET_DIR": str(target), "CARGO_NET_OFFLINE": "true"}
    return subprocess.run(["cargo", "test", "--offline", "--quiet"], cwd=root, env=env_vars, capture_output=True,
                          text=True, timeout=300, check=False)


def test_rust_field_rename_reaches_literals_patterns_macros_and_shorthand_keys(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", MEMBERS_PROJECT) as env:
        preview = env.service.rename("src/lib.Version.major", "level")
        code = {(e.path, e.line, e.certainty, e.new_text) for e in preview.edits if e.kind == "code"}
        assert ("src/lib.rs", 18, "high", "level: major") in code  # ``Version { major }``: the variable stays
        assert ("src/lib.rs", 22, "high", "level: major") in code  # ``let Version { major } = self``
        assert {c for _, _, c, _ in code if c != "low"} == {"high"}
        lows = sorted((e.line, e.column) for e in preview.edits if e.kind == "code" and e.certainty == "low")
        # Req's own field (declaration, literal key, self.major), the local variables named major
        assert lows == [(12, 8), (17, 12), (24, 25), (30, 14), (34, 13)], lows
        page = env.service.inspect(preview.refactor_id, certainties=("high", "medium", "low"), kinds=("doc",))
        docs = {(i.edit.line, i.edit.certainty, i.edit.new_text) for i in page.items if i.edit.reason == "doctest"}
        # a doctest's shorthand key of Version's literal keeps its variable; the parameter named major is not ours
        assert docs == {(4, "low", "level"), (39, "low", "level"), (41, "high", "level: major")}, docs
        env.service.apply(preview.refactor_id, apply_docs=True)
        text = env.read("src/lib.rs")
        assert "assert!(self.level < 100, \"{}\", self.level);" in text
        assert "self.major == v.level" in text
        assert "assert_eq!(w.level, 3);" in env.read("tests/it.rs")
        assert "assert_eq!(r.major, 1);" in text  # a doctest's ``r.major``: Req also has one, so it is left
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        tested = _cargo_test(env.root, tmp_path / "target")
        assert tested.returncode == 0, tested.stdout + tested.stderr


def test_rust_method_rename_leaves_another_types_method_in_a_doctest(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", MEMBERS_PROJECT) as env:
        preview = env.service.rename("src/lib.Version.parse", "from_text")
        page = env.service.inspect(preview.refactor_id, certainties=("high", "medium", "low"), kinds=("doc",))
        docs = {(i.edit.line, i.edit.certainty) for i in page.items if i.edit.reason == "doctest"}
        assert docs == {(2, "high"), (3, "low")}, page.items
        env.service.apply(preview.refactor_id, apply_docs=True)
        assert "semverish::Req::parse(\"1\")" in env.read("src/lib.rs")
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        tested = _cargo_test(env.root, tmp_path / "target")
        assert tested.returncode == 0, tested.stdout + tested.stderr


GO_FIELDS = {
    "go.mod": "module example.com/shop\n\ngo 1.18\n",
    "cart/cart.go": "package cart\n\ntype Cart struct {\n\tName  string\n\tItems []int\n}\n",
    "report/report.go": "package report\n\nimport (\n\t\"os\"\n\n\t\"example.com/shop/cart\"\n)\n\n"
                        "func Make() *cart.Cart {\n\treturn &cart.Cart{Name: \"a\", Items: nil}\n}\n\n"
                        "func Title(f *os.File, c cart.Cart) string {\n\treturn f.Name() + c.Name\n}\n\n"
                        "func Label(v interface{}) string {\n\treturn v.(*cart.Cart).Name + v.(*cart.Cart).Name\n}\n",
}


def test_go_field_rename_reaches_literal_keys_and_leaves_an_outside_types_member(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", GO_FIELDS) as env:
        preview = env.service.rename("cart.Cart.Name", "Title")
        edits = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits if e.kind == "code"}
        assert edits[("report/report.go", 10, 19)] == ("high", "strong")  # &cart.Cart{Name: ...}
        assert edits[("report/report.go", 14, 10)] == ("low", "other_binding")  # f *os.File: f.Name()
        assert edits[("report/report.go", 14, 21)] == ("high", "strong")  # c cart.Cart
        env.service.apply(preview.refactor_id)
        assert "return f.Name() + c.Title" in env.read("report/report.go")
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr


GO_EQUAL = {
    "go.mod": "module example.com/shop\n\ngo 1.18\n",
    "cmp/cmp.go": "package cmp\n\n// Equal compares.\nfunc Equal(a, b int) bool { return a == b }\n",
    "cmp/result.go": ("package cmp\n\nimport \"bytes\"\n\ntype Result struct{ N int }\n\n"
                      "func (r Result) Equal() bool { return r.N == 0 }\n\n"
                      "type holder struct{ res Result }\n\n"
                      "func check(h holder, f func() Result) bool {\n"
                      "\treturn h.res.Equal() && f().Equal() && bytes.Equal(nil, nil) && Equal(1, 1)\n}\n"),
    "report/report.go": ("package report\n\nimport (\n\tc \"example.com/shop/cmp\"\n\t\"example.com/shop/other\"\n)\n\n"
                         "func Same(x, y int) bool {\n\treturn c.Equal(x, y) && other.Equal(x)\n}\n"),
    "other/other.go": "package other\n\nfunc Equal(x int) bool { return x == 0 }\n",
}


def test_go_package_function_rename_sets_aside_members_of_other_values_and_packages(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", GO_EQUAL) as env:
        preview = env.service.rename("Equal", "Match", path="cmp/cmp.go")
        code = {(e.path, e.line, e.column): (e.certainty, e.reason) for e in preview.edits if e.kind == "code"}
        assert {k for k, v in code.items() if v[0] != "low"} == {("cmp/cmp.go", 4, 5), ("cmp/result.go", 12, 65),
                                                                 ("report/report.go", 9, 10)}, code
        # r.Equal's method, h.res.Equal(), f().Equal(), bytes.Equal, other.Equal and other's own Equal: none is it
        assert not any(v[0] == "low" for v in code.values()), code
        assert preview.coverage is not None and preview.coverage.by_reason.get("other_symbol") == 6, preview.coverage
        assert preview.coverage.set_aside == ["cmp/result.go:7:16", "cmp/result.go:12:14", "cmp/result.go:12:29",
                                              "cmp/result.go:12:46", "other/other.go:3:5", "report/report.go:9:31"]
        env.service.apply(preview.refactor_id)
        assert "return c.Match(x, y) && other.Equal(x)" in env.read("report/report.go")
        assert "h.res.Equal() && f().Equal() && bytes.Equal(nil, nil) && Match(1, 1)" in env.read("cmp/result.go")
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr


def _build_and_run(root: Path, compiler: str, source: str, *flags: str) -> str:
    """Compile ``source`` in ``root`` (it must build) and return what the program prints."""
    built = subprocess.run([compiler, *flags, "-o", "prog", source], cwd=root, capture_output=True, text=True,
                           check=False)
    assert built.returncode == 0, built.stderr
    return subprocess.run(["./prog"], cwd=root, capture_output=True, text=True, check=True).stdout


C_SOURCE = ("#include <stdio.h>\n#define TWICE(x) ((x) * 2)\nstatic int helper(void);\nint limit = 3;\n"
            "#ifdef FAST\nstatic int pick(void) { return 1; }\n#else\nstatic int pick(void) { return 2; }\n#endif\n"
            "static int helper(void) { return limit + pick() + TWICE(1); }\n"
            "int main(void) { printf(\"%d\\n\", helper()); return 0; }\n")


@pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler builds the renamed file")
def test_c_file_scope_names_are_renamed_with_their_uses_in_the_file(tmp_path: Path) -> None:
    """A C file's own functions, variables and macros were never resolved in it (the preprocessor may redefine a
    name), so renaming a ``static`` function renamed its definition and left its calls and prototype (``low``).
    A name the file defines is no macro there; several definitions (``#ifdef`` alternatives) are one function."""
    def run(root: Path) -> str:
        return _build_and_run(root, "cc", "m.c")

    with refactor_env(tmp_path / "repo", {"m.c": C_SOURCE}) as env:
        assert run(env.root) == "7\n"
        for old, new in (("m.c:10:11", "compute"), ("m.c:4:4", "ceiling"), ("m.c:2:8", "DOUBLE")):
            preview = env.service.rename(old, new)
            assert not preview.counts.get("low"), (old, preview.edits)
            env.service.apply(preview.refactor_id)
        source = env.read("m.c")
        assert "static int compute(void);" in source and "printf(\"%d\\n\", compute())" in source
        assert "int ceiling = 3;" in source and "return ceiling + pick() + DOUBLE(1);" in source
        # ``#ifdef`` alternatives are one function: both definitions and the call are renamed
        pick = env.service.rename("m.c:6:11", "choose")
        assert {(e.line, e.certainty) for e in pick.edits} == {(6, "high"), (8, "high"), (10, "high")}, pick.edits
        env.service.apply(pick.refactor_id)
        assert run(env.root) == "7\n"
        assert _build_and_run(env.root, "cc", "m.c", "-DFAST") == "6\n"


CPP_SOURCE = ("#include <cstdio>\nstruct Counter {\n  int limit = 3;\n  int count;\n"
              "  explicit Counter(int count) : count(count) {}\n"
              "  int size() const { int limit = 1; return limit + this->limit * 2 + count; }\n"
              "  void bump() { count += limit; }\n  int twice() const;\n};\n"
              "int Counter::twice() const { return size() * 2 + limit; }\n"
              "int main() {\n  Counter k(1);\n  k.bump();\n"
              "  std::printf(\"%d %d %d\\n\", k.limit, k.size(), k.twice());\n  return 0;\n}\n")


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed file")
def test_cpp_members_used_in_methods_are_renamed_with_the_member(tmp_path: Path) -> None:
    """A C++ class bound nothing in its body, so a field or method used unqualified in a method (written in the
    class or outside it, ``int Counter::twice()``) was unresolved: renaming the field renamed its declaration and
    ``k.limit`` and the file no longer compiled. A member initialiser names the field even where a parameter of
    that name shadows it (``: count(count)``); a local of the member's name stays the local's."""
    def run(root: Path) -> str:
        return _build_and_run(root, "g++", "m.cpp")

    with refactor_env(tmp_path / "repo", {"m.cpp": CPP_SOURCE}) as env:
        assert run(env.root) == "3 11 25\n"
        for old, new in (("m.cpp:3:7", "ceiling"), ("m.cpp:4:7", "total"), ("m.cpp:6:7", "extent")):
            preview = env.service.rename(old, new)
            # only the parameter ``count``, the local ``limit`` of ``size`` and their uses (other bindings) are
            # listed, low, not applied
            assert {(e.line, e.column, e.reason) for e in preview.edits if e.certainty == "low"} <= {
                (5, 23, "other_binding"), (5, 38, "other_binding"), (6, 25, "other_binding"),
                (6, 43, "other_binding")}, (old, preview.edits)
            env.service.apply(preview.refactor_id)
        source = env.read("m.cpp")
        assert "explicit Counter(int count) : total(count) {}" in source
        assert "int extent() const { int limit = 1; return limit + this->ceiling * 2 + total; }" in source
        assert "void bump() { total += ceiling; }" in source
        assert "int Counter::twice() const { return extent() * 2 + ceiling; }" in source
        assert run(env.root) == "3 11 25\n"


CPP_BASES = ("#include <cstdio>\nstruct Base {\n  int limit = 3;\n  int size() const { return limit; }\n};\n"
             "template <class T> struct Holder { T limit; };\n"
             "struct Derived : public Base {\n  int twice() const { return limit * 2 + size(); }\n};\n"
             "template <class T> struct Wrapped : Holder<T> { T get() const { return this->limit; } };\n"
             "int main() {\n  Derived d; Wrapped<int> w; w.limit = 4;\n"
             "  std::printf(\"%d %d\\n\", d.twice(), w.get());\n  return 0;\n}\n")


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed file")
def test_cpp_members_of_a_base_class_the_file_defines_are_renamed_in_derived_methods(tmp_path: Path) -> None:
    """A derived class's method using its base's member unqualified (``limit`` in ``Derived::twice``) kept the old
    name when the base's member was renamed. A template's base (``Holder<T>``) is never looked in: C++ does not
    look in a dependent base, and its ``limit`` is another member."""
    def run(root: Path) -> str:
        return _build_and_run(root, "g++", "m.cpp")

    with refactor_env(tmp_path / "repo", {"m.cpp": CPP_BASES}) as env:
        assert run(env.root) == "9 4\n"
        for old, new in (("m.cpp:3:7", "ceiling"), ("m.cpp:4:7", "extent")):
            preview = env.service.rename(old, new)
            assert {(e.line, e.certainty) for e in preview.edits if e.line == 8} == {(8, "high")}, preview.edits
            env.service.apply(preview.refactor_id)
        source = env.read("m.cpp")
        assert "int twice() const { return ceiling * 2 + extent(); }" in source
        assert "template <class T> struct Holder { T limit; };" in source and "w.limit = 4;" in source
        assert run(env.root) == "9 4\n"


CPP_MACROS = ("#include <cstdio>\n#define MY_NOINLINE __attribute__((noinline))\n#define MY_RESTRICT __restrict__\n"
              "namespace fft {\nclass Blue {\n  int n, n2;\n  int plan;\n public:\n"
              "  MY_NOINLINE Blue(int length) : n(length), n2(n * 2 - 1), plan(n2) {\n    int coeff = 0;\n"
              "    plan += coeff;\n  }\n"
              "  int padded(const int * MY_RESTRICT extra) const { return n2 + plan + *extra; }\n};\n}\n"
              "int main() {\n  fft::Blue b(5);\n  int one = 1;\n  std::printf(\"%d\\n\", b.padded(&one));\n"
              "  return 0;\n}\n")


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed file")
def test_cpp_specifier_and_qualifier_macros_do_not_break_the_class(tmp_path: Path) -> None:
    """``MY_NOINLINE Blue(int length) : n(length), n2(...)`` parsed as a field with a bit width whose member
    initialisers were method declarations, and ``const int * MY_RESTRICT extra`` broke the class around it: ``n2``
    was a field and a method of ``fft.padded.Blue``, ambiguous, and renaming it left its uses (the build failed).
    A file that fails to parse is parsed again with such macros blanked, kept only when that has fewer errors."""
    def run(root: Path) -> str:
        return _build_and_run(root, "g++", "m.cpp")

    with refactor_env(tmp_path / "repo", {"m.cpp": CPP_MACROS}) as env:
        assert run(env.root) == "19\n"
        for old, new in (("fft.Blue.n2", "padded_size"), ("fft.Blue.plan", "schedule")):
            preview = env.service.rename(old, new)
            assert preview.status == "ready" and not preview.counts.get("low"), (old, preview.edits)
            env.service.apply(preview.refactor_id)
        source = env.read("m.cpp")
        assert "n(length), padded_size(n * 2 - 1), schedule(padded_size) {" in source
        assert "return padded_size + schedule + *extra;" in source and "schedule += coeff;" in source
        assert run(env.root) == "19\n"


CPP_ALTERNATIVES = ("#include <cstdio>\nstruct Limits {\n#ifdef FAST\n  static constexpr int kLimit = 1;\n#else\n"
                    "  static constexpr int kLimit = 2;\n#endif\n  int get() const { return kLimit * 10; }\n};\n"
                    "int main() { Limits l; std::printf(\"%d\\n\", l.get()); return 0; }\n")


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed file")
def test_cpp_member_declared_under_ifdef_alternatives_is_one_member_for_its_uses(tmp_path: Path) -> None:
    """Two declarations of one field in a class can only be ``#if`` alternatives (C++ allows no two members of one
    name but overloaded functions): the rename renamed both (``overload``) and left the uses, ambiguous, ``low``,
    so the applied rename did not compile under either alternative."""
    def run(root: Path, *flags: str) -> str:
        return _build_and_run(root, "g++", "m.cpp", *flags)

    with refactor_env(tmp_path / "repo", {"m.cpp": CPP_ALTERNATIVES}) as env:
        preview = env.service.rename("m.cpp:6:24", "kMax")
        assert {(e.line, e.certainty) for e in preview.edits} == {(4, "high"), (6, "high"), (8, "high")}, \
            preview.edits
        env.service.apply(preview.refactor_id)
        assert "return kMax * 10;" in env.read("m.cpp")
        assert run(env.root) == "20\n" and run(env.root, "-DFAST") == "10\n"


def test_go_type_rename_renames_the_fields_embedding_it_and_their_uses(tmp_path: Path) -> None:
    """``struct { basket.Cart }`` embeds a field named ``Cart``: renaming the type left the embedding as it was
    (``Cart not declared by package cart``). Each embedding is renamed, with its field's uses; a field merely
    named ``Cart`` and another package's embedded ``Cart`` keep their names."""
    files = {
        "go.mod": "module example.com/shop\n\ngo 1.18\n",
        "cart/cart.go": "package cart\n\ntype Cart struct{ Items []int }\n\n"
                        "func (c *Cart) Add(i int) { c.Items = append(c.Items, i) }\n\n"
                        "type Wrapped struct {\n\t*Cart `json:\"cart\"`\n}\n",
        "other/other.go": "package other\n\ntype Cart struct{ N int }\n",
        "store/store.go": "package store\n\nimport (\n\tbasket \"example.com/shop/cart\"\n"
                          "\t\"example.com/shop/other\"\n)\n\n"
                          "type Store struct {\n\tbasket.Cart\n\tName string\n}\n\n"
                          "type Shelf struct {\n\tother.Cart\n}\n\ntype Crate struct {\n\tCart basket.Cart\n}\n\n"
                          "func Fill(s *Store, sh *Shelf, cr *Crate) int {\n\ts.Cart.Add(1)\n\ts.Add(2)\n"
                          "\tcr.Cart.Add(3)\n\treturn len(s.Cart.Items) + sh.N + sh.Cart.N\n}\n\n"
                          "func Make() Store { return Store{Cart: basket.Cart{}, Name: \"x\"} }\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("cart.Cart", "Basket")
        assert preview.status == "ready", preview
        env.service.apply(preview.refactor_id)
        store, own = env.read("store/store.go"), env.read("cart/cart.go")
        assert "\tbasket.Basket\n" in store and "s.Basket.Add(1)" in store and "len(s.Basket.Items)" in store, store
        assert "Store{Basket: basket.Basket{}" in store, store
        assert "\tother.Cart\n" in store and "\tCart basket.Basket\n" in store, store
        assert "cr.Cart.Add(3)" in store and "sh.Cart.N" in store, store
        assert "\t*Basket `json:\"cart\"`\n" in own, own
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr
