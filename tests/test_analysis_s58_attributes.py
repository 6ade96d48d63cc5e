"""QA65 F1: ``semantic_diff`` missed edits to Rust attributes. ``#[cfg(feature = "qa")]`` added above ``pub fn new``
takes the function out of the default build, yet the file was ``no_definition_changed``: a definition's own lines
took only ``@`` decorators from above its keyword. Attributes (Rust's ``#[...]``, ``@`` decorators and
annotations), with the comments between them and the definition, are its own lines in every language."""

from __future__ import annotations

from codeplane.analysis.compare import Version, compare
from codeplane.analysis.facts import file_defs
from codeplane.analysis.models import Change


def _diff(path: str, before: str, after: str) -> dict[str, Change]:
    sides = [Version(path, file_defs(path, text.encode()).defs, text.split("\n")) for text in (before, after)]
    return {c.qualified_name: c for c in compare(sides[0], sides[1])}


RUST = "pub struct B;\nimpl B {{\n{attrs}    pub fn new() -> B {{\n        B\n    }}\n}}\n"


def test_a_rust_attribute_added_above_a_method_is_a_change_of_it() -> None:
    found = _diff("src/lib.rs", RUST.format(attrs="    #[inline]\n"),
                  RUST.format(attrs='    #[inline]\n    #[deprecated]\n    #[cfg(feature = "qa")]\n'))
    new = found["B.new"]
    assert (new.change, new.lines_changed) == ("body_changed", 2), found
    assert new.preview == ("+    #[deprecated]", '+    #[cfg(feature = "qa")]')


def test_a_rust_attribute_edited_and_a_multi_line_one_are_changes() -> None:
    edited = _diff("src/lib.rs", RUST.format(attrs="    #[inline]\n"), RUST.format(attrs="    #[inline(never)]\n"))
    assert edited["B.new"].preview == ("-    #[inline]", "+    #[inline(never)]"), edited
    multi = ('    #[cfg(all(\n        feature = "{}",\n        unix,\n    ))]\n')
    found = _diff("src/lib.rs", RUST.format(attrs=multi.format("a")), RUST.format(attrs=multi.format("b")))
    assert found["B.new"].preview == ('-        feature = "a",', '+        feature = "b",'), found


def test_a_comment_between_an_attribute_and_its_item_is_a_comments_only_change() -> None:
    found = _diff("src/lib.rs", RUST.format(attrs="    #[inline]\n    // fast\n"),
                  RUST.format(attrs="    #[inline]\n    // faster\n"))
    assert (found["B.new"].change, found["B.new"].delta_tags) == ("body_changed", ("comments_only",)), found


def test_an_attribute_above_a_struct_is_its_own_and_an_inner_attribute_is_not() -> None:
    base = "#![allow(dead_code)]\n\n{derive}struct C;\n"
    found = _diff("src/lib.rs", base.format(derive="#[derive(Debug)]\n"), base.format(derive="#[derive(Clone)]\n"))
    assert found["C"].preview == ("-#[derive(Debug)]", "+#[derive(Clone)]"), found
    # The file's inner attribute belongs to the crate, not to the first item below it.
    crate = _diff("src/lib.rs", "#![allow(dead_code)]\nstruct C;\n", "#![allow(unused)]\nstruct C;\n")
    assert "C" not in crate, crate


def test_decorators_with_a_comment_between_them_and_the_definition_are_its_own() -> None:
    py = "@staticmethod\n# {}\ndef has(x):\n    return x\n"
    found = _diff("pkg/m.py", py.format("note"), py.replace("@staticmethod", "@classmethod").format("note"))
    assert found["has"].preview == ("-@staticmethod", "+@classmethod"), found
    ts = "export class S {{\n  @{}\n  // why\n  area(): number {{\n    return 1;\n  }}\n}}\n"
    found = _diff("src/s.ts", ts.format("logged"), ts.format("traced"))
    assert found["S.area"].preview == ("-  @logged", "+  @traced"), found


def test_a_one_line_decorated_field_is_not_the_next_fields_decorator() -> None:
    ts = "export class C {{\n  @Input({}) a: string;\n  b: string;\n}}\n"
    found = _diff("src/c.ts", ts.format(""), ts.format("'x'"))
    assert set(found) == {"C.a"}, found
