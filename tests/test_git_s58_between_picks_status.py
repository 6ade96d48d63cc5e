"""``git_status`` between two picks of a sequence the git CLI started (QA63 leftover): libgit2 reads no state
there (no ``CHERRY_PICK_HEAD``), and the answer said ``state: none`` where ``git status`` says "Cherry-pick
currently in progress"; an agent then took the repository for idle and committed over the rest of the sequence."""

from __future__ import annotations

from pathlib import Path

from codeplane.git import GitService
from codeplane.server.tools.git_render import render_status
from tests.builders import make_repo
from tests.git_oracle import picks_stopped_on_b, run_git


def _between_picks(tmp_path: Path) -> Path:
    """``git cherry-pick A B C`` stopped on B's conflict, then B resolved and committed with ``git commit``."""
    root = picks_stopped_on_b(tmp_path / "r", "src~2", "src~1", "src")
    (root / "f.txt").write_text("l1\nboth\n")
    run_git(root, "add", "f.txt")
    run_git(root, "commit", "-q", "--no-edit")
    assert (root / ".git" / "sequencer").is_dir()
    return root


def test_status_between_picks_names_the_sequence_as_git_status_does(tmp_path: Path) -> None:
    root = _between_picks(tmp_path)
    assert "Cherry-pick currently in progress." in run_git(root, "status").decode()
    report = GitService(root).status()
    assert report.state == "cherrypick" and report.sequence is not None
    assert "`git cherry-pick --continue`" in report.sequence and "git_merge action=abort" in report.sequence
    text = render_status(report)
    assert "state=cherrypick" in text.splitlines()[0] and "between picks: " in text, text
    run_git(root, "cherry-pick", "--continue")  # the sequence goes on from there, as the answer says
    after = GitService(root).status()
    assert after.state == "none" and after.sequence is None and (root / "c.txt").read_text() == "c\n"


def test_status_with_no_sequence_says_nothing_of_one(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f.txt": "x\n"})
    report = GitService(root).status()
    assert report.state == "none" and report.sequence is None
    assert "between picks" not in render_status(report)
