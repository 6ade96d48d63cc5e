"""Refactor building blocks without a server: names, plan store, lexical sweep, import rewriting."""

from __future__ import annotations

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.refactor.docsweep import code_block_lines, doctest_lines, mention_confidence
from codeplane.refactor.identifiers import identifier_problem, validate_identifier
from codeplane.refactor.jsimports import JsMove, js_move_edits, resolve_specifier
from codeplane.refactor.lexical import occurrences
from codeplane.refactor.models import RefactorPreview
from codeplane.refactor.plans import Plan, PlanOption, PlanStore
from codeplane.refactor.pyimports import PyMove, python_move_edits
from codeplane.refactor.pymodules import PyModules
from codeplane.refactor.spans import SourceText


@pytest.mark.parametrize(("family", "name", "ok"), [
    ("python", "new_name", True), ("python", "class", False), ("python", "match", True),
    ("python", "2x", False), ("python", "a-b", False), ("python", "", False), ("python", "a b", False),
    ("javascript", "$el", True), ("javascript", "function", False), ("javascript", "await", False),
    ("javascript", "type", True), ("go", "func", False), ("rust", "fn", False), ("jvm", "int", False),
    ("ruby", "empty?", True), (None, "plain", True),
])
def test_identifier_rules_per_language(family: str | None, name: str, ok: bool) -> None:
    assert (identifier_problem(family, name) is None) is ok


def test_invalid_name_is_4006() -> None:
    with pytest.raises(CodePlaneError) as info:
        validate_identifier("python", "def")
    assert info.value.code == 4006 and info.value.details["new_name"] == "def"


def _plan(store: PlanStore, rid: str) -> Plan:
    created, expires, at = store.window()
    preview = RefactorPreview(refactor_id=rid, operation="rename", status="ready", matches=0, counts={},
                              verification_required=False, expires_at=at)
    return Plan(rid, "rename", created, expires, (PlanOption("c1", None, ()),), preview)


def test_plan_store_expiry_cancel_and_unknown() -> None:
    now = [1_000_000]
    store = PlanStore(ttl_sec=10, clock=lambda: now[0])
    first, second = store.new_id(), store.new_id()
    assert first != second
    store.put(_plan(store, first))
    store.put(_plan(store, second))
    assert store.get(first).refactor_id == first
    store.close(second, "cancelled")
    with pytest.raises(CodePlaneError) as gone:
        store.get(second)
    assert gone.value.code == 4004 and gone.value.details["state"] == "cancelled"
    now[0] += 10_001
    with pytest.raises(CodePlaneError) as expired:
        store.get(first)
    assert expired.value.code == 4005
    with pytest.raises(CodePlaneError) as unknown:
        store.get("rf_nope")
    assert unknown.value.code == 4004 and unknown.value.details["state"] == "unknown"


def test_lexical_occurrences_are_classified() -> None:
    src = 'def foo():\n    """foo docs"""\n    x = "foo"  # foo here\n    return f"{foo}" + foo_bar + foo\n'
    found = [(o.line, o.column, o.context) for o in occurrences(src, "a.py", "foo")]
    assert found == [(1, 4, "code"), (2, 7, "docstring"), (3, 9, "string"), (3, 17, "comment"),
                     (4, 14, "code"), (4, 32, "code")]
    js = "const a = `foo ${foo}`; // foo\nimport {foo} from './foo'; $foo;\n"
    contexts = [o.context for o in occurrences(js, "a.ts", "foo")]
    assert contexts == ["string", "code", "comment", "code", "string"]


def test_doc_mention_confidence() -> None:
    assert mention_confidence("See `process` here", 5, "process") == "high"
    assert mention_confidence("The process_all helper", 4, "process_all") == "medium"
    assert mention_confidence("we process data", 3, "process") == "low"
    assert mention_confidence("call Job.process now", 9, "process") == "medium"
    assert code_block_lines("text\n```py\nfoo()\n```\nafter\n") == {2, 3, 4}


