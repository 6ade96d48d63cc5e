"""``semantic_diff``: real git repositories, the real index and extractors; the tool through the real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.analysis import SemanticDiffService
from codeplane.analysis import service as service_module
from codeplane.analysis.models import Change
from codeplane.core.config import IndexConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    git,
    make_repo,
    mcp_client,
    running_server,
    write_files,
)

BODY_4 = "".join(f"    v{i} = {i}\n" for i in range(4))
BODY_25 = "".join(f"    w{i} = {i}\n" for i in range(25))

BASE: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "def params(a, b):\n    return a + b\n\n\n"
        "def tolerant(a, b=1):\n    return a + b\n\n\n"
        "def returns(a) -> int:\n    return a\n\n\n"
        "def minor(a):\n    return a\n\n\n"
        "def logic(a):\n    return a\n\n\n"
        "def major(a):\n    return a\n\n\n"
        "def removed_one(a):\n    return a\n\n\n"
        "def old_fn(x, y):\n    return x * y\n\n\n"
        "class Base:\n    pass\n\n\n"
        "class Other:\n    pass\n\n\n"
        "class Shape(Base):\n"
        "    def area(self):\n        return 0\n\n"
        "    def old_method(self, k):\n        total = k + 1\n        return total\n\n\n"
        "class OldBox:\n    def inside(self):\n        return 'box'\n"),
    "pkg/use.py": "from pkg.core import params, removed_one\n\n\ndef go():\n    return params(1, 2) + removed_one(3)\n",
    "tests/test_core.py": "from pkg.core import params\n\n\ndef test_params():\n    assert params(1, 2) == 3\n",
    "svc/main.go": "package main\n\nfunc Start(port int) error {\n\treturn nil\n}\n\nfunc Stop() {\n}\n",
    "web/util.ts": "export function join(a: string): string {\n  return a;\n}\n",
    "assets/logo.bin": b"\x00\x01\x02",
    "docs/guide.rst": "Guide\n=====\n",
    "pkg/legacy.py": "def old_api():\n    return 0\n",
    ".cplignore": "gen/\n",
}

def test_a_body_change_of_a_name_bound_to_a_function_is_no_signature_change(tmp_path: Path) -> None:
    # qs's ``var compact = function compact(value) {...}``: its first 200 bytes, body included, were its
    # signature, so a comment added inside was "signature changed" and a breaking change.
    text = ("var compact = function compact(value) {\n    var queue = [];\n    return queue;\n};\n\n"
            "const pad = (s, n) => {\n    return s.padStart(n);\n};\n\n"
            "const Box = class Box extends Object {\n    size() { return 1; }\n};\n\n"
            "var widen = function widen(a) {\n    return a;\n};\n\nmodule.exports = { compact, pad, Box, widen };\n")
    root = make_repo(tmp_path / "r", {"lib/utils.js": text})
    edited = (text.replace("    var queue = [];", "    // walk the queue\n    var queue = [];")
              .replace("s.padStart(n)", "s.padStart(n, ' ')").replace("size() { return 1; }", "size() { return 2; }")
              .replace("function widen(a)", "function widen(a, b)"))
    (root / "lib/utils.js").write_text(edited)
    git(root, "commit", "-qam", "edit")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    changes = {c.qualified_name: c.change for c in page.changes if c.parent is None}
    assert changes == {"compact": "body_changed", "pad": "body_changed", "Box.size": "body_changed",
                       "widen": "signature_changed"}, changes
    widen = next(c for c in page.changes if c.qualified_name == "widen")
    assert widen.new is not None and widen.new.display_name == "widen = function widen(a, b)", widen.new


def test_comment_only_changes_in_javascript_go_and_rust_are_said_so(tmp_path: Path) -> None:
    files = {"web/a.js": ("function quiet(x) {\n  return x + 1;\n}\n\nfunction asi(x) {\n  return x;\n}\n\n"
                          "function text(x) {\n  return 'a b' + x;\n}\n"),
             "svc/a.go": "package svc\n\nfunc Quiet(x int) int {\n\treturn x + 1\n}\n",
             "src/lib.rs": ("pub fn quiet(x: u8) -> u8 {\n    x + 1\n}\n\npub fn loud(x: u8) -> u8 {\n    x\n}\n\n"
                            "pub fn doc() -> u8 {\n    /// Adds one.\n    fn one() -> u8 {\n        1\n    }\n"
                            "    one()\n}\n")}
    root = make_repo(tmp_path / "r", files)
    write_files(root, {
        # a comment and spacing; ``return`` then a line break returns nothing (ASI); spacing inside a string
        "web/a.js": ("function quiet(x) {\n  // one more\n  return x  +  1; /* why */\n}\n\n"
                     "function asi(x) {\n  return\n  x;\n}\n\nfunction text(x) {\n  return 'a  b' + x;\n}\n"),
        "svc/a.go": "package svc\n\nfunc Quiet(x int) int {\n\t// one more\n\treturn x+1\n}\n",
        # a Rust doc comment is an attribute (and a doctest): no comment
        "src/lib.rs": ("pub fn quiet(x: u8) -> u8 {\n    // one more\n    x + /* why */ 1\n}\n\n"
                       "pub fn loud(x: u8) -> u8 {\n    x * 1\n}\n\n"
                       "pub fn doc() -> u8 {\n    /// Returns one.\n    fn one() -> u8 {\n        1\n    }\n"
                       "    one()\n}\n")})
    git(root, "commit", "-qam", "edit")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    tags = {f"{c.path}:{c.qualified_name}": c.delta_tags for c in page.changes}
    assert tags == {"web/a.js:quiet": ("comments_only",), "web/a.js:asi": ("minor_change",),
                    "web/a.js:text": ("minor_change",), "svc/a.go:Quiet": ("comments_only",),
                    "src/lib.rs:quiet": ("comments_only",), "src/lib.rs:loud": ("minor_change",),
                    "src/lib.rs:doc": ("minor_change",)}, tags


TARGET: dict[str, str | bytes] = {
    "pkg/core.py": (
        "def params(a, b, c):\n    return a + b\n\n\n"
        "def tolerant(a, b=2, *, c=None):\n    return a + b\n\n\n"
        "def returns(a) -> str:\n    return a\n\n\n"
        "def minor(a):\n    return a + 1\n\n\n"
        f"def logic(a):\n{BODY_4}    return a\n\n\n"
        f"def major(a):\n{BODY_25}    return a\n\n\n"
        "def new_fn(x, y):\n    return x * y\n\n\n"
        "def added_one():\n    return 1\n\n\n"
        "class Base:\n    pass\n\n\n"
        "class Other:\n    pass\n\n\n"
        "class Shape(Other):\n"
        "    def area(self):\n        return 0\n\n"
        "    def new_method(self, k):\n        total = k + 1\n        return total\n\n\n"
        "class NewBox:\n    def inside(self):\n        return 'box'\n\n\n"
        "class Fresh:\n    def one(self):\n        return 1\n\n    def two(self):\n        return 2\n"),
    "svc/main.go": "package main\n\nfunc Start(port int, host string) error {\n\treturn nil\n}\n\n"
                   "func Health() bool {\n\treturn true\n}\n",
    "web/util.ts": "export function join(a: string, b: string): string {\n  return a + b;\n}\n",
    "assets/logo.bin": b"\x00\x01\x03",
    "docs/guide.rst": "Guide\n=====\n\nMore.\n",
}


def _index(root: Path) -> IndexService:
    service = IndexService(root, RepoLayout(root), IndexConfig(watch=False))
    service.register_indexer(StructuralIndexer())
    service.start()
    assert service.wait_ready(60), service.status()
    return service


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    root = make_repo(tmp_path_factory.mktemp("semantic_diff") / "repo", {**BASE, ".gitignore": ".codeplane/\n"})
    write_files(root, TARGET)
    (root / "pkg/legacy.py").unlink()
    # Untracked: a new module is reported; generated code CodePlane ignores (.cplignore) is not.
    write_files(root, {"pkg/fresh_mod.py": "def brand_new(q):\n    return q\n",
                       "gen/out.py": "def junk():\n    pass\n"})
    index = _index(root)
    try:
        yield root, index
    finally:
        index.stop()


def _all(service: SemanticDiffService, **kwargs: Any) -> list[Change]:
    return list(service.diff(limit=100, **kwargs).changes)


def _by_name(changes: list[Change]) -> dict[str, Change]:
    return {f"{c.path}:{c.qualified_name}": c for c in changes}


def test_each_change_kind_and_delta_tag(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    found = _by_name(_all(SemanticDiffService(root, index)))
    expect = {
        "pkg/core.py:params": ("signature_changed", ("parameters_changed",)),
        "pkg/core.py:returns": ("signature_changed", ("return_type_changed",)),
        "pkg/core.py:Shape": ("signature_changed", ("signature_changed",)),
        "pkg/core.py:minor": ("body_changed", ("minor_change",)),
        "pkg/core.py:logic": ("body_changed", ("body_logic_changed",)),
        "pkg/core.py:major": ("body_changed", ("major_change",)),
        "pkg/core.py:removed_one": ("removed", ("symbol_removed",)),
        "pkg/core.py:added_one": ("added", ("symbol_added",)),
        "pkg/core.py:new_fn": ("renamed", ("symbol_renamed",)),
    }
    for key, (change, tags) in expect.items():
        assert (found[key].change, found[key].delta_tags) == (change, tags), key
    assert found["pkg/core.py:minor"].lines_changed == 1
    assert found["pkg/core.py:minor"].preview == ("-    return a", "+    return a + 1")
    assert found["pkg/core.py:logic"].lines_changed == 4 and found["pkg/core.py:major"].lines_changed == 25
    params = found["pkg/core.py:params"]
    assert params.old is not None and params.new is not None
    assert (params.old.display_name, params.new.display_name) == ("def params(a, b)", "def params(a, b, c)")
    assert params.structural_severity == "breaking" and params.new.start_line == 1
    # Every call of ``tolerant(a, b=1)`` still binds to ``tolerant(a, b=2, *, c=None)``: not breaking, though
    # what it does may differ.
    tolerant = found["pkg/core.py:tolerant"]
    assert tolerant.delta_tags == ("parameters_changed",)
    assert (tolerant.structural_severity, tolerant.behavior_change_risk) == ("non_breaking", "medium")
    assert found["pkg/core.py:added_one"].structural_severity == "non_breaking"
    assert found["pkg/core.py:major"].behavior_change_risk == "high"
    assert found["pkg/core.py:minor"].behavior_change_risk == "low"
    # Unchanged definitions are not reported, even though lines above them moved.
    assert "pkg/core.py:Base" not in found and "pkg/core.py:Shape.area" not in found


def test_renames_carry_their_members_and_nest_under_the_class(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    changes = _all(SemanticDiffService(root, index), paths=["pkg"])
    found = _by_name(changes)
    method = found["pkg/core.py:Shape.new_method"]
    assert method.change == "renamed" and method.old is not None and method.old.name == "old_method"
    box = found["pkg/core.py:NewBox"]
    assert box.change == "renamed" and box.old is not None and box.old.name == "OldBox"
    # The renamed class's method matched its old self (unchanged): neither removed nor added.
    assert not any(c.qualified_name.endswith(".inside") for c in changes)
    renamed_fn = found["pkg/core.py:new_fn"]
    assert renamed_fn.old is not None and renamed_fn.old.name == "old_fn"
    # Nested: the added class's methods follow it and point at it; the renamed method nests under Shape.
    fresh = changes.index(found["pkg/core.py:Fresh"])
    assert [c.qualified_name for c in changes[fresh + 1:fresh + 3]] == ["Fresh.one", "Fresh.two"]
    assert all(c.parent == fresh and c.change == "added" for c in changes[fresh + 1:fresh + 3])
    assert method.parent == changes.index(found["pkg/core.py:Shape"])


def test_go_and_typescript_and_files_without_definitions(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    page = SemanticDiffService(root, index).diff(limit=100)
    found = _by_name(list(page.changes))
    assert found["svc/main.go:Start"].change == "signature_changed"
    assert found["svc/main.go:Start"].delta_tags == ("parameters_changed",)
    assert found["svc/main.go:Stop"].change == "removed" and found["svc/main.go:Health"].change == "added"
    assert found["web/util.ts:join"].change == "signature_changed"
    files = {f.path: f for f in page.files}
    assert (files["assets/logo.bin"].category, files["assets/logo.bin"].reason) == ("prod", "binary")
    assert (files["docs/guide.rst"].category, files["docs/guide.rst"].status) == ("docs", "modified")
    assert files["docs/guide.rst"].reason == "unsupported"


def test_untracked_and_deleted_files_and_the_comparison_bound(repo: tuple[Path, IndexService],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root, index = repo
    page = SemanticDiffService(root, index).diff(limit=100)
    found = _by_name(list(page.changes))
    assert found["pkg/fresh_mod.py:brand_new"].change == "added"
    assert found["pkg/legacy.py:old_api"].change == "removed"
    assert not any(c.path.startswith("gen/") for c in page.changes)
    assert not any(f.path.startswith("gen/") for f in page.files)
    statuses = {f.path: f.status for f in page.files}
    assert statuses["assets/logo.bin"] == "modified"
    # Past the bound, files are still listed, marked not_compared, and a note says how to narrow.
    monkeypatch.setattr(service_module, "MAX_COMPARED", 2)
    bounded = SemanticDiffService(root, index).diff(limit=100)
    skipped = [f for f in bounded.files if f.reason == "not_compared"]
    assert skipped and len(bounded.report.notes) == 1 and "narrow with paths" in bounded.report.notes[0]
    assert len({c.path for c in bounded.changes} | {f.path for f in bounded.files}) == bounded.report.files_analyzed


#: path -> (old text, new text): f gains a parameter, g is removed, h is added (or g renamed to h when
#: the two are the same text apart from the name).
LANGUAGES: dict[str, tuple[str, str]] = {
    "a.js": ("function f(a) {\n  return a;\n}\n\nfunction g() {\n  return 1;\n}\n",
             "function f(a, b) {\n  return a;\n}\n\nfunction h() {\n  return 2;\n}\n"),
    "a.ts": ("export function f(a: number): number {\n  return a;\n}\n\nexport function g(): void {}\n",
             "export function f(a: number, b: number): number {\n  return a;\n}\n\n"
             "export function h(): void {}\n"),
    "a.go": ("package p\n\nfunc f(a int) int {\n\treturn a\n}\n\nfunc g() {}\n",
             "package p\n\nfunc f(a int, b int) int {\n\treturn a\n}\n\nfunc h() {}\n"),
    "a.rs": ("fn f(a: i32) -> i32 {\n    a\n}\n\nfn g() {}\n",
             "fn f(a: i32, b: i32) -> i32 {\n    a\n}\n\nfn h() {}\n"),
    "A.java": ("class A {\n  int f(int a) { return a; }\n  void g() {}\n}\n",
               "class A {\n  int f(int a, int b) { return a; }\n  void h() {}\n}\n"),
    "a.kt": ("fun f(a: Int): Int {\n    return a\n}\n\nfun g() {}\n",
             "fun f(a: Int, b: Int): Int {\n    return a\n}\n\nfun h() {}\n"),
    "A.cs": ("class A {\n  int f(int a) { return a; }\n  void g() {}\n}\n",
             "class A {\n  int f(int a, int b) { return a; }\n  void h() {}\n}\n"),
    "a.rb": ("def f(a)\n  a\nend\n\ndef g\nend\n", "def f(a, b)\n  a\nend\n\ndef h\nend\n"),
    "a.php": ("<?php\nfunction f($a) { return $a; }\nfunction g() {}\n",
              "<?php\nfunction f($a, $b) { return $a; }\nfunction h() {}\n"),
    "a.c": ("int f(int a) { return a; }\nvoid g(void) {}\n", "int f(int a, int b) { return a; }\nvoid h(void) {}\n"),
    "a.cpp": ("int f(int a) { return a; }\nvoid g() {}\n", "int f(int a, int b) { return a; }\nvoid h() {}\n"),
    "r.ts": ("export function r(a: number): number {\n  return a;\n}\n",
             "export function r(a: number): string {\n  return String(a);\n}\n"),
}


def test_every_extracted_language(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {path: old for path, (old, _) in LANGUAGES.items()})
    write_files(root, {path: new for path, (_, new) in LANGUAGES.items()})
    page = SemanticDiffService(root).diff(limit=100)
    got: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {}
    for c in page.changes:
        got.setdefault(c.path, []).append((c.name, c.change, c.delta_tags))
    assert not page.files
    for path in LANGUAGES:
        if path == "r.ts":
            continue
        assert got[path][0] == ("f", "signature_changed", ("parameters_changed",)), path
        rest = sorted(got[path][1:])
        assert rest in ([("h", "renamed", ("symbol_renamed",))],
                        [("g", "removed", ("symbol_removed",)), ("h", "added", ("symbol_added",))]), (path, rest)
    # g and h differ in body, but their headers match apart from the name and are unique: a rename (§23.7).
    assert got["a.js"][1:] == [("h", "renamed", ("symbol_renamed",))]
    assert got["r.ts"] == [("r", "signature_changed", ("return_type_changed",))]


def test_blast_radius_from_the_index(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    found = _by_name(_all(SemanticDiffService(root, index)))
    impact = found["pkg/core.py:params"].impact
    assert impact is not None and impact.reference_basis == "ref_facts_resolved" and impact.confidence == "high"
    assert impact.strong == 2 and impact.referencing_files == ("pkg/use.py", "tests/test_core.py")
    assert impact.importing_files == ("pkg/use.py", "tests/test_core.py")
    gone = found["pkg/core.py:removed_one"].impact
    assert gone is not None and gone.reference_basis == "ref_facts_partial" and gone.confidence == "low"
    assert gone.importing_files == ("pkg/use.py",)
    assert found["pkg/core.py:removed_one"].behavior_change_risk == "high"
    hint = SemanticDiffService(root, index).diff(limit=1).agentic_hint
    assert hint.startswith("1. update the callers of") and "params (0 proven, 2 strong)" in hint
    assert "2. check references to 3 removed symbols" in hint


def test_two_commits_and_a_renamed_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a/mod.py": "def keep(x):\n    return x\n\n\ndef f(a):\n    return a\n"})
    git(root, "mv", "a/mod.py", "a/moved.py")
    (root / "a/moved.py").write_text("def keep(x):\n    return x\n\n\ndef f(a, b):\n    return a\n")
    git(root, "commit", "-qam", "move")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    assert [(c.path, c.qualified_name, c.change, c.old_path) for c in page.changes] == [
        ("a/moved.py", "f", "signature_changed", "a/mod.py")]
    assert page.report.base.startswith("HEAD~1 (") and page.report.target.startswith("HEAD (")
    # Without an index there is no blast radius, and the basis says so.
    impact = page.changes[0].impact
    assert impact is not None and impact.reference_basis == "unknown"
    # The work tree is clean: nothing changed against HEAD.
    assert SemanticDiffService(root).diff(limit=10).changes == ()


def test_a_change_in_comments_and_spacing_alone_is_said_so_and_not_sent_to_review(tmp_path: Path) -> None:
    # Django's 95 ``def __str__(self):  # str`` edits were "95 body changes for correctness" to review.
    text = ("def quiet(x):\n    return x + 1\n\n\ndef loud(x):\n    return x\n\n\n"
            "def documented(x):\n    \"\"\"Old.\"\"\"\n    return x\n\n\n"
            "def nested(x):\n    if x:\n        a()\n    b()\n")
    root = make_repo(tmp_path / "r", {"m.py": text, "notes.txt": "m\n"})
    (root / "notes.txt").write_text("m, edited\n")
    (root / "m.py").write_text(text.replace("def quiet(x):", "def quiet(x):  # why").replace("x + 1", "x  +  1")
                               .replace("return x\n\n\ndef doc", "return x * 2\n\n\ndef doc")
                               .replace("Old.", "New.").replace("    b()", "        b()"))
    git(root, "commit", "-qam", "edit")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    tags = {c.qualified_name: (c.delta_tags, c.behavior_change_risk) for c in page.changes}
    # A docstring is no comment (``__doc__``, doctests), nor is an indentation that moves code into a block.
    assert tags == {"quiet": (("comments_only",), "low"), "loud": (("minor_change",), "low"),
                    "documented": (("minor_change",), "low"), "nested": (("minor_change",), "low")}, tags
    assert page.summary == "4 body changed in 1 file; 1 file without structural changes", page.summary
    assert "1. 1 body change only in comments or spacing (the code is the same): quiet" in page.agentic_hint
    assert "2. review 3 body changes for correctness" in page.agentic_hint and "quiet" not in \
        page.agentic_hint.split("2. ")[1], page.agentic_hint

def test_spacing_inside_a_signature_is_no_signature_change(tmp_path: Path) -> None:
    """``def split_opt(  opt: str)`` was "signature_changed, breaking, risk high": the header's hash is of its raw
    text. A real change of the parameters still is one."""
    text = "def split_opt(opt: str) -> str:\n    return opt\n\n\ndef other(a):\n    return a\n"
    root = make_repo(tmp_path / "r", {"m.py": text})
    (root / "m.py").write_text(text.replace("split_opt(opt: str)", "split_opt(  opt: str,  )")
                               .replace("other(a)", "other(a, b=1)"))
    git(root, "commit", "-qam", "edit")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    kinds = {c.qualified_name: (c.change, c.delta_tags) for c in page.changes}
    assert kinds["other"][0] == "signature_changed", kinds
    assert kinds.get("split_opt", ("body_changed",))[0] != "signature_changed", kinds


def test_annotations_respelled_as_the_same_types_are_no_breaking_change(tmp_path: Path) -> None:
    """``Optional[bool]`` → ``bool | None`` was "signature_changed, breaking": the same type, spelled otherwise,
    is ``annotation_spelling`` (non-breaking, low); a type that really changed still breaks."""
    text = ("from typing import List, Optional, Union\n\n\ndef flag(x: Optional[bool] = None) -> Optional[int]:\n"
            "    return 1\n\n\ndef items(x: Union[int, str]) -> List[int]:\n    return []\n\n\n"
            "def narrowed(x: Optional[int]) -> int:\n    return 0\n")
    root = make_repo(tmp_path / "r", {"m.py": text})
    (root / "m.py").write_text(text.replace("(x: Optional[bool] = None) -> Optional[int]",
                                            "(x: bool | None = None) -> int | None")
                               .replace("(x: Union[int, str]) -> List[int]", "(x: str | int) -> list[int]")
                               .replace("narrowed(x: Optional[int])", "narrowed(x: int)"))
    git(root, "commit", "-qam", "respell")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    found = {c.qualified_name: (c.delta_tags, c.structural_severity, c.behavior_change_risk) for c in page.changes}
    assert found["flag"] == (("annotation_spelling",), "non_breaking", "low"), found
    assert found["items"] == (("annotation_spelling",), "non_breaking", "low"), found
    assert found["narrowed"][0] == ("parameters_changed",), found


def test_work_tree_moves_staged_or_not_and_a_staged_change_undone_on_disk(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a/one.py": "def f(a):\n    return a\n", "a/two.py": "def g():\n    pass\n",
                                      "a/three.py": "def h(x):\n    return x\n"})
    (root / "b").mkdir()
    git(root, "mv", "a/one.py", "b/one.py")  # staged move, then edited on disk
    (root / "b/one.py").write_text("def f(a, b):\n    return a\n")
    (root / "a/two.py").rename(root / "c_two.py")  # plain move, untracked destination
    (root / "a/three.py").write_text("def h(x, y):\n    return x\n")
    git(root, "add", "a/three.py")
    (root / "a/three.py").write_text("def h(x):\n    return x\n")  # staged change undone on disk
    (root / "link.py").symlink_to("b/one.py")  # listed, never followed or parsed
    page = SemanticDiffService(root).diff(limit=100)
    assert [(c.path, c.old_path, c.qualified_name, c.change) for c in page.changes] == [
        ("b/one.py", "a/one.py", "f", "signature_changed")]
    assert [(f.path, f.old_path, f.status, f.reason) for f in page.files] == [
        ("c_two.py", "a/two.py", "renamed", "no_definition_changed"),
        ("link.py", None, "added", "not_a_regular_file")]
    assert page.report.files_analyzed == 3


def test_pagination_is_complete_and_stable(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    service = SemanticDiffService(root, index)
    whole = service.diff(limit=100)
    items: list[object] = []
    page = service.diff(limit=3)
    pages = 1
    while True:
        items += [*page.changes, *page.files]
        if page.next_cursor is None:
            break
        page = service.diff(cursor=page.next_cursor, limit=3)
        pages += 1
    assert items == [*whole.changes, *whole.files] and pages == -(-whole.total // 3)
    first = service.diff(limit=2)
    assert first.next_cursor is not None
    # Same state and input, same bytes: asked again, or by a restarted server (a new service), the same cursor.
    assert service.diff(limit=2).next_cursor == first.next_cursor
    assert SemanticDiffService(root, index).diff(limit=2).next_cursor == first.next_cursor
    assert service.diff(cursor=first.next_cursor, limit=100).changes == whole.changes[2:]
    with pytest.raises(CodePlaneError) as other:
        service.diff(base="HEAD", paths=["pkg"], cursor=first.next_cursor, limit=2)
    assert other.value.error is ErrorCode.INVALID_CURSOR


def test_bad_input_is_a_typed_error(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    service = SemanticDiffService(root, index)
    cases = [({"base": "no-such-branch"}, ErrorCode.GIT_REF_NOT_FOUND),
             ({"base": "HEAD", "target": "nope~3"}, ErrorCode.GIT_REF_NOT_FOUND),
             ({"base": "epoch:x"}, ErrorCode.INVALID_ARGUMENTS),
             ({"base": "epoch:1", "target": "HEAD"}, ErrorCode.INVALID_ARGUMENTS),
             ({"base": "epoch:999999"}, ErrorCode.INVALID_ARGUMENTS),
             ({"paths": ["../outside"]}, ErrorCode.MUTATION_SCOPE_VIOLATION),
             ({"cursor": "garbage!"}, ErrorCode.INVALID_CURSOR)]
    for kwargs, code in cases:
        with pytest.raises(CodePlaneError) as err:
            service.diff(**kwargs)  # type: ignore[arg-type]
        assert err.value.error is code, kwargs


def test_blob_facts_are_cached_by_blob_id(repo: tuple[Path, IndexService]) -> None:
    root, index = repo
    first_service = SemanticDiffService(root, index)
    first = first_service.diff(limit=100)
    assert first_service.parsed > 0
    # A second service sharing the blob facts parses nothing again.
    second_service = SemanticDiffService(root, index, cache=first_service.cache)
    again = second_service.diff(limit=100)
    assert second_service.parsed == 0
    assert again.changes == first.changes


def test_blob_facts_survive_a_restart_and_a_damaged_cache_is_dropped(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"m.py": "def a(x):\n    return x\n"})
    (root / "m.py").write_text("def a(x, y):\n    return x\n")
    db = tmp_path / "semantic_diff.db"
    first = SemanticDiffService(root, cache_db=db).diff(limit=10)
    restarted = SemanticDiffService(root, cache_db=db)
    again = restarted.diff(limit=10)
    assert restarted.store is not None and restarted.store.hits == 2  # both versions of m.py
    assert restarted.parsed == 0
    assert again.changes == first.changes and first.changes[0].change == "signature_changed"
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    damaged = SemanticDiffService(root, cache_db=db)
    assert damaged.diff(limit=10).changes == first.changes
    assert damaged.store is not None and damaged.store.hits == 0
    assert SemanticDiffService(root, cache_db=db).diff(limit=10).changes == first.changes


def test_blob_facts_of_another_facts_schema_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A CodePlane checkout that changes extraction keeps its package version: the schema tells the rows apart.
    from codeplane.analysis import blobstore
    from codeplane.index.structural.schema import SCHEMA_VERSION

    root = make_repo(tmp_path / "r", {"m.py": "def a(x):\n    return x\n"})
    (root / "m.py").write_text("def a(x, y):\n    return x\n")
    db = tmp_path / "semantic_diff.db"
    SemanticDiffService(root, cache_db=db).diff(limit=10)
    monkeypatch.setattr(blobstore, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    upgraded = SemanticDiffService(root, cache_db=db)
    upgraded.diff(limit=10)
    assert upgraded.store is not None and upgraded.store.hits == 0 and upgraded.parsed == 2


def test_a_definition_moved_to_another_file_is_one_move_not_a_removal_and_an_addition(tmp_path: Path) -> None:
    # ``refactor_move`` of ``helper`` from a.py to c.py read "1 removed, 1 added" and "check references to 1
    # removed symbol", though every reference had been moved along.
    box = "class Box:\n    def size(self):\n        return 1\n"
    root = make_repo(tmp_path / "r", {
        "pkg/a.py": f"def keep():\n    return 1\n\n\ndef helper(x, y=2):\n    return x + y\n\n\n{box}"
                    "\n\ndef edited(v):\n    return v\n\n\ndef twin():\n    return 0\n",
        "pkg/b.py": "def twin():\n    return 0\n",
        "pkg/c.py": "X = 1\n"})
    (root / "pkg/a.py").write_text("def keep():\n    return 1\n")
    (root / "pkg/b.py").write_text("")
    (root / "pkg/c.py").write_text(f"X = 1\n\n\ndef helper(x, y=2):\n    return x + y\n\n\n{box}\n\n"
                                   "def edited(v):\n    return v + 1\n\n\ndef twin():\n    return 0\n")
    git(root, "commit", "-qam", "move")
    page = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    got = [(c.path, c.old_path, c.qualified_name, c.change, c.delta_tags, c.parent) for c in page.changes]
    # Moved and edited stays a removal and an addition, as does one of two twins (which went where is a guess).
    assert got == [
        ("pkg/a.py", None, "edited", "removed", ("symbol_removed",), None),
        ("pkg/a.py", None, "twin", "removed", ("symbol_removed",), None),
        ("pkg/b.py", None, "twin", "removed", ("symbol_removed",), None),
        ("pkg/c.py", "pkg/a.py", "helper", "moved", ("symbol_moved",), None),
        ("pkg/c.py", "pkg/a.py", "Box", "moved", ("symbol_moved",), None),
        ("pkg/c.py", "pkg/a.py", "Box.size", "moved", ("symbol_moved",), 4),
        ("pkg/c.py", None, "edited", "added", ("symbol_added",), None),
        ("pkg/c.py", None, "twin", "added", ("symbol_added",), None)], got
    helper = page.changes[3]
    assert helper.old is not None and helper.new is not None and helper.old.start_line == 5
    assert helper.new.start_line == 4 and helper.behavior_change_risk == "low" and helper.lines_changed is None
    assert helper.structural_severity == "breaking"  # the old module's importers outside the repository
    assert page.summary.startswith("3 removed, 3 moved, 2 added in 3 files"), page.summary
    assert "3 definitions moved unchanged" in page.agentic_hint and "helper (pkg/a.py -> pkg/c.py)" in \
        page.agentic_hint, page.agentic_hint
    assert "check references to 3 removed symbols" in page.agentic_hint


def test_a_move_its_old_module_still_re_exports_breaks_nothing(tmp_path: Path) -> None:
    # refactor_move(keep_reexport=true) leaves ``from pkg.c import helper`` in a.py: importers of pkg.a keep
    # working, which the index (the work tree's) shows; ``other`` moved without one still breaks them.
    root = make_repo(tmp_path / "r", {
        "pkg/__init__.py": "", ".gitignore": ".codeplane/\n",
        "pkg/a.py": "def helper(x):\n    return x\n\n\ndef other(y):\n    return y\n",
        "pkg/c.py": "X = 1\n"})
    (root / "pkg/a.py").write_text("from pkg.c import helper  # re-export\n")
    (root / "pkg/c.py").write_text("X = 1\n\n\ndef helper(x):\n    return x\n\n\ndef other(y):\n    return y\n")
    index = _index(root)
    try:
        page = SemanticDiffService(root, index).diff(limit=100)
    finally:
        index.stop()
    got = {c.qualified_name: (c.change, c.delta_tags, c.structural_severity) for c in page.changes}
    assert got == {"helper": ("moved", ("symbol_moved", "reexported"), "non_breaking"),
                   "other": ("moved", ("symbol_moved",), "breaking")}, got
    assert "other (pkg/a.py -> pkg/c.py)" in page.agentic_hint and "helper" not in page.agentic_hint


def test_epoch_mode_sees_an_index_refresh(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"m.py": "def a(x):\n    return x\n\n\ndef b():\n    return 1\n\n\n"
                                              "def e(k):\n    return k\n", ".gitignore": ".codeplane/\n"})
    index = _index(root)
    try:
        before = index.epoch
        (root / "m.py").write_text("def a(x, y):\n    return x\n\n\ndef c():\n    return 1\n\n\n"
                                   "def e(k):\n    k += 1\n    return k\n\n\ndef d(q):\n    z = q\n    return z\n")
        after = index.refresh_paths(["m.py"])
        page = SemanticDiffService(root, index).diff(f"epoch:{before}", f"epoch:{after}", limit=100)
        got = [(c.qualified_name, c.change, c.delta_tags) for c in page.changes]
        assert got == [("a", "signature_changed", ("parameters_changed",)), ("c", "renamed", ("symbol_renamed",)),
                       ("e", "body_changed", ()), ("d", "added", ("symbol_added",))]
        body = page.changes[2]
        assert body.lines_changed is None and body.preview == ()  # snapshots keep no text
        assert page.report.mode == "epoch" and page.report.target == f"epoch:{after}"
        assert any("snapshots keep no text" in note for note in page.report.notes)
        assert SemanticDiffService(root, index).diff(f"epoch:{after}", limit=10).changes == ()
        # A file created and deleted inside the range is no change of the range (it was listed as added).
        (root / "scratch.py").write_text("def tmp():\n    return 0\n")
        index.refresh_paths(["scratch.py"])
        (root / "scratch.py").unlink()
        last = index.refresh_paths(["scratch.py"])
        net = SemanticDiffService(root, index).diff(f"epoch:{after}", f"epoch:{last}", limit=10)
        assert net.changes == () and not [f for f in net.report.files if f.path == "scratch.py"], net.report
    finally:
        index.stop()


# -- the tool through the real server ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    root = make_repo(tmp_path_factory.mktemp("semantic_diff_mcp") / "repo",
                     {**BASE, "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"})
    with running_server(root) as handle:
        yield handle


@pytest.mark.anyio
async def test_tool_answers_after_write_source_in_git_and_epoch_mode(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        described = await call(client, "describe", {})
        before = _find_epoch(described)
        await call(client, "write_source", {"edits": [
            {"path": "pkg/core.py", "action": "update", "old_text": "def params(a, b):",
             "new_text": "def params(a, b, c=0):"}]})
        git_res = await client.call_tool("semantic_diff", {"limit": 1})
        git_mode, git_text = git_res.structured_content["result"], answer_text(git_res)
        res = await client.call_tool("semantic_diff", {"base": f"epoch:{before}"})
        epoch_mode, text = res.structured_content["result"], answer_text(res)
    change = git_mode["structural_changes"][0]
    assert (change["qualified_name"], change["change"], change["delta_tags"]) == (
        "params", "signature_changed", ["parameters_changed"])
    assert change["impact"]["ref_tiers"]["strong"] == 2
    assert change["impact"]["affected_test_files"] == ["tests/test_core.py"]
    assert git_mode["mode"] == "git" and git_mode["pagination"]["total_estimate"] == 1
    assert [c["change"] for c in epoch_mode["structural_changes"]] == ["signature_changed"]
    assert epoch_mode["mode"] == "epoch"
    assert "~ pkg/core.py  function params(a, b) -> params(a, b, c=0)  signature_changed [parameters_changed]" \
        in text
    assert "refs: 0 proven, 2 strong" in text and "tests: 1" in text
    assert change["entity_id"] in git_text


@pytest.mark.anyio
async def test_tool_pages_nest_and_errors(server: ServerHandle) -> None:
    root = server.root
    write_files(root, {"pkg/extra.py": "class K:\n    def a(self):\n        pass\n\n    def b(self):\n        pass\n"})
    async with mcp_client(server) as client:
        first = await client.call_tool("semantic_diff", {"paths": ["pkg/extra.py"], "limit": 2})
        body = first.structured_content["result"]
        cursor = body["pagination"]["next_cursor"]
        rest = await call(client, "semantic_diff", {"paths": ["pkg/extra.py"], "limit": 2, "cursor": cursor})
        unknown = await call_error(client, "semantic_diff", {"base": "no-such-ref"})
        bad_cursor = await call_error(client, "semantic_diff", {"cursor": cursor})
    top = body["structural_changes"]
    assert [c["qualified_name"] for c in top] == ["K"]
    assert [c["qualified_name"] for c in top[0]["nested_changes"]] == ["K.a"]
    assert cursor in answer_text(first) and body["pagination"]["total_estimate"] == 3
    assert [c["qualified_name"] for c in rest["structural_changes"]] == ["K.b"]
    assert "next_cursor" not in rest["pagination"]
    assert unknown["code"] == 8002 and bad_cursor["code"] == 1005


def _find_epoch(value: Any) -> int:
    """The index epoch somewhere in describe's answer."""
    if isinstance(value, dict):
        if isinstance(value.get("epoch"), int):
            return int(value["epoch"])
        for item in value.values():
            try:
                return _find_epoch(item)
            except LookupError:
                continue
    raise LookupError("no epoch in describe")


