"""QA22 git findings: bounded remote URLs and names, refusals that leave no recovery point, checked line ranges,
and the repository root as a path (``"."``). Real repositories; the last test goes through the real server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.git.rebase_state import RebasePlan, RebaseStep
from codeplane.git.remotes import MAX_NAME_BYTES, MAX_URL_CHARS
from tests.builders import call, call_error, make_repo, mcp_client, running_server, write_files
from tests.git_oracle import run_git

LONG_FILE = "".join(f"line {i}\n" for i in range(1, 63))  # 62 lines, as the README of the report


def _repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"README.md": LONG_FILE, "src/a.py": "a = 1\n"})
    write_files(root, {"README.md": LONG_FILE.replace("line 3\n", "line three\n")})
    run_git(root, "commit", "-qam", "edit line 3")
    return root


def _error(call_: Callable[[], object]) -> CodePlaneError:
    with pytest.raises(CodePlaneError) as raised:
        call_()
    return raised.value


def _recovery_refs(root: Path) -> list[str]:
    return run_git(root, "for-each-ref", "--format=%(refname)", "refs/codeplane").decode().split()


# -- A1: remote names and URLs ------------------------------------------------------------------------

def test_remote_add_refuses_an_overlong_url_or_name_and_adds_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git = GitService(root)
    url = _error(lambda: git.remote_add("r2", "https://h/" + "a" * 40_000))
    assert (url.code, url.details["field"], url.details["limit"]) == (1003, "url", MAX_URL_CHARS)
    assert len(url.message) < 200  # the URL itself is not echoed
    name = _error(lambda: git.remote_add("n" * (MAX_NAME_BYTES + 1), "https://h/r.git"))
    assert (name.code, name.details["field"]) == (1003, "name")
    assert run_git(root, "remote").decode().split() == []
    # At the limits the remote is added and removed again.
    git.remote_add("n" * MAX_NAME_BYTES, "https://h/" + "a" * (MAX_URL_CHARS - len("https://h/")))
    git.remote_remove("n" * MAX_NAME_BYTES)
    assert run_git(root, "remote").decode().split() == []


def test_remote_remove_reaches_a_remote_libgit2_cannot_delete(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    run_git(root, "remote", "add", "r2", "https://h/" + "a" * 40_000)  # made by another program
    removed = GitService(root).remote_remove("r2")
    assert removed.remote is not None and removed.remote.name == "r2"
    assert run_git(root, "remote").decode().split() == []


# -- A4: a refused call records no recovery point ----------------------------------------------------

def test_refused_calls_leave_no_recovery_point(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git = GitService(root)
    head = run_git(root, "rev-parse", "HEAD").decode().strip()
    refused = {
        "merge abort": (git.merge_abort, 8005),
        "rebase execute, bad step": (lambda: git.rebase_execute(
            RebasePlan(upstream=head, onto=head, steps=[RebaseStep(commit_sha="nope")]), confirm=True), 8002),
        "rebase abort": (lambda: git.rebase_abort(confirm=True), 8005),
        "rebase skip": (lambda: git.rebase_skip(confirm=True), 8005),
        "hard reset to nothing": (lambda: git.reset("nope", "hard", confirm=True), 8002),
    }
    for what, (attempt, code) in refused.items():
        assert _error(attempt).code == code, what
        assert _recovery_refs(root) == [], what
    # Restoring paths over local changes records a point, but only once the source is known to exist.
    write_files(root, {"README.md": "local change\n"})
    restore_from_nothing = _error(lambda: git.checkout("nope", paths=["README.md"], confirm=True))
    restore_a_missing_path = _error(lambda: git.checkout("HEAD", paths=["README.md", "gone.txt"], confirm=True))
    assert (restore_from_nothing.code, restore_a_missing_path.code) == (8002, 5004)
    assert _recovery_refs(root) == []
    assert (root / "README.md").read_text() == "local change\n"


def test_rebase_execute_checks_local_changes_before_confirm_and_recording(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git = GitService(root)
    write_files(root, {"src/a.py": "a = 2\n"})
    plan = git.rebase_plan("HEAD~1")
    assert _error(lambda: git.rebase_execute(plan, confirm=True)).code == 8004
    assert _recovery_refs(root) == []


# -- B3: line ranges --------------------------------------------------------------------------------

@pytest.mark.parametrize("line_range", [(5, 1), (100, 200), (0, 5), (1, -1), (-1, 2), (-5, -1), (63, 63)])
def test_blame_and_history_refuse_a_line_range_that_does_not_fit(tmp_path: Path,
                                                                  line_range: tuple[int, int]) -> None:
    root = _repo(tmp_path)
    git = GitService(root)
    for attempt in (lambda: git.blame("README.md", line_range=line_range),
                    lambda: git.history("README.md", line_range=line_range)):
        error = _error(attempt)
        assert (error.code, error.details["field"]) == (1003, "line_range"), error.message
        assert "line_range" in error.message


def test_a_range_past_the_end_of_the_file_is_cut_there_as_git_does(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    git = GitService(root)
    page = git.blame("README.md", line_range=(60, 200))
    assert [(h.start_line, h.lines) for h in page.hunks] == [(60, 3)]
    assert page.pagination.total_estimate == 3
    assert git.blame("README.md", line_range=(62, 62)).hunks[0].start_line == 62
    history = git.history("README.md", line_range=(2, 400))
    assert [e.summary for e in history.entries] == ["edit line 3", "initial"]
    assert history.entries[0].line_range == (2, 62)
    message = _error(lambda: git.history("README.md", line_range=(100, 200))).message
    assert "past the end of README.md (62 lines" in message


def test_line_history_of_a_directory_is_refused(tmp_path: Path) -> None:
    error = _error(lambda: GitService(_repo(tmp_path)).history("src", line_range=(1, 2)))
    assert (error.code, error.details["field"]) == (1003, "line_range")


# -- C4: the repository root as a path --------------------------------------------------------------

def test_history_and_blame_of_the_repository_root_say_so(tmp_path: Path) -> None:
    git = GitService(_repo(tmp_path))
    for attempt in (lambda: git.history("."), lambda: git.blame(".")):
        error = _error(attempt)
        assert (error.code, error.details["field"]) == (1003, "path")
        assert "repository root" in error.message


def test_checkout_paths_dot_restores_everything_like_git(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    write_files(root, {"README.md": "changed\n", "src/a.py": "changed\n", "new.txt": "untracked\n"})
    result = GitService(root).checkout(paths=["."], confirm=True)
    assert sorted(result.restored_paths) == ["README.md", "src/a.py"]
    assert (root / "README.md").read_text() == LONG_FILE.replace("line 3\n", "line three\n")
    assert (root / "new.txt").exists()  # as git checkout -- .: untracked files stay
    assert run_git(root, "status", "--porcelain").decode() == "?? new.txt\n"


# -- the same through the server ---------------------------------------------------------------------

@pytest.mark.anyio
async def test_the_tools_answer_these_with_catalog_errors(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    with running_server(root) as handle:
        async with mcp_client(handle) as client:
            url = await call_error(client, "git_remote", {"action": "add", "name": "r2",
                                                          "url": "https://h/" + "a" * 40_000})
            assert url["code"] == 1003 and "url" in str(url["details"])
            blame = await call_error(client, "git_inspect", {"action": "blame", "path": "README.md",
                                                             "line_range": [-1, 2]})
            assert blame["code"] == 1003 and "line_range" in str(blame["details"])
            past = await call_error(client, "git_history", {"path": "README.md", "line_range": [100, 200]})
            assert (past["code"], past["details"]["field"]) == (1003, "line_range")
            root_path = await call_error(client, "git_history", {"path": "."})
            assert root_path["code"] == 1003 and "repository root" in root_path["message"]
            assert (await call_error(client, "git_merge", {"action": "abort"}))["code"] == 8005
            assert (await call_error(client, "git_rebase", {"action": "abort", "confirm": True}))["code"] == 8005
            assert _recovery_refs(root) == []
            write_files(root, {"README.md": "changed\n"})
            restored = await call(client, "git_checkout", {"paths": ["."], "confirm": True})
            assert restored["restored_paths"] == ["README.md"]  # only what differed (git checkout -- . writes no other)
    assert [ref.rsplit("-", 2)[-2:] for ref in _recovery_refs(root)] == [["checkout", "paths"]]
    assert run_git(root, "status", "--porcelain").decode() == ""
