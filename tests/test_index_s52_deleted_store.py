"""``index.db`` deleted under a running server (QA44 §1): search, map_repo and list_files answered 9001 "unable to
open database file" for good while ``/ready``, describe and ``cpl status`` said the index was ready. A deleted or
replaced file is damage: it is rebuilt from disk, calls answer 3004 (retryable) meanwhile, and the status says why."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.builders import answer_text, call, cpl_json, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_FILES = {f"pkg/m{n}.py": f"def function_{n}(value):\n    return value + {n}\n" for n in range(40)}


async def _answer_or_retryable(client: Any, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """The tool's result, or ``None`` for a retryable 3004 (the rebuild under way); anything else fails the test."""
    res = await client.call_tool(tool, args)
    body = envelope(res)
    if not res.is_error:
        result: dict[str, Any] = body["result"]
        return result
    error = body["error"]
    assert error["code"] == 3004 and error["retryable"], error
    return None


@pytest.mark.parametrize("removed", [("index.db", "index.db-wal", "index.db-shm"), ("index.db",)])
async def test_an_index_db_deleted_while_serving_is_rebuilt_and_said_so(tmp_path: Path,
                                                                         removed: tuple[str, ...]) -> None:
    repo = make_repo(tmp_path / "repo", _FILES)
    state = repo / ".codeplane"
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            assert (await call(client, "search", {"query": "function_7", "syntax": "identifier"}))["results"]
            inode = (state / "index.db").stat().st_ino
            for name in removed:
                (state / name).unlink(missing_ok=True)
            (repo / "pkg" / "after_rm.py").write_text("def qa_after_index_rm():\n    pass\n")
            deadline = time.monotonic() + 60
            while True:  # until rebuilt, every answer is a result or a retryable 3004, never 9001
                found = await _answer_or_retryable(client, "search",
                                                   {"query": "qa_after_index_rm", "syntax": "identifier"})
                listed = await _answer_or_retryable(client, "list_files", {"path": "pkg"})
                if found is not None and found.get("results") and listed is not None:
                    break
                assert time.monotonic() < deadline, "the index was never rebuilt"
                time.sleep(0.2)
            assert (state / "index.db").stat().st_ino != inode  # a new file, not the deleted one's inode
            assert await _answer_or_retryable(client, "map_repo", {}) is not None
            described = answer_text(await client.call_tool("describe", {}))
        index = handle.get("/status").json()["index"]
        assert index["ready"] and index["state"] == "ready", index
        why = "index.db was damaged while the server ran (the file was deleted"
        assert any(why in w for w in index["warnings"]), index["warnings"]
        assert why in index["source"]["rebuilt_from_disk"], index["source"]
        assert why in described, described
        status = cpl_json("status", cwd=repo)
        assert any(why in w for w in status["index"]["warnings"]), status["index"]
