"""Renames in C and C++ across files (``index/structural/clink.py``): a header's declarations, the source file
defining them and the files using them are renamed together, high, and the project still builds and prints what
it printed before, compiled by the real ``cc``/``g++``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.refactor_builders import RefactorEnv, build_and_run, refactor_env, rename_all_high

C_PROJECT = {
    "src/util.h": "#ifndef UTIL_H\n#define UTIL_H\n#define UTIL_SCALE 2\n"
                  "typedef struct { int x; int y; } point;\n"
                  "int util_add(int a, int b);\nextern int util_limit;\nint util_norm(point p);\n"
                  "#define UTIL_TWICE(v) \\\n  util_add((v), (v))\n#endif\n",
    "src/util.c": "#include \"util.h\"\nint util_limit = 3;\n"
                  "static int helper(int v) { return v * UTIL_SCALE; }\n"
                  "int util_add(int a, int b) { return helper(a) + b + util_limit; }\n"
                  "int util_norm(point p) { return util_add(p.x, p.y); }\n",
    "app/main.c": "#include <stdio.h>\n#include \"util.h\"\n"
                  "static int helper(int v) { return v - 1; }\n"
                  "int main(void) {\n  point p = {1, 2};\n"
                  "  printf(\"%d %d %d %d\\n\", util_add(1, 2), util_norm(p) + util_limit, helper(UTIL_SCALE),\n"
                  "         UTIL_TWICE(1));\n"
                  "  return 0;\n}\n",
}

CPP_PROJECT = {
    "geo/shape.h": "namespace geo {\n#define GEO_SIDES 4\nclass Shape {\n public:\n  int sides = GEO_SIDES;\n"
                   "  int perimeter(int side) const;\n  double perimeter(double side) const;\n"
                   "  static Shape square();\n};\nint count_sides(const Shape& s);\n}\n",
    "geo/shape.cpp": "#include \"shape.h\"\nnamespace geo {\n"
                     "int Shape::perimeter(int side) const { return sides * side; }\n"
                     "double Shape::perimeter(double side) const { return sides * side; }\n"
                     "Shape Shape::square() { return Shape(); }\n"
                     "int count_sides(const Shape& s) { return s.sides; }\n}\n",
    "app.cpp": "#include <cstdio>\n#include \"geo/shape.h\"\nint main() {\n"
               "  geo::Shape s = geo::Shape::square();\n"
               "  std::printf(\"%d %.1f %d %d\\n\", s.perimeter(2), s.perimeter(1.5), geo::count_sides(s),\n"
               "              GEO_SIDES);\n"
               "  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler builds the renamed project")
def test_c_names_declared_in_a_header_are_renamed_in_every_file(tmp_path: Path) -> None:
    """A function or variable declared in a header and defined in a source file was renamed at its definition
    only: the prototype, the ``extern`` declaration and the calls in other files were ``low`` (unresolved), so
    the project no longer linked. A use in a macro's body (text to the parser) is renamed with them, ``medium``;
    a ``static`` function of the same name in another file is another function."""
    def run(root: Path) -> str:
        return build_and_run(root, "cc", "src/util.c", "app/main.c")

    with refactor_env(tmp_path / "repo", C_PROJECT) as env:
        assert run(env.root) == "7 10 1 6\n"
        add = rename_all_high(env, "util_add", "util_sum")
        assert {(p, line) for p, line, _ in add} == {("src/util.h", 5), ("src/util.h", 9), ("src/util.c", 4),
                                                      ("src/util.c", 5), ("app/main.c", 6)}
        rename_all_high(env, "util_limit", "util_max")
        rename_all_high(env, "UTIL_SCALE", "UTIL_FACTOR")
        rename_all_high(env, "point", "vec2")
        helper = env.service.rename("src/util.c:3:11", "twice")  # main.c's own static helper: listed, not applied
        assert {(e.path, e.certainty) for e in helper.edits} == {("src/util.c", "high"), ("app/main.c", "low")}
        env.service.apply(helper.refactor_id)
        header, main = env.read("src/util.h"), env.read("app/main.c")
        assert "int util_sum(int a, int b);\nextern int util_max;\nint util_norm(vec2 p);" in header
        assert "#define UTIL_FACTOR 2" in header
        assert "static int helper(int v) { return v - 1; }" in main
        assert "util_sum(1, 2), util_norm(p) + util_max, helper(UTIL_FACTOR)" in main
        assert "static int twice(int v) { return v * UTIL_FACTOR; }" in env.read("src/util.c")
        assert run(env.root) == "7 10 1 6\n"


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_class_members_defined_apart_are_renamed_with_their_declarations(tmp_path: Path) -> None:
    """A class declared in a header with its methods defined in a source file (``int Shape::perimeter(...)``):
    renaming a member, the class or a function of its namespace left the other file's definitions, qualifiers
    (``Shape::``, ``geo::Shape::square``) and uses unresolved, and the renamed project did not build. Renaming
    from the definition apart renames the declaration (one symbol), told apart from its overloads by parameter
    types."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "geo/shape.cpp", "app.cpp")

    with refactor_env(tmp_path / "repo", CPP_PROJECT) as env:
        assert run(env.root) == "8 6.0 4 4\n"
        for line, declared in ((3, 6), (4, 7)):  # each definition apart is its own overload's declaration
            overload = env.service.rename(f"geo/shape.cpp:{line}:14", "span")
            assert ("geo/shape.h", declared, "definition") in {(e.path, e.line, e.reason) for e in overload.edits}
        # an overload set is renamed whole (a call cannot be told apart without argument types)
        assert {(e.path, e.line, e.certainty) for e in overload.edits} == {
            ("geo/shape.h", 6, "high"), ("geo/shape.h", 7, "high"), ("geo/shape.cpp", 3, "high"),
            ("geo/shape.cpp", 4, "high"), ("app.cpp", 5, "medium")}, overload.edits
        env.service.apply(overload.refactor_id)
        preview = env.service.rename("geo/shape.h:5:6", "edges")  # the field: its uses in methods defined apart
        assert {(e.path, e.line, e.certainty) for e in preview.edits} >= {
            ("geo/shape.cpp", 3, "high"), ("geo/shape.cpp", 4, "high")}, preview.edits
        assert "low" not in {e.certainty for e in preview.edits}, preview.edits
        env.service.apply(preview.refactor_id)
        square = rename_all_high(env, "geo/shape.cpp:5:13", "make")
        assert {(p, line) for p, line, _ in square} == {("geo/shape.h", 8), ("geo/shape.cpp", 5), ("app.cpp", 4)}
        rename_all_high(env, "count_sides", "tally")
        macro = rename_all_high(env, "GEO_SIDES", "GEO_EDGES")  # a macro is no namespace's: app.cpp's use is it
        assert {(p, line) for p, line, _ in macro} == {("geo/shape.h", 2), ("geo/shape.h", 5), ("app.cpp", 6)}
        shape = rename_all_high(env, "geo.Shape", "Form")
        assert len([p for p, _, _ in shape if p == "geo/shape.cpp"]) == 6  # ``Shape Shape::square() { ... Shape()``
        source = env.read("geo/shape.cpp")
        assert "int Form::span(int side) const { return edges * side; }" in source
        assert "Form Form::make() { return Form(); }" in source
        assert "int tally(const Form& s) { return s.edges; }" in source
        assert "geo::Form s = geo::Form::make();" in env.read("app.cpp")
        assert run(env.root) == "8 6.0 4 4\n"


