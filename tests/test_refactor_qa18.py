"""QA18 (3, 4, 5, 7, 9): refactors in Java, Go and TypeScript checked with each language's own compiler.

- Java: a field renamed to a parameter's or local's name where the field is used bare (an implicit ``this``) is
  captured by it: a collision, as it is in TypeScript, Go and C++;
- Go: a name an import binds in the package, and a method promoted from an embedded field, are collisions; an
  interface's method is renamed with the methods implementing it (gopls does); ``T{...}.M()`` and ``b.Sq.M()``
  are linked;
- TypeScript: an overloaded function moves with its overload signatures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.refactor.models import RefactorPreview
from tests.builders import call, call_error, make_repo, mcp_client, running_server
from tests.refactor_builders import RefactorEnv, assert_tsc_passes, refactor_env


def _go(root: Path, *args: str) -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    done = subprocess.run(["go", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _java(root: Path, main: str) -> str:
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac is not installed")
    sources = [str(p.relative_to(root)) for p in sorted(root.rglob("*.java"))]
    built = subprocess.run(["javac", "-d", "out", *sources], cwd=root, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run(["java", "-cp", "out", main], cwd=root, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def _edits(preview: RefactorPreview) -> list[tuple[str, int, int, str, str]]:
    return sorted((e.path, e.line, e.column, e.certainty, e.reason) for e in preview.edits)


# -- 3: Java, a bare field use captured by a parameter or local ----------------------------------------------
JAVA = {
    "src/p/A.java": (
        "package p;\n\npublic class A {\n    public static final int MAX = 100;\n    int side = 1;\n\n"
        "    int scale(int f) { return side * f; }\n\n    int grow(int g) { return this.side + g; }\n\n"
        "    public static void main(String[] args) {\n"
        "        if (new A().scale(2) != 2) throw new AssertionError(\"scale\");\n"
        "        if (MAX != 100) throw new AssertionError(\"max\");\n"
        "        int area = new A().grow(1);\n        System.out.println(\"ok \" + area);\n    }\n}\n"),
    "src/q/Main.java": (
        "package q;\n\nimport static p.A.MAX;\n\npublic class Main {\n"
        "    static int twice() { int scale = 2; return MAX * scale; }\n\n"
        "    public static void main(String[] args) {\n        System.out.println(MAX + \" \" + twice());\n    }\n}\n"),
}
GO_CLASHES = {
    "go.mod": "module example.com/g\n\ngo 1.18\n",
    "shape/shape.go": "package shape\n\ntype Square struct{ Side float64 }\n\n"
                      "func (s Square) Area() float64 { return s.Side * s.Side }\n",
    "store/store.go": ("package store\n\nimport (\n\t\"strings\"\n\n\t\"example.com/g/shape\"\n)\n\n"
                       "type Store struct {\n\tshape.Square\n\titems []string\n}\n\n"
                       "func (s *Store) Add(x string) { s.items = append(s.items, strings.ToUpper(x)) }\n\n"
                       "func (s *Store) Sum() float64 { return s.Area() + float64(len(s.items)) }\n\n"
                       "func helper() string { return \"!\" }\n"),
    # An external test package: its ``fmt`` import is in another package's file block.
    "store/store_test.go": ("package store_test\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n\n"
                            "\t\"example.com/g/store\"\n)\n\n"
                            "func TestSum(t *testing.T) {\n\ts := &store.Store{}\n\ts.Add(fmt.Sprint(1))\n"
                            "\tif s.Sum() != 1 {\n\t\tt.Fatal()\n\t}\n}\n"),
}


@pytest.mark.anyio
async def test_java_field_renamed_to_a_name_a_bare_use_sees_bound_is_a_collision_refused_by_apply(
        tmp_path: Path) -> None:
    """``return side * f;`` became ``return f * f;`` (the parameter, compiled and ran wrong), and ``MAX`` inside
    ``main(String[] args)`` became ``args`` (javac: bad operand types): both were ``ready`` and applied. The same
    check in Go: an import's name in the package, and a method promoted from an embedded field."""
    repo = make_repo(tmp_path / "repo", {**JAVA, **GO_CLASHES})
    before = {p: (repo / p).read_text() for p in (*JAVA, *GO_CLASHES)}
    with running_server(repo, "--profile", "full") as handle:
        async with mcp_client(handle) as client:
            answers = {}
            for symbol, new_name in [("p.A.side", "f"), ("p.A.MAX", "args"), ("store.helper", "strings"),
                                     ("store.Store.Add", "Area")]:
                answers[symbol] = await call(client, "refactor_rename",
                                             {"symbol": symbol, "new_name": new_name, "apply": True})
            refused = await call_error(client, "refactor_apply", {"refactor_id": answers["p.A.side"]["refactor_id"]})
    assert {p: (repo / p).read_text() for p in before} == before  # nothing written
    assert refused["code"] == 4007, refused
    at = {symbol: {(c["path"], c["line"], c["column"], c["kind"]) for c in a["collisions"]}
          for symbol, a in answers.items()}
    assert all(a["not_applied"] for a in answers.values()), answers
    assert at["p.A.side"] == {("src/p/A.java", 7, 31, "shadowed")}  # the bare ``side``; ``this.side`` cannot be
    assert ("src/p/A.java", 13, 13, "shadowed") in at["p.A.MAX"]  # ``MAX`` in main(String[] args)
    assert ("src/q/Main.java", 9, 28, "shadowed") in at["p.A.MAX"]  # through ``import static``
    assert at["store.helper"] == {("store/store.go", 4, 2, "same_scope")}  # ``"strings"``, not the test's ``fmt``
    assert at["store.Store.Add"] == {("shape/shape.go", 5, 17, "member")}  # Square.Area, promoted into Store


