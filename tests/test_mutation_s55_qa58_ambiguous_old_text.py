"""QA58 F5: every 5002 of ``write_source`` shows the current text where the edit was aimed (README: "the lines of
``old_text``"), but one for an ``old_text`` found more than once carried only the candidates' line numbers, so the
retry that adds context cost a re-read. Now it shows each place's lines, within the usual bounds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.mutation import MutationEngine, ReplaceText
from codeplane.mutation.refusals import MAX_SHOWN_LINES
from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

K = "def k(x):\n    if x:\n        return 1\n    return 2\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(make_repo(tmp_path_factory.mktemp("qa58_ambiguous") / "repo", {"pkg/k.py": K})) as handle:
        yield handle


async def test_an_ambiguous_old_text_shows_every_place_it_occurs(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("write_source", {"edits": [
            {"path": "pkg/k.py", "old_text": "return", "new_text": "yield"}]})
    assert res.is_error
    error = envelope(res)["error"]
    assert error["code"] == 5002 and error["details"]["candidates"] == [3, 4], error
    assert error["details"]["current"] == [{"line": 3, "text": "        return 1"},
                                           {"line": 4, "text": "    return 2"}], error
    text = answer_text(res)
    assert "3:        return 1\n4:    return 2" in text, text
    assert (server.root / "pkg/k.py").read_text() == K


def test_the_places_shown_are_bounded_and_the_rest_named(tmp_path: Path) -> None:
    block = "    a = 1\n    b = 2\n    c = 3\n"  # three lines, 30 times, two lines apart
    body = "".join(f"def f{n}():\n{block}\n" for n in range(30))
    repo = make_repo(tmp_path / "repo", {"m.py": body})
    with pytest.raises(CodePlaneError) as info:
        MutationEngine(repo, MutationConfig()).apply([ReplaceText(path="m.py", old_text=block, new_text="")])
    details = info.value.details
    starts = [2 + 5 * n for n in range(20)]  # the 20 candidates listed
    assert details["candidates"] == starts
    shown = [row["line"] for row in details["current"]]
    assert len(shown) <= MAX_SHOWN_LINES and shown[:6] == [2, 3, 4, 7, 8, 9], shown
    # Whole places, then the cut one's rest and every later place as a range to read.
    left = details["more_lines"].split(",")
    assert left[-1] == f"{starts[-1]}-{starts[-1] + 2}" and len(left) == 20 - len(shown) // 3, details
    assert (repo / "m.py").read_text() == body
