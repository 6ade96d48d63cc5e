"""QA35 F6: a branch whose upstream was deleted on the remote (and pruned) shows it as git does, ``[gone]``, not as
a branch that never tracked anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import answer_text, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _gone_upstream(tmp: Path) -> Path:
    seed = make_repo(tmp / "seed", {"a.txt": "a\n"})
    run_git(seed, "branch", "topic")
    clone = tmp / "clone"
    run_git(tmp, "clone", "-q", str(seed), str(clone))
    run_git(clone, "checkout", "-q", "topic")
    run_git(seed, "branch", "-D", "topic")
    run_git(clone, "fetch", "-q", "--prune")
    assert "[gone]" in run_git(clone, "status", "-sb").decode()
    return clone


async def test_status_marks_the_upstream_gone(tmp_path: Path) -> None:
    root = _gone_upstream(tmp_path)
    report = GitService(root).status()
    assert report.upstream == "origin/topic" and report.upstream_gone and report.ahead is None
    run_git(root, "checkout", "-qb", "plain")
    untracked = GitService(root).status()
    assert untracked.upstream is None and not untracked.upstream_gone
    run_git(root, "checkout", "-q", "topic")
    with running_server(root) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_status", {}))
    assert text.splitlines()[0].endswith("... origin/topic [gone]"), text
