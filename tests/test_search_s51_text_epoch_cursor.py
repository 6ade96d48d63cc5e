"""Answers that are the same for the same tree are the same bytes, and an empty cursor is no cursor (QA42 §8).

``list_files`` and ``map_repo`` printed ``@epoch N`` in their text, so identical content gave different bytes on a
fresh clone or after an edit undone (the record keeps the epoch; ``describe`` still says it, for semantic_diff's
``epoch:N``). ``cursor: ""`` was "no cursor" for some tools and 1005 "malformed" for these.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from tests.builders import ServerHandle, answer_text, cpl_env, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_FILES = {"pkg/__init__.py": "", "pkg/core.py": "def needle():\n    return 1\n", "README.md": "needle\n"}


@pytest.fixture
def server(tmp_path: Any) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path / "repo", _FILES)) as handle:
        yield handle


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """One server for the cursor cases, which only read (a start costs ~2 s of CPU, six of them did one each); the
    epoch test edits the tree and starts its own."""
    repo = make_repo(tmp_path_factory.mktemp("epoch_cursor") / "repo", _FILES)
    with running_server(repo, env=cpl_env(home=tmp_path_factory.mktemp("xdg"))) as handle:
        yield handle


async def _answer(client: Any, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    res = await client.call_tool(tool, args)
    body = envelope(res)
    assert not res.is_error, body
    return answer_text(res), body["result"]


async def _epoch_after(client: Any, before: int) -> int:
    deadline = time.monotonic() + 30
    while True:
        _, found = await _answer(client, "list_files", {"limit": 10})
        if found["epoch"] > before:
            return int(found["epoch"])
        assert time.monotonic() < deadline, "the edit was never indexed"
        await anyio.sleep(0.1)


async def test_list_files_and_map_repo_text_is_the_same_for_the_same_tree_at_another_epoch(
        server: ServerHandle) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_files", {"limit": 10}), ("list_files", {"path": "pkg"}), ("map_repo", {}),
        ("map_repo", {"include": ["structure"], "depth": 2})]
    async with mcp_client(server) as client:
        before = [await _answer(client, tool, args) for tool, args in calls]
        core = server.root / "pkg/core.py"
        core.write_text("def needle():\n    return 2\n\n")
        edited = await _epoch_after(client, before[0][1]["epoch"])
        core.write_text(_FILES["pkg/core.py"])
        await _epoch_after(client, edited)
        after = [await _answer(client, tool, args) for tool, args in calls]
    for (text, record), (text_again, record_again) in zip(before, after, strict=True):
        assert record_again["epoch"] > record["epoch"]  # the record still says which epoch answered
        assert text_again == text
        assert "epoch" not in text


@pytest.mark.parametrize(("tool", "args"), [
    ("search", {"query": "needle"}),
    ("search", {"query": "needle", "mode": "symbol"}),
    ("list_files", {}),
    ("map_repo", {"include": ["structure"]}),
    ("read_source", {"targets": [{"path": "pkg/core.py"}]}),
    ("read_file_full", {"path": "README.md", "confirm": True}),
])
async def test_an_empty_cursor_is_no_cursor(reader: ServerHandle, tool: str, args: dict[str, Any]) -> None:
    async with mcp_client(reader) as client:
        text, record = await _answer(client, tool, args)
        text_empty, record_empty = await _answer(client, tool, {**args, "cursor": ""})
    record.pop("query_time_ms", None), record_empty.pop("query_time_ms", None)
    assert (text_empty, record_empty) == (text, record)
