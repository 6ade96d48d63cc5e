"""Staging and committing (with the repository's commit hooks), checked against the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.git.commits import Author
from tests.builders import install_hook, make_repo, write_files
from tests.git_oracle import log_records, porcelain_v2, run_git, status_sets


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n", "dir/c.txt": "c\n", ".gitignore": "*.log\n"})


def test_stage_and_unstage_match_git_add_and_restore(repo: Path) -> None:
    write_files(repo, {"a.txt": "a2\n", "dir/new.txt": "n\n", "x.log": "ignored\n"})
    (repo / "b.txt").unlink()
    git = GitService(repo)
    result = git.stage(["a.txt", "b.txt", "dir", "x.log"])
    assert {(c.path, c.change) for c in result.changed} == {("a.txt", "modified"), ("b.txt", "deleted"),
                                                             ("dir/new.txt", "added")}
    assert [s.path for s in result.skipped] == ["x.log"]
    assert status_sets(git.status()) == porcelain_v2(repo)
    assert {e.path for e in git.status().staged} == {"a.txt", "b.txt", "dir/new.txt"}
    git.unstage(["a.txt", "dir"])
    assert {e.path for e in git.status().staged} == {"b.txt"}
    assert status_sets(git.status()) == porcelain_v2(repo)
    with pytest.raises(CodePlaneError) as missing:
        git.stage(["nope.txt"])
    assert missing.value.code == 5004
    # A name starting with '-' is a name (it was refused 1003 as a git option; git add -- -dash.txt takes it).
    write_files(repo, {"-dash.txt": "d\n"})
    assert [c.path for c in git.stage(["-dash.txt"]).changed] == ["-dash.txt"]
    assert status_sets(git.status()) == porcelain_v2(repo)


def test_commit_records_the_index_with_cleaned_message_and_reports_changed_paths(repo: Path) -> None:
    write_files(repo, {"a.txt": "a2\n", "b.txt": "b2\n"})
    git = GitService(repo)
    git.stage(["a.txt"])
    result = git.commit("  Subject line  \n\n\n\nBody   \n\n")
    rec = log_records(repo, "-1")[0]
    assert result.oid == rec["oid"] and rec["message"] == "  Subject line\n\nBody\n"
    assert result.branch == "main" and result.summary == "  Subject line"
    assert [(p.path, bool(p.sha256)) for p in result.effect.paths] == [("a.txt", True)]
    report = result.mutation_report()
    assert report is not None and report.repo_after == result.oid and report.insertions == 1
    assert [e.path for e in git.status().modified] == ["b.txt"]  # unstaged change left alone
    with pytest.raises(CodePlaneError) as nothing:
        git.commit("again")
    assert nothing.value.code == 8008


def test_commit_only_paths_keeps_other_staged_changes_staged(repo: Path) -> None:
    write_files(repo, {"a.txt": "a2\n", "b.txt": "b2\n"})
    git = GitService(repo)
    git.stage(["b.txt"])
    git.commit("only a", only=["a.txt"])
    assert run_git(repo, "show", "--name-only", "--format=", "HEAD").decode().split() == ["a.txt"]
    assert {e.path for e in git.status().staged} == {"b.txt"}


def test_commit_only_paths_takes_tracked_files_as_git_commit_does(repo: Path, tmp_path: Path) -> None:
    """``git commit -- new.txt`` refuses a path git does not know, and ``git commit -- dir`` leaves the directory's
    untracked files out; the commit of paths took both into the commit."""
    write_files(repo, {"dir/c.txt": "c2\n", "dir/new.txt": "n\n", "new.txt": "n\n"})
    twin = tmp_path / "twin"
    run_git(tmp_path, "clone", "-q", str(repo), str(twin))
    write_files(twin, {"dir/c.txt": "c2\n", "dir/new.txt": "n\n", "new.txt": "n\n"})
    git = GitService(repo)
    head, index = run_git(repo, "rev-parse", "HEAD"), run_git(repo, "ls-files", "-s")
    with pytest.raises(CodePlaneError) as refused:
        git.commit("new", only=["new.txt"])
    assert refused.value.code == 1003 and "not known to git" in refused.value.message, refused.value.to_payload()
    assert run_git(repo, "rev-parse", "HEAD") == head and run_git(repo, "ls-files", "-s") == index
    with pytest.raises(AssertionError, match="did not match any file"):
        run_git(twin, "commit", "-qm", "new", "--", "new.txt")
    git.commit("dir", only=["dir"])
    run_git(twin, "commit", "-qm", "dir", "--", "dir")
    assert run_git(repo, "rev-parse", "HEAD^{tree}") == run_git(twin, "rev-parse", "HEAD^{tree}")
    assert status_sets(git.status()) == porcelain_v2(repo) == porcelain_v2(twin)


def test_stage_and_commit_all_amend_author_and_allow_empty(repo: Path) -> None:
    git = GitService(repo)
    write_files(repo, {"new.txt": "n\n"})
    (repo / "a.txt").unlink()
    first = git.commit("everything", stage_all=True, author=Author("Ada", "ada@example.com"))
    assert git.status().is_clean
    assert log_records(repo, "-1")[0]["author"][:2] == ("Ada", "ada@example.com")  # type: ignore[index]
    amended = git.commit("", amend=True)
    assert amended.parents == first.parents and amended.amended
    assert log_records(repo, "-1")[0]["message"] == "everything\n"
    empty = git.commit("marker", allow_empty=True)
    assert run_git(repo, "rev-parse", "HEAD^{tree}") == run_git(repo, "rev-parse", "HEAD~1^{tree}")
    assert empty.oid == run_git(repo, "rev-parse", "HEAD").decode().strip()


def test_stage_and_commit_naming_a_path_that_is_not_there_commits_nothing(repo: Path) -> None:
    """``git add a.txt typo.txt`` fails on the typo and stages nothing. The commit went ahead with ``a.txt`` and
    never mentioned ``typo.txt``: an agent believed both were committed. An ignored path is refused the same way."""
    write_files(repo, {"a.txt": "a2\n", "b.txt": "b2\n", "x.log": "ignored\n"})
    git = GitService(repo)
    git.stage(["b.txt"])
    head, index = run_git(repo, "rev-parse", "HEAD"), run_git(repo, "ls-files", "-s")
    for paths, code, reason in ((["a.txt", "typo.txt"], 5004, "no such file"), (["a.txt", "x.log"], 1003, "ignored")):
        with pytest.raises(CodePlaneError) as refused:
            git.commit("both", stage=paths)
        assert refused.value.code == code and reason in refused.value.message, refused.value.to_payload()
        assert [s["path"] for s in refused.value.details["skipped"]] == paths[1:]
        assert run_git(repo, "rev-parse", "HEAD") == head and run_git(repo, "ls-files", "-s") == index
    assert git.commit("a", stage=["a.txt"]).staged[0].path == "a.txt"


def test_first_commit_in_an_empty_repository(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "e")
    write_files(root, {"x.txt": "x\n"})
    result = GitService(root).commit("root", stage=["x.txt"])
    assert result.parents == [] and run_git(root, "log", "--format=%s").decode() == "root\n"


def test_passing_pre_commit_hook_output_is_returned(repo: Path) -> None:
    install_hook(repo, "pre-commit", 'echo "checked $(git diff --cached --name-only)"\n')
    write_files(repo, {"a.txt": "a2\n"})
    result = GitService(repo).commit("with hook", stage=["a.txt"])
    assert result.hooks[0].ran and result.hooks[0].exit_code == 0 and "checked a.txt" in result.hooks[0].stdout


def test_failing_pre_commit_hook_aborts_and_leaves_the_index_as_it_was(repo: Path) -> None:
    install_hook(repo, "pre-commit", "echo 'lint failed: a.txt' >&2\nexit 3\n")
    write_files(repo, {"a.txt": "a2\n", "b.txt": "b2\n"})
    git = GitService(repo)
    git.stage(["b.txt"])
    before_index = run_git(repo, "ls-files", "-s")
    head = run_git(repo, "rev-parse", "HEAD")
    with pytest.raises(CodePlaneError) as failed:
        git.commit("nope", stage=["a.txt"])
    assert failed.value.code == 8007
    hook = failed.value.details["hook"]
    assert hook["exit_code"] == 3 and "lint failed" in hook["stderr"]
    assert run_git(repo, "ls-files", "-s") == before_index and run_git(repo, "rev-parse", "HEAD") == head
    skipped = git.commit("skip hook", stage=["a.txt"], run_hooks=False)
    assert skipped.hooks == [] and run_git(repo, "rev-parse", "HEAD").decode().strip() == skipped.oid


def test_commit_refuses_unresolved_conflicts_then_concludes_the_merge(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "-b", "side")
    write_files(repo, {"a.txt": "side\n"})
    run_git(repo, "commit", "-qam", "side")
    run_git(repo, "checkout", "-q", "main")
    write_files(repo, {"a.txt": "main\n"})
    run_git(repo, "commit", "-qam", "main")
    git = GitService(repo)
    merged = git.merge("side")
    assert not merged.success and [c.path for c in merged.conflicts] == ["a.txt"]
    with pytest.raises(CodePlaneError) as conflicted:
        git.commit("merge")
    assert conflicted.value.code == 8003
    write_files(repo, {"a.txt": "resolved\n"})
    git.stage(["a.txt"])
    done = git.commit("Merge side")
    assert len(done.parents) == 2 and git.status().state == "none"
    assert log_records(repo, "-1")[0]["parents"] == done.parents


def test_stage_and_commit_resolves_the_files_it_stages_and_refuses_what_is_left(repo: Path) -> None:
    run_git(repo, "checkout", "-q", "-b", "side")
    write_files(repo, {"a.txt": "side\n", "b.txt": "side\n"})
    run_git(repo, "commit", "-qam", "side")
    run_git(repo, "checkout", "-q", "main")
    write_files(repo, {"a.txt": "main\n", "b.txt": "main\n"})
    run_git(repo, "commit", "-qam", "main")
    git = GitService(repo)
    merged = git.merge("side")
    assert sorted(c.path for c in merged.conflicts) == ["a.txt", "b.txt"]
    write_files(repo, {"a.txt": "resolved\n"})
    index_before = (repo / ".git" / "index").read_bytes()
    with pytest.raises(CodePlaneError) as left:  # b.txt is still in conflict: nothing staged, nothing committed
        git.commit("Merge side", stage=["a.txt"])
    assert left.value.code == 8003 and [c["path"] for c in left.value.details["conflicts"]] == ["b.txt"]
    assert (repo / ".git" / "index").read_bytes() == index_before
    write_files(repo, {"b.txt": "resolved too\n"})
    done = git.commit("Merge side", stage=["a.txt", "b.txt"])  # ``git add a.txt b.txt && git commit``
    assert len(done.parents) == 2 and git.status().state == "none"
    assert run_git(repo, "show", "HEAD:b.txt").decode() == "resolved too\n"
    assert status_sets(git.status()) == porcelain_v2(repo)
