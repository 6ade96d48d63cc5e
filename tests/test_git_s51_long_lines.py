"""QA41 #6: ``git_diff`` and ``git_inspect show`` never cut a line, so one minified-JS change (or an unchanged
600 KB context line) made a part of megabytes, which the official client refuses (an event over 1 MiB). Such a
line is now cut to a window around its change, with markers telling how much was cut, and every part keeps to
the 16 KB text bound; the cursor protocol and the complete stats stay."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.builders import answer_text, envelope, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio

_LIMIT = 16 * 1024
_MIN = "var a=1;" + "function q(){return a}" * 50_000 + "var v=1;"
_CTX = "var first=1\n" + "var big='" + "x" * 600_000 + "'\n" + "var after=2\n"


async def _parts(client: Any, tool: str, args: dict[str, Any]) -> list[str]:
    """Every part's text, following ``next_cursor``; each answer checked against the text bound."""
    texts: list[str] = []
    cursor: str | None = None
    while True:
        res = await client.call_tool(tool, {**args, **({"cursor": cursor} if cursor else {})})
        assert not res.is_error, envelope(res)
        text = answer_text(res)
        assert len(text.encode()) <= _LIMIT, (len(texts), len(text))
        texts.append(text)
        result = envelope(res)["result"]
        cursor = result.get("next_cursor")
        if cursor is None:
            return texts


async def test_a_change_inside_a_megabyte_line_comes_in_bounded_parts_showing_the_change(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.min.js": _MIN, "ctx.js": _CTX})
    write_files(repo, {"app.min.js": _MIN.replace("var v=1;", "var v=2;"),
                       "ctx.js": _CTX.replace("after=2", "after=3")})
    with running_server(repo) as server:
        async with mcp_client(server) as client:  # the client's default limits: an event over 1 MiB fails
            diff = "\n".join(await _parts(client, "git_diff", {}))
            git(repo, "commit", "-qam", "edit")
            show = "\n".join(await _parts(client, "git_inspect", {"action": "show", "ref": "HEAD~1"}))
    removed = [ln for ln in diff.splitlines() if ln.startswith("-var a=1;")]
    added = [ln for ln in diff.splitlines() if ln.startswith("+var a=1;") or ln.startswith("+[…")]
    # The window is around the first difference: the end of the line, where `var v` changed.
    assert any(ln.startswith("-[…") and ln.endswith("var v=1;") for ln in diff.splitlines()), diff[:2000]
    assert any(ln.startswith("+[…") and ln.endswith("var v=2;") for ln in diff.splitlines()), diff[:2000]
    assert not removed and added
    cut = [int(n.replace(",", "")) for n in re.findall(r"\[…([\d,]+) chars cut…\]", diff)]
    assert cut and all(n > 1_000_000 for n in cut[:2])
    # The unchanged 600 KB context line is cut from its start; the change beside it is whole.
    assert " var big='xxx" in diff and "-var after=2" in diff and "+var after=3" in diff
    assert "app.min.js +1 -1" in diff and "ctx.js +1 -1" in diff
    # A commit adding the long lines: show's parts keep to the bound too, each line's start shown.
    assert "+var big='xxx" in show and "+var a=1;function q()" in show and "chars cut…]" in show
