"""QA 46 (answers measured against the shell): each answer carries what the next call accepts, says how much it
left out, and says each thing once. Driven through the real server with the official client."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    cpl_env,
    envelope,
    git,
    make_repo,
    mcp_client,
    running_server,
    write_files,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """One server for the tests that only read a small repository (a start costs ~2 s of CPU); the others need a
    repository of their own shape."""
    repo = make_repo(tmp_path_factory.mktemp("s52_economy") / "repo",
                     {"a.py": "X = 1\n", "notes.txt": "one\ntwo\nthree\n"})
    with running_server(repo, env=cpl_env(home=tmp_path_factory.mktemp("xdg"))) as server:
        yield server


async def test_a_dry_runs_shown_hash_is_the_precondition_that_applies_it(tmp_path: Path) -> None:
    """F4: the dry run showed the hash the file would have, which the apply's precondition refused (5002)."""
    repo = make_repo(tmp_path / "repo", {"pkg/util.py": "# change 6\nX = 1\n"})
    edit = {"path": "pkg/util.py", "old_text": "# change 6", "new_text": "# change six"}
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            dry = await client.call_tool("write_source", {"edits": [edit], "dry_run": True})
            text, record = answer_text(dry), envelope(dry)["result"]
            now, after = record["delta"]["files"][0]["old_sha256"], record["delta"]["files"][0]["file_sha256"]
            assert f"pkg/util.py now {now[:12]} -> after {after[:12]}" in text.splitlines(), text
            shown = re.search(r"pkg/util\.py now ([0-9a-f]{12})", text)
            assert shown is not None
            wrote = await call(client, "write_source", {"edits": [{**edit, "expected_file_sha256": shown[1]}]})
    assert wrote["applied"] and wrote["delta"]["files"][0]["file_sha256"] == after


def _api_repo() -> dict[str, str]:
    # 30 shallow modules of 8 declared names each (240 names, past the 150 listed), and a package's __init__
    # deeper down: the package's face comes before the shallow modules.
    files = {f"pkg/mod{i:02}.py": "__all__ = [" + ", ".join(f"'n{i}_{k}'" for k in range(8)) + "]\n"
             + "".join(f"def n{i}_{k}():\n    pass\n" for k in range(8)) for i in range(30)}
    files["pkg/db/models/__init__.py"] = ("__all__ = ['Model', 'Field']\n\n\nclass Model:\n    pass\n\n\n"
                                          "class Field:\n    pass\n")
    files["pkg/db/models/sql/query.py"] = "__all__ = ['Query']\n\n\nclass Query:\n    pass\n"
    files["pkg/deps.py"] = "".join(f"import extmod{i:03}\n" for i in range(105))
    return files


async def test_map_repo_counts_what_it_leaves_out_and_reaches_it_by_path(tmp_path: Path) -> None:
    """F3: public_api and dependencies were cut at 100 with nothing said, in path-length order."""
    repo = make_repo(tmp_path / "repo", _api_repo())
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("map_repo", {"include": ["public_api", "dependencies"]})
            text, record = answer_text(res), envelope(res)["result"]
            scoped = await client.call_tool("map_repo", {"include": ["public_api"],
                                                         "public_api_under": "pkg/db/models/sql"})
    lines = text.splitlines()
    api = lines[lines.index("public api:") + 1:]
    assert api[0] == "  pkg/db/models/__init__.py: " + ", ".join(
        f"{e['name']} #{e['def_uid']}" for e in record["public_api"] if e["path"] == "pkg/db/models/__init__.py")
    assert record["public_api_modules"] == 32 and record["public_api_names"] == 243
    shown = len(record["public_api"])
    assert shown <= 150 and len({e["path"] for e in record["public_api"]}) == len(api) - 1
    assert api[-1] == (f"  … {32 - (len(api) - 1)} more modules, {243 - shown} more names "
                       "(public_api_under=<dir> lists a package's)"), text
    deps = record["dependencies"]
    assert deps["truncated"] and deps["external_total"] == 105 and len(deps["external_modules"]) == 100
    assert next(line for line in lines if line.startswith("imports (")).endswith(" … 5 more, each imported less")
    assert answer_text(scoped).splitlines() == ["public api:", "  pkg/db/models/sql/query.py: Query #"
                                                + envelope(scoped)["result"]["public_api"][0]["def_uid"]]


