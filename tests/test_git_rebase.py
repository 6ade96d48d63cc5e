"""git_rebase: plan, interactive execute (pick/reword/edit/squash/fixup/drop), conflicts, continue/skip/abort."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.git.rebase_state import RebasePlan, RebaseStep
from tests.builders import make_repo, write_files
from tests.git_oracle import full_state, run_git


def _commit(root: Path, message: str, files: dict[str, str]) -> str:
    write_files(root, files)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", message)
    return run_git(root, "rev-parse", "HEAD").decode().strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main gets one commit after the fork; topic has four commits (c1..c4)."""
    root = make_repo(tmp_path / "r", {"base.txt": "base\n", "shared.txt": "shared\n"})
    run_git(root, "checkout", "-q", "-b", "topic")
    for i in range(1, 5):
        _commit(root, f"c{i}", {f"t{i}.txt": f"{i}\n"})
    run_git(root, "checkout", "-q", "main")
    _commit(root, "main moves", {"m.txt": "m\n"})
    run_git(root, "checkout", "-q", "topic")
    return root


def _subjects(root: Path, rev: str = "HEAD") -> list[str]:
    return run_git(root, "log", "--format=%s", rev).decode().split("\n")[:-1]


def test_plan_lists_commits_not_in_upstream_oldest_first(repo: Path) -> None:
    plan = GitService(repo).rebase_plan("main")
    assert [s.message for s in plan.steps] == ["c1", "c2", "c3", "c4"]
    assert plan.onto == run_git(repo, "rev-parse", "main").decode().strip()
    assert all(s.action == "pick" for s in plan.steps)


def test_start_replays_onto_upstream_and_moves_the_branch_last(repo: Path) -> None:
    git = GitService(repo)
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.rebase_start("main")
    assert unconfirmed.value.code == 5009
    result = git.rebase_start("main", confirm=True)
    assert result.success and result.state == "done" and result.completed_steps == 4
    assert result.effect.recovery_point
    assert _subjects(repo) == ["c4", "c3", "c2", "c1", "main moves", "initial"]
    assert run_git(repo, "symbolic-ref", "HEAD").decode().strip() == "refs/heads/topic"
    assert git.status().is_clean and git.status().state == "none"


def test_interactive_plan_reorders_squashes_rewords_and_drops(repo: Path) -> None:
    git = GitService(repo)
    plan = git.rebase_plan("main")
    c1, c2, c3, c4 = (s.commit_sha for s in plan.steps)
    edited = RebasePlan(upstream=plan.upstream, onto=plan.onto, steps=[
        RebaseStep(action="reword", commit_sha=c3, message="third first\n"),
        RebaseStep(action="pick", commit_sha=c1),
        RebaseStep(action="squash", commit_sha=c2, message="one and two\n"),
        RebaseStep(action="drop", commit_sha=c4),
    ])
    result = git.rebase_execute(edited, confirm=True)
    assert result.success
    assert _subjects(repo) == ["one and two", "third first", "main moves", "initial"]
    tree = run_git(repo, "ls-tree", "--name-only", "HEAD").decode().split()
    assert "t4.txt" not in tree and {"t1.txt", "t2.txt", "t3.txt"} <= set(tree)
    fixup = git.rebase_plan("main")
    steps = [fixup.steps[0], RebaseStep(action="fixup", commit_sha=fixup.steps[1].commit_sha)]
    git.rebase_execute(RebasePlan(upstream=fixup.upstream, onto=fixup.onto, steps=steps), confirm=True)
    assert _subjects(repo) == ["third first", "main moves", "initial"]


def test_conflict_pauses_with_data_then_continue_finishes(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "main")
    _commit(repo, "main edits t2", {"t2.txt": "main's two\n"})
    run_git(repo, "checkout", "-q", "topic")
    git = GitService(repo)
    paused = git.rebase_start("main", confirm=True)
    assert paused.state == "conflict" and not paused.success and paused.conflict_paths == ["t2.txt"]
    assert paused.completed_steps == 1 and paused.conflicts[0].theirs_oid
    assert git.status().state == "rebase" and git.status().detached
    with pytest.raises(CodePlaneError) as unresolved:
        git.rebase_continue()
    assert unresolved.value.code == 8003
    write_files(repo, {"t2.txt": "merged two\n"})
    git.stage(["t2.txt"])
    done = git.rebase_continue()
    assert done.success and _subjects(repo)[:4] == ["c4", "c3", "c2", "c1"]
    assert (repo / "t2.txt").read_text() == "merged two\n" and git.status().state == "none"


