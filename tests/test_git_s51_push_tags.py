"""Pushing tags and deleting remote refs (spec §10: "Tags: create, delete", "Remotes: push"): a release needed the
git CLI for its tag, and a merged branch could not be removed from the remote. Several refs go in one atomic push,
a remote branch is deleted only at its last fetched tip, and nothing is pushed or deleted without confirm."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import answer_text, call, mcp_client, running_server, write_files
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _clones(tmp: Path) -> tuple[Path, Path, Path]:
    seed = tmp / "seed"
    seed.mkdir()
    run_git(seed, "init", "-q", "-b", "main")
    write_files(seed, {"a.txt": "a\n"})
    run_git(seed, "add", "-A")
    run_git(seed, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "seed")
    bare = tmp / "remote.git"
    run_git(tmp, "clone", "-q", "--bare", str(seed), str(bare))
    ours, theirs = tmp / "ours", tmp / "theirs"
    for clone in (ours, theirs):
        run_git(tmp, "clone", "-q", bare.as_uri(), str(clone))
        run_git(clone, "config", "user.name", "t")
        run_git(clone, "config", "user.email", "t@e")
    return ours, theirs, bare


def _commit(root: Path, text: str) -> str:
    write_files(root, {"a.txt": text})
    run_git(root, "commit", "-qam", text.strip())
    return _rev(root, "HEAD")


def _rev(root: Path, ref: str) -> str:
    return run_git(root, "rev-parse", ref).decode().strip()


def _remote_refs(bare: Path) -> set[str]:
    return {line.split()[1] for line in run_git(bare, "show-ref").decode().splitlines()}


def test_a_tag_alone_is_pushed_without_the_branch(tmp_path: Path) -> None:
    ours, _, bare = _clones(tmp_path)
    seeded = _rev(bare, "refs/heads/main")
    mine = _commit(ours, "release\n")
    run_git(ours, "tag", "-a", "v1.0", "-m", "v1.0")
    pushed = GitService(ours).push(tags=["v1.0"])
    assert [(r.remote_ref, r.status) for r in pushed.refs] == [("refs/tags/v1.0", "new")]
    assert _rev(bare, "v1.0^{commit}") == mine
    assert _rev(bare, "refs/heads/main") == seeded  # `git push origin v1.0` leaves the branch alone


def test_a_branch_and_its_tag_go_together_or_not_at_all(tmp_path: Path) -> None:
    ours, theirs, bare = _clones(tmp_path)
    colleague = _commit(theirs, "colleague\n")
    run_git(theirs, "push", "-q", "origin", "main")
    _commit(ours, "mine\n")
    run_git(ours, "tag", "v2")
    with pytest.raises(CodePlaneError) as refused:
        GitService(ours).push(branch="main", tags=["v2"])
    assert refused.value.code == 8006 and "fetch/pull and integrate first" in refused.value.message
    assert refused.value.details["reason"] in {"fetch first", "non-fast-forward"}
    assert _rev(bare, "refs/heads/main") == colleague and "refs/tags/v2" not in _remote_refs(bare)


def test_a_tag_the_remote_has_elsewhere_is_refused_saying_how_to_move_it(tmp_path: Path) -> None:
    ours, theirs, bare = _clones(tmp_path)
    run_git(theirs, "tag", "v3")
    run_git(theirs, "push", "-q", "origin", "v3")
    theirs_v3 = _rev(bare, "refs/tags/v3")
    _commit(ours, "other\n")
    run_git(ours, "tag", "v3")
    with pytest.raises(CodePlaneError) as refused:
        GitService(ours).push(tags=["v3"])
    assert refused.value.code == 8006 and "delete=true tags=['v3'] confirm=true" in refused.value.message
    assert _rev(bare, "refs/tags/v3") == theirs_v3


def test_an_unknown_tag_or_nothing_to_delete_is_refused_before_anything_is_pushed(tmp_path: Path) -> None:
    ours, _, bare = _clones(tmp_path)
    before = _remote_refs(bare)
    service = GitService(ours)
    with pytest.raises(CodePlaneError) as unknown:
        service.push(tags=["v9"])
    assert unknown.value.code == 8002 and unknown.value.details["tags"] == ["v9"]
    with pytest.raises(CodePlaneError) as nothing:
        service.push(delete=True, confirm=True)
    assert nothing.value.code == 1003
    with pytest.raises(CodePlaneError) as option:
        service.push(tags=["--force"])
    assert option.value.code == 1003
    assert _remote_refs(bare) == before


def test_deleting_a_remote_branch_needs_confirm_and_its_last_fetched_tip(tmp_path: Path) -> None:
    ours, theirs, bare = _clones(tmp_path)
    run_git(theirs, "checkout", "-qb", "feat")
    first = _commit(theirs, "feat\n")
    run_git(theirs, "push", "-q", "origin", "feat")
    service = GitService(ours)
    with pytest.raises(CodePlaneError) as unconfirmed:
        service.push(remote_branch="feat", delete=True)
    assert unconfirmed.value.code == 5009 and _rev(bare, "refs/heads/feat") == first
    # Never fetched: git's lease refuses ("stale info"), as a forced push does, and the branch stays.
    with pytest.raises(CodePlaneError) as stale:
        service.push(remote_branch="feat", delete=True, confirm=True)
    assert stale.value.code == 8006 and stale.value.details["reason"] == "stale info"
    assert _rev(bare, "refs/heads/feat") == first
    run_git(ours, "fetch", "-q", "origin")
    second = _commit(theirs, "feat 2\n")  # pushed after our fetch: our lease no longer holds
    run_git(theirs, "push", "-q", "origin", "feat")
    with pytest.raises(CodePlaneError):
        service.push(remote_branch="feat", delete=True, confirm=True)
    assert _rev(bare, "refs/heads/feat") == second
    run_git(ours, "fetch", "-q", "origin")
    deleted = service.push(remote_branch="feat", delete=True, confirm=True)
    assert [(r.remote_ref, r.status) for r in deleted.refs] == [("refs/heads/feat", "deleted")]
    assert "refs/heads/feat" not in _remote_refs(bare)
    point = deleted.effect.recovery_point
    assert point is not None and second in run_git(ours, "cat-file", "-p", point).decode()


async def test_tags_are_pushed_and_deleted_through_the_server(tmp_path: Path) -> None:
    ours, _, bare = _clones(tmp_path)
    run_git(ours, "tag", "v1")
    with running_server(ours, "--profile", "full") as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("git_push", {"tags": ["v1"]})
            pushed = answer_text(res)
            assert "refs/tags/v1" in _remote_refs(bare)
            gone = await call(client, "git_push", {"tags": ["v1"], "delete": True, "confirm": True})
    assert "[new tag] v1 -> v1" in pushed, pushed
    assert gone["refs"][0]["status"] == "deleted" and "refs/tags/v1" not in _remote_refs(bare)
