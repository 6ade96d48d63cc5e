"""QA 46: error details repeated the message (``(state: none)`` and then ``state=none``) and printed a list of
objects as one line of JSON. Through the real server and the official MCP client: a value the message says is
left out, however short, and a list of objects is its key and one line of ``key=value`` pairs per object, every
path and name the next call needs still there (the record keeps all)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeplane.server.answers import bounded_error, error_text
from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s52b_errors") / "repo", {
        "pkg/a.py": "def make_pass():\n    return 1\n",
        "pkg/b.py": "def make_pass():\n    return 2\n",
    })
    with running_server(repo) as handle:
        yield handle


async def test_a_short_detail_the_message_names_is_not_said_again(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("git_merge", {"action": "abort"})
    text = answer_text(res)
    assert envelope(res)["error"]["details"]["state"] == "none"  # the record keeps it
    assert "(state: none)" in text and "state=none" not in text, text


async def test_a_list_of_objects_is_one_line_per_object(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("read_source", {"targets": [{"symbol": "Nope.make_pass"}]})
    text = answer_text(res)
    assert len(envelope(res)["error"]["details"]["suggestions"]) == 2
    assert text.splitlines()[1:] == ["suggestions:",
                                     "  qualified_name=a.make_pass path=pkg/a.py line=1",
                                     "  qualified_name=b.make_pass path=pkg/b.py line=1"], text
    assert "{" not in text and "symbol=" not in text, text  # the symbol is in the message already


def test_a_cut_list_of_objects_says_how_many_more_and_strings_already_said_are_left_out() -> None:
    rows = [{"def_uid": f"{n:016x}", "path": f"src/m{n}.py"} for n in range(52)]
    text = error_text(bounded_error({
        "code": 1003, "error": "INVALID_ARGUMENTS", "message": "ambiguous; see src/a.py",
        "details": {"candidates": rows, "paths": ["src/a.py", "src/b.py"], "count": 2}}))
    lines = text.splitlines()
    assert lines[1] == 'paths=["src/b.py"] count=2', text
    assert lines[2] == "candidates:" and lines[3] == f"  def_uid={0:016x} path=src/m0.py", text
    assert lines[-1] == "  … 2 more" and len(lines) == 3 + 50 + 1, text