def _certainties(env: RefactorEnv, symbol: str) -> dict[tuple[str, int], str]:
    return {(e.path, e.line): e.certainty for e in env.service.rename(symbol, "renamed").edits}


#: Files no edit reaches: an edit relinks a few files of many, reading definitions by name (``cprogram.Program``).
FILLER = {f"misc/part{i}.c": f"static int part{i}(void) {{ return {i}; }}\nint use{i}(void) {{ return part{i}(); }}\n"
          for i in range(24)}


def test_c_links_follow_edits_of_headers_and_new_files(tmp_path: Path) -> None:
    """Incremental: a use links once its file sees a declaration, and stops when the header no longer declares
    the name or its definition is gone; a new file including the header links at once."""
    with refactor_env(tmp_path / "repo", {**C_PROJECT, **FILLER}) as env:
        assert _certainties(env, "util_add")[("app/main.c", 6)] == "high"
        header = env.read("src/util.h")
        (env.root / "src/util.h").write_text(header.replace("int util_add(int a, int b);\n", ""))
        env.index.refresh_paths(["src/util.h"])
        assert _certainties(env, "util_add").get(("app/main.c", 6)) == "low"
        (env.root / "src/util.h").write_text(header)
        (env.root / "app/extra.c").write_text("#include \"../src/util.h\"\n"
                                              "int extra(void) { return util_add(2, 2); }\n")
        env.index.refresh_paths(["src/util.h", "app/extra.c"])
        found = _certainties(env, "util_add")
        assert found[("app/main.c", 6)] == "high" and found[("app/extra.c", 2)] == "high", found
        source = env.read("src/util.c")
        renamed = source.replace("int util_add(int a, int b) {", "int util_plus(int a, int b) {")
        (env.root / "src/util.c").write_text(renamed.replace("return util_add(p.x", "return util_plus(p.x"))
        env.index.refresh_paths(["src/util.c"])
        found = _certainties(env, "util_plus")
        assert ("app/main.c", 6) not in found and ("src/util.c", 4) in found, found


