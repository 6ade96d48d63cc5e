"""Every paged tool reads ``cursor: ""`` as no cursor (QA42 §8 fixed search/list_files/map_repo/read_*; the git,
lint, test and refactor tools still answered 1005 "malformed cursor" for the empty string clients send for an
optional field left blank).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_FILES = {"pkg/__init__.py": "", "pkg/core.py": "def needle():\n    return 1\n",
          "tests/test_core.py": "from pkg.core import needle\n\ndef test_needle():\n    assert needle() == 1\n"}

_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("git_status", {}),
    ("git_diff", {}),
    ("git_log", {}),
    ("git_history", {"path": "pkg/core.py"}),
    ("git_inspect", {"action": "blame", "path": "pkg/core.py"}),
    ("git_inspect", {"action": "show", "ref": "HEAD"}),
    ("git_inspect", {"action": "tags"}),
    ("git_stash", {"action": "list"}),
    ("git_branch", {"action": "list"}),
    ("lint_check", {"paths": ["pkg"]}),
    ("discover_test_targets", {}),
    ("inspect_affected_tests", {"changed_files": ["pkg/core.py"]}),
]


async def _answer(client: Any, tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    res = await client.call_tool(tool, args)
    body = envelope(res)
    assert not res.is_error, (tool, args, body)
    return answer_text(res), _without_timings(body["result"])


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if not k.endswith("_ms")}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


async def test_an_empty_cursor_is_no_cursor_for_every_paged_tool(tmp_path: Any) -> None:
    with running_server(make_repo(tmp_path / "repo", _FILES), "--profile", "full") as server:
        async with mcp_client(server) as client:
            for tool, args in _CALLS:
                assert await _answer(client, tool, {**args, "cursor": ""}) == await _answer(client, tool, args)
            # Each impact answer names a new delete plan, so only the refusal is checked here.
            await _answer(client, "refactor_impact", {"target": "pkg/core.py", "cursor": ""})
