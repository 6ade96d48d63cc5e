"""A test file that does not load says what stopped it at the START of its message (Jest's ``SyntaxError: …
Unexpected token (1:45)`` and its code frame, the first ``error[E0308]`` of a cargo build): the testing service
keeps that head (``clip_ends``), but the answer kept only the last 1,500 characters of it, so the agent read
Babel's frames and no error (QA s51). Now the head and the end are kept, with ``…`` between, in the text and in
the attempt's record."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server
from tests.runner_projects import link_node_modules, require

pytestmark = pytest.mark.anyio


async def test_a_jest_file_that_does_not_parse_shows_its_syntax_error_through_the_server(tmp_path: Path) -> None:
    require("jest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/__tests__/syntax.test.js": "test('broken', () => { expect(1).toBe(1) ;\n"})
    link_node_modules(repo / "web")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("run_test_targets", {"targets": ["web/__tests__/syntax.test.js"],
                                                              "wait_sec": 240})
    text, record = answer_text(res), envelope(res)["result"]
    [target] = record["targets"]
    message = target["attempts"][0]["message"]
    assert len(message) <= 1500 and "SyntaxError" in message and "Unexpected token" in message, message
    assert "SyntaxError" in text and "Unexpected token" in text, text