def test_cpp_names_are_not_linked_past_two_candidates_or_an_unknown_base(tmp_path: Path) -> None:
    """Two headers defining one name (``#ifdef`` platform alternatives) settle nothing; a method of a class whose
    base the repository does not define may be using the base's member, so a global of that name is not taken."""
    files = {
        "a.h": "#pragma once\nint pick();\nstruct Local { int value(); };\n",
        "b.h": "#pragma once\ninline int pick() { return 1; }\n",
        "c.h": "#pragma once\ninline int pick() { return 2; }\n",
        "size.h": "#pragma once\ninline int size() { return 3; }\n",
        "w.cpp": "#include \"b.h\"\n#include \"c.h\"\n#include \"size.h\"\n#include <vector>\n"
                 "struct Items : std::vector<int> { int count() const { return size(); } };\n"
                 "int twice() { return pick() * 2; }\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        found = {(e.path, e.line): e.certainty for e in env.service.rename("size.h:2:11", "extent").edits}
        assert found[("size.h", 2)] == "high" and found[("w.cpp", 5)] == "low", found
        found = {(e.path, e.line): e.certainty for e in env.service.rename("b.h:2:11", "choose").edits}
        assert found.get(("w.cpp", 6)) == "low", found


CPP_USING = {
    "inc/counter.h": "#pragma once\nnamespace tally {\nclass Counter {\n public:\n"
                     "  explicit Counter(int start) : count(start) {}\n  Counter(int a, int b);\n  ~Counter();\n"
                     "  int next();\n  int count;\n};\n}\n",
    "src/counter.cpp": "#include \"../inc/counter.h\"\n#include <cstdio>\nusing namespace tally;\n"
                       "Counter::Counter(int a, int b) : count(a + b) {}\n"
                       "Counter::~Counter() { std::printf(\"bye %d\\n\", this->count); }\n"
                       "int Counter::next() { return ++count; }\n",
    "main.cpp": "#include \"inc/counter.h\"\n#include <cstdio>\nint main() {\n  tally::Counter a(1), b(2, 3);\n"
                "  int x = a.next(), y = b.next();\n  std::printf(\"%d %d\\n\", x, y);\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_using_namespace_and_constructors_follow_a_class_rename(tmp_path: Path) -> None:
    """``using namespace tally;`` then ``int Counter::next()``: the definitions apart name the class unqualified.
    A class rename reaches its constructors (written in the class or apart, ``Counter::Counter``) and destructor;
    ``this->count`` in a method is the class's member (it was renamed by name, ``medium``)."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "src/counter.cpp", "main.cpp")

    with refactor_env(tmp_path / "repo", CPP_USING) as env:
        assert run(env.root) == "2 6\nbye 6\nbye 2\n"
        count = rename_all_high(env, "tally.Counter.count", "total")
        assert {(p, line) for p, line, _ in count} >= {("src/counter.cpp", 4), ("src/counter.cpp", 5),
                                                        ("src/counter.cpp", 6), ("inc/counter.h", 5)}
        preview = env.service.rename("src/counter.cpp:6:13", "advance")  # from the definition apart
        assert {(e.path, e.line, e.certainty) for e in preview.edits} == {
            ("inc/counter.h", 8, "high"), ("src/counter.cpp", 6, "high"), ("main.cpp", 5, "medium")}, preview.edits
        env.service.apply(preview.refactor_id)
        cls = rename_all_high(env, "tally.Counter", "Tally")
        assert len([p for p, _, _ in cls if p == "src/counter.cpp"]) == 5  # Counter::Counter, Counter::~Counter
        header, source = env.read("inc/counter.h"), env.read("src/counter.cpp")
        assert "explicit Tally(int start) : total(start) {}\n  Tally(int a, int b);\n  ~Tally();" in header
        assert "Tally::Tally(int a, int b) : total(a + b) {}\nTally::~Tally()" in source
        assert "int Tally::advance() { return ++total; }" in source
        assert run(env.root) == "2 6\nbye 6\nbye 2\n"


FORWARD = {
    "log.h": "#pragma once\nstruct Log {\n  int lines = 0;\n  void add() { ++lines; }\n};\n",
    "runner.h": "#pragma once\nstruct Log;\nint run(Log* log);\n",
    "runner.cpp": "#include \"runner.h\"\n#include \"log.h\"\nint run(Log* log) { log->add(); return log->lines; }\n",
    "main.cpp": "#include <cstdio>\n#include \"log.h\"\n#include \"runner.h\"\n"
                "int main() { Log log; std::printf(\"%d\\n\", run(&log)); return 0; }\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_forward_declared_class_is_the_class_the_repository_defines(tmp_path: Path) -> None:
    """A header that only forward-declares a class (``struct Log;``, Ninja's ``struct BuildLog;``) kept the old
    name in a class rename (its uses were unresolved), and the renamed project did not build."""
    with refactor_env(tmp_path / "repo", FORWARD) as env:
        assert build_and_run(env.root, "g++", "runner.cpp", "main.cpp") == "1\n"
        renamed = rename_all_high(env, "Log", "Journal")
        assert {("runner.h", 2), ("runner.h", 3)} <= {(p, line) for p, line, _ in renamed}
        assert env.read("runner.h") == "#pragma once\nstruct Journal;\nint run(Journal* log);\n"
        assert build_and_run(env.root, "g++", "runner.cpp", "main.cpp") == "1\n"


def test_cpp_class_name_is_not_ambiguous_with_its_constructor(tmp_path: Path) -> None:
    """``DepsLog() : ... {}`` in ``struct DepsLog`` is a definition named like the class: renaming ``DepsLog`` asked
    which of the two was meant; the constructor's name is the class's."""
    files = {"log.h": "#pragma once\n#include <string>\nstruct Journal {\n"
                      "  explicit Journal(const std::string& name) : name_(name) {}\n  ~Journal();\n"
                      "  std::string name_;\n};\n",
             "log.cpp": "#include \"log.h\"\nJournal::~Journal() {}\n",
             "use.cpp": "#include \"log.h\"\nint count() { Journal j(\"x\"); return (int)j.name_.size(); }\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("Journal", "Ledger")
        assert preview.status == "ready", preview
        assert {(e.path, e.line, e.certainty) for e in preview.edits if e.kind == "code"} == {
            ("log.h", 3, "high"), ("log.h", 4, "high"), ("log.h", 5, "high"), ("log.cpp", 2, "high"),
            ("use.cpp", 2, "high")}, preview.edits


DECLARATORS = {
    "shape.h": "#pragma once\n#include <string>\nclass Shape {\n public:\n  virtual ~Shape() {}\n"
               "  virtual const char* label() const { return \"shape\"; }\n  const std::string& title() const;\n"
               "  Shape** first();\n  int* owner_;\n  Shape* parts_[2];\n protected:\n  std::string title_;\n};\n",
    "shape.cpp": "#include \"shape.h\"\nconst std::string& Shape::title() const { return title_; }\n"
                 "Shape** Shape::first() { return parts_; }\n",
    "square.h": "#pragma once\n#include \"shape.h\"\nclass Square : public Shape {\n public:\n"
                "  Square() { title_ = \"sq\"; parts_[0] = this; parts_[1] = 0; owner_ = 0; }\n"
                "  const char* label() const { return \"square\"; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include \"square.h\"\n"
                "static void show(Shape& s) {\n"
                "  std::printf(\"%s %s %s %d\\n\", s.label(), s.title().c_str(), s.first()[0]->label(),\n"
                "              s.owner_ == 0);\n"
                "}\nint main() { Square q; show(q); return 0; }\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_members_behind_pointer_and_reference_declarators_are_definitions(tmp_path: Path) -> None:
    """A member whose declarator sits behind ``*``, ``**``, ``&`` or ``[N]`` (``const std::string& title() const``,
    ``Shape** Shape::first()``, ``int* owner_;``, ``Shape* parts_[2];``) was no definition at all: renaming it
    answered SYMBOL_NOT_FOUND, and renaming a virtual method returning a pointer could not reach its override
    (without ``override`` the renamed project builds and silently calls the base's method)."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "shape.cpp", "main.cpp")

    with refactor_env(tmp_path / "repo", DECLARATORS) as env:
        assert run(env.root) == "square sq square 1\n"
        for symbol, new_name, defined_at in (
                ("Shape.label", "name", {("shape.h", 6), ("square.h", 6)}),
                ("Shape.title", "caption", {("shape.h", 7), ("shape.cpp", 2)}),
                ("Shape.first", "head", {("shape.h", 8), ("shape.cpp", 3)}),
                ("Shape.owner_", "holder_", {("shape.h", 9)}),
                ("Shape.parts_", "items_", {("shape.h", 10)})):
            preview = env.service.rename(symbol, new_name)
            assert preview.status == "ready", (symbol, preview)
            assert {(e.path, e.line) for e in preview.edits if e.certainty == "high"} >= defined_at, preview.edits
            assert not [e for e in preview.edits if e.certainty == "low"], (symbol, preview.edits)
            env.service.apply(preview.refactor_id)
        assert "Shape** Shape::head() { return items_; }" in env.read("shape.cpp")
        assert "const char* name() const { return \"square\"; }" in env.read("square.h")
        assert run(env.root) == "square sq square 1\n"


@pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler builds the renamed project")
def test_c_function_returning_a_pointer_to_pointer_is_a_definition(tmp_path: Path) -> None:
    """``const char **names(void) {...}`` (two ``*`` before the name) was no definition: SYMBOL_NOT_FOUND."""
    files = {"list.h": "const char **names(void);\n",
             "list.c": "#include \"list.h\"\nstatic const char *all[] = {\"a\", \"b\", 0};\n"
                        "const char **names(void) { return all; }\n",
             "main.c": "#include <stdio.h>\n#include \"list.h\"\nint main(void) { printf(\"%s\\n\", names()[1]); "
                       "return 0; }\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        renamed = rename_all_high(env, "names", "labels")
        assert {(p, line) for p, line, _ in renamed} == {("list.h", 1), ("list.c", 3), ("main.c", 3)}
        assert build_and_run(env.root, "cc", "list.c", "main.c") == "b\n"


C_STRUCTS = {
    "geo.h": "#pragma once\nstruct point { int x; int y; };\ntypedef struct point point_t;\n"
             "typedef struct { int x; int w; } box;\nstruct other { int x; };\nint norm(const struct point *p);\n",
    "geo.c": "#include \"geo.h\"\nint norm(const struct point *p) { return p->x + p->y; }\n",
    "main.c": "#include <stdio.h>\n#include \"geo.h\"\nint main(void) {\n"
              "  struct point p = {1, 2}; point_t q = {3, 4}; box b = {5, 6}; struct other o = {7};\n"
              "  p.x += b.w; q.x += o.x;\n"
              "  printf(\"%d %d %d %d\\n\", norm(&p), norm(&q), b.x, o.x);\n  return 0;\n}\n",
}


def _applied(env: RefactorEnv, symbol: str, new_name: str) -> set[tuple[str, int, int, str]]:
    """Rename ``symbol`` and apply the default selection (high + medium); (path, line, column, certainty) of
    every edit applied, and nothing low among the uses of ``symbol`` itself (each listed low is another's)."""
    preview = env.service.rename(symbol, new_name)
    assert preview.status == "ready", preview
    env.service.apply(preview.refactor_id)
    return {(e.path, e.line, e.column, e.certainty) for e in preview.edits if e.certainty != "low"}


@pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler builds the renamed project")
def test_c_struct_fields_are_renamed_through_declared_receivers(tmp_path: Path) -> None:
    """A C struct's field was no definition (SYMBOL_NOT_FOUND). Now it is, and ``p->x``/``q.x`` are its uses when
    ``p``/``q`` are declared with the struct, through a typedef too (``point_t``, a ``typedef struct {...} box``);
    ``b.x`` and ``o.x``, declared with other structs that have an ``x``, are left alone."""
    def run(root: Path) -> str:
        return build_and_run(root, "cc", "geo.c", "main.c")

    with refactor_env(tmp_path / "repo", C_STRUCTS) as env:
        assert run(env.root) == "9 14 5 7\n"
        assert _applied(env, "point.x", "px") == {
            ("geo.h", 2, 19, "high"), ("geo.c", 2, 44, "medium"), ("main.c", 5, 4, "medium"),
            ("main.c", 5, 16, "medium")}
        assert _applied(env, "box.w", "width") == {("geo.h", 4, 28, "high"), ("main.c", 5, 12, "medium")}
        assert _applied(env, "other.x", "ox") == {("geo.h", 5, 19, "high"), ("main.c", 5, 29, "medium"),
                                                  ("main.c", 6, 53, "medium")}
        assert env.read("main.c").splitlines()[4] == "  p.px += b.width; q.px += o.ox;"
        assert run(env.root) == "9 14 5 7\n"


CPP_TYPED = {
    "graph.h": "#pragma once\n#include <string>\n\n"
               "struct Node {\n  bool dirty() const { return d_; }\n  bool d_ = true;\n};\n"
               "struct Edge {\n  bool dirty() const { return false; }\n  Node* source() const { return src_; }\n"
               "  Node* src_ = nullptr;\n  bool first() const { return this->source()->dirty(); }\n"
               "  bool second() const;\n};\n"
               "struct Bag {\n  int size() const { return 2; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include <vector>\n#include \"graph.h\"\n"
                "static int count(const Node* n, const Edge& e, const Bag& b, const std::string& s) {\n"
                "  return n->dirty() + e.dirty() + b.size() + (int)s.size() + e.source()->dirty() + e.src_->dirty();"
                "\n}\n"
                "bool Edge::second() const { return this->src_->dirty(); }\n"
                "static int all(std::vector<Node*>& nodes, const std::vector<Edge>& edges) {\n  int sum = 0;\n"
                "  for (std::vector<Node*>::iterator i = nodes.begin(); i != nodes.end(); ++i) sum += (*i)->dirty();\n"
                "  for (std::vector<Edge>::const_iterator j = edges.begin(); j != edges.end(); ++j)\n"
                "    sum += j->dirty();\n"
                "  for (auto* n : nodes) sum += n->dirty();\n  for (const auto& e : edges) sum += e.dirty();\n"
                "  sum += (int)nodes.size();\n"
                "  return sum;\n}\n"
                "int main() {\n  Node n; Edge e; Bag b;\n  e.src_ = &n;\n"
                "  std::vector<Node*> nodes(2, &n);\n  std::vector<Edge> edges(1);\n"
                "  std::printf(\"%d %d %d\\n\", count(&n, e, b, \"abc\"), all(nodes, edges), e.first() + e.second());\n"
                "  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_members_follow_the_declared_class_of_their_receiver(tmp_path: Path) -> None:
    """``n->dirty()`` with ``const Node* n`` is ``Node::dirty`` (it was ``low`` because ``Edge`` has a ``dirty`` too,
    and the renamed project did not build); ``e.dirty()`` stays ``Edge``'s; ``s.size()`` on a ``std::string`` is not
    the repository's ``Bag::size`` (it was ``medium`` by name, and renamed). An iterator over a container of the
    class points at it: ``(*i)->dirty()`` is ``Node``'s, ``j->dirty()`` ``Edge``'s (both were ``low``); so does a
    member's declared type: ``e.source()->dirty()`` and ``e.src_->dirty()`` (``Node* source()``, ``Node* src_``),
    also from ``this`` in a method written in the class or apart (``this->src_->dirty()``); ``for (auto* n : nodes)``
    over a standard container of ``Node*`` is a ``Node``, and ``nodes.size()`` the container's own (it was
    ``medium`` by name for ``Bag::size``)."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "main.cpp")

    with refactor_env(tmp_path / "repo", CPP_TYPED) as env:
        assert run(env.root) == "8 6 2\n"
        assert _applied(env, "Node.dirty", "stale") == {("graph.h", 5, 7, "high"), ("main.cpp", 5, 12, "medium"),
                                                        ("main.cpp", 5, 73, "medium"), ("main.cpp", 5, 91, "medium"),
                                                        ("graph.h", 12, 46, "medium"), ("main.cpp", 7, 47, "medium"),
                                                        ("main.cpp", 10, 91, "medium"), ("main.cpp", 13, 34, "medium")}
        assert _applied(env, "Bag.size", "count") == {("graph.h", 16, 6, "high"), ("main.cpp", 5, 36, "medium")}
        text = env.read("main.cpp")
        assert "return n->stale() + e.dirty() + b.count() + (int)s.size() + e.source()->stale() + e.src_->stale();" \
            in text
        assert "sum += (*i)->stale();" in text and "sum += j->dirty();" in text
        assert run(env.root) == "8 6 2\n"


@pytest.mark.skipif(shutil.which("cc") is None, reason="a C compiler builds the renamed project")
def test_c_function_pointer_field_is_a_definition(tmp_path: Path) -> None:
    """``int (*apply)(int);`` in a struct (a table of operations) was no definition: SYMBOL_NOT_FOUND; its calls
    through a declared pointer, ``o->apply(3)``, are its uses."""
    files = {"ops.h": "struct ops { int (*apply)(int); const char *name; };\n",
             "main.c": "#include <stdio.h>\n#include \"ops.h\"\nstatic int twice(int v) { return 2 * v; }\n"
                       "static int run(const struct ops *o) { return o->apply(3); }\n"
                       "int main(void) { struct ops o = {twice, \"x\"}; printf(\"%d\\n\", run(&o)); return 0; }\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        assert build_and_run(env.root, "cc", "main.c") == "6\n"
        assert _applied(env, "ops.apply", "call") == {("ops.h", 1, 19, "high"), ("main.c", 4, 48, "medium")}
        assert build_and_run(env.root, "cc", "main.c") == "6\n"


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_a_standard_type_is_not_the_repository_class_of_its_name(tmp_path: Path) -> None:
    """``std::string s; s.size()`` where the repository has a ``util::string`` of its own: the written type is the
    standard library's (the index cannot link it), not the one class the repository names so."""
    files = {"text.h": "#pragma once\nnamespace util { struct string { int size() const { return 7; } }; }\n",
             "main.cpp": "#include <cstdio>\n#include <string>\n#include \"text.h\"\n"
                         "int main() {\n  std::string s = \"ab\"; util::string u;\n"
                         "  std::printf(\"%d %d\\n\", (int)s.size(), u.size());\n  return 0;\n}\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "2 7\n"
        assert _applied(env, "util.string.size", "length") == {("text.h", 2, 37, "high"), ("main.cpp", 6, 42, "medium")}
        assert build_and_run(env.root, "g++", "main.cpp") == "2 7\n"
