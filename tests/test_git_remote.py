"""Remotes against a local bare repository over file://: push, fetch, pull (merge and rebase), rejection."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import full_state, run_git


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, str]:
    """(our clone, another clone, the bare remote's file:// URL), both clones at the same commit."""
    seed = make_repo(tmp_path / "seed", {"a.txt": "a\n", "b.txt": "b\n"})
    bare = tmp_path / "remote.git"
    run_git(tmp_path, "clone", "-q", "--bare", str(seed), str(bare))
    url = bare.as_uri()
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for clone in (ours, theirs):
        run_git(tmp_path, "clone", "-q", url, str(clone))
        run_git(clone, "config", "user.name", "Test")
        run_git(clone, "config", "user.email", "test@example.com")
    return ours, theirs, url


def _commit(root: Path, files: dict[str, str], message: str) -> str:
    write_files(root, files)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", message)
    return run_git(root, "rev-parse", "HEAD").decode().strip()


def _remote_head(url_root: Path, branch: str = "main") -> str:
    return run_git(url_root, "rev-parse", f"refs/heads/{branch}").decode().strip()


def test_remote_list_add_remove(pair: tuple[Path, Path, str], tmp_path: Path) -> None:
    ours, _, url = pair
    git = GitService(ours)
    assert [(r.name, r.url) for r in git.remotes()] == [("origin", url)]
    added = git.remote_add("mirror", "https://user:secret@example.com/r.git")
    assert added.remote and added.remote.url == "https://user:***@example.com/r.git"
    assert run_git(ours, "remote").decode().split() == ["mirror", "origin"]
    git.remote_remove("mirror")
    assert run_git(ours, "remote").decode().split() == ["origin"]
    with pytest.raises(CodePlaneError) as bad:
        git.remote_add("x", "--upload-pack=touch /tmp/pwned")
    assert bad.value.code == 1003


def test_push_then_non_fast_forward_is_rejected_without_force(pair: tuple[Path, Path, str], tmp_path: Path) -> None:
    ours, theirs, _ = pair
    bare = tmp_path / "remote.git"
    git = GitService(ours)
    mine = _commit(ours, {"a.txt": "ours\n"}, "ours")
    pushed = git.push()
    assert pushed.refs[0].status == "ok" and _remote_head(bare) == mine
    assert any(r.ref == "refs/remotes/origin/main" and r.new == mine for r in pushed.effect.refs)
    run_git(theirs, "pull", "-q", "--rebase")
    _commit(theirs, {"b.txt": "theirs\n"}, "theirs")
    run_git(theirs, "push", "-q", "origin", "main")
    _commit(ours, {"a.txt": "ours again\n"}, "ours again")
    with pytest.raises(CodePlaneError) as rejected:
        git.push()
    err = rejected.value
    assert err.code == 8006 and not err.retryable and "fetch first" in err.details["reason"]
    assert err.details["refs"][0]["status"] == "rejected"
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.push(force=True)
    assert unconfirmed.value.code == 5009


def test_force_push_uses_the_lease_and_saves_the_remote_tip(pair: tuple[Path, Path, str], tmp_path: Path) -> None:
    ours, theirs, _ = pair
    bare = tmp_path / "remote.git"
    git = GitService(ours)
    theirs_tip = _commit(theirs, {"b.txt": "theirs\n"}, "theirs")
    run_git(theirs, "push", "-q", "origin", "main")
    mine = _commit(ours, {"a.txt": "ours\n"}, "ours")
    with pytest.raises(CodePlaneError) as stale:  # we never fetched theirs: the lease protects it
        git.push(force=True, confirm=True)
    assert stale.value.code == 8006 and _remote_head(bare) == theirs_tip
    git.fetch()
    forced = git.push(force=True, confirm=True)
    assert forced.refs[0].status == "forced" and _remote_head(bare) == mine
    point = forced.effect.recovery_point
    assert point
    restored = git.restore(point, confirm=True)
    assert any(theirs_tip in note for note in restored.notes)
    assert run_git(ours, "cat-file", "-t", theirs_tip).decode().strip() == "commit"


def test_fetch_and_pull_merge_fast_forward_and_merge_commit(pair: tuple[Path, Path, str]) -> None:
    ours, theirs, _ = pair
    git = GitService(ours)
    tip = _commit(theirs, {"b.txt": "theirs\n"}, "theirs 1")
    run_git(theirs, "push", "-q", "origin", "main")
    fetched = git.fetch()
    assert [(r.ref, r.new) for r in fetched.effect.refs] == [("refs/remotes/origin/main", tip)]
    pulled = git.pull()
    assert pulled.success and pulled.merge and pulled.merge.fastforward and (ours / "b.txt").read_text() == "theirs\n"
    _commit(theirs, {"b.txt": "theirs 2\n"}, "theirs 2")
    run_git(theirs, "push", "-q", "origin", "main")
    _commit(ours, {"a.txt": "ours\n"}, "ours 1")
    merged = git.pull()
    assert merged.success and merged.merge and not merged.merge.fastforward
    assert run_git(ours, "log", "-1", "--format=%s").decode().startswith("Merge branch 'main' of file://")
    assert len(run_git(ours, "log", "-1", "--format=%P").decode().split()) == 2


def test_pull_of_a_branch_the_remote_does_not_have_is_not_retryable(pair: tuple[Path, Path, str]) -> None:
    """A new local branch without upstream: ``git_pull`` answered 8006 *retryable* "couldn't find remote ref";
    retrying cannot help. It names the branch and how to give it one."""
    ours, _, _ = pair
    run_git(ours, "checkout", "-q", "-b", "topic")
    with pytest.raises(CodePlaneError) as missing:
        GitService(ours).pull()
    assert missing.value.code == 8002 and not missing.value.retryable, missing.value
    assert "origin has no branch 'topic'" in missing.value.message and "set_upstream" in missing.value.message


def test_pull_rebase_replays_local_commits(pair: tuple[Path, Path, str]) -> None:
    ours, theirs, _ = pair
    git = GitService(ours)
    _commit(theirs, {"b.txt": "theirs\n"}, "theirs")
    run_git(theirs, "push", "-q", "origin", "main")
    _commit(ours, {"a.txt": "ours\n"}, "ours")
    pulled = git.pull(rebase=True)
    assert pulled.success and pulled.mode == "rebase" and pulled.effect.recovery_point
    assert run_git(ours, "log", "--format=%s").decode().split("\n")[:3] == ["ours", "theirs", "initial"]
    assert git.push().refs[0].status == "ok"


def test_pull_conflicts_are_data_and_reset_hard_abandons(pair: tuple[Path, Path, str]) -> None:
    ours, theirs, _ = pair
    git = GitService(ours)
    _commit(theirs, {"a.txt": "theirs\n"}, "theirs")
    run_git(theirs, "push", "-q", "origin", "main")
    _commit(ours, {"a.txt": "ours\n"}, "ours")
    before = full_state(ours)
    pulled = git.pull()
    assert not pulled.success and pulled.state == "merge" and [c.path for c in pulled.conflicts] == ["a.txt"]
    git.reset(mode="hard", confirm=True)
    assert full_state(ours) == before and git.status().state == "none"
    rebased = git.pull(rebase=True)
    assert not rebased.success and rebased.rebase and rebased.rebase.state == "conflict"
    git.rebase_abort(confirm=True)
    assert full_state(ours) == before
