"""QA35 F1: a forced push with no remote-tracking ref to lease against never falls back to a plain ``--force``:
as git's ``--force-with-lease`` it refuses ("stale info", 8006 naming a fetch) and the remote keeps its commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import run_git


def _clones(tmp: Path) -> tuple[Path, Path, Path]:
    seed = make_repo(tmp / "seed", {"a.txt": "a\n"})
    bare = tmp / "remote.git"
    run_git(tmp, "clone", "-q", "--bare", str(seed), str(bare))
    ours, theirs = tmp / "ours", tmp / "theirs"
    for clone in (ours, theirs):
        run_git(tmp, "clone", "-q", bare.as_uri(), str(clone))
    return ours, theirs, bare


def _commit(root: Path, text: str) -> str:
    write_files(root, {"a.txt": text})
    run_git(root, "commit", "-qam", text.strip())
    return run_git(root, "rev-parse", "HEAD").decode().strip()


def test_force_push_to_a_branch_never_fetched_is_refused_and_keeps_the_remote_commit(tmp_path: Path) -> None:
    ours, theirs, bare = _clones(tmp_path)
    run_git(theirs, "checkout", "-qb", "feat")
    colleague = _commit(theirs, "colleague\n")
    run_git(theirs, "push", "-q", "origin", "feat")
    _commit(ours, "mine\n")
    with pytest.raises(CodePlaneError) as refused:
        GitService(ours).push(remote_branch="feat", force=True, confirm=True)
    assert refused.value.code == 8006 and refused.value.details["reason"] == "stale info"
    assert "git_remote action=fetch name=origin branch=feat" in refused.value.message
    assert run_git(bare, "rev-parse", "refs/heads/feat").decode().strip() == colleague


def test_force_push_of_a_branch_the_remote_does_not_have_still_creates_it(tmp_path: Path) -> None:
    ours, _, bare = _clones(tmp_path)
    mine = _commit(ours, "mine\n")
    pushed = GitService(ours).push(remote_branch="fresh", force=True, confirm=True)
    assert pushed.refs[0].status in {"ok", "new", "forced"}, pushed.refs
    assert run_git(bare, "rev-parse", "refs/heads/fresh").decode().strip() == mine
