"""QA65 F3: a constant whose value changed (``export const LIMIT = 12`` -> ``16``, Go ``const C = 1`` -> ``2``, Rust
``const N: usize = 4`` -> ``5``) was ``signature_changed``, breaking, in TS/Go/Rust, while the same edit in Python is a
body change: the stored header of a value runs on into its initializer. A value's signature is its name and
declared type; the initializer is its body, unless it gives the type (a function literal, a typed composite)."""

from __future__ import annotations

import pytest

from codeplane.analysis import report
from codeplane.analysis.compare import Version, compare
from codeplane.analysis.facts import file_defs
from codeplane.analysis.models import Change


def _diff(path: str, before: str, after: str) -> dict[str, Change]:
    sides = [Version(path, file_defs(path, text.encode()).defs, text.split("\n")) for text in (before, after)]
    return {c.qualified_name: report.assess(c, None) for c in compare(sides[0], sides[1])}


VALUE_EDITS = [
    ("src/c.ts", "export const LIMIT = {};\n", "12", "16", "LIMIT"),
    ("src/c.ts", "export let n: number = {};\n", "3", "4", "n"),
    ("src/c.ts", "export class K {{\n  static readonly Y = {};\n}}\n", "2", "3", "K.Y"),
    ("a.go", "package a\n\nconst QAConst = {}\n", "1", "2", "QAConst"),
    ("a.go", "package a\n\nvar W int = {}\n", "3", "4", "W"),
    ("src/lib.rs", "const I8_MAX_LEN: usize = {};\n", "4", "5", "I8_MAX_LEN"),
    ("src/lib.rs", 'static S: &str = "{}";\n', "x", "y", "S"),
    ("A.java", "class A {{\n  static final int X = {};\n}}\n", "1", "2", "A.X"),
    ("A.cs", "class A {{\n  const int X = {};\n}}\n", "1", "2", "A.X"),
]


@pytest.mark.parametrize(("path", "text", "old", "new", "name"), VALUE_EDITS)
def test_a_new_value_of_the_same_declared_type_is_a_minor_body_change(path: str, text: str, old: str, new: str,
                                                                       name: str) -> None:
    found = _diff(path, text.format(old), text.format(new))
    change = found[name]
    assert (change.change, change.delta_tags) == ("body_changed", ("minor_change",)), found
    assert (change.structural_severity, change.behavior_change_risk) == ("non_breaking", "low")


#: (path, text, name, the declared type before and after, the value before and after).
TYPE_EDITS = [
    ("src/c.ts", "export let n: {} = {};\n", "n", ("number", "string"), ("3", "4")),
    ("a.go", "package a\n\nvar W {} = {}\n", "W", ("int", "int64"), ("3", "4")),
    ("src/lib.rs", "const I8_MAX_LEN: {} = {};\n", "I8_MAX_LEN", ("usize", "u32"), ("4", "5")),
    ("A.java", "class A {{\n  static final {} X = {};\n}}\n", "A.X", ("int", "long"), ("1", "2")),
]


@pytest.mark.parametrize(("path", "text", "name", "types", "values"), TYPE_EDITS)
def test_only_the_declared_type_is_the_signature(path: str, text: str, name: str, types: tuple[str, str],
                                                 values: tuple[str, str]) -> None:
    old, new = types
    typed = _diff(path, text.format(old, values[0]), text.format(new, values[0]))[name]
    assert (typed.change, typed.structural_severity) == ("signature_changed", "breaking"), typed
    valued = _diff(path, text.format(old, values[0]), text.format(old, values[1]))[name]
    assert (valued.change, valued.structural_severity) == ("body_changed", "non_breaking"), valued


def test_a_go_value_without_a_declared_type_keeps_the_type_its_literal_spells() -> None:
    const = _diff("a.go", "package a\n\nconst C = 1\n", "package a\n\nconst C = 2\n")["C"]
    assert const.change == "body_changed", const
    # ``map[string]int{...}`` and ``func(x int) int {...}`` are the variables' types: changing them breaks users.
    literal = "package a\n\nvar V = map[string]{}{{{}}}\n"
    assert _diff("a.go", literal.format("int", '"a": 1'), literal.format("int", '"a": 2'))["V"].change == "body_changed"
    assert _diff("a.go", literal.format("int", ""), literal.format("string", ""))["V"].change == "signature_changed"
    func = "package a\n\nvar F = func(x {}) int {{ return {} }}\n"
    assert _diff("a.go", func.format("int", "1"), func.format("int", "2"))["F"].change == "body_changed"
    assert _diff("a.go", func.format("int", "1"), func.format("string", "1"))["F"].change == "signature_changed"