def test_skip_drops_the_conflicting_step_and_edit_pauses(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "main")
    _commit(repo, "main edits t2", {"t2.txt": "main's two\n"})
    run_git(repo, "checkout", "-q", "topic")
    git = GitService(repo)
    plan = git.rebase_plan("main")
    steps = [plan.steps[0], plan.steps[1], RebaseStep(action="edit", commit_sha=plan.steps[2].commit_sha),
             plan.steps[3]]
    paused = git.rebase_execute(RebasePlan(upstream=plan.upstream, onto=plan.onto, steps=steps), confirm=True)
    assert paused.state == "conflict"
    at_edit = git.rebase_skip(confirm=True)
    assert at_edit.state == "edit_pause" and at_edit.current_commit == plan.steps[2].commit_sha
    write_files(repo, {"t3.txt": "amended three\n"})
    git.commit("", stage=["t3.txt"], amend=True)
    done = git.rebase_continue()
    assert done.success and _subjects(repo)[:3] == ["c4", "c3", "c1"]
    assert run_git(repo, "show", "HEAD~1:t3.txt").decode() == "amended three\n"


def test_abort_restores_branch_and_tree_exactly(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "main")
    _commit(repo, "main edits t2", {"t2.txt": "main's two\n"})
    run_git(repo, "checkout", "-q", "topic")
    before = full_state(repo)
    git = GitService(repo)
    git.rebase_start("main", confirm=True)
    aborted = git.rebase_abort(confirm=True)
    assert aborted.state == "aborted" and full_state(repo) == before and git.status().state == "none"


def test_rebase_refuses_dirty_tree_and_second_rebase(repo: Path) -> None:
    git = GitService(repo)
    write_files(repo, {"t1.txt": "dirty\n"})
    with pytest.raises(CodePlaneError) as dirty:
        git.rebase_start("main", confirm=True)
    assert dirty.value.code == 8004
    run_git(repo, "checkout", "-q", "--", "t1.txt")
    run_git(repo, "checkout", "-q", "main")
    _commit(repo, "conflict", {"t1.txt": "x\n"})
    run_git(repo, "checkout", "-q", "topic")
    git.rebase_start("main", confirm=True)
    with pytest.raises(CodePlaneError) as again:
        git.rebase_start("main", confirm=True)
    assert again.value.code == 8005
    with pytest.raises(CodePlaneError) as merge_now:
        git.merge("main")
    assert merge_now.value.code == 8005 and "git_rebase action=abort" in merge_now.value.message
    # Switching away mid-rebase (forced, even) kept the rebase: its continue then rewrote the branch switched to.
    topic = run_git(repo, "rev-parse", "topic").decode()
    for force in (False, True):
        with pytest.raises(CodePlaneError) as switching:
            git.checkout("main", force=force, confirm=True)
        assert switching.value.code == 8005 and "git_rebase action=abort" in switching.value.message
    assert git.status().state == "rebase" and run_git(repo, "rev-parse", "topic").decode() == topic


def test_doctor_reports_a_rebase_left_in_progress(repo: Path) -> None:
    from codeplane.git.doctor import check_git_tools

    run_git(repo, "checkout", "-q", "main")
    _commit(repo, "main edits t2", {"t2.txt": "main's two\n"})
    run_git(repo, "checkout", "-q", "topic")
    GitService(repo).rebase_start("main", confirm=True)
    results = {r.name: r for r in check_git_tools(repo)}
    assert results["git operation in progress"].detail == "rebase"
    assert results["git identity (for git_commit)"].ok
    assert results["git recovery points"].detail.startswith("1 under")
