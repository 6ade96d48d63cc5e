"""QA64 F2: ``write_source`` honours ``mutation.max_batch_edits`` / ``max_batch_files`` up to their config bound.

Its input schema capped ``edits`` at a fixed 500, so with the limit raised to 1000 a batch of 600 edits (or 600 new
files) was refused by the schema; the configured limit is now the only cap, refused as 1003 naming it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_LINES = 700
_LIMIT = 1000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("batch") / "repo",
                     {"a.txt": "".join(f"line{i}\n" for i in range(1, _LINES + 1))})
    with running_server(repo, "--set", f"mutation.max_batch_edits={_LIMIT}",
                        "--set", f"mutation.max_batch_files={_LIMIT}") as handle:
        yield handle


def _line_edits(count: int) -> list[dict[str, Any]]:
    return [{"path": "a.txt", "action": "update", "start_line": i, "end_line": i, "new_content": f"L{i}\n"}
            for i in range(1, count + 1)]


async def test_a_batch_over_500_edits_within_the_configured_limit_is_planned(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        planned = await call(client, "write_source", {"edits": _line_edits(600), "dry_run": True})
    assert planned["delta"]["files_changed"] == 1 and planned["delta"]["insertions"] == 600, planned["summary"]


async def test_a_batch_over_500_files_within_the_configured_limit_is_planned(server: ServerHandle) -> None:
    edits = [{"path": f"new/f{i}.txt", "action": "create", "content": f"{i}\n"} for i in range(600)]
    async with mcp_client(server) as client:
        planned = await call(client, "write_source", {"edits": edits, "dry_run": True})
    assert planned["delta"]["files_changed"] == 600, planned["summary"]


async def test_a_batch_over_the_configured_limit_is_1003_naming_it_before_any_edits_own_problem(
        server: ServerHandle) -> None:
    edits = _line_edits(_LIMIT + 1)
    edits[-1] = {"path": "a.txt"}  # an edit that is wrong on its own: the batch's size is still the reported problem
    async with mcp_client(server) as client:
        error = await call_error(client, "write_source", {"edits": edits, "dry_run": True})
    assert error["code"] == 1003, error
    assert f"{_LIMIT + 1} edits exceed mutation.max_batch_edits={_LIMIT}" in error["message"], error
    assert error["details"]["limit"] == _LIMIT, error