def test_java_renames_that_no_bare_use_would_see_captured_stay_clear_and_run(tmp_path: Path) -> None:
    """A field used only as ``this.side`` may take a parameter's name; a method may take a local's (Java names
    methods and variables apart: ``int scale; scale(2)`` still calls the method)."""
    with refactor_env(tmp_path / "repo", JAVA) as env:
        grown = env.service.rename("p.A.grow", "scale")  # onto a sibling method: still a collision
        assert grown.collisions, grown
        for symbol, new_name in [("q.Main.twice", "scale"), ("p.A.side", "g")]:
            preview = env.service.rename(symbol, new_name)
            assert not preview.collisions and preview.status == "ready", (symbol, preview.collisions)
            env.service.apply(preview.refactor_id)
        assert "this.g + g" in env.read("src/p/A.java") and "return g * f;" in env.read("src/p/A.java")
        assert _java(env.root, "p.A") == "ok 2\n"
        assert _java(env.root, "q.Main") == "100 200\n"


def test_go_clashes_are_not_claimed_where_go_allows_the_name(tmp_path: Path) -> None:
    """``fmt`` is imported only by the external test package; a method not promoted into the type is free."""
    with refactor_env(tmp_path / "repo", GO_CLASHES) as env:
        for symbol, new_name in [("store.helper", "fmt"), ("store.Store.Add", "Put")]:
            preview = env.service.rename(symbol, new_name)
            assert not preview.collisions, (symbol, preview.collisions)
            env.service.apply(preview.refactor_id)
        _go(env.root, "vet", "./...")
        _go(env.root, "test", "./...")


# -- 5 and 9: Go interface implementations; members of literals and embedded fields ------------------------
GO_SHAPES = {
    "go.mod": "module example.com/g\n\ngo 1.18\n",
    "shape/shape.go": (
        "package shape\n\ntype Sizer interface{ Len() int }\n\ntype Shape interface {\n\tSizer\n"
        "\tArea(scale int) int\n}\n\ntype Sq struct{ S int }\n\n"
        "func (q Sq) Area(scale int) int { return q.S * q.S * scale }\n\nfunc (q Sq) Len() int { return 4 }\n\n"
        "func Total(xs []Shape) int {\n\tt := 0\n\tfor _, x := range xs {\n\t\tt += x.Area(1)\n\t}\n\treturn t\n}\n\n"
        "func Nine() int { return (Sq{S: 3}).Area(1) }\n"),
    "shapes/circle.go": (
        "package shapes\n\nimport \"example.com/g/shape\"\n\ntype Circle struct{ R int }\n\n"
        "func (c *Circle) Area(k int) int { return 3 * c.R * c.R * k }\n\nfunc (c *Circle) Len() int { return 1 }\n\n"
        "var _ shape.Shape = (*Circle)(nil)\n\ntype Box struct {\n\tshape.Sq\n}\n\n"
        "type Other struct{}\n\nfunc (Other) Area() string { return \"x\" }\n\n"
        "func Use() int {\n\tvar b Box\n\treturn (&Circle{R: 1}).Area(2) + b.Len() + "
        "shape.Total([]shape.Shape{b, shape.Sq{S: 1}}) + len(Other{}.Area())\n}\n"),
    "shapes/circle_test.go": ("package shapes\n\nimport \"testing\"\n\nfunc TestUse(t *testing.T) {\n"
                              "\tif Use() != 12 {\n\t\tt.Fatal(Use())\n\t}\n}\n"),
}


