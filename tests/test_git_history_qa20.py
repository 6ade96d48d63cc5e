"""History the git CLI keeps and CodePlane's git tools must keep too (QA20 #3, #6, #10, #11).

An amend during a merge threw the merge away; ``commit.gpgsign`` was ignored (unsigned commits); ``ORIG_HEAD`` was
never written, so ``git reset --hard ORIG_HEAD`` undid something else; leaving commits on a detached HEAD said
nothing, and the reflog named the commit there a checkout. Each is checked against the git CLI's own files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from codeplane.git.reset import Mode
from tests.builders import answer_text, call, envelope, git, make_repo, mcp_client, running_server, write_files
from tests.git_oracle import run_git


def _diverged(tmp_path: Path) -> Path:
    """``main`` and ``other`` both change f.txt."""
    repo = make_repo(tmp_path / "repo", {"f.txt": "base\n", "g.txt": "g\n"})
    git(repo, "checkout", "-q", "-b", "other")
    write_files(repo, {"f.txt": "other\n"})
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {"f.txt": "main\n"})
    git(repo, "commit", "-qam", "main")
    return repo


def _head(repo: Path, ref: str = "HEAD") -> str:
    return git(repo, "rev-parse", ref).stdout.strip()


def test_an_amend_during_a_merge_is_refused_and_the_merge_stays(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    service = GitService(repo)
    stopped = service.merge("other")
    assert not stopped.success and stopped.conflicts
    write_files(repo, {"f.txt": "resolved\n"})
    service.stage(["f.txt"])
    head, merge_head = _head(repo), (repo / ".git" / "MERGE_HEAD").read_text()
    index = (repo / ".git" / "index").read_bytes()
    with pytest.raises(CodePlaneError) as refused:
        service.commit("oops amend", amend=True)
    assert refused.value.error is ErrorCode.GIT_INVALID_STATE
    assert refused.value.details == {"state": "merge", "field": "amend"} and "cannot amend" in refused.value.message
    assert _head(repo) == head and (repo / ".git" / "MERGE_HEAD").read_text() == merge_head
    assert (repo / ".git" / "index").read_bytes() == index
    # The merge can still be concluded, with both parents.
    done = service.commit("")
    assert len(done.parents) == 2
    run_git(repo, "merge-base", "--is-ancestor", "other", "HEAD")


def test_an_amend_during_a_cherry_pick_is_refused(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    service = GitService(repo)
    assert not service.cherry_pick("other").success
    head = _head(repo)
    with pytest.raises(CodePlaneError) as refused:
        service.commit("amend", amend=True, stage=["f.txt"])
    assert refused.value.error is ErrorCode.GIT_INVALID_STATE and "cherry-pick" in refused.value.message
    assert _head(repo) == head and (repo / ".git" / "CHERRY_PICK_HEAD").exists()


def test_commit_gpgsign_refuses_every_commit_and_changes_nothing(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    git(repo, "checkout", "-q", "-b", "ahead", "main")
    write_files(repo, {"g.txt": "ahead\n"})
    git(repo, "commit", "-qam", "ahead")
    git(repo, "checkout", "-q", "main")
    git(repo, "config", "commit.gpgsign", "true")
    service = GitService(repo)
    write_files(repo, {"g.txt": "changed\n"})
    head, index = _head(repo), (repo / ".git" / "index").read_bytes()
    attempts: list[Callable[[], object]] = [
        lambda: service.commit("signed?", stage=["g.txt"]),
        lambda: service.commit("signed?", only=["g.txt"]),
        lambda: service.commit("amend", amend=True),
    ]
    for attempt in attempts:
        with pytest.raises(CodePlaneError) as refused:
            attempt()
        assert refused.value.error is ErrorCode.GIT_INVALID_STATE
        assert refused.value.details == {"config": "commit.gpgsign"} and "commit.gpgsign" in refused.value.message
    assert (repo / ".git" / "index").read_bytes() == index
    git(repo, "checkout", "-q", "g.txt")
    operations: list[Callable[[], object]] = [
        lambda: service.merge("other"), lambda: service.cherry_pick("other"), lambda: service.revert("HEAD"),
        lambda: service.rebase_start("other", confirm=True)]
    for attempt in operations:
        with pytest.raises(CodePlaneError) as refused:
            attempt()
        assert refused.value.details == {"config": "commit.gpgsign"}
    assert _head(repo) == head and git(repo, "status", "--porcelain").stdout == ""
    assert not (repo / ".git" / "MERGE_HEAD").exists() and service.recovery_points() == []
    # A fast-forward creates no commit: git signs nothing there, and neither is it refused.
    git(repo, "checkout", "-q", "-b", "behind", "main~1")
    assert service.merge("main").fastforward


def test_orig_head_is_where_reset_merge_and_rebase_left_head_as_in_git(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    service = GitService(repo)
    orig = repo / ".git" / "ORIG_HEAD"
    modes: tuple[Mode, ...] = ("soft", "mixed", "hard")
    for mode in modes:
        git(repo, "update-ref", "-d", "ORIG_HEAD")
        before = _head(repo)
        service.reset("HEAD~1", mode, confirm=True)
        assert orig.read_text().strip() == before, mode
        git(repo, "reset", "-q", "--hard", "ORIG_HEAD")  # the git idiom undoes it
        assert _head(repo) == before
    git(repo, "checkout", "-q", "-b", "behind", "main~1")
    git(repo, "update-ref", "-d", "ORIG_HEAD")
    before = _head(repo)
    assert service.merge("main").fastforward
    assert orig.read_text().strip() == before
    git(repo, "checkout", "-q", "other")
    before = _head(repo)
    assert service.merge("main").conflicts  # a merge that stops sets it too
    assert orig.read_text().strip() == before
    service.merge_abort()
    git(repo, "checkout", "-q", "-b", "side", "main")
    write_files(repo, {"g.txt": "side\n"})
    git(repo, "commit", "-qam", "side")
    git(repo, "update-ref", "-d", "ORIG_HEAD")
    before = _head(repo)
    assert service.rebase_start("behind~1", confirm=True).success
    assert orig.read_text().strip() == before


def test_a_commit_on_a_detached_head_is_logged_as_a_commit(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    service = GitService(repo)
    service.checkout("HEAD~1")
    write_files(repo, {"det.txt": "d\n"})
    made = service.commit("on detached", stage=["det.txt"])
    assert git(repo, "reflog", "-1", "--format=%gs", "HEAD").stdout.strip() == "commit: on detached"
    service.commit("amended on detached", amend=True)
    assert git(repo, "reflog", "-1", "--format=%gs", "HEAD").stdout.strip() == "commit (amend): amended on detached"
    assert made.branch is None


def test_a_rebase_logs_its_steps_as_git_does(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    git(repo, "checkout", "-q", "-b", "side", "main~1")
    write_files(repo, {"g.txt": "side\n"})
    git(repo, "commit", "-qam", "side work")
    assert GitService(repo).rebase_start("main", confirm=True).success
    said = git(repo, "reflog", "-3", "--format=%gs", "HEAD").stdout.splitlines()
    assert said[0] == "rebase (finish): returning to refs/heads/side"
    assert said[1] == "rebase (pick): side work"
    assert said[2].startswith("rebase (start): checkout ")


@pytest.mark.anyio
async def test_leaving_commits_on_a_detached_head_warns_with_how_to_keep_them(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            await call(client, "git_checkout", {"ref": "HEAD~1"})
            write_files(repo, {"det.txt": "d\n"})
            made = await call(client, "git_stage_and_commit", {"paths": ["det.txt"], "message": "on detached"})
            answer = await client.call_tool("git_checkout", {"ref": "main"})
            quiet = await client.call_tool("git_checkout", {"ref": "other"})
    result = envelope(answer)["result"]
    short = made["oid"][:7]
    assert len(result["warnings"]) == 1, result
    warning = result["warnings"][0]
    assert warning.startswith("you are leaving 1 commit behind") and f"{short} on detached" in warning
    assert f"git_checkout ref=<new-branch-name> create=true start_point={made['oid'][:12]}" in warning
    assert answer_text(answer).startswith("warning: you are leaving 1 commit behind"), answer_text(answer)
    # From a branch nothing is left behind: no warning.
    assert "warnings" not in envelope(quiet)["result"] and "warning" not in answer_text(quiet)


def test_merges_picks_and_reverts_are_logged_as_git_logs_them(tmp_path: Path) -> None:
    repo = _diverged(tmp_path)
    git(repo, "checkout", "-q", "-b", "side", "main~1")
    write_files(repo, {"s.txt": "s\n"})
    git(repo, "add", "s.txt")
    git(repo, "commit", "-qm", "side work")
    git(repo, "checkout", "-q", "main")
    service = GitService(repo)

    def last() -> str:
        return git(repo, "reflog", "-1", "--format=%gs", "HEAD").stdout.strip()

    service.merge("side")
    assert last() == "merge side: Merge made by the 'ort' strategy."
    service.revert("HEAD~1")
    assert last() == 'revert: Revert "main"'
    git(repo, "checkout", "-q", "-b", "picks", "main~2")
    service.cherry_pick("side")
    assert last() == "cherry-pick: side work"
    assert service.merge("other").conflicts
    write_files(repo, {"f.txt": "resolved\n"})
    service.commit("", stage=["f.txt"])
    assert last() == "commit (merge): Merge branch 'other' into picks"
