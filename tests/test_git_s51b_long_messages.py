"""QA42 §7: a commit message over 8,000 characters was cut (``message_truncated``, "… message cut") with no way to
read the rest, and an annotated tag's message was not cut at all, making a part as long as the message.
``git_inspect show`` now gives a commit's or a tag's whole message in parts of its own before the diff, each
within the 16 KB text bound; ``git_log`` still cuts at 8,000 (its lines are summaries)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import (
    TEXT_BOUND,
    answer_text,
    call,
    follow_parts,
    git,
    make_repo,
    mcp_client,
    running_server,
    write_files,
)

pytestmark = pytest.mark.anyio

_LIMIT = TEXT_BOUND
_LONG = "".join(f"Paragraph {i}: why this change was needed, at length, with details. ü\n" for i in range(3000))
_ONE_LINE = "Subject " + "x" * 50_000 + "\n"


async def _parts(client: Any, args: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    return await follow_parts(client, "git_inspect", args)


def _raw_message(repo: Path, ref: str) -> str:
    """The message as git stores it (after the object's header), the record's form."""
    return git(repo, "cat-file", git(repo, "cat-file", "-t", ref).stdout.strip(), ref).stdout.split("\n\n", 1)[1]


async def test_a_long_commit_or_tag_message_is_read_whole_in_bounded_parts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    write_files(repo, {"a.py": "x = 2\n", "b.py": "y = 2\n"})
    (tmp_path / "msg").write_text(_LONG)
    git(repo, "commit", "-qa", "-F", str(tmp_path / "msg"))
    write_files(repo, {"a.py": "x = 3\n"})
    (tmp_path / "one").write_text(_ONE_LINE)
    git(repo, "commit", "-qa", "--cleanup=verbatim", "-F", str(tmp_path / "one"))
    git(repo, "tag", "-a", "v1", "-F", str(tmp_path / "msg"), "HEAD~1")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            long_commit = await _parts(client, {"action": "show", "ref": "HEAD~1"})
            one_line = await _parts(client, {"action": "show", "ref": "HEAD"})
            tag = await _parts(client, {"action": "show", "ref": "v1"})
            log = await call(client, "git_log", {"limit": 2})
            log_text = answer_text(await client.call_tool("git_log", {"limit": 2}))
    for parts, ref in ((long_commit, "HEAD~1"), (one_line, "HEAD")):
        shows = [p["show"] for p, _ in parts]
        assert "".join(s["commit"]["message"] for s in shows if "commit" in s) == _raw_message(repo, ref)
        assert not any(s.get("commit", {}).get("message_truncated") for s in shows)
        assert all("message cut" not in text for _, text in parts)
        # The diff follows the message, whole.
        files = [f["path"] for s in shows for f in s.get("diff", {}).get("files", [])]
        assert files == (["a.py", "b.py"] if ref == "HEAD~1" else ["a.py"]), files
        assert len(parts) > 2 and all(f"part {i}/{len(parts)}" in text for i, (_, text) in enumerate(parts, 1))
    assert "Paragraph 2999: why" in "".join(text for _, text in long_commit)
    tags = [p["show"]["tag"] for p, _ in tag if "tag" in p["show"]]
    assert len(tags) > 2 and "".join(t["message"] for t in tags) == _raw_message(repo, "v1")
    # The log cuts a long message (its text is a line per commit) and says so; show has the rest.
    assert [c["message_truncated"] for c in log["commits"]] == [True, True]
    # A one-line 50 KB message made a log line (its summary) of 50 KB.
    assert len(log["commits"][0]["summary"]) <= 8000 and len(log_text.encode()) <= _LIMIT


async def test_a_tag_listing_cuts_a_long_tag_message_and_keeps_to_the_bound(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (tmp_path / "one").write_text(_ONE_LINE)
    for name in ("v1", "v2", "v3"):
        git(repo, "tag", "-a", name, "--cleanup=verbatim", "-F", str(tmp_path / "one"))
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            parts = await _parts(client, {"action": "tags"})
            shown = await _parts(client, {"action": "show", "ref": "v2"})
    tags = [t for p, _ in parts for t in p["tags"]]
    assert [t["name"] for t in tags] == ["v1", "v2", "v3"]
    assert all(t["message_truncated"] and _ONE_LINE.startswith(t["message"]) and len(t["message"]) == 8000
               for t in tags)
    assert "".join(p["show"]["tag"]["message"] for p, _ in shown if "tag" in p["show"]) == _ONE_LINE