def test_go_interface_method_rename_takes_the_implementing_methods_along_and_builds(tmp_path: Path) -> None:
    """Renaming ``Shape.Area`` left ``Sq.Area`` (low) and planned ``(Sq{S: 3}).Area()`` as a medium edit of the
    interface's method: ``Sq`` no longer implemented ``Shape`` and the literal's call was undefined. Now every type
    whose method set has the interface's methods with their signatures (``*Circle`` in another package, ``Sq``)
    is renamed with it; ``Other.Area() string`` is another method; ``Box`` gets it by promotion."""
    with refactor_env(tmp_path / "repo", GO_SHAPES) as env:
        _go(env.root, "test", "./...")
        clash = env.service.rename("shape.Shape.Area", "Len")  # Sq.Len and Circle.Len exist
        assert {(c.path, c.line) for c in clash.collisions} >= {("shape/shape.go", 14), ("shapes/circle.go", 9)}
        preview = env.service.rename("shape.Shape.Area", "Size")
        assert preview.status == "ready" and not preview.collisions, preview
        edits = _edits(preview)
        # (columns from 0, as the service gives them)
        assert [e for e in edits if e[3] != "high"] == [("shapes/circle.go", 19, 13, "low", "other_binding"),
                                                        ("shapes/circle.go", 23, 104, "low", "other_binding")]
        assert {e[:3] for e in edits if e[3] == "high"} == {
            ("shape/shape.go", 7, 1), ("shape/shape.go", 12, 12), ("shape/shape.go", 19, 9),
            ("shape/shape.go", 24, 36), ("shapes/circle.go", 7, 17), ("shapes/circle.go", 23, 24)}
        env.service.apply(preview.refactor_id)
        assert "func (c *Circle) Size(k int) int" in env.read("shapes/circle.go")
        _go(env.root, "vet", "./...")
        _go(env.root, "test", "./...")


GO_LITERALS = {
    "go.mod": "module example.com/m\n\ngo 1.18\n",
    "p/p.go": ("package p\n\ntype Sq struct{ S int }\n\nfunc (q Sq) Area() int { return q.S * q.S }\n\n"
               "type Box struct {\n\tSq\n\tName string\n}\n\n"
               "type Ptr struct {\n\t*Sq\n}\n\n"
               "func Nine() int { return (Sq{S: 3}).Area() }\n\nfunc Four() int { return Sq{S: 2}.Area() }\n\n"
               "func Made() int { return new(Sq).Area() + (&Sq{S: 1}).Area() }\n\n"
               "func Sixteen(b *Box, p Ptr) int { return b.Sq.Area() + p.Sq.Area() }\n\n"
               "type Outer struct {\n\tBox\n}\n\n"
               "func Deep(o Outer, b Box) int { return o.Area() + o.Box.Sq.Area() + b.Area() }\n"),
    "p/p_test.go": ("package p\n\nimport \"testing\"\n\nfunc TestAll(t *testing.T) {\n"
                    "\tif Nine() != 9 || Four() != 4 || Made() != 1 ||\n"
                    "\t\tSixteen(&Box{Sq: Sq{S: 2}}, Ptr{&Sq{S: 2}}) != 8 ||\n"
                    "\t\tDeep(Outer{Box{Sq: Sq{S: 1}}}, Box{}) != 2 {\n"
                    "\t\tt.Fatal()\n\t}\n}\n"),
}


def test_go_method_calls_on_literals_and_through_embedded_fields_are_linked(tmp_path: Path) -> None:
    """``(Sq{S: 3}).Area()``, ``Sq{S: 2}.Area()``, ``b.Sq.Area()`` and the promoted ``b.Area()`` were low
    ``unresolved_receiver``: a default apply renamed the method and left them (``Sq has no field or method Area``)."""
    with refactor_env(tmp_path / "repo", GO_LITERALS) as env:
        _go(env.root, "test", "./...")
        preview = env.service.rename("p.Sq.Area", "Size")
        assert preview.status == "ready" and {e[3] for e in _edits(preview)} == {"high"}, _edits(preview)
        assert len(preview.edits) == 10, _edits(preview)  # the definition and nine calls
        env.service.apply(preview.refactor_id)
        _go(env.root, "vet", "./...")
        _go(env.root, "test", "./...")


