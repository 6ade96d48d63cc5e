"""Refactors switched off (QA50 #6, spec §8.12 "Or CLI: ``cpl up --no-refactor``"): the flag exists, the refactor
tools are not listed, and calling one says how to turn refactors back on rather than "no tool named ..."."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def test_no_refactor_serves_no_refactor_tool_and_says_how_to_turn_them_on(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pkg/m.py": "def helper():\n    return 1\n"})
    with running_server(repo, "--profile", "full", "--no-refactor") as handle:
        async with mcp_client(handle) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert "search" in names and not [n for n in names if n.startswith("refactor_")]
            err = await call_error(client, "refactor_rename", {"symbol": "helper", "new_name": "aid"})
            assert err["code"] == 1004
            assert "refactor.enabled" in err["message"] and "no tool named" not in err["message"]
            other = await call_error(client, "serch", {"query": "x"})  # an unknown name keeps its hint
            assert other["code"] == 1004 and "search" in other["message"]
            assert (await call(client, "search", {"query": "helper"}))["results"]