async def test_an_ambiguous_symbol_lists_candidates_a_line_each_and_counts_the_rest(tmp_path: Path) -> None:
    """F7: 20 of 32 candidates as compact JSON objects, the keys on each, the caller's argument echoed."""
    files = {f"app/model_module_number_{i:02}.py": f"class ModelNumber{i:02}:\n    def save(self):\n        pass\n"
             for i in range(40)}
    repo = make_repo(tmp_path / "repo", files)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("read_source", {"targets": [{"symbol": "save"}]})
            text = answer_text(res)
            assert res.is_error and envelope(res)["error"]["code"] == 1003
            lines = text.splitlines()
            assert lines[0] == ("error 1003 INVALID_ARGUMENTS: 'save' names 40 definitions; give a qualified name "
                                "or a def_uid (or a path):"), text
            candidates = [line for line in lines[1:] if not line.startswith("…")]
            first = re.fullmatch(r"app/model_module_number_00\.py:2 model_module_number_00\.ModelNumber00\.save "
                                 r"#([0-9a-f]+)", candidates[0])
            assert first is not None, text
            assert lines[-1] == f"… {40 - len(candidates)} more (search mode=definitions lists them all)", text
            assert len(candidates) >= 10 and '{"' not in text and "symbol=" not in text, repr(text)
            # The line's def_uid is what the next call takes.
            read = await call(client, "read_source", {"targets": [{"symbol": first[1]}]})
    assert read["files"][0]["path"] == "app/model_module_number_00.py"


