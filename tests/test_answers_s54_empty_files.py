"""QA52 F1: a dry run that deletes or creates an empty file showed it as ``rename from X / rename to None`` (a
Python ``None`` in the answer, a delete called a rename), in the text and in the record's diff. Through the real
server with the official client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def test_a_dry_run_of_an_empty_file_created_or_deleted_is_no_rename(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/py.typed": "", "pkg/mod.py": "X = 1\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            deleted = await client.call_tool("write_source", {"edits": [{"path": "pkg/py.typed", "action": "delete"}],
                                                              "dry_run": True})
            created = await client.call_tool("write_source", {"edits": [{"path": "pkg/empty.py", "content": ""}],
                                                              "dry_run": True})
            moved = await client.call_tool("write_source", {"edits": [{"path": "pkg/py.typed", "to": "pkg/t.typed"}],
                                                            "dry_run": True})
    for res, mark in ((deleted, "D pkg/py.typed now "), (created, "A pkg/empty.py after ")):
        text, record = answer_text(res), envelope(res)["result"]
        assert not res.is_error and "rename" not in text and "None" not in text, text
        assert "rename" not in record["delta"].get("diff", ""), record
        assert [line.startswith(mark) for line in text.splitlines()][1:] == [True], text
    # A real move of an empty file is still a rename, said by its R line.
    text = answer_text(moved)
    assert text.splitlines()[1].startswith("R pkg/py.typed -> pkg/t.typed now "), text
    assert "None" not in text, text
