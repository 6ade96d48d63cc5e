"""Checkout, branches, merge/cherry-pick/revert, stash and reset against the git CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import porcelain_v2, run_git, status_sets


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n"})
    run_git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"a.txt": "feature a\n", "f.txt": "only on feature\n"})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "feature work")
    run_git(root, "checkout", "-q", "main")
    return root


def _head(root: Path, rev: str = "HEAD") -> str:
    return run_git(root, "rev-parse", rev).decode().strip()


def test_checkout_switches_creates_and_refuses_to_overwrite_local_changes(repo: Path) -> None:
    git = GitService(repo)
    result = git.checkout("feature")
    assert result.branch == "feature" and (repo / "f.txt").exists()
    assert run_git(repo, "symbolic-ref", "HEAD").decode().strip() == "refs/heads/feature"
    assert [p.path for p in result.effect.paths] == ["a.txt", "f.txt"]
    git.checkout("main")
    write_files(repo, {"a.txt": "local edit\n", "b.txt": "carried\n"})
    with pytest.raises(CodePlaneError) as blocked:
        git.checkout("feature")
    assert blocked.value.code == 8004 and blocked.value.details["paths"] == ["a.txt"]
    assert (repo / "a.txt").read_text() == "local edit\n" and _head(repo) == _head(repo, "main")
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.checkout("feature", force=True)
    assert unconfirmed.value.code == 5009
    forced = git.checkout("feature", force=True, confirm=True)
    assert forced.effect.recovery_point and (repo / "a.txt").read_text() == "feature a\n"
    created = git.checkout("topic", create=True, start_point="main")
    assert created.created_branch == "topic" and _head(repo) == _head(repo, "main")
    detached = git.checkout(_head(repo, "feature"))
    assert detached.detached and detached.branch is None


def test_checkout_carries_non_colliding_changes_and_creates_tracking_branch(repo: Path, tmp_path: Path) -> None:
    git = GitService(repo)
    write_files(repo, {"b.txt": "carried\n"})
    git.checkout("feature")
    assert (repo / "b.txt").read_text() == "carried\n"
    run_git(repo, "remote", "add", "origin", str(tmp_path / "nowhere"))
    run_git(repo, "update-ref", "refs/remotes/origin/remote-only", _head(repo, "main"))
    result = git.checkout("remote-only")
    assert result.created_branch == "remote-only" and result.branch == "remote-only"
    assert run_git(repo, "config", "branch.remote-only.remote").decode().strip() == "origin"


def test_checkout_paths_restores_from_index_or_commit(repo: Path) -> None:
    git = GitService(repo)
    write_files(repo, {"a.txt": "scratch\n"})
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.checkout(paths=["a.txt"])
    assert unconfirmed.value.code == 5009
    restored = git.checkout(paths=["a.txt"], confirm=True)
    assert restored.restored_paths == ["a.txt"] and (repo / "a.txt").read_text() == "a\n"
    assert restored.effect.recovery_point
    from_feature = git.checkout("feature", paths=["f.txt"])
    assert (repo / "f.txt").read_text() == "only on feature\n" and from_feature.effect.recovery_point is None
    assert status_sets(git.status()) == porcelain_v2(repo)
    assert [e.path for e in git.status().staged] == ["f.txt"]


def test_branch_list_matches_git_and_unmerged_delete_needs_confirm(repo: Path) -> None:
    git = GitService(repo)
    git.branch_create("copy", "feature")
    run_git(repo, "update-ref", "refs/remotes/origin/main", _head(repo, "main"))
    listed = git.branches(remotes_too=True)
    out = run_git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/remotes").decode()
    assert [(b.ref, b.oid) for b in listed] == [tuple(line.split()) for line in out.splitlines()]
    assert next(b for b in listed if b.name == "main").is_head
    git.branch_rename("copy", "copy2")
    assert "copy2" in run_git(repo, "branch", "--format=%(refname:short)").decode().split()
    with pytest.raises(CodePlaneError) as unmerged:
        git.branch_delete("feature")
    assert unmerged.value.code == 5009
    deleted = git.branch_delete("feature", confirm=True)
    assert deleted.unmerged and deleted.effect.recovery_point
    merged_away = git.branch_create("merged", "main")
    assert merged_away.branch and not git.branch_delete("merged").unmerged
    with pytest.raises(CodePlaneError) as current:
        git.branch_delete("main")
    assert current.value.code == 8005
    with pytest.raises(CodePlaneError) as bad_name:
        git.branch_create("-x")
    assert bad_name.value.code == 1003


def test_merge_fast_forward_merge_commit_and_dirty_refusal(repo: Path) -> None:
    git = GitService(repo)
    ff = git.merge("feature")
    assert ff.success and ff.fastforward and _head(repo) == _head(repo, "feature")
    run_git(repo, "reset", "-q", "--hard", "HEAD~1")
    write_files(repo, {"b.txt": "main b\n"})
    run_git(repo, "commit", "-qam", "main b")
    write_files(repo, {"a.txt": "dirty\n"})
    with pytest.raises(CodePlaneError) as dirty:
        git.merge("feature")
    assert dirty.value.code == 8004 and dirty.value.details["paths"] == ["a.txt"]
    run_git(repo, "checkout", "-q", "--", "a.txt")
    merged = git.merge("feature")
    assert merged.success and not merged.fastforward and merged.commit
    assert run_git(repo, "log", "-1", "--format=%P %s").decode().split(" ", 2)[2].strip() == "Merge branch 'feature'"
    assert git.merge("feature").up_to_date


def test_merge_conflicts_are_data_and_match_git_ls_files_unmerged(repo: Path, tmp_path: Path) -> None:
    write_files(repo, {"a.txt": "main a\n"})
    run_git(repo, "commit", "-qam", "main a")
    oracle = tmp_path / "oracle"
    shutil.copytree(repo, oracle)
    run_git(oracle, "merge", "feature", check=False)
    result = GitService(repo).merge("feature")
    # The markers name the branch as git's do (``>>>>>>> feature``), not its commit id.
    assert (repo / "a.txt").read_bytes() == (oracle / "a.txt").read_bytes()
    assert not result.success and result.state == "merge"
    stages = run_git(repo, "ls-files", "-u").decode().split("\n")
    oids = {int(line.split()[2]): line.split()[1] for line in stages if line}
    conflict = result.conflicts[0]
    assert (conflict.path, conflict.ancestor_oid, conflict.ours_oid, conflict.theirs_oid) == \
        ("a.txt", oids[1], oids[2], oids[3])
    assert "<<<<<<<" in (repo / "a.txt").read_text()
    assert run_git(repo, "rev-parse", "MERGE_HEAD").decode().strip() == _head(repo, "feature")
    # Switching branches with the conflicts unresolved: a typed state error (was 8001 with libgit2's words).
    with pytest.raises(CodePlaneError) as refused:
        GitService(repo).checkout("feature")
    assert refused.value.code == 8005 and refused.value.details["state"] == "merge"
    assert run_git(repo, "rev-parse", "MERGE_HEAD").decode().strip() == _head(repo, "feature")


def test_cherry_pick_and_revert(repo: Path) -> None:
    git = GitService(repo)
    picked = git.cherry_pick("feature")
    assert picked.success and (repo / "f.txt").exists()
    assert run_git(repo, "log", "-1", "--format=%s").decode().strip() == "feature work"
    with pytest.raises(CodePlaneError) as empty:
        git.cherry_pick("feature")
    assert empty.value.code == 8008 and git.status().state == "none"
    reverted = git.revert("HEAD")
    assert reverted.success and not (repo / "f.txt").exists()
    assert run_git(repo, "log", "-1", "--format=%s").decode().strip() == 'Revert "feature work"'


def test_stash_push_list_pop_and_conflicting_pop_keeps_entry(repo: Path) -> None:
    git = GitService(repo)
    write_files(repo, {"a.txt": "stashed\n", "new.txt": "untracked\n"})
    pushed = git.stash_push(message="wip", include_untracked=True)
    assert git.status().is_clean and pushed.stash and pushed.stash.name == "stash@{0}"
    out = run_git(repo, "stash", "list", "--format=%gd %H %gs").decode().splitlines()
    assert [f"{s.name} {s.oid} {s.message}" for s in git.stashes()] == out
    popped = git.stash_apply(0, pop=True)
    assert popped.dropped and (repo / "new.txt").exists() and git.stashes() == []
    git.stash_push(message="again")
    write_files(repo, {"a.txt": "committed meanwhile\n"})
    run_git(repo, "commit", "-qam", "conflicting")
    conflicted = git.stash_apply(0, pop=True)
    assert conflicted.conflicts and not conflicted.dropped and len(git.stashes()) == 1
    # No merge in progress after it, as git has none (it said "merge"): the conflicts are the unmerged paths.
    assert conflicted.state == "none" == git.status().state and not (repo / ".git" / "MERGE_HEAD").exists()
    assert status_sets(git.status()) == porcelain_v2(repo)
    with pytest.raises(CodePlaneError) as switching:
        git.checkout("feature")
    assert switching.value.code == 8005 and "a none in progress" not in switching.value.message
    assert switching.value.message.startswith("unresolved conflicts in the index: resolve them")
    with pytest.raises(CodePlaneError) as nothing:
        run_git(repo, "reset", "-q", "--hard")
        git.stash_push()
    assert nothing.value.code == 8008
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.stash_drop(0)
    assert unconfirmed.value.code == 5009
    assert git.stash_drop(0, confirm=True).effect.recovery_point and git.stashes() == []


@pytest.mark.parametrize("keep_index", [False, True])
def test_stash_push_with_paths_stashes_those_and_leaves_every_other_change_as_git_does(
        tmp_path: Path, keep_index: bool) -> None:
    """``git_stash push paths=[d/y.txt]`` answered OK and reset every other file to HEAD (libgit2's path-limited
    stash): an unstaged edit, a staged one and untracked files were gone. It now makes what ``git stash push --
    <paths>`` makes, in a twin repository driven by git: the same stash trees, the same files and index after,
    the same list, and popping it brings the paths back as git's does."""
    files = {"a.txt": "a\n", "d/y.txt": "y\n", "z.txt": "z\n", "d/gone.txt": "g\n"}
    ours, theirs = make_repo(tmp_path / "ours", files), make_repo(tmp_path / "theirs", files)
    for root in (ours, theirs):
        write_files(root, {"a.txt": "a\nKEEP\n", "d/y.txt": "y\nstash me\n", "z.txt": "z\nstaged\n",
                           "u.txt": "untracked\n", "d/du.txt": "untracked under d\n"})
        (root / "d" / "gone.txt").unlink()
        run_git(root, "add", "z.txt")
        run_git(root, "stash", "push", "-q", "-m", "older")  # an entry before ours: the list keeps both
        write_files(root, {"a.txt": "a\nKEEP\n", "d/y.txt": "y\nstash me\n", "z.txt": "z\nstaged\n"})
        (root / "d" / "gone.txt").unlink()
        run_git(root, "add", "z.txt", "d/y.txt")
        write_files(root, {"d/y.txt": "y\nstash me\nand more\n"})
    GitService(ours).stash_push(message="m", include_untracked=True, keep_index=keep_index, paths=["d"])
    run_git(theirs, "stash", "push", "-q", "-u", "-m", "m", *(["--keep-index"] if keep_index else []), "--", "d")
    for rev in ("stash@{0}", "stash@{0}^2", "stash@{0}^3", "stash@{1}"):
        assert run_git(ours, "rev-parse", f"{rev}^{{tree}}") == run_git(theirs, "rev-parse", f"{rev}^{{tree}}"), rev
    assert porcelain_v2(ours) == porcelain_v2(theirs)
    assert run_git(ours, "ls-files", "-s") == run_git(theirs, "ls-files", "-s")
    for path in ("a.txt", "z.txt", "u.txt", "d/y.txt"):
        assert (ours / path).exists() == (theirs / path).exists(), path
        if (ours / path).exists():
            assert (ours / path).read_bytes() == (theirs / path).read_bytes(), path
    assert [s.message for s in GitService(ours).stashes()] == ["On main: m", "On main: older"]
    for root in (ours, theirs):  # (a keep_index stash pops with a conflict in d/y.txt, for git's too)
        run_git(root, "stash", "pop", "-q", check=False)
    assert porcelain_v2(ours) == porcelain_v2(theirs)
    if keep_index:
        return
    assert (ours / "d" / "y.txt").read_text() == "y\nstash me\nand more\n" and (ours / "d" / "du.txt").exists()
    assert not (ours / "d" / "gone.txt").exists() and (ours / "a.txt").read_text() == "a\nKEEP\n"