async def test_refactor_inspect_reads_like_a_grouped_diff(tmp_path: Path) -> None:
    """F6: the path and the rename on every edit, and adjacent edits each printing the same context lines."""
    repo = make_repo(tmp_path / "repo", {
        "pkg/__init__.py": "",
        "pkg/util.py": "def helper(x):\n    return x\n",
        "pkg/app.py": "from pkg.util import helper\n\n\ndef main():\n    a = helper(1)\n    b = helper(2)\n"
                      "    c = helper(3)\n    return a + b + c\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            plan = await call(client, "refactor_rename", {"symbol": "pkg.util.helper", "new_name": "assist"})
            res = await client.call_tool("refactor_inspect", {"refactor_id": plan["refactor_id"],
                                                              "certainty": ["high", "medium", "low"]})
    text, record = answer_text(res), envelope(res)["result"]
    lines = text.splitlines()
    assert lines[0].endswith("; each helper -> assist unless shown"), text
    assert text.count("helper -> assist") == 1 and lines.count("pkg/app.py") == 1, text
    # Three adjacent calls: one block, each source line once.
    assert sum(line.endswith("b = helper(2)") for line in lines) == 1, text
    app = lines[lines.index("pkg/app.py") + 1:]
    ids = [i["edit"]["edit_id"] for i in record["items"] if i["edit"]["path"] == "pkg/app.py"]
    assert all(i in text for i in ids) and len(ids) == 4
    assert [line for line in app if line.startswith("5:") or line.startswith("7:")] == [
        "5:    a = helper(1)", "7:    c = helper(3)"], text
    assert not any(" pkg/app.py:" in line for line in lines), text


async def test_semantic_diff_counts_files_with_nothing_structural_instead_of_paging(tmp_path: Path) -> None:
    """F10: a comment-only commit of 30 files paged 20 lines of the same words, with a cursor worded apart."""
    files = {f"pkg/m{i:02}.py": f"def f{i}():\n    return {i}\n" for i in range(30)}
    repo = make_repo(tmp_path / "repo", files)
    write_files(repo, {path: f"# comment\n{text}" for path, text in files.items()})
    git(repo, "commit", "-qam", "comments")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("semantic_diff", {"base": "HEAD~1", "target": "HEAD"})
            write_files(repo, {"pkg/m00.py": "def f0(x):\n    return 0\n", "pkg/m01.py": "def f1(y):\n    return 1\n"})
            paged = await client.call_tool("semantic_diff", {"limit": 1})
    text, record = answer_text(res), envelope(res)["result"]
    assert "next_cursor" not in record["pagination"] and "non_structural_changes" not in record, record
    assert text.splitlines()[-1] == "? 30 files modified prod python (no_definition_changed)", text
    assert len(text.splitlines()) == 2 and "hint:" not in text, text  # no "nothing to act on" (s54, QA52 F9)
    cursor = envelope(paged)["result"]["pagination"]["next_cursor"]
    assert answer_text(paged).splitlines()[-1] == f"1 of 2 items; next cursor: {cursor}", answer_text(paged)


async def test_describe_tool_leaves_the_parameters_to_the_schema(reader: ServerHandle) -> None:
    """F11: half of describe(action=tool) re-listed the input schema the client has from tools/list."""
    async with mcp_client(reader) as client:
        res = await client.call_tool("describe", {"action": "tool", "name": "search"})
        record = await call(client, "describe", {"action": "tool", "name": "search"})
    text = answer_text(res)
    names = list(record["input_schema"]["properties"])
    assert "query (required)" in text and all(name in text for name in names)
    assert "What to search for." not in text and "length ≤ 1000" not in text, text
    assert any(line.startswith("use for: ") for line in text.splitlines())
    assert any(line.startswith("e.g. ") for line in text.splitlines())
    assert text.splitlines()[-1].startswith("session_id: Run in this explicit session"), text


async def test_a_single_linters_answer_counts_once(tmp_path: Path) -> None:
    """Minor: ``mypy: 5 diagnostics`` then ``5 diagnostic(s): 5 error, 0 warning, 0 fixable ([*]); showing 1-5``."""
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F']\n",
        "pkg/__init__.py": "", "pkg/a.py": "import os\nimport sys\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("lint_check", {"tools": ["ruff"]})
    text = answer_text(res)
    assert envelope(res)["result"]["total"] == 2, text
    # s54 (QA52 F9): "2 error" said the run line's count again (every diagnostic is an error).
    assert text.splitlines()[-2:] == ["ruff: 2 diagnostics", "2 fixable ([*])"], text


async def test_read_file_full_gate_says_size_and_lines_once(reader: ServerHandle) -> None:
    async with mcp_client(reader) as client:
        res = await client.call_tool("read_file_full", {"path": "notes.txt"})
    text = answer_text(res)
    assert text.count("14 bytes") == 1 and text.count("3 lines") == 1, text
    assert "confirm: true" in text


async def test_semantic_diff_says_the_tests_every_change_shares_once(tmp_path: Path) -> None:
    """F10: in a work-tree diff every change line repeated ``tests: N``, the count the hint already gives."""
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
        "pkg/__init__.py": "", "pkg/mod.py": "def a():\n    return 1\n\n\ndef b():\n    return 2\n",
        "tests/test_mod.py": "from pkg.mod import a, b\n\n\ndef test_ab():\n    assert a() + b() == 3\n"})
    write_files(repo, {"pkg/mod.py": "def a():\n    return 10\n\n\ndef b():\n    return 20\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("semantic_diff", {})
    text, record = answer_text(res), envelope(res)["result"]
    assert [c["impact"]["affected_test_files_total"] for c in record["structural_changes"]] == [1, 1], record
    assert "re-run 1 affected test target" in record["agentic_hint"]
    assert "tests: 1" not in text and sum(line.startswith("~ pkg/mod.py") for line in text.splitlines()) == 2, text
