"""Members of one name that a language keeps apart (PHP constants, properties and methods; a Java/Kotlin or Rust
field and method; a JS/TS static and instance member). Renaming one renamed the others: a PHP constant's rename
rewrote the property's declaration as a "partial" and its ``self::$LIMIT`` uses as certain. Through the real
server; renamed files are checked with ``php``, ``javac`` or ``tsc`` when installed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.builders import call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

CLASS = """<?php
class A {
    const LIMIT = 1;
    public static $LIMIT = 2;
    public $size = 3;
    public function size() { return 4; }
    public function f() {
        return self::LIMIT + self::$LIMIT + $this->size + $this->size();
    }
}
$a = new A();
echo A::LIMIT, A::$LIMIT, $a->size, $a->size(), $a::LIMIT, "\\n";
"""


def _applied(preview: dict[str, Any]) -> set[tuple[int, int]]:
    return {(e["line"], e["column"]) for e in preview["edits"] if e["certainty"] != "low"}


def _run_php(root: Path) -> str | None:
    if shutil.which("php") is None:
        return None
    ran = subprocess.run(["php", "a.php"], cwd=root, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


async def test_a_constant_a_static_property_and_a_method_of_one_name_rename_apart(tmp_path: Path) -> None:
    with running_server(make_repo(tmp_path / "repo", {"a.php": CLASS})) as server:
        async with mcp_client(server) as client:
            constant = await call(client, "refactor_rename", {"path": "a.php", "line": 3, "column": 11,
                                                              "new_name": "MAX"})
            # the declaration, self::LIMIT, A::LIMIT and $a::LIMIT; never the property's declaration or uses
            assert _applied(constant) == {(3, 11), (8, 22), (12, 9), (12, 53)}, constant["edits"]
            prop = await call(client, "refactor_rename", {"path": "a.php", "line": 4, "column": 20,
                                                          "new_name": "max"})
            assert _applied(prop) == {(4, 20), (8, 37), (12, 20)}, prop["edits"]
            method = await call(client, "refactor_rename", {"path": "a.php", "line": 6, "column": 21,
                                                            "new_name": "count"})
            assert _applied(method) == {(6, 21), (8, 66), (12, 41)}, method["edits"]
            field = await call(client, "refactor_rename", {"path": "a.php", "line": 5, "column": 13,
                                                           "new_name": "count"})
            assert _applied(field) == {(5, 13), (8, 52), (12, 31)}, field["edits"]
            applied = await call(client, "refactor_apply", {"refactor_id": constant["refactor_id"]})
            assert applied["applied_edits"] == 4, applied
    text = (server.root / "a.php").read_text()
    assert "const MAX = 1;" in text and "public static $LIMIT = 2;" in text
    assert "self::MAX + self::$LIMIT" in text and "A::MAX, A::$LIMIT" in text and "$a::MAX" in text
    said = _run_php(server.root)
    assert said in (None, "12341\n")


JAVA = {
    "A.java": "public class A {\n    int size = 3;\n    int size() { return size; }\n"
              "    int twice() { return size() + this.size; }\n}\n",
    "B.java": "public class B {\n    int use(A a) { return a.size() + a.size; }\n}\n",
}
RUST = {
    "Cargo.toml": '[package]\nname = "ns"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub struct S { pub len: usize }\nimpl S {\n    pub fn len(&self) -> usize { self.len }\n}\n"
                  "pub fn both(s: &S) -> usize { s.len() + s.len }\n",
}


async def test_a_java_field_and_method_of_one_name_rename_apart(tmp_path: Path) -> None:
    # Renaming the field ``size`` renamed the method ``size()`` as its "overload" too: seven certain edits.
    with running_server(make_repo(tmp_path / "repo", JAVA)) as server:
        async with mcp_client(server) as client:
            field = await call(client, "refactor_rename", {"path": "A.java", "line": 2, "column": 9,
                                                           "new_name": "count"})
            assert {(e["path"], e["line"], e["column"]) for e in field["edits"] if e["certainty"] == "high"} == {
                ("A.java", 2, 9), ("A.java", 3, 25), ("A.java", 4, 40), ("B.java", 2, 40)}, field["edits"]
            method = await call(client, "refactor_rename", {"path": "A.java", "line": 3, "column": 9,
                                                            "new_name": "count"})
            assert {(e["path"], e["line"], e["column"]) for e in method["edits"] if e["certainty"] == "high"} == {
                ("A.java", 3, 9), ("A.java", 4, 26), ("B.java", 2, 29)}, method["edits"]
            applied = await call(client, "refactor_apply", {"refactor_id": field["refactor_id"]})
            assert applied["applied_edits"] == 4, applied
    assert (server.root / "A.java").read_text() == (
        "public class A {\n    int count = 3;\n    int size() { return count; }\n"
        "    int twice() { return size() + this.count; }\n}\n")
    if shutil.which("javac"):
        ran = subprocess.run(["javac", "A.java", "B.java"], cwd=server.root, capture_output=True, text=True,
                             timeout=120, check=False)
        assert ran.returncode == 0, ran.stderr


async def test_a_rust_field_and_method_of_one_name_never_rename_each_others_declaration(tmp_path: Path) -> None:
    with running_server(make_repo(tmp_path / "repo", RUST)) as server:
        async with mcp_client(server) as client:
            field = await call(client, "refactor_rename", {"path": "src/lib.rs", "line": 1, "column": 21,
                                                           "new_name": "count"})
            method = await call(client, "refactor_rename", {"path": "src/lib.rs", "line": 3, "column": 12,
                                                            "new_name": "count"})
    # each declaration is certain only for its own rename; the other is proposed low, never applied by default
    high = {(e["line"], e["column"]) for e in field["edits"] if e["certainty"] == "high"}
    assert (1, 20) in high and (3, 12) not in high, field["edits"]
    high = {(e["line"], e["column"]) for e in method["edits"] if e["certainty"] == "high"}
    assert (3, 12) in high and (1, 20) not in high, method["edits"]


TS = {
    "a.ts": "export class A {\n  static count = 1;\n  count = 2;\n"
            "  total(): number {\n    return A.count + this.count;\n  }\n"
            "  static make(): number {\n    return this.count;\n  }\n}\nconst a = new A();\n"
            "console.log(A.count, a.count);\n",
    "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022"}, "files": ["a.ts"]}\n',
}


def _certain(preview: dict[str, Any]) -> set[tuple[int, int]]:
    return {(e["line"], e["column"]) for e in preview["edits"] if e["certainty"] != "low"}


async def test_a_static_and_an_instance_member_of_one_name_rename_apart(tmp_path: Path) -> None:
    # ``static count`` and ``count`` were one symbol: either rename rewrote both declarations and every use.
    with running_server(make_repo(tmp_path / "repo", TS)) as server:
        async with mcp_client(server) as client:
            static = await call(client, "refactor_rename", {"path": "a.ts", "line": 2, "column": 10,
                                                            "new_name": "n"})
            # the declaration, A.count (twice) and this.count in the static method
            assert _certain(static) == {(2, 10), (5, 14), (8, 17), (12, 15)}, static["edits"]
            instance = await call(client, "refactor_rename", {"path": "a.ts", "line": 3, "column": 3,
                                                              "new_name": "n"})
            assert _certain(instance) == {(3, 3), (5, 27), (12, 24)}, instance["edits"]
            applied = await call(client, "refactor_apply", {"refactor_id": static["refactor_id"]})
            assert applied["applied_edits"] == 4, applied
    text = (server.root / "a.ts").read_text()
    assert "static n = 1;" in text and "  count = 2;" in text and "A.n + this.count" in text
    assert "return this.n;" in text and "console.log(A.n, a.count);" in text
    tsc = Path.home() / ".cache" / "codeplane" / "js-runners" / "node_modules" / ".bin" / "tsc"
    if tsc.exists():
        ran = subprocess.run([str(tsc), "-p", "."], cwd=server.root, capture_output=True, text=True, timeout=120,
                             check=False)
        assert ran.returncode == 0, ran.stdout + ran.stderr