def test_reset_modes(repo: Path) -> None:
    git = GitService(repo)
    git.merge("feature")
    git.reset("HEAD~1", "soft")
    assert [e.path for e in git.status().staged] == ["a.txt", "f.txt"]
    git.reset("HEAD", "mixed")
    assert [e.path for e in git.status().modified] == ["a.txt"] and git.status().untracked == ["f.txt"]
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.reset(mode="hard")
    assert unconfirmed.value.code == 5009
    # Said as it is: a reset to HEAD moves no branch; one to another commit names it.
    assert unconfirmed.value.message.startswith("a hard reset would discard any uncommitted changes; call again")
    with pytest.raises(CodePlaneError) as elsewhere:
        git.reset("feature", mode="hard")
    assert "and move the branch to " in elsewhere.value.message
    hard = git.reset(mode="hard", confirm=True)
    assert hard.effect.recovery_point and git.status().untracked == ["f.txt"] and not git.status().modified


def test_cherry_pick_conflict_is_data_and_commit_concludes_it(repo: Path) -> None:
    write_files(repo, {"a.txt": "main a\n"})
    run_git(repo, "commit", "-qam", "main a")
    git = GitService(repo)
    picked = git.cherry_pick("feature")
    assert not picked.success and picked.state == "cherrypick"
    [conflict] = picked.conflicts
    stages = {int(line.split()[2]): line.split()[1]
              for line in run_git(repo, "ls-files", "-u").decode().splitlines()}
    assert (conflict.path, conflict.ancestor_oid, conflict.ours_oid, conflict.theirs_oid) == \
        ("a.txt", stages[1], stages[2], stages[3])
    assert git.status().state == "cherrypick" and git.status().conflicts == picked.conflicts
    write_files(repo, {"a.txt": "both\n"})
    git.stage(["a.txt"])
    done = git.commit("feature work, adapted")
    assert len(done.parents) == 1 and git.status().state == "none"


