"""QA52's leftovers (F6, F8-F10), through the real server and the official MCP client: an error's details line
leaves out what its message says (``start_line 900 … (497 lines)``, a commit by the 12 digits it shows, the field
it names) and the caller's own arguments (its query, cursor, the paths it named); a command or linter inside the
repository is shown relative (the record keeps the absolute path); a listing's cursor is ``<id>.<offset>``; and
describe, lint_check, a stash pop and a path restore stop saying what is the default or the caller's own."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.server.answers import bounded_error, error_text
from tests.builders import ServerHandle, answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F']\n\n"
                      "[tool.pytest.ini_options]\ntestpaths = ['tests']\n",
    "pkg/__init__.py": "",
    "pkg/a.py": "".join(f"X{n} = {n}\n" for n in range(20)),
    "pkg/b.py": "Y = 1\n",
    "tests/test_a.py": "from pkg.a import X1\n\n\ndef test_x():\n    assert X1 == 1\n",
    **{f"docs/d{n}.md": f"# {n}\n" for n in range(5)},
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s55_leftovers") / "repo", _FILES)
    # The repository's own virtualenv (ignored, as usual): pytest and ruff run from it.
    venv = repo / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").symlink_to(sys.executable)
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    (venv / "ruff").symlink_to(ruff)
    (repo / ".gitignore").write_text(".venv/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore the venv")
    with running_server(repo) as handle:
        yield handle


def test_a_value_the_message_says_is_not_said_again() -> None:
    def text(message: str, **details: object) -> str:
        return error_text(bounded_error({"code": 1003, "error": "INVALID_ARGUMENTS", "message": message,
                                         "details": details}))

    said = [text("start_line 900 is beyond the end of 'a.py' (497 lines)", start_line=900, line_count=497),
            text("a.py is not in 7e80d9a4379b", commit="7e80d9a4379bbc714095e98fb6a0b528fec0049f"),
            text("ref 'nosuchref' does not name a commit or object", field="ref"),
            text("invalid regular expression: missing )", query="(unclosed"),
            text("the cursor expired", cursor="0123456789.20")]
    assert all(len(t.splitlines()) == 1 for t in said), said
    # What the message does not say stays: another field, a number it names for something else, another commit.
    kept = text("upstream 'x' does not name a commit (497 lines)", field="ref", count=497,
                commit="0123456789abcdef0123")
    assert kept.splitlines()[1] == "field=ref count=497 commit=0123456789abcdef0123", kept


async def test_error_details_leave_out_the_message_and_the_callers_own_arguments(server: ServerHandle) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
             ("read_source", {"targets": [{"path": "pkg/a.py", "start_line": 900, "end_line": 910}]}),
             ("git_inspect", {"action": "blame", "path": "pkg/nope.py"}),
             ("search", {"query": "(unclosed", "syntax": "regex"}),
             ("git_log", {"ref": "nosuchref"}),
             ("git_stage", {"paths": ["nope.txt"]}),
             ("list_files", {"cursor": "0123456789.2"})]
    async with mcp_client(server) as client:
        for tool, args in calls:
            res = await client.call_tool(tool, args)
            text = answer_text(res)
            assert res.is_error and len(text.splitlines()) == 1, (tool, text)
        blame = await client.call_tool("git_inspect", {"action": "blame", "path": "pkg/nope.py"})
        commit = envelope(blame)["error"]["details"]["commit"]
        assert len(commit) == 40 and commit[:12] in answer_text(blame)  # the record keeps the whole id

        (server.root / "pkg" / "b.py").write_text("Y = 2\n")
        try:
            named = await client.call_tool("git_checkout", {"paths": ["pkg/b.py"]})
            assert envelope(named)["error"]["code"] == 5009
            assert "paths=" not in answer_text(named), answer_text(named)
            # A directory's files losing their changes are news: said.
            scoped = await client.call_tool("git_checkout", {"paths": ["pkg"]})
            assert answer_text(scoped).splitlines()[-1] == 'paths=["pkg/b.py"]', answer_text(scoped)
            restored = await client.call_tool("git_checkout", {"paths": ["pkg/b.py"], "confirm": True})
            text = answer_text(restored)
            assert not restored.is_error and "branch=" not in text and "restored" in text, text
        finally:
            git(server.root, "checkout", "--", "pkg/b.py")


async def test_a_listing_cursor_is_an_id_and_an_offset(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        first = await client.call_tool("list_files", {"path": "docs", "limit": 2})
        cursor = envelope(first)["result"]["next_cursor"]
        assert re.fullmatch(r"[0-9a-f]{10}\.2", cursor) and f"next cursor: {cursor}" in answer_text(first)
        second = envelope(await client.call_tool("list_files", {"path": "docs", "limit": 2, "cursor": cursor}))
        assert [e["path"] for e in second["result"]["entries"]] == ["docs/d2.md", "docs/d3.md"]
        assert second["result"]["next_cursor"].endswith(".4")
        # The same page, the same cursor; another listing's is refused.
        again = await client.call_tool("list_files", {"path": "docs", "limit": 2})
        assert envelope(again)["result"]["next_cursor"] == cursor
        foreign = await client.call_tool("list_files", {"path": "pkg", "limit": 2, "cursor": cursor})
        assert envelope(foreign)["error"]["code"] == 1005


async def test_programs_inside_the_repository_are_shown_relative(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        found = await client.call_tool("discover_test_targets", {})
        tools = await client.call_tool("lint_tools", {})
    text, root = answer_text(found), str(server.root)
    assert "(cwd .): .venv/bin/python -m pytest <target>" in text and root not in text, text
    cmd = envelope(found)["result"]["targets"][0]["cmd"]
    assert cmd[0] == os.path.join(root, ".venv", "bin", "python"), cmd  # the record keeps the absolute path
    assert re.search(r"^ruff \./ .*: \.venv/bin/ruff \[can fix\]$", answer_text(tools), re.MULTILINE), \
        answer_text(tools)


async def test_describe_lint_and_stash_leave_out_defaults_and_the_callers_action(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        described = answer_text(await client.call_tool("describe", {}))
        clean = answer_text(await client.call_tool("lint_check", {"paths": ["pkg/b.py"], "tools": ["ruff"]}))
        (server.root / "pkg" / "b.py").write_text("Y = 3\n")
        pushed = await client.call_tool("git_stash", {"action": "push"})
        popped = await client.call_tool("git_stash", {"action": "pop"})
    git(server.root, "checkout", "--", "pkg/b.py")
    assert "api " not in described and "enabled=true" not in described and "plan_ttl_sec" not in described, \
        described
    assert clean == "ruff: ok", clean
    assert not pushed.is_error and not popped.is_error
    assert "dropped" not in answer_text(popped) and answer_text(popped).startswith("stash@{0} "), \
        answer_text(popped)

