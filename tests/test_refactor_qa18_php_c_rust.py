"""QA18 (1, 2, 6, 8): renames in PHP, C and Rust that wrote code the language's own tools reject, through the real
server and the official MCP client. Each renamed project is checked with ``php``, ``gcc`` or ``cargo test`` when
installed, as the report did."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.builders import call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


def _run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=root, capture_output=True, text=True, timeout=300, check=False, env=env)


def _php(root: Path, script: str) -> str:
    ran = _run(root, "php", script)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def _edits(preview: dict[str, Any]) -> set[tuple[str, int, int, str, str, str]]:
    return {(e["path"], e["line"], e["column"], e["old_text"], e["new_text"], e["certainty"])
            for e in preview["edits"]}


# -- 1: a PHP local or parameter keeps its ``$`` ------------------------------------------------------------------
PHP_LOCAL = {"g.php": "<?php\nfunction g(int $a): int\n{\n    $class = 2;\n    return $a + $class;\n}\n"
                      "echo g(1), \"\\n\";\n"}


async def test_a_php_parameter_rename_keeps_its_dollar_with_or_without_one_in_the_new_name(tmp_path: Path) -> None:
    # ``b`` wrote ``function g(int b)`` (a parse error, applied in one call) and ``$b`` was refused as no identifier.
    with running_server(make_repo(tmp_path / "repo", PHP_LOCAL)) as server:
        async with mcp_client(server) as client:
            applied = await call(client, "refactor_rename", {"path": "g.php", "line": 2, "column": 16,
                                                             "new_name": "b", "apply": True})
            assert applied["applied"]["applied_edits"] == 2, applied
            assert (server.root / "g.php").read_text().startswith(
                "<?php\nfunction g(int $b): int\n{\n    $class = 2;\n    return $b + $class;\n")
            again = await call(client, "refactor_rename", {"path": "g.php", "line": 5, "column": 12,
                                                           "new_name": "$count", "apply": True})
            assert again["applied"]["applied_edits"] == 2, again
            # a reserved word is a legal variable name; ``$this`` is not, nor a name that is no label
            word = await call(client, "refactor_rename", {"path": "g.php", "line": 4, "column": 6,
                                                          "new_name": "list"})
            assert {e[4] for e in _edits(word)} == {"$list"}, word
            for bad in ("this", "$this", "2x", "$a-b"):
                refused = await call_error(client, "refactor_rename", {"path": "g.php", "line": 4, "column": 6,
                                                                       "new_name": bad})
                assert refused["code"] == 4006 and refused["details"]["new_name"] == bad, refused
        text = (server.root / "g.php").read_text()
        assert "function g(int $count): int" in text and "return $count + $class;" in text
        if shutil.which("php") is None:
            pytest.skip("php is not installed")
        assert _run(server.root, "php", "-l", "g.php").returncode == 0
        assert _php(server.root, "g.php") == "3\n"


# -- 2: a PHP static property is renamed where ``self::``/``static::``/``K::``/``parent::`` name it -------------
PHP_STATIC = {
    "k.php": "<?php\nclass K\n{\n    public static $count = 0;\n    const LIMIT = 10;\n\n"
             "    public function get(): int\n    {\n        $count = 5;\n        self::$count++;\n"
             "        return static::$count + K::$count + $count + self::LIMIT;\n    }\n}\n\n"
             "class L extends K\n{\n    public function more(): int\n    {\n        return parent::$count * 100;\n"
             "    }\n}\n\necho (new K())->get(), ' ', (new L())->more(), \"\\n\";\n",
    "u.php": "<?php\nfunction peek($o)\n{\n    return $o::$count;\n}\n",
}


async def test_a_php_static_property_rename_reaches_scoped_uses_and_lists_an_open_one(tmp_path: Path) -> None:
    # Only the declaration was renamed and the plan said it covered everything: PHP failed at run time with
    # "Access to undeclared static property K::$count".
    with running_server(make_repo(tmp_path / "repo", PHP_STATIC)) as server:
        async with mcp_client(server) as client:
            preview = await call(client, "refactor_rename", {"symbol": "K.count", "new_name": "$n"})
            edits = _edits(preview)
            assert {(p, line, col) for p, line, col, _, _, c in edits if c == "high"} == {
                ("k.php", 4, 20), ("k.php", 10, 16), ("k.php", 11, 25), ("k.php", 11, 37),
                ("k.php", 19, 25)}, edits
            # (``$n`` names the property as ``n``, how ``$this->n`` spells it)
            # ``$o::$count``: whose class ``$o`` is the syntax does not say, so it is listed, never silently left
            assert ("u.php", 4, 17, "count", "n", "low") in edits, edits
            assert {p for p, *_ in edits} == {"k.php", "u.php"}  # the local ``$count`` stays
            # the sweep sees ``K::$count`` too (it said "covers 0/0 occurrences")
            assert (preview["coverage"]["lexical_occurrences"], preview["coverage"]["in_plan"]) == (5, 5), preview
            await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
            # A local of the static property's spelling is renamed alone (it was bound to ``self::$count`` too).
            local = await call(client, "refactor_rename", {"path": "k.php", "line": 9, "column": 10,
                                                           "new_name": "c", "apply": True})
            assert local["applied"]["applied_edits"] == 2, local
        text = (server.root / "k.php").read_text()
        assert "public static $n = 0;\n" in text
        assert "self::$n++;\n        return static::$n + K::$n + $c + self::LIMIT;" in text
        assert "return parent::$n * 100;" in text
        if shutil.which("php") is None:
            pytest.skip("php is not installed")
        assert _php(server.root, "k.php") == "17 100\n"


# -- 8: a C designated initializer follows its struct's field ----------------------------------------------------
C_DESIGNATED = {
    "geo.h": "#ifndef GEO_H\n#define GEO_H\ntypedef struct point { int x; int y; } Point;\n"
             "struct line { struct point a; Point b; };\nstruct other { int x; };\n#endif\n",
    "main.c": "#include <stdio.h>\n#include \"geo.h\"\n\nint main(void) {\n"
              "  struct point q = {.x = 1, .y = 2};\n  Point r = {.x = 3};\n"
              "  struct point row[2] = {{.x = 4}, [1] = {.x = 5}};\n"
              "  struct line l = {.a = {.x = 6}, .b.x = 7};\n"
              "  struct other o = {.x = 8};\n"
              "  q = (struct point){.y = 9, .x = 10};\n"
              "  r = (Point){\n    .x = 11,\n  };\n"
              "  printf(\"%d %d %d %d %d %d %d %d\\n\", q.x, r.x, row[0].x, row[1].x, l.a.x, l.b.x, o.x, q.y);\n"
              "  return 0;\n}\n",
}
C_OUT = "10 11 4 5 6 7 8 9\n"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the renamed program")
async def test_a_c_field_rename_reaches_designated_initializers_and_gcc_builds_it(tmp_path: Path) -> None:
    # ``{.x = 1}`` was ``low unresolved``: the default apply left it, and gcc said "'struct point' has no member
    # named 'x'".
    root = make_repo(tmp_path / "repo", C_DESIGNATED)
    built = _run(root, "gcc", "-Wall", "-Werror", "-o", "prog", "main.c")
    assert built.returncode == 0, built.stderr
    assert _run(root, "./prog").stdout == C_OUT
    with running_server(root) as server:
        async with mcp_client(server) as client:
            preview = await call(client, "refactor_rename", {"symbol": "point.x", "new_name": "px"})
            designated = {(line, col, c) for p, line, col, old, _, c in _edits(preview)
                          if p == "main.c" and line < 14}
            assert designated == {(5, 22, "medium"), (6, 15, "medium"), (7, 28, "medium"), (7, 44, "medium"),
                                  (8, 27, "medium"), (8, 38, "medium"), (10, 31, "medium"), (12, 6, "medium"),
                                  (9, 22, "low")}, designated  # ``struct other``'s own ``x`` is not point's
            await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
    text = (root / "main.c").read_text()
    assert "struct other o = {.x = 8};" in text and "struct line l = {.a = {.px = 6}, .b.px = 7};" in text
    built = _run(root, "gcc", "-Wall", "-Werror", "-o", "prog", "main.c")
    assert built.returncode == 0, built.stderr
    assert _run(root, "./prog").stdout == C_OUT


# -- 6: Rust paths in an inline test module and inside a macro from ``tests/`` -------------------------------------
RUST = {
    "Cargo.toml": "[package]\nname = \"r-min\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    "src/lib.rs": "pub mod a;\npub mod b;\n",
    "src/a.rs": "pub const K: u32 = 1;\n\npub struct S;\n\nimpl S {\n    pub fn new() -> S {\n        S\n    }\n}\n",
    "src/b.rs": "pub fn f() -> u32 {\n    2\n}\n\n#[cfg(test)]\nmod tests {\n    use crate::a::S;\n\n"
                "    #[test]\n    fn t() {\n        let _s = S::new();\n"
                "        assert_eq!(crate::a::K, 1);\n    }\n}\n",
    "tests/it.rs": "#[test]\nfn k() {\n    assert_eq!(r_min::a::K, 1);\n    let _s = r_min::a::S::new();\n}\n",
}


async def test_rust_renames_reach_an_inline_test_module_and_crate_paths_in_macros(tmp_path: Path) -> None:
    # ``use crate::a::S;`` in ``#[cfg(test)] mod tests`` was ``low other_binding`` and ``r_min::a::K`` in
    # ``assert_eq!`` ``low unresolved``: ``cargo build`` passed after the default apply, ``cargo test`` did not.
    with running_server(make_repo(tmp_path / "repo", RUST)) as server:
        async with mcp_client(server) as client:
            struct = await call(client, "refactor_rename", {"symbol": "src/a.S", "new_name": "T", "apply": True})
            assert struct["applied"]["applied_edits"] == 7, struct
            constant = await call(client, "refactor_rename", {"symbol": "src/a.K", "new_name": "KK", "apply": True})
            assert constant["applied"]["applied_edits"] == 3, constant
        assert (server.root / "src/b.rs").read_text().endswith(
            "    use crate::a::T;\n\n    #[test]\n    fn t() {\n        let _s = T::new();\n"
            "        assert_eq!(crate::a::KK, 1);\n    }\n}\n")
        assert "assert_eq!(r_min::a::KK, 1);\n    let _s = r_min::a::T::new();" in (
            server.root / "tests/it.rs").read_text()
        if shutil.which("cargo") is None:
            pytest.skip("cargo is not installed")
        env = {**os.environ, "CARGO_TARGET_DIR": str(tmp_path / "target"), "CARGO_NET_OFFLINE": "true"}
        tested = _run(server.root, "cargo", "test", "--offline", "--quiet", env=env)
        assert tested.returncode == 0, tested.stdout + tested.stderr
