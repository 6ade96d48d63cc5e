"""C++ renames in a real code base's shapes (LevelDB 1.20, ``benchmarks/rename_leveldb.py``): an override renamed from
the root of what it overrides, names looked up outside a body, nested classes, using-declarations, test fixtures,
and receivers typed through containers, pointers, smart pointers, ``auto`` and a call's declared result. Each
project is built with the real ``g++`` before and after the rename and prints the same."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.refactor_builders import build_and_run, refactor_env, rename_all_high

OVERRIDES = {
    "shape.h": "#pragma once\nclass Shape {\n public:\n  virtual ~Shape() = default;\n"
               "  virtual int area() const = 0;\n};\n",
    "square.h": "#pragma once\n#include \"shape.h\"\nclass Square : public Shape {\n public:\n"
                "  int area() const override { return 4; }\n};\n",
    "circle.h": "#pragma once\n#include \"shape.h\"\nclass Circle : public Shape {\n public:\n"
                "  int area() const override;\n};\n",
    "circle.cpp": "#include \"circle.h\"\nint Circle::area() const { return 3; }\n",
    "main.cpp": "#include <cstdio>\n#include \"square.h\"\n#include \"circle.h\"\n"
                "int total(const Shape& s) { return s.area(); }\n"
                "int main() {\n  Square q; Circle c;\n  std::printf(\"%d %d %d\\n\", total(q), total(c), q.area());\n"
                "  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_renaming_an_override_renames_the_method_it_overrides_and_every_other_override(tmp_path: Path) -> None:
    """``Square::area`` declared ``override``: renamed alone (the base's declaration ``low``, a warning), the default
    selection no longer compiled. It is renamed from the root of what it overrides, as an IDE does: ``Shape::area``
    and ``Circle::area`` with it, and the calls through ``Shape&``; the answer says so."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "circle.cpp", "main.cpp")

    with refactor_env(tmp_path / "repo", OVERRIDES) as env:
        assert run(env.root) == "4 3 4\n"
        preview = env.service.rename("Square.area", "surface")
        assert preview.status == "ready", preview
        assert any("Square.area overrides shape.Shape.area: renamed with it" in w for w in preview.warnings), (
            preview.warnings)
        assert {(e.path, e.line) for e in preview.edits if e.certainty == "high"} >= {
            ("shape.h", 5), ("square.h", 5), ("circle.h", 5), ("circle.cpp", 2)}, preview.edits
        assert not [e for e in preview.edits if e.certainty == "low"], preview.edits
        env.service.apply(preview.refactor_id)
        assert "virtual int surface() const = 0;" in env.read("shape.h")
        assert run(env.root) == "4 3 4\n"


LOOKUPS = {
    "batch.h": "#pragma once\nnamespace kv {\nclass Table;\nclass Batch {\n public:\n"
               "  class Handler { public: virtual ~Handler() = default; virtual int Put(int v) = 0; };\n"
               "  int Apply(Table* t, int v) const;\n};\n}\n",
    "table.h": "#pragma once\nnamespace kv {\nclass Table {\n public:\n"
               "  struct Less { bool operator()(int a, int b) const; };\n  struct Cursor;\n"
               "  int Size() const { return 3; }\n  int Walk() const;\n};\n}\n",
    "table.cpp": "#include \"table.h\"\nnamespace kv {\n"
                 "bool Table::Less::operator()(int a, int b) const { return a < b; }\n"
                 "struct Table::Cursor { const Table* owner; int at; };\n"
                 "int Table::Walk() const { Cursor c{this, 1}; return c.owner->Size() + c.at; }\n}\n",
    "batch.cpp": "#include \"batch.h\"\n#include \"table.h\"\nnamespace kv {\nnamespace {\n"
                 "class Adder : public Batch::Handler {\n public:\n  Table* table_ = nullptr;\n"
                 "  int Put(int v) override { return v + 1; }\n};\n}\n"
                 "int Batch::Apply(Table* t, int v) const { Adder a; a.table_ = t; return a.Put(v) + t->Size(); }\n}\n",
    "main.cpp": "#include <cstdio>\n#include \"batch.h\"\n#include \"table.h\"\nusing kv::Table;\n"
                "struct holder { Table table; };\nint main() {\n  holder h; kv::Batch b; kv::Table::Less less;\n"
                "  std::printf(\"%d %d %d %d\\n\", b.Apply(&h.table, 1), h.table.Walk(), less(1, 2) ? 1 : 0,\n"
                "              Table(h.table).Size());\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_class_names_where_lookup_starts_outside_a_body_are_the_namespace_s(tmp_path: Path) -> None:
    """LevelDB's ``class MemTable;`` (a header that does not include the class's), ``int MemTable::KeyComparator::
    operator()(...)`` (an operator has no definition row to give a class), ``class MemTableInserter : public
    WriteBatch::Handler`` in an anonymous namespace (a nested base class), ``struct DBImpl::Writer {...}`` (a nested
    class defined apart) and ``using leveldb::WriteBatch;`` in a C wrapper: each left the class's name ``low``, and
    renaming the class broke the build. ``Slice(name).starts_with(...)`` is a member of the constructed ``Slice``,
    not of ``name`` (which also ends two characters before the member)."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "table.cpp", "batch.cpp", "main.cpp")

    with refactor_env(tmp_path / "repo", LOOKUPS) as env:
        assert run(env.root) == "5 4 1 3\n"
        renamed = rename_all_high(env, "kv.Table", "Store")
        assert {("batch.h", 3), ("table.cpp", 3), ("table.cpp", 4), ("batch.cpp", 7), ("main.cpp", 4),
                ("main.cpp", 5)} <= {(p, line) for p, line, _ in renamed}
        preview = env.service.rename("kv.Store.Size", "Count")
        assert preview.status == "ready" and not [e for e in preview.edits if e.certainty == "low"], preview.edits
        assert {("main.cpp", 9), ("table.cpp", 5), ("batch.cpp", 11)} <= {
            (e.path, e.line) for e in preview.edits}, preview.edits
        env.service.apply(preview.refactor_id)
        assert "Store(h.table).Count()" in env.read("main.cpp")
        assert run(env.root) == "5 4 1 3\n"


SUBSCRIPTS = {
    "meta.h": "#pragma once\n#include <vector>\nstruct Meta { int number; int size; };\n"
              "struct Output { int number; };\n"
              "struct Level {\n  std::vector<Meta*> files_[2];\n  const std::vector<Meta*>* current_ = nullptr;\n"
              "  int Sum() const { return files_[0][0]->number + (*current_)[1]->number; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include <vector>\n#include \"meta.h\"\nint main() {\n"
                "  Meta a{1, 10}, b{2, 20}; Output o{7};\n  std::vector<Meta*> files{&a, &b};\n"
                "  Level lv; lv.files_[0] = files; lv.current_ = &files;\n"
                "  std::vector<Meta*> groups[2]; groups[0] = files;\n"
                "  int n = files[1]->number + lv.Sum() + o.number;\n"
                "  std::printf(\"%d %zu\\n\", n, groups[0].size());\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_an_element_of_a_standard_container_is_of_its_class(tmp_path: Path) -> None:
    """LevelDB's ``files[i]->number``, ``files_[level][i]->number`` (a C array of ``std::vector<FileMetaData*>``) and
    ``(*flist_)[i]->number`` were ``low`` while ``FileMetaData``'s other uses were renamed: the build broke. An element
    is of the container's class when the subscripts are the array's dimensions and one more; ``groups[0].size()``
    (one subscript on an array of vectors) is the vector's, and ``o.number`` another struct's."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "main.cpp")

    with refactor_env(tmp_path / "repo", SUBSCRIPTS) as env:
        assert run(env.root) == "12 2\n"
        preview = env.service.rename("Meta.number", "id")
        by_place = {(e.path, e.line, e.column): e.certainty for e in preview.edits}
        assert by_place[("meta.h", 8, 41)] == by_place[("meta.h", 8, 66)] == by_place[("main.cpp", 9, 20)] == "medium"
        assert by_place[("main.cpp", 9, 42)] == "low", preview.edits  # ``o.number``: Output's
        env.service.apply(preview.refactor_id)
        assert run(env.root) == "12 2\n"
        size = env.service.rename("Meta.size", "bytes")
        assert not [e for e in size.edits if e.path == "main.cpp" and e.certainty != "low"], size.edits


C_WRAPPER = {
    "c.h": "#pragma once\ntypedef struct handle_t handle_t;\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
           "int handle_valid(const handle_t* h);\n#ifdef __cplusplus\n}\n#endif\n",
    "iter.h": "#pragma once\nnamespace kv {\n"
              "class Iter { public: virtual ~Iter() = default; virtual int Valid() const; };\n"
              "struct Wrapper { int Valid() const { return 2; } };\n}\n",
    "c.cc": "#include <cstdio>\n#include \"c.h\"\n#include \"iter.h\"\nusing kv::Iter;\n"
            "namespace kv { int Iter::Valid() const { return 1; } }\nextern \"C\" {\nstruct handle_t { Iter* rep; };\n"
            "int handle_valid(const handle_t* h) { return h->rep->Valid(); }\n}\n"
            "using kv::Wrapper;\n"
            "struct wrapped_iter : public Iter {\n  int Valid() const override { return Twice(Wrapper()); }\n"
            "  int Twice(const Wrapper& w) const { return w.Valid() + 1; }\n};\n"
            "int main() {\n  Iter it; handle_t h{&it}; wrapped_iter w;\n"
            "  std::printf(\"%d %d\\n\", handle_valid(&h), w.Valid());\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_a_struct_a_c_header_typedefs_is_that_struct(tmp_path: Path) -> None:
    """LevelDB's C API: ``c.h`` declares ``typedef struct leveldb_iterator_t leveldb_iterator_t;``, ``c.cc`` (C++)
    defines the struct and reads ``iter->rep->Valid()``: the parameter's type had two definitions, the typedef and the
    struct, so it was no class, and renaming ``Iterator::Valid`` left that call ``low`` (``IteratorWrapper`` has a
    ``Valid`` too); the project did not build.
    In C++ the typedef of a struct to its own tag is that struct. A class at global scope deriving from
    ``Iter`` through ``using kv::Iter;`` overrides ``Valid`` (renamed with it, or ``override`` fails)."""
    with refactor_env(tmp_path / "repo", C_WRAPPER) as env:
        assert build_and_run(env.root, "g++", "c.cc") == "1 3\n"
        # ``Wrapper`` in a method of a class whose base is known through ``using kv::Iter;``: the namespace's
        wrapper = env.service.rename("kv.Wrapper.Valid", "Check")
        assert {(e.path, e.line): e.certainty for e in wrapper.edits}.get(("c.cc", 13)) == "medium", wrapper.edits
        env.service.cancel(wrapper.refactor_id)
        preview = env.service.rename("kv.Iter.Valid", "IsValid")
        assert {(e.path, e.line): e.certainty for e in preview.edits}.get(("c.cc", 8)) == "medium", preview.edits
        assert ("c.cc", 12) in {(e.path, e.line) for e in preview.edits if e.certainty == "high"}, preview.edits
        env.service.apply(preview.refactor_id)
        assert build_and_run(env.root, "g++", "c.cc") == "1 3\n"


FIXTURES = {
    "status.h": "#pragma once\nnamespace kv {\n"
                "class Status { public: bool ok() const { return code_ == 0; } int code_ = 0; };\n"
                "Status Read(int n);\nstruct Builder { bool ok() const { return true; } };\n}\n",
    "status.cc": "#include \"status.h\"\nnamespace kv {\nStatus Read(int n) { Status s; s.code_ = n; return s; }\n}\n",
    "harness.h": "#pragma once\n#define TEST(fixture, name) \\\n"
                 "  class _Test_##name : public fixture { public: void Run(); }; \\\n  void _Test_##name::Run()\n",
    "store_test.cc": "#include <cstdio>\n#include \"harness.h\"\n#include \"status.h\"\nnamespace kv {\n"
                     "class StoreTest { public: Status Open(int n) { return Read(n); } int opened_ = 2; };\n"
                     "TEST(StoreTest, Basics) {\n"
                     "  std::printf(\"%d %d %d\\n\", Open(0).ok() ? 1 : 0, Read(1).ok() ? 1 : 0, opened_);\n}\n}\n"
                     "int main() { kv::_Test_Basics t; t.Run(); return 0; }\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_a_test_macro_s_body_sees_its_fixture_and_a_function_s_written_return_type(tmp_path: Path) -> None:
    """LevelDB's and Ninja's tests: ``TEST(MemEnvTest, Basics) { env_->... }`` makes a class deriving from the fixture,
    so ``env_``, ``Put(...)``, ``GetNode(...)`` are the fixture's members; they were unresolved, and so was every
    chain through them. ``ReadBlock(...).ok()``: a function defined at namespace scope returns the class written
    before its name. Both were ``low`` where another class has an ``ok`` (``TableBuilder::ok``): the build broke."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "status.cc", "store_test.cc")

    with refactor_env(tmp_path / "repo", FIXTURES) as env:
        assert run(env.root) == "1 0 2\n"
        preview = env.service.rename("kv.Status.ok", "good")
        by_place = {(e.path, e.line, e.column): e.certainty for e in preview.edits}
        assert by_place[("store_test.cc", 7, 36)] == by_place[("store_test.cc", 7, 58)] == "medium", preview.edits
        assert by_place[("status.h", 5, 22)] == "low"  # Builder's
        env.service.apply(preview.refactor_id)
        field = env.service.rename("kv.StoreTest.opened_", "count_")
        assert not [e for e in field.edits if e.certainty == "low"], field.edits
        env.service.apply(field.refactor_id)
        assert run(env.root) == "1 0 2\n"


SMART = {
    "node.h": "#pragma once\nclass Node {\n public:\n  int weight() const { return 4; }\n  void reset() {}\n};\n"
              "class Edge {\n public:\n  int weight() const { return 1; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include <memory>\n#include <vector>\n#include \"node.h\"\nint main() {\n"
                "  std::unique_ptr<Node> p(new Node());\n  std::shared_ptr<const Node> q = std::make_shared<Node>();\n"
                "  std::vector<std::unique_ptr<Node>> all;\n  all.push_back(std::unique_ptr<Node>(new Node()));\n"
                "  Edge e;\n  int n = p->weight() + q->weight() + all[0]->weight() + e.weight();\n"
                "  p.reset();\n  std::printf(\"%d\\n\", n);\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_a_smart_pointer_reaches_the_class_it_points_at(tmp_path: Path) -> None:
    """``std::unique_ptr<Node> p; p->weight()`` (and ``std::shared_ptr<const Node>``, ``all[0]->weight()`` on a
    vector of them) was typed by nothing: ``low`` where ``Edge`` has a ``weight``, so the default selection broke the
    build. ``p.reset()`` is the pointer's own member, never ``Node::reset``."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "main.cpp")

    with refactor_env(tmp_path / "repo", SMART) as env:
        assert run(env.root) == "13\n"
        preview = env.service.rename("Node.weight", "mass")
        by_line = [(e.line, e.certainty) for e in preview.edits if e.path == "main.cpp"]
        assert by_line.count((11, "medium")) == 3 and (11, "low") in by_line, preview.edits  # ``e.weight()``: Edge's
        env.service.apply(preview.refactor_id)
        assert run(env.root) == "13\n"
        reset = env.service.rename("Node.reset", "clear")
        assert [e.certainty for e in reset.edits if e.path == "main.cpp"] == ["low"], reset.edits


AUTOS = {
    "graph.h": "#pragma once\nclass Node {\n public:\n  int mtime() const { return 5; }\n};\n"
               "class Log {\n public:\n  int mtime() const { return 7; }\n};\n"
               "class State {\n public:\n  Node* LookupNode(int) { return &node_; }\n  Node node_;\n};\n",
    "main.cpp": "#include <cstdio>\n#include \"graph.h\"\nint main() {\n  State state; State* sp = &state; Log log;\n"
                "  auto n = state.LookupNode(1);\n  auto* m = sp->LookupNode(2);\n"
                "  std::printf(\"%d\\n\", n->mtime() + m->mtime() + log.mtime());\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_auto_takes_the_type_the_called_function_returns(tmp_path: Path) -> None:
    """``auto n = state.LookupNode(path);`` (and ``auto* m = sp->LookupNode(...)``) said nothing about ``n``: its uses
    were ``low`` where another class (``Log``) has the member, and renaming ``Node::mtime`` broke the build."""
    with refactor_env(tmp_path / "repo", AUTOS) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "17\n"
        preview = env.service.rename("Node.mtime", "modified")
        by_place = {(e.path, e.line, e.column): e.certainty for e in preview.edits}
        assert by_place[("main.cpp", 7, 25)] == by_place[("main.cpp", 7, 38)] == "medium", preview.edits
        assert by_place[("main.cpp", 7, 52)] == "low"  # ``log.mtime()``: Log's
        env.service.apply(preview.refactor_id)
        assert build_and_run(env.root, "g++", "main.cpp") == "17\n"


POINTERS = {
    "key.h": "#pragma once\nclass Key {\n public:\n  int size() const { return 3; }\n"
             "  char operator[](int) const { return 'k'; }\n};\n"
             "class Other {\n public:\n  int size() const { return 1; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include \"key.h\"\n"
                "int total(const Key* keys, Key** refs, int n) {\n  Key arr[2]; Other o;\n"
                "  return keys[n].size() + refs[n]->size() + arr[1].size() + o.size();\n}\n"
                "int main() {\n  Key ks[2]; Key* rs[2] = {&ks[0], &ks[1]};\n"
                "  std::printf(\"%d %c\\n\", total(ks, rs, 1), ks[0][0]);\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_a_subscript_through_a_pointer_or_array_reaches_its_class(tmp_path: Path) -> None:
    """LevelDB's ``keys[i].size()`` on ``const Slice* keys`` was ``low`` beside ``std::string``'s and other classes'
    ``size``: renaming ``Slice::size`` broke the build. Subscripts through every ``*`` and ``[N]`` of the declaration
    reach the class (``refs[n]->size()``: one fewer before ``->``); ``ks[0][0]`` uses ``Key``'s ``operator[]``."""
    with refactor_env(tmp_path / "repo", POINTERS) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "10 k\n"
        preview = env.service.rename("Key.size", "length")
        lows = [(e.line, e.column) for e in preview.edits if e.path == "main.cpp" and e.certainty == "low"]
        typed = [(e.line, e.column) for e in preview.edits if e.path == "main.cpp" and e.certainty == "medium"]
        assert len(typed) == 3 and lows == [(5, 62)], preview.edits  # ``o.size()``: Other's
        env.service.apply(preview.refactor_id)
        assert build_and_run(env.root, "g++", "main.cpp") == "10 k\n"


VEXING = {
    "key.h": "#pragma once\nclass Key {\n public:\n  explicit Key(int v) : v_(v) {}\n"
             "  int size() const { return v_; }\n"
             " private:\n  int v_;\n};\nclass Other {\n public:\n  int size() const { return 1; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include \"key.h\"\nint main() {\n  int seed = 4;\n  Key input(seed);\n  Other o;\n"
                "  std::printf(\"%d\\n\", input.size() + o.size());\n  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_an_object_constructed_in_a_block_is_a_local_of_its_class(tmp_path: Path) -> None:
    """LevelDB's ``Slice input(rep_);`` parses as a function declaration (C++'s most vexing parse): ``input`` was
    bound to nothing, ``input.size()`` ``low`` beside ``std::string``'s ``size``, and renaming ``Slice::size`` broke
    the build. A block-scope declaration whose parameters are lone names constructs an object."""
    with refactor_env(tmp_path / "repo", VEXING) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "5\n"
        preview = env.service.rename("Key.size", "length")
        used = sorted((e.column, e.certainty) for e in preview.edits if e.path == "main.cpp")
        assert used == [(28, "medium"), (39, "low")], preview.edits  # ``o.size()``: Other's
        env.service.apply(preview.refactor_id)
        assert build_and_run(env.root, "g++", "main.cpp") == "5\n"


CALLBACKS = {
    "key.h": "#pragma once\nclass Key {\n public:\n  int size() const { return 2; }\n};\n"
             "class Other {\n public:\n  int size() const { return 1; }\n};\n",
    "main.cpp": "#include <cstdio>\n#include \"key.h\"\n"
                "int Insert(const Key& key, int n, void (*deleter)(const Key& key, int n)) {\n"
                "  deleter(key, n);\n  return key.size() + n;\n}\n"
                "void drop(const Key&, int) {}\n"
                "int main() {\n  Key k; Other o;\n  std::printf(\"%d\\n\", Insert(k, 3, drop) + o.size());\n"
                "  return 0;\n}\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_cpp_the_parameters_of_a_callback_parameter_bind_nothing_in_the_body(tmp_path: Path) -> None:
    """LevelDB's ``LRUCache::Insert(const Slice& key, ..., void (*deleter)(const Slice& key, void* value))``: the
    callback's own ``key`` was taken for a second parameter of ``Insert``, so ``key`` in the body was bound to
    neither and ``key.size()`` stayed ``low``; renaming ``Slice::size`` broke the build."""
    with refactor_env(tmp_path / "repo", CALLBACKS) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "6\n"
        preview = env.service.rename("Key.size", "length")
        used = sorted((e.line, e.certainty) for e in preview.edits if e.path == "main.cpp")
        assert used == [(5, "medium"), (10, "low")], preview.edits  # ``o.size()``: Other's
        env.service.apply(preview.refactor_id)
        assert build_and_run(env.root, "g++", "main.cpp") == "6\n"


INLINE_PARTS = {
    "widget.hpp": "#pragma once\nnamespace ui {\nclass Widget {\n public:\n  int size() const;\n"
                  "  int twice() const;\n};\n}\n#include \"widget.inl\"\n#include \"detail/widget.ipp\"\n",
    "widget.inl": "namespace ui {\ninline int Widget::size() const { return 7; }\n}\n",
    "detail/widget.ipp": "namespace ui {\ninline int Widget::twice() const { return 2 * size(); }\n}\n",
    "main.cpp": "#include <cstdio>\n#include \"widget.hpp\"\n"
                "int main() { ui::Widget w; std::printf(\"%d %d\\n\", w.size(), w.twice()); return 0; }\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_a_header_s_inline_part_defines_the_members_its_header_declares(tmp_path: Path) -> None:
    """A header-only library's ``.inl``/``.ipp``, included at the header's end, includes nothing itself: it is
    compiled as part of its includer. Left out of the C program, ``Widget::size`` there was a second symbol of the
    same name: the rename asked which one was meant, and renaming either left the build broken."""
    def run(root: Path) -> str:
        return build_and_run(root, "g++", "main.cpp")

    with refactor_env(tmp_path / "repo", INLINE_PARTS) as env:
        assert run(env.root) == "7 14\n"
        preview = env.service.rename("ui.Widget.size", "count")
        assert preview.status == "ready", preview.candidates
        edits = {(e.path, e.line): e.certainty for e in preview.edits}
        assert edits.get(("widget.hpp", 5)) == "high" and edits.get(("widget.inl", 2)) == "high", edits
        assert edits.get(("detail/widget.ipp", 2)) == "high" and ("main.cpp", 3) in edits, edits
        env.service.apply(preview.refactor_id)
        assert "inline int Widget::count() const" in env.read("widget.inl")
        assert run(env.root) == "7 14\n"


QUALIFIED_BASE = {
    "shape.h": ("#pragma once\nnamespace geo {\nclass Shape {\n public:\n  virtual ~Shape() = default;\n"
                "  virtual int Area() const { return 1; }\n};\nclass Square : public Shape {\n public:\n"
                "  int Area() const override { return Shape::Area() * 2; }\n};\n}\n"),
    "main.cpp": "#include <cstdio>\n#include \"shape.h\"\nint main() { geo::Square s; std::printf(\"%d\\n\", s.Area());"
                " return 0; }\n",
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_a_qualified_call_of_the_base_s_method_inside_the_override_is_that_method(tmp_path: Path) -> None:
    """``return Shape::Area() * 2;`` inside ``Square::Area``: the name ``Area`` is the class's own there, so linking
    skipped it and it stayed ``low``; the override rename (which takes ``Shape::Area`` along) left it behind and
    g++ failed (``'Area' is not a member of 'geo::Shape'``). A qualified name is looked up where it says."""
    with refactor_env(tmp_path / "repo", QUALIFIED_BASE) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "2\n"
        preview = env.service.rename("geo.Square.Area", "Surface")
        assert {(e.line, e.certainty) for e in preview.edits if e.path == "shape.h"} == {
            (6, "high"), (10, "high")}, preview.edits
        assert len([e for e in preview.edits if e.path == "shape.h" and e.line == 10]) == 2
        env.service.apply(preview.refactor_id)
        assert "return Shape::Surface() * 2;" in env.read("shape.h")
        assert build_and_run(env.root, "g++", "main.cpp") == "2\n"


NAMESPACE_CONSTANT = {
    "shape.h": ("#pragma once\nnamespace geo {\nconstexpr int kScale = 2;\n"
                "inline int Scaled(int v) { return v * kScale; }\n}\n"),
    "main.cpp": ("#include <cstdio>\n#include \"shape.h\"\n"
                 "int main() { std::printf(\"%d %d\\n\", geo::Scaled(3), geo::kScale); return 0; }\n"),
}


@pytest.mark.skipif(shutil.which("g++") is None, reason="a C++ compiler builds the renamed project")
def test_a_namespace_s_constant_is_a_definition_renamed_with_its_qualified_uses(tmp_path: Path) -> None:
    """``namespace geo { constexpr int kScale = 2; }``: no definition at all (only file-scope variables were), so
    ``search`` found nothing and the rename answered 3007."""
    with refactor_env(tmp_path / "repo", NAMESPACE_CONSTANT) as env:
        assert build_and_run(env.root, "g++", "main.cpp") == "6 2\n"
        renamed = rename_all_high(env, "geo.kScale", "kFactor")
        assert {(p, line) for p, line, _ in renamed} == {("shape.h", 3), ("shape.h", 4), ("main.cpp", 3)}, renamed
        assert build_and_run(env.root, "g++", "main.cpp") == "6 2\n"