@pytest.mark.anyio
async def test_affected_tests_of_a_work_tree_change_are_those_reaching_the_changed_lines(tmp_path: Path) -> None:
    # Both test files import pkg.mod; only test_a's case calls a(). A change inside a() affects test_a alone,
    # as inspect_affected_tests says; before, semantic_diff counted every importer of the file.
    root = make_repo(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/mod.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n",
        "tests/test_a.py": "from pkg.mod import a\n\n\ndef test_a():\n    assert a() == 1\n",
        "tests/test_b.py": "from pkg.mod import b\n\n\ndef test_b():\n    assert b() == 2\n",
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"})
    with running_server(root) as handle:
        async with mcp_client(handle) as client:
            edit = {"path": "pkg/mod.py", "action": "update", "old_text": "return 1\n", "new_text": "return 3\n"}
            await call(client, "write_source", {"edits": [edit]})
            result = await call(client, "semantic_diff", {})
            inspected = await call(client, "inspect_affected_tests", {"changed_files": ["pkg/mod.py"]})
    change = result["structural_changes"][0]
    assert change["qualified_name"] == "a" and change["impact"]["affected_test_files"] == ["tests/test_a.py"]
    assert [m["test_file"] for m in inspected["impact"]["matches"]] == ["tests/test_a.py"]


@pytest.mark.anyio
async def test_counts_of_importers_and_tests_past_the_listed_twenty_are_the_whole_counts(tmp_path: Path) -> None:
    # 23 test files import and call a(); each list names the first 20, and the counts, the text and the hint say 23
    # (they said 20: the length of the list that stops there).
    tests = {f"tests/test_{n:02}.py": f"from pkg.mod import a\n\n\ndef test_{n:02}():\n    assert a() == 1\n"
             for n in range(23)}
    root = make_repo(tmp_path / "repo", {
        "pkg/__init__.py": "", "pkg/mod.py": "def a():\n    return 1\n", **tests,
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"})
    with running_server(root) as handle:
        async with mcp_client(handle) as client:
            edit = {"path": "pkg/mod.py", "action": "update", "old_text": "return 1\n", "new_text": "return 3\n"}
            await call(client, "write_source", {"edits": [edit]})
            res = await client.call_tool("semantic_diff", {})
    result, text = res.structured_content["result"], answer_text(res)
    impact = result["structural_changes"][0]["impact"]
    assert impact["affected_test_files"] == sorted(tests)[:20] and impact["affected_test_files_total"] == 23
    assert len(impact["importing_files"]) == 20 and impact["importing_files_total"] == 23
    assert "importers: 23; tests: 23" in text
    assert "re-run 23 affected test targets: tests/test_00.py" in result["agentic_hint"]


def test_a_repository_with_no_commit_diffs_against_the_empty_tree(tmp_path: Path) -> None:
    """``semantic_diff`` before the first commit answered 8002 "base 'HEAD' does not name a commit"."""
    root = make_repo(tmp_path / "r", {"m.py": "def f():\n    return 1\n"}, commit=False)
    page = SemanticDiffService(root).diff(limit=10)
    assert [(c.qualified_name, c.change) for c in page.changes] == [("f", "added")]
    with pytest.raises(CodePlaneError) as refused:
        SemanticDiffService(root).diff("HEAD~1", limit=10)  # a revision that does not exist is still 8002
    assert refused.value.code == 8002
