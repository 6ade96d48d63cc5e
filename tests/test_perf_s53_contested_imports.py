"""The contested-import check of a rename reads only the import rows of the renamed name.

qa48 F2/F3: for every file importing the name it loaded all of that file's references (thousands of rows on
Django) only to keep the import tokens; it now asks the index for the ``IMPORT`` rows of the name alone.
"""

from __future__ import annotations

from pathlib import Path

from codeplane.refactor.contested import contested_imports
from codeplane.refactor.indexview import SqlFacts
from tests.refactor_builders import refactor_env

_USE = ("try:\n    from pkg.fast import loads\nexcept ImportError:\n    from pkg.slow import loads\n\n\n"
        "def go(x):\n    return loads(x)\n")
_FILES = {"pkg/__init__.py": "", "pkg/fast.py": "def loads(s):\n    return s\n",
          "pkg/slow.py": "def loads(s):\n    return s\n", "pkg/use.py": _USE,
          "pkg/plain.py": "from pkg.fast import loads\n\nloads(2)\n" + "x = [1, 2, 3]\n" * 50}


def test_import_refs_named_are_the_import_tokens_of_that_name_in_path_order(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", _FILES) as env, env.index.read_connection() as conn:
        refs = SqlFacts(conn).import_refs_named("loads", 100)
        assert [(r.path, r.line, r.column, r.role, r.token) for r in refs] == [
            ("pkg/plain.py", 1, 21, "IMPORT", "loads"), ("pkg/use.py", 2, 25, "IMPORT", "loads"),
            ("pkg/use.py", 4, 25, "IMPORT", "loads")]
        assert SqlFacts(conn).import_refs_named("loads", 2) == refs[:2]


def test_contested_imports_read_no_file_s_whole_reference_list(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", _FILES) as env, env.index.read_connection() as conn:
        facts = SqlFacts(conn)
        target = next(d for d in facts.defs_named("loads", 10) if d.path == "pkg/fast.py")
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            edits = contested_imports(facts, target, "fast_loads", set())
        finally:
            conn.set_trace_callback(None)
        assert [(e.path, e.line, e.column, e.new_text, e.reason) for e in edits] == [
            ("pkg/use.py", 2, 25, "fast_loads as loads", "import_keeps_local_name"),
            ("pkg/use.py", 8, 11, "loads", "kept_by_alias")]
        ref_reads = [s for s in statements if "FROM st_ref" in s]
        # Every read of st_ref is narrowed to the name (its columns name token_text too: match the filter).
        assert ref_reads and all("WHERE r.token_text = 'loads'" in s for s in ref_reads), ref_reads