# -- 4: TypeScript, an overloaded function moves whole -------------------------------------------------------
TS = {
    "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2020", '
                     '"module": "commonjs"}, "include": ["src"]}\n',
    "src/u.ts": "export type Unit = number;\n",
    "src/a.ts": ('export function twice(n: number): number;\nexport function twice(n: string): string;\n'
                 'export function twice(n: number | string): number | string {\n'
                 '  return typeof n === "number" ? n * 2 : n + n;\n}\n\nexport const ONE = 1;\n\n'
                 'export function thrice(n: number): number {\n  return n * 3 * ONE;\n}\n'),
    "src/b.ts": 'import { twice, ONE, thrice } from "./a";\n\nconsole.log(twice(ONE), twice("x"), thrice(1));\n',
    "src/k.ts": ('import { Unit } from "./u";\n\n/** Halves. */\nfunction half(n: Unit): Unit;\n// strings too\n'
                 'function half(n: string): string;\nfunction half(n: Unit | string): Unit | string {\n'
                 '  return typeof n === "number" ? n / 2 : n.slice(1);\n}\n\n'
                 'export function run(): string {\n  return String(half(2)) + half("xy");\n}\n'),
}


def _move(env: RefactorEnv, symbol: str, to_path: str) -> None:
    preview = env.service.move_symbol(symbol, to_path)
    assert preview.status == "ready" and {e.certainty for e in preview.edits} == {"high"}, preview
    env.service.apply(preview.refactor_id)


def test_typescript_overloaded_function_moves_with_its_signatures(tmp_path: Path) -> None:
    """``twice``'s implementation moved alone: ``a.ts`` kept both signatures and imported ``twice`` (TS2440,
    TS2391). The signatures are one symbol with it: they move, with the comments between them, and a function
    the old module keeps using is exported from its new module on every signature (TS2383). A file without imports
    of its own writes new ones in the quotes most of the move's modules use."""
    with refactor_env(tmp_path / "repo", TS) as env:
        _move(env, "src/a.twice", "src/c.ts")
        _move(env, "src/k.half", "src/h.ts")
        _move(env, "src/a.thrice", "src/t.ts")
        assert env.read("src/a.ts") == "export const ONE = 1;\n"
        assert env.read("src/c.ts") == TS["src/a.ts"].split("\n\nexport const")[0] + "\n"
        # ``a.ts`` writes no import: the new module's takes the double quotes the other modules write (QA18).
        assert env.read("src/t.ts").startswith('import { ONE } from "./a";\n'), env.read("src/t.ts")
        assert env.read("src/h.ts") == (
            'import { Unit } from "./u";\n\n/** Halves. */\nexport function half(n: Unit): Unit;\n// strings too\n'
            'export function half(n: string): string;\nexport function half(n: Unit | string): Unit | string {\n'
            '  return typeof n === "number" ? n / 2 : n.slice(1);\n}\n')
        assert "function half" not in env.read("src/k.ts") and 'import { half } from "./h";' in env.read("src/k.ts")
        assert_tsc_passes(env)


def test_go_interface_embedding_another_packages_interface_still_takes_its_implementations(tmp_path: Path) -> None:
    """``fmt.Stringer``'s methods are not the repository's to read: a type with every method ``Labeled`` spells is
    renamed with it, so ``T`` still satisfies it."""
    files = {"go.mod": "module example.com/r\n\ngo 1.18\n",
             "r/r.go": ("package r\n\nimport \"fmt\"\n\n"
                        "type Labeled interface {\n\tfmt.Stringer\n\tLabel() string\n}\n\n"
                        "type T struct{}\n\nfunc (T) String() string { return \"t\" }\n\n"
                        "func (T) Label() string { return \"L\" }\n\n"
                        "func Show(l Labeled) string { return l.Label() + l.String() }\n\n"
                        "func Use() string { return Show(T{}) + T{}.Label() }\n"),
             "r/r_test.go": ("package r\n\nimport \"testing\"\n\nfunc TestUse(t *testing.T) {\n"
                             "\tif Use() != \"LtL\" {\n\t\tt.Fatal(Use())\n\t}\n}\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("r.Labeled.Label", "Tag")
        assert {e[3] for e in _edits(preview)} == {"high"} and len(preview.edits) == 4, _edits(preview)
        env.service.apply(preview.refactor_id)
        _go(env.root, "vet", "./...")
        _go(env.root, "test", "./...")


def test_a_namespace_member_is_never_shadowed_a_bare_use_is(tmp_path: Path) -> None:
    """QA18 (smaller): renaming ``LIMIT`` to ``area`` reported ``lib.LIMIT`` as shadowed by a parameter ``area``;
    ``lib.area`` is looked up in the module, only the bare ``LIMIT`` is captured."""
    files = {"src/lim.ts": "export const LIMIT = 10;\n",
             "src/use.ts": ('import * as lib from "./lim";\nimport { LIMIT } from "./lim";\n\n'
                            "export function f(area: number): number {\n  return area * lib.LIMIT + LIMIT;\n}\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("src/lim.LIMIT", "area")
        assert [(c.path, c.line, c.column, c.kind) for c in preview.collisions] == [("src/use.ts", 5, 28, "shadowed")]
