"""The repository's hooks around commits, merges, cherry-picks and reverts, checked against the git CLI:
the same hooks run in the same order with the same arguments, and leave the same messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import install_hook, make_repo, write_files
from tests.git_oracle import log_records, run_git

#: Every hook logs its name and arguments (a message file by its name: git passes it relative, CodePlane
#: absolute), then does its job.
_LOG = ('f="$1"; [ -f "$f" ] && f=$(basename "$f")\n'
        'echo "$(basename "$0") $f $2" >> "$(git rev-parse --git-dir)/hooks.log"\n')
_HOOKS = {
    "pre-commit": _LOG,
    "pre-merge-commit": _LOG,
    # The message source git names: message, merge, or commit + HEAD for an amend that keeps the message.
    "prepare-commit-msg": _LOG + 'printf "\\n# prepared from %s\\n\\ntrailer: x   \\n\\n" "$2" >> "$1"\n',
    "commit-msg": _LOG + 'sed -i "s/^WIP/Draft/" "$1"\nprintf "\\nSigned-off-by: hook <hook@example.com>\\n" >> "$1"\n',
    "post-commit": _LOG,
    "post-merge": _LOG,
    "post-checkout": _LOG.replace("$f $2", "$f $2 $3"),
}


def _twins(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """Two identical repositories with the logging hooks: CodePlane works in the first, git in the second."""
    roots = (make_repo(tmp_path / "ours", files), make_repo(tmp_path / "theirs", files))
    for root in roots:
        for name, body in _HOOKS.items():
            install_hook(root, name, body)
    return roots


#: The twins' commits differ in time (a revert names the one it reverts, a hook gets HEAD); nothing else may.
_OID = re.compile(r"\b[0-9a-f]{40}\b")


def _same(ours: Path, theirs: Path, revs: str = "-1") -> list[str]:
    """The hooks both ran (in order, with their arguments), after checking that the messages agree."""
    messages = [[_OID.sub("<oid>", str(r["message"])) for r in log_records(root, revs)] for root in (ours, theirs)]
    assert messages[0] == messages[1]
    logs = [_OID.sub("<oid>", (root / ".git" / "hooks.log").read_text()).splitlines() for root in (ours, theirs)]
    assert logs[0] == logs[1]
    for root in (ours, theirs):
        (root / ".git" / "hooks.log").unlink()
    return logs[0]


@pytest.mark.parametrize("verify", [True, False])
def test_commit_hooks_run_and_edit_the_message_exactly_as_git_commit_does(tmp_path: Path, verify: bool) -> None:
    ours, theirs = _twins(tmp_path, {"a.txt": "a\n"})
    for root in (ours, theirs):
        write_files(root, {"a.txt": "a2\n"})
    result = GitService(ours).commit("WIP: change a\n\nbody  \n", stage=["a.txt"], run_hooks=verify)
    run_git(theirs, "add", "a.txt")
    run_git(theirs, "commit", "-q", "-m", "WIP: change a\n\nbody  \n", *(() if verify else ("--no-verify",)))
    message = str(log_records(ours, "-1")[0]["message"])
    assert ("Draft: change a" in message) is verify, "commit-msg runs unless the hooks are skipped"
    assert "# prepared from message" in message, "prepare-commit-msg runs even then, as in git"
    ran = _same(ours, theirs)
    assert [line.split()[0] for line in ran] == [h.hook for h in result.hooks] == (
        ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit"] if verify
        else ["prepare-commit-msg", "post-commit"])
    assert result.summary == message.split("\n", maxsplit=1)[0]
    amended = GitService(ours).commit("", amend=True, allow_empty=True)
    run_git(theirs, "commit", "-q", "--amend", "--no-edit", "--allow-empty")
    assert "prepare-commit-msg COMMIT_EDITMSG commit" in _same(ours, theirs) and amended.amended


def test_a_rejecting_or_emptying_commit_msg_hook_aborts_and_leaves_the_index_as_it_was(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.txt": "a\n", "b.txt": "b\n"})
    write_files(repo, {"a.txt": "a2\n", "b.txt": "b2\n"})
    git = GitService(repo)
    git.stage(["b.txt"])
    before_index, head = run_git(repo, "ls-files", "-s"), run_git(repo, "rev-parse", "HEAD")
    install_hook(repo, "commit-msg", "echo 'subject must name a ticket' >&2\nexit 1\n")
    with pytest.raises(CodePlaneError) as rejected:
        git.commit("no ticket", stage=["a.txt"])
    assert rejected.value.code == 8007 and "commit-msg hook exited 1" in rejected.value.message
    assert "ticket" in rejected.value.details["hook"]["stderr"]
    install_hook(repo, "commit-msg", ': > "$1"\n')
    with pytest.raises(CodePlaneError) as emptied:
        git.commit("emptied", stage=["a.txt"])
    assert emptied.value.code == 8007 and "empty commit message" in emptied.value.message
    assert run_git(repo, "ls-files", "-s") == before_index and run_git(repo, "rev-parse", "HEAD") == head


def test_a_failing_post_commit_hook_is_reported_and_the_commit_stands(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    install_hook(repo, "post-commit", "echo 'notify failed' >&2\nexit 2\n")
    write_files(repo, {"a.txt": "a2\n"})
    result = GitService(repo).commit("change a", stage=["a.txt"])
    assert run_git(repo, "rev-parse", "HEAD").decode().strip() == result.oid
    (post,) = result.hooks
    assert post.hook == "post-commit" and post.exit_code == 2 and "notify failed" in post.stderr


def _diverged(root: Path) -> None:
    run_git(root, "checkout", "-q", "-b", "side")
    write_files(root, {"side.txt": "s\n"})
    run_git(root, "add", "side.txt")
    run_git(root, "commit", "-q", "--no-verify", "-m", "side work\n\nbody")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"main.txt": "m\n"})
    run_git(root, "add", "main.txt")
    run_git(root, "commit", "-q", "--no-verify", "-m", "main work")
    (root / ".git" / "hooks.log").unlink(missing_ok=True)


@pytest.mark.parametrize("message", [None, "WIP merge of side  \n"])
def test_merge_commits_run_the_hooks_git_merge_runs(tmp_path: Path, message: str | None) -> None:
    ours, theirs = _twins(tmp_path, {"a.txt": "a\n"})
    for root in (ours, theirs):
        _diverged(root)
    result = GitService(ours).merge("side", message=message)
    run_git(theirs, "merge", "-q", *(("-m", message) if message else ("--no-edit",)), "side")
    assert result.success and result.message == log_records(ours, "-1")[0]["message"]
    ran = _same(ours, theirs)
    assert ran == ["pre-merge-commit  ", "prepare-commit-msg MERGE_MSG merge", "commit-msg MERGE_MSG ", "post-merge 0 "]
    assert [h.hook for h in result.hooks] == [line.split()[0] for line in ran]


@pytest.mark.parametrize("operation", ["cherry_pick", "revert"])
def test_cherry_picks_and_reverts_run_the_hooks_git_runs(tmp_path: Path, operation: str) -> None:
    ours, theirs = _twins(tmp_path, {"a.txt": "a\n"})
    for root in (ours, theirs):
        _diverged(root)
    git = GitService(ours)
    result = git.cherry_pick("side") if operation == "cherry_pick" else git.revert("HEAD")
    run_git(theirs, *(("cherry-pick", "side") if operation == "cherry_pick" else ("revert", "--no-edit", "HEAD")))
    assert result.success
    ran = _same(ours, theirs)  # the message is taken verbatim after prepare-commit-msg, as git does
    assert [line.split()[0] for line in ran] == [h.hook for h in result.hooks] == ["prepare-commit-msg", "post-commit"]


def test_a_fast_forward_runs_post_merge(tmp_path: Path) -> None:
    ours, theirs = _twins(tmp_path, {"a.txt": "a\n"})
    for root in (ours, theirs):
        run_git(root, "checkout", "-q", "-b", "side")
        write_files(root, {"side.txt": "s\n"})
        run_git(root, "add", "side.txt")
        run_git(root, "commit", "-q", "--no-verify", "-m", "side")
        run_git(root, "checkout", "-q", "main")
        (root / ".git" / "hooks.log").unlink(missing_ok=True)
    result = GitService(ours).merge("side")
    run_git(theirs, "merge", "-q", "side")
    assert result.fastforward and [h.hook for h in result.hooks] == ["post-merge"]
    assert _same(ours, theirs) == ["post-merge 0 "]


def test_a_rejecting_merge_hook_leaves_the_merge_staged_as_git_does(tmp_path: Path) -> None:
    ours, theirs = _twins(tmp_path, {"a.txt": "a\n"})
    for root in (ours, theirs):
        _diverged(root)
        install_hook(root, "pre-merge-commit", "echo 'no merges on Fridays' >&2\nexit 1\n")
    heads = [run_git(root, "rev-parse", "HEAD") for root in (ours, theirs)]
    git = GitService(ours)
    result = git.merge("side")
    run_git(theirs, "merge", "--no-edit", "side", check=False)
    assert [run_git(root, "rev-parse", "HEAD") for root in (ours, theirs)] == heads
    assert (ours / ".git" / "MERGE_HEAD").exists() and (theirs / ".git" / "MERGE_HEAD").exists()
    assert not result.success and not result.conflicts and result.state == "merge"
    assert [(h.hook, h.exit_code) for h in result.hooks] == [("pre-merge-commit", 1)]
    assert "Fridays" in result.hooks[0].stderr
    assert run_git(ours, "status", "--porcelain") == run_git(theirs, "status", "--porcelain")
    concluded = git.commit("Merge side anyway", run_hooks=False)
    assert len(concluded.parents) == 2 and git.status().state == "none"


def test_without_hooks_a_merge_message_is_cleaned_as_git_merge_cleans_it(tmp_path: Path) -> None:
    ours, theirs = (make_repo(tmp_path / name, {"a.txt": "a\n"}) for name in ("ours", "theirs"))
    message = "  custom  \n\n# kept: no editor, no comment stripping\n\n\nbody  "
    for root in (ours, theirs):
        _diverged(root)
    result = GitService(ours).merge("side", message=message)
    run_git(theirs, "merge", "-q", "-m", message, "side")
    assert result.hooks == [] and result.message == "  custom\n\n# kept: no editor, no comment stripping\n\nbody\n"
    assert log_records(ours, "-1")[0]["message"] == log_records(theirs, "-1")[0]["message"] == result.message


def test_checkouts_run_post_checkout_as_git_checkout_does(tmp_path: Path) -> None:
    ours, theirs = _twins(tmp_path, {"a.txt": "a\n"})
    for root in (ours, theirs):
        _diverged(root)
    git = GitService(ours)
    start, side = (run_git(ours, "rev-parse", rev).decode().strip() for rev in ("HEAD", "side"))
    switched = git.checkout("side")
    run_git(theirs, "checkout", "-q", "side")
    created = git.checkout("fresh", create=True)
    run_git(theirs, "checkout", "-q", "-b", "fresh")
    write_files(ours, {"a.txt": "edited\n"})
    write_files(theirs, {"a.txt": "edited\n"})
    restored = git.checkout(paths=["a.txt"], confirm=True)
    run_git(theirs, "checkout", "-q", "--", "a.txt")
    assert (ours / ".git" / "hooks.log").read_text().splitlines() == [
        f"post-checkout {start} {side} 1", f"post-checkout {side} {side} 1", f"post-checkout {side} {side} 0"]
    assert _same(ours, theirs) == ["post-checkout <oid> <oid> 1"] * 2 + ["post-checkout <oid> <oid> 0"]
    assert [h.hook for r in (switched, created, restored) for h in r.hooks] == ["post-checkout"] * 3
