"""QA61 #6: restoring a recovery point rewrote an untracked file (and a file that differed from the index before and
after) but left it out of the answer's effect, as its status alone did not change: the agent kept the old sha256
and its next edit got 5002. Such a file is now listed with its new hash and its old one."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.builders import answer_text, call, envelope, make_repo, mcp_client, running_server, write_files


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.anyio
async def test_a_restore_lists_the_untracked_and_dirty_files_it_rewrites(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"t.txt": "t\n"})
    write_files(repo, {"notes.txt": "original\n", "same.txt": "kept\n", "t.txt": "t\nmod\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            reset = await call(client, "git_reset", {"ref": "HEAD", "mode": "hard", "confirm": True})
            point = reset["effect"]["recovery_point"]
            # After the point: the untracked file and the tracked one change, both keeping their status.
            write_files(repo, {"notes.txt": "changed since\n", "t.txt": "t\nother\n"})
            answer = await client.call_tool("git_reset", {"recovery_point": point, "confirm": True})
    assert not answer.is_error
    effect = envelope(answer)["result"]["effect"]
    listed = {p["path"]: p for p in effect.get("paths", [])}
    assert (repo / "notes.txt").read_text() == "original\n" and (repo / "t.txt").read_text() == "t\nmod\n"
    assert sorted(listed) == ["notes.txt", "t.txt"], effect  # same.txt was not rewritten
    assert listed["notes.txt"].get("change", "modified") == "modified", listed
    assert listed["notes.txt"]["sha256"] == _sha("original\n")
    assert listed["notes.txt"]["old_sha256"] == _sha("changed since\n")
    assert listed["t.txt"]["sha256"] == _sha("t\nmod\n") and listed["t.txt"]["old_sha256"] == _sha("t\nother\n")
    assert (effect["insertions"], effect["deletions"]) == (2, 2), effect
    text = answer_text(answer)
    notes, tracked = _sha("original\n")[:12], _sha("t\nmod\n")[:12]
    assert f"notes.txt {notes}" in text and f"t.txt {tracked}" in text, text