def test_commit_on_a_detached_head_moves_only_head(repo: Path) -> None:
    git = GitService(repo)
    git.checkout(_head(repo, "feature"))
    write_files(repo, {"b.txt": "detached work\n"})
    result = git.commit("detached", stage=["b.txt"])
    assert result.branch is None and _head(repo) == result.oid
    assert _head(repo, "feature") != result.oid and _head(repo, "main") != result.oid


def _imported(root: Path, prefix: Path | None = None) -> str:
    """``settings.X`` as a fresh interpreter with bytecode caching on (below ``prefix``) imports it."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if prefix is not None:
        env["PYTHONPYCACHEPREFIX"] = str(prefix)
    return subprocess.run([sys.executable, "-c", "import settings; print(settings.X)"], cwd=root, env=env,
                          capture_output=True, text=True, check=True).stdout.strip()


def _within_one_second(step: Callable[[], str]) -> str:
    """Runs ``step`` (write, import, rewrite) from the start of a second until it all fell in that second:
    only then can a (whole-second mtime, size) cache confuse the two versions."""
    for _ in range(5):
        time.sleep(1 - time.time() % 1 + 0.01)
        second = int(time.time())
        compiled = step()
        if int(time.time()) == second:
            return compiled
    pytest.skip("the machine was too slow to write, import and rewrite within one second")


def test_checkouts_never_leave_bytecode_caches_serving_the_replaced_version(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"settings.py": "X = 1\n"})
    run_git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"settings.py": "X = 3\n"})
    run_git(root, "commit", "-qam", "three")
    run_git(root, "checkout", "-q", "main")
    git = GitService(root)

    def restore() -> str:
        write_files(root, {"settings.py": "X = 2\n"})
        compiled = _imported(root)
        git.checkout(paths=["settings.py"], confirm=True)  # back to the index's X = 1, same size
        return compiled

    assert _within_one_second(restore) == "2"
    assert _imported(root) == "1", "restoring a file left the edited version's bytecode in charge"

    def switch() -> str:
        git.checkout("main")
        compiled = _imported(root)
        git.checkout("feature")  # X = 3, same size
        return compiled

    assert _within_one_second(switch) == "1"
    assert _imported(root) == "3", "switching branches left the other branch's bytecode in charge"

    def reset_hard() -> str:
        write_files(root, {"settings.py": "X = 4\n"})  # on feature, whose X = 3
        compiled = _imported(root)
        git.reset(mode="hard", confirm=True)
        return compiled

    assert _within_one_second(reset_hard) == "4"
    assert _imported(root) == "3", "a hard reset left the discarded edit's bytecode in charge"

    def stash_push() -> str:
        write_files(root, {"settings.py": "X = 5\n"})
        compiled = _imported(root)
        git.stash_push()
        return compiled

    assert _within_one_second(stash_push) == "5"
    assert _imported(root) == "3", "stashing left the stashed edit's bytecode in charge"

    def stash_pop() -> str:
        write_files(root, {"settings.py": "X = 3\n"})  # what the branch has: clean, but written this second
        compiled = _imported(root)
        git.stash_apply(0, pop=True)
        return compiled

    assert _within_one_second(stash_pop) == "3"
    assert _imported(root) == "5", "popping a stash left the replaced version's bytecode in charge"


def test_a_checkout_drops_the_bytecode_test_runs_keep_under_codeplanes_prefix(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"settings.py": "X = 1\n"})
    prefix = RepoLayout(root).pycache_dir  # where test runs cache bytecode under PYTHONDONTWRITEBYTECODE
    git = GitService(root)

    def restore() -> str:
        write_files(root, {"settings.py": "X = 2\n"})
        compiled = _imported(root, prefix)
        assert list(Path(prefix, *root.parts[1:]).glob("settings.*.pyc")), "cached below the prefix"
        git.checkout(paths=["settings.py"], confirm=True)
        return compiled

    assert _within_one_second(restore) == "2"
    assert _imported(root, prefix) == "1", "restoring a file left the edited version's bytecode in charge"


@pytest.mark.parametrize("operation", ["merge", "cherry_pick", "revert"])
def test_merges_picks_and_reverts_never_leave_bytecode_caches_serving_the_replaced_version(
        tmp_path: Path, operation: str) -> None:
    root = make_repo(tmp_path / "r", {"settings.py": "X = 1\n", "other.txt": "o\n"})
    run_git(root, "checkout", "-q", "-b", "side")
    write_files(root, {"settings.py": "X = 9\n"})
    run_git(root, "commit", "-qam", "nine")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"other.txt": "main moved on\n"})  # diverged: the merge makes a merge commit
    run_git(root, "commit", "-qam", "main")
    if operation == "revert":  # main's last commit sets X = 7; reverting it brings back X = 1
        write_files(root, {"settings.py": "X = 7\n"})
        run_git(root, "commit", "-qam", "seven")
    before, after = ("7", "1") if operation == "revert" else ("1", "9")
    git = GitService(root)
    applied: list[str] = []

    def step() -> str:
        if applied:  # a slow attempt: start again from main's version
            git.reset("HEAD~1", "hard", confirm=True)
        write_files(root, {"settings.py": f"X = {before}\n"})  # main's content, written this second
        compiled = _imported(root)
        result = (git.merge("side") if operation == "merge" else
                  git.cherry_pick("side") if operation == "cherry_pick" else git.revert("HEAD"))
        assert result.success and not result.fastforward
        applied.append(str(result.commit))
        return compiled

    assert _within_one_second(step) == before
    assert _imported(root) == after, f"the {operation} left the replaced version's bytecode in charge"


def test_a_forced_checkout_over_an_untracked_file_asks_for_confirm_and_records_it(repo: Path) -> None:
    """``feature`` tracks ``f.txt``; an untracked ``f.txt`` on main was overwritten by ``force`` with no confirm and
    no recovery point (a tracked change got 5009): now both ask, and the point brings the file back."""
    git = GitService(repo)
    write_files(repo, {"f.txt": "mine\n"})
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.checkout("feature", force=True)
    assert unconfirmed.value.code == 5009 and unconfirmed.value.details["paths"] == ["f.txt"]
    assert (repo / "f.txt").read_text() == "mine\n" and _head(repo) == _head(repo, "main")
    forced = git.checkout("feature", force=True, confirm=True)
    assert forced.effect.recovery_point and (repo / "f.txt").read_text() == "only on feature\n"
    git.restore(forced.effect.recovery_point, confirm=True)
    assert (repo / "f.txt").read_text() == "mine\n"


def test_a_checkout_git_would_refuse_changes_nothing(repo: Path, tmp_path: Path) -> None:
    """A branch another worktree has checked out (libgit2 refused only at set_head, after writing the files: the
    work tree and index held the branch while HEAD stayed, and the next commit would have put it on main), and an
    index another git process holds (the files were written, then "index is locked"): refused before any write."""
    git = GitService(repo)
    before = porcelain_v2(repo), _head(repo), run_git(repo, "ls-files", "-s")
    run_git(repo, "worktree", "add", "-q", str(tmp_path / "side"), "feature")
    with pytest.raises(CodePlaneError) as elsewhere:
        git.checkout("feature")
    assert elsewhere.value.code == 8005 and elsewhere.value.details["worktree"] == str(tmp_path / "side")
    assert (porcelain_v2(repo), _head(repo), run_git(repo, "ls-files", "-s")) == before
    run_git(repo, "worktree", "remove", str(tmp_path / "side"))
    lock = repo / ".git" / "index.lock"
    lock.touch()
    write_files(repo, {"b.txt": "stash me\n"})
    before = porcelain_v2(repo), _head(repo), run_git(repo, "ls-files", "-s")
    for attempt in (lambda: git.checkout("feature"), git.stash_push):
        with pytest.raises(CodePlaneError) as locked:
            attempt()
        assert locked.value.code == 8001 and locked.value.retryable and "index.lock" in locked.value.message
    assert (porcelain_v2(repo), _head(repo), run_git(repo, "ls-files", "-s")) == before and git.stashes() == []
    lock.unlink()
    assert git.checkout("feature").branch == "feature"
