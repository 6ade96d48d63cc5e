"""QA58 F7: a path a 5001 repeats is cut as every other echoed value is (README: 200 characters, 400 in the details,
with its length; ``server.answers.bounded_error``). The path canonicaliser cut a too-long path to 120 characters
itself, without its length."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.core.paths import canonicalize
from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

LONG = "d" * 1000


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path_factory.mktemp("qa58_echo") / "repo", {"a.py": "x = 1\n"})) as handle:
        yield handle


@pytest.mark.parametrize(("tool", "args"), [
    ("list_files", {"path": LONG}),
    ("read_source", {"targets": [{"path": LONG}]}),
    ("write_source", {"edits": [{"path": LONG, "action": "create", "content": "x"}]}),
])
async def test_a_too_long_path_is_echoed_cut_with_its_length(server: ServerHandle, tool: str,
                                                              args: dict[str, object]) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool(tool, args)
    error = envelope(res)["error"]
    assert error["code"] == 5001, error
    assert f"'{'d' * 199}… (1,002 characters)" in error["message"], error["message"]  # the quoted word
    assert error["details"]["path"] == "d" * 400 + "… (1,000 characters)", error["details"]
    assert "(1,002 characters)" in answer_text(res)


def test_the_canonicaliser_keeps_the_whole_path_for_the_answer_to_cut() -> None:
    with pytest.raises(CodePlaneError) as info:
        canonicalize(LONG)
    assert info.value.details["path"] == LONG