def test_rust_doctest_lines_are_the_code_blocks_of_doc_comments() -> None:
    text = ("//! ```\n//! use semver::Version;\n//! ```\n"          # 1-3: a doctest
            "/// ```text\n/// Version 1\n/// ```\n"                 # 4-6: not Rust
            "/// ```no_run\n/// let v = Version::new();\n/// ```\n"  # 7-9: compiled
            "// ```\n// Version\n// ```\n"                           # 10-12: a plain comment
            "/// ```\n/// open\nfn f() {}\n/// Version\n")          # 13-16: the comment ends at fn
    assert doctest_lines(text) == {2, 8, 14}


PY_FILES = {
    "src/pkg/__init__.py": "",
    "src/pkg/a.py": "from .util import helper\nfrom . import util\ndef f():\n    return helper()\n",
    "src/pkg/util.py": "def helper():\n    return 1\n",
    "src/pkg/sub/__init__.py": "",
    "src/pkg/x.py": ("import pkg.a\nimport pkg.a as pa\nfrom pkg import a, util\nfrom . import a as aa\n"
                     "from .a import f\nprint(pkg.a.f())\n"),
    "tests/test_a.py": "from pkg.a import f\n",
}


def _py_edits(moved: dict[str, str]) -> dict[str, list[tuple[int, str, str]]]:
    move = PyMove(PyModules(PY_FILES), moved)
    out: dict[str, list[tuple[int, str, str]]] = {}
    for path, text in PY_FILES.items():
        edits = python_move_edits(move, SourceText(path, text))
        if edits:
            out[path] = [(e.line, e.old_text, e.new_text) for e in edits]
    return out


def test_python_move_rewrites_imports_in_both_directions() -> None:
    edits = _py_edits({"src/pkg/a.py": "src/pkg/sub/b.py"})
    # The moved file's own relative imports now climb one more level.
    assert edits["src/pkg/a.py"] == [(1, ".util", "..util"), (2, ".", "..")]
    assert edits["src/pkg/x.py"] == [
        (1, "pkg.a", "pkg.sub.b"), (2, "pkg.a", "pkg.sub.b"),
        (3, "from pkg import a, util", "from pkg import util\nfrom pkg.sub import b as a"),
        (4, "from . import a as aa", "from .sub import b as aa"), (5, ".a", ".sub.b"),
        (6, "pkg.a", "pkg.sub.b"),
    ]
    assert edits["tests/test_a.py"] == [(1, "pkg.a", "pkg.sub.b")]
    assert "src/pkg/util.py" not in edits


def test_python_move_up_a_level_rewrites_relative_imports() -> None:
    files = {"src/pkg/__init__.py": "", "src/pkg/sub/__init__.py": "",
             "src/pkg/sub/deep.py": "from ..util import helper\nfrom . import sibling\n",
             "src/pkg/sub/sibling.py": "", "src/pkg/util.py": "",
             "src/pkg/user.py": "from .sub.deep import helper\n"}
    move = PyMove(PyModules(files), {"src/pkg/sub/deep.py": "src/pkg/deep.py"})
    got = {p: [(e.old_text, e.new_text) for e in python_move_edits(move, SourceText(p, t))]
           for p, t in files.items()}
    assert got["src/pkg/sub/deep.py"] == [("..util", ".util"), (".", ".sub")]
    assert got["src/pkg/user.py"] == [(".sub.deep", ".deep")]


def test_js_move_rewrites_relative_specifiers() -> None:
    files = {
        "src/lib/a.ts": "import {h} from './util';\nimport x from '../other/index.js';\n",
        "src/lib/util.ts": "export const h = 1;\n",
        "src/other/index.ts": "export default 1;\n",
        "src/main.ts": ("import {a} from './lib/a';\nexport * from \"./lib/a.js\";\n"
                        "const m = require('./lib/a');\nimport('./other');\nimport React from 'react';\n"),
    }
    assert resolve_specifier("src/main.ts", "./other", frozenset(files)) == "src/other/index.ts"
    move = JsMove(frozenset(files), {"src/lib/a.ts": "src/core/deep/b.ts"})
    got = {p: [(e.old_text, e.new_text) for e in js_move_edits(move, SourceText(p, t))]
           for p, t in files.items()}
    assert got["src/lib/a.ts"] == [("./util", "../../lib/util"), ("../other/index.js", "../../other/index.js")]
    assert got["src/main.ts"] == [("./lib/a", "./core/deep/b"), ("./lib/a.js", "./core/deep/b.js"),
                                  ("./lib/a", "./core/deep/b")]
