"""QA35 F9/F5: a committed file↔symlink change shows its content (as the work-tree diff does), and a mode change
shows git's ``old mode``/``new mode`` lines, in the structured answer and the text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import answer_text, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _changed(tmp: Path) -> Path:
    root = make_repo(tmp / "repo", {"t.txt": "target\n", "l": "plain\n", "run.sh": "#!/bin/sh\n"})
    (root / "l").unlink()
    os.symlink("t.txt", root / "l")
    os.chmod(root / "run.sh", 0o755)
    return root


def test_work_tree_diff_shows_the_mode_change(tmp_path: Path) -> None:
    root = _changed(tmp_path)
    files = {f.path: f for f in GitService(root).diff().files}
    assert (files["run.sh"].old_mode, files["run.sh"].new_mode) == ("100644", "100755")
    assert (files["l"].old_mode, files["l"].new_mode) == ("100644", "120000")


def test_commit_to_commit_typechange_has_its_content_and_modes(tmp_path: Path) -> None:
    root = _changed(tmp_path)
    run_git(root, "commit", "-qam", "c2")
    report = GitService(root).diff(base="HEAD~1", target="HEAD")
    files = {f.path: f for f in report.files}
    link = files["l"]
    assert link.status == "typechange" and (link.insertions, link.deletions) == (1, 1)
    assert [(line.origin, line.content) for h in link.hunks for line in h.lines] == [("-", "plain"), ("+", "t.txt")]
    assert (files["run.sh"].old_mode, files["run.sh"].new_mode) == ("100644", "100755")
    assert (report.stats.insertions, report.stats.deletions) == (1, 1)


async def test_the_diff_text_has_git_mode_lines(tmp_path: Path) -> None:
    root = _changed(tmp_path)
    run_git(root, "commit", "-qam", "c2")
    with running_server(root) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_diff", {"base": "HEAD~1", "target": "HEAD"}))
    lines = text.splitlines()
    at = lines.index("--- modified run.sh +0 -0")
    assert lines[at + 1:at + 3] == ["old mode 100644", "new mode 100755"], text
    assert "--- typechange l +1 -1" in lines and "+t.txt" in lines, text
