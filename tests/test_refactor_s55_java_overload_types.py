"""A Java method of one name and parameter count but another parameter type in a subclass is an overload, not an
override: renaming ``A.f(int)`` renamed ``B.f(String)`` (and ``b.f("s")``) as certain, counting parameters only. A
type variable stays unknown: ``H.f(String)`` overrides ``G<T>.f(T)`` and is renamed with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.refactor.facts import Def
from codeplane.refactor.javasig import different_signatures, parameter_types
from codeplane.refactor.spans import SourceText
from tests.refactor_builders import refactor_env
from tests.runner_projects import javac_run

P = "src/com/acme/"
FILES = {
    P + "A.java": "package com.acme;\n\npublic class A {\n    public String f(int x) {\n        return \"A\" + x;\n"
                  "    }\n}\n",
    P + "B.java": "package com.acme;\n\npublic class B extends A {\n    public String f(String s) {\n"
                  "        return \"B\" + s;\n    }\n}\n",
    P + "G.java": "package com.acme;\n\npublic class G<T> {\n    public String f(T x) {\n        return \"G\" + x;\n"
                  "    }\n}\n",
    P + "H.java": "package com.acme;\n\npublic class H extends G<String> {\n    @Override\n"
                  "    public String f(String x) {\n        return \"H\" + x;\n    }\n}\n",
    P + "Main.java": "package com.acme;\n\npublic class Main {\n    public static void main(String[] args) {\n"
                     "        A a = new A();\n        B b = new B();\n        G<String> g = new H();\n"
                     "        System.out.println(a.f(1) + b.f(\"s\") + g.f(\"q\"));\n    }\n}\n",
}


def test_a_subclass_method_of_another_parameter_type_is_not_renamed_with_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("com.acme.A.f", "g")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert (P + "B.java", 4) not in edits, edits
        assert edits[(P + "A.java", 4)] == ("high", "definition")
        line = FILES[P + "Main.java"].split("\n")[7]
        calls = {line[e.column - 2]: (e.certainty, e.reason) for e in preview.edits if e.path == P + "Main.java"}
        assert calls["a"] == ("high", "strong") and calls["b"] == ("low", "overload"), calls
        env.service.apply(preview.refactor_id)
        assert "public String f(String s)" in env.read(P + "B.java")
        assert "a.g(1)" in env.read(P + "Main.java") and "b.f(\"s\")" in env.read(P + "Main.java")
        assert javac_run(env.root) == "A1BsHq\n"


def test_an_override_through_a_type_variable_is_still_renamed_with_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("com.acme.G.f", "g")
        edits = {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}
        assert edits[(P + "H.java", 5)] == ("high", "override"), edits
        assert (P + "B.java", 4) not in edits or edits[(P + "B.java", 4)][0] == "low"
        env.service.apply(preview.refactor_id)
        assert javac_run(env.root) == "A1BsHq\n"


def _method(source: str) -> Def:
    line = next(i for i, text in enumerate(source.split("\n"), 1) if " m(" in text)
    column = source.split("\n")[line - 1].index(" m(") + 1  # 0-based, as the index's columns
    return Def(def_uid="0" * 16, path="X.java", language="java", kind="method", name="m", qualified_name="X.m",
               lexical_path="X.m", line=line, column=column, end_line=line, end_column=column, name_line=line,
               name_column=column, parent_uid=None, scope_id=None)


@pytest.mark.parametrize(("source", "expected"), [
    ("class X {\n  void m(final @Nullable java.util.List<Map<String, Integer>> items, int... n) {}\n}\n",
     ("List", "int[]")),
    ("class X {\n  void m(String args[], /* a, b */ char [] [] grid) {}\n}\n", ("String[]", "char[][]")),
    ("class X<K extends Comparable<K>> {\n  public <V> void m(K key, V value, Entry e) {}\n}\n",
     (None, None, "Entry")),
    ("class X {\n  void m(@Named(\"a,b\") String s, T t) {}\n}\n", ("String", None)),
    ("class X {\n  void m() {}\n}\n", ()),
])
def test_parameter_types_are_erased_simple_names_and_type_variables_are_unknown(
        source: str, expected: tuple[str | None, ...]) -> None:
    assert parameter_types(SourceText("X.java", source), _method(source)) == expected


def test_only_a_known_type_that_differs_makes_two_signatures() -> None:
    assert different_signatures(("int",), ("String",))
    assert not different_signatures((None,), ("String",))
    assert not different_signatures(("List", "int"), ("List", "int"))
    assert not different_signatures(None, ("int",)) and not different_signatures(("int",), ("int", "int"))
