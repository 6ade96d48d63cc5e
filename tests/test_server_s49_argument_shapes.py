"""QA33 #9: an argument given at the top that is a field of a nested object of the tool's schema (``read_source
{"path": ...}`` for ``targets[].path``, ``search {"paths": ...}`` for ``scope.paths``) gets a 1003 that shows the
call in the right shape, with the values given, instead of "targets: Field required; path: Extra inputs"."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def test_misplaced_arguments_name_their_nested_place_and_shape(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "x = 1\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            read = await client.call_tool("read_source", {"path": "src/a.py", "start_line": 1})
            read_error = await call_error(client, "read_source", {"path": "src/a.py", "start_line": 1})
            search = answer_text(await client.call_tool("search", {"query": "x", "paths": ["src"]}))
            typo = answer_text(await client.call_tool("read_source", {"targets": [{"path": "src/a.py"}],
                                                                      "max_byte": 2048}))
    text = answer_text(read)
    assert read.is_error and read_error["code"] == 1003
    assert 'pass targets: [{"path": "src/a.py", "start_line": 1}]' in text, text
    assert "targets[].path" in text and "Field required" not in text and "Extra inputs" not in text, text
    assert search.startswith("error 1003") and 'scope.paths' in search and 'pass scope: {"paths": ["src"]}' in search
    assert "did you mean 'max_bytes'?" in typo  # a misspelling still gets the close name
    assert len(text) < 400
