"""A merge that stops on a conflict, resolved and concluded the way an agent does it, through the real server.

Before: the conflicting ``git_merge`` was flagged ``no_op`` (HEAD had not moved, though the work tree had
conflict markers written into it), and ``git_stage_and_commit`` on the resolved file was refused with 8003
(the conflict check ran before the staging that resolves it, as ``git add`` does); ``git_stash`` during the
conflict failed with the generic 8001, and ``git_diff`` showed the fixed file as "modified, +0 -0".
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.builders import (
    GIT_ENV,
    answer_text,
    call,
    call_error,
    cpl_env,
    envelope,
    git,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio


async def test_a_conflicting_merge_is_not_a_no_op_and_stage_and_commit_concludes_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n", "b.py": "B = 1\n"})
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "a.py").write_text("def f():\n    return 2\n")
    (repo / "b.py").write_text("B = 2\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "checkout", "-q", "main")
    (repo / "a.py").write_text("def f():\n    return 3\n")
    (repo / "b.py").write_text("B = 3\n")
    git(repo, "commit", "-qam", "three")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            answer = await client.call_tool("git_merge", {"ref": "other"})
            merged = envelope(answer)
            assert merged["result"]["success"] is False
            # The conflicts read as git prints them, not as JSON with three 40-digit ids each.
            text = answer_text(answer)
            assert "CONFLICT a.py\nCONFLICT b.py" in text and "theirs_oid" not in text, text
            assert not merged["meta"].get("no_op"), merged["meta"]
            assert "<<<<<<<" in (repo / "a.py").read_text()
            stash = await call_error(client, "git_stash", {"action": "push", "include_untracked": True})
            assert stash["code"] == 8003, stash
            (repo / "a.py").write_text("def f():\n    return 5\n")
            diff = await call(client, "git_diff", {"paths": ["a.py"]})
            [changed] = diff["files"]  # our side against the disk (``git diff --ours``), not an empty change
            assert (changed["status"], changed["insertions"], changed["deletions"]) == ("conflicted", 1, 1), diff
            assert [ln["content"] for h in changed["hunks"] for ln in h["lines"] if ln["origin"] != " "] == [
                "    return 3", "    return 5"]
            err = await call_error(client, "git_stage_and_commit", {"message": "Merge other", "paths": ["a.py"]})
            assert err["code"] == 8003 and [c["path"] for c in err["details"]["conflicts"]] == ["b.py"], err
            # Staging b.py with its markers left in was "resolved" and committed a file that no longer parses.
            marked = await call_error(client, "git_stage_and_commit", {"message": "Merge other", "all": True})
            assert marked["code"] == 8003 and marked["details"]["markers"] == {"b.py": [1, 3, 5]}, marked
            assert git(repo, "ls-files", "-u", "b.py").stdout, "nothing was staged: b.py is still unmerged"
            (repo / "b.py").write_text("B = 5\n")
            done = await call(client, "git_stage_and_commit", {"message": "Merge other", "paths": ["a.py", "b.py"]})
            assert len(done["parents"]) == 2, done
            status = await call(client, "git_status", {})
    assert status.get("state", "none") == "none", status
    assert git(repo, "show", "HEAD:a.py").stdout == "def f():\n    return 5\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=no").stdout == ""


async def test_staging_changes_the_index_so_it_is_not_a_no_op_until_repeated(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n", "b.py": "B = 1\n"})
    (repo / "a.py").write_text("A = 2\n")
    (repo / "b.py").unlink()
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            staged = envelope(await client.call_tool("git_stage", {"paths": ["a.py", "b.py"]}))
            again = envelope(await client.call_tool("git_stage", {"paths": ["a.py", "b.py"]}))
            unstaged = envelope(await client.call_tool("git_stage", {"paths": ["a.py"], "action": "unstage"}))
    assert sorted((c["path"], c["change"]) for c in staged["result"]["changed"]) == [
        ("a.py", "modified"), ("b.py", "deleted")]
    assert not staged["meta"].get("no_op") and not unstaged["meta"].get("no_op"), (staged, unstaged)
    assert again["meta"].get("no_op") is True, again  # nothing left to stage: the index is as it was


async def test_a_branch_created_or_switched_to_is_a_change_though_no_file_changed(tmp_path: Path) -> None:
    # Before: git_branch(create) and a checkout of a branch at the same commit answered no_op=true (no file had
    # changed), the same fingerprint as an up-to-date merge.
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            created = envelope(await client.call_tool("git_branch", {"action": "create", "name": "topic"}))
            switched = envelope(await client.call_tool("git_checkout", {"ref": "topic"}))
            again = envelope(await client.call_tool("git_checkout", {"ref": "topic"}))
            merged = envelope(await client.call_tool("git_merge", {"ref": "main"}))
            back = envelope(await client.call_tool("git_checkout", {"ref": "main"}))
    assert not created["meta"].get("no_op") and not switched["meta"].get("no_op"), (created, switched)
    assert not back["meta"].get("no_op"), back
    assert again["meta"].get("no_op") is True and merged["meta"].get("no_op") is True, (again, merged)
    assert git(repo, "branch", "--show-current").stdout.strip() == "main"


async def test_a_remote_or_worktree_added_or_removed_is_a_change_though_no_file_or_ref_moved(tmp_path: Path) -> None:
    """``git_remote(add)`` and ``git_worktree(remove, force)`` answered ``no_op=true``: they change the repository's
    configuration, which the work-tree and ref fingerprint did not see."""
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with running_server(repo, "--profile", "full") as server:
        async with mcp_client(server) as client:
            added = envelope(await client.call_tool("git_remote", {"action": "add", "name": "origin",
                                                                   "url": str(bare)}))
            tree = envelope(await client.call_tool("git_worktree", {"action": "add", "name": "wt1"}))
            removed = envelope(await client.call_tool("git_worktree", {"action": "remove", "name": "wt1",
                                                                       "confirm": True}))
            dropped = envelope(await client.call_tool("git_remote", {"action": "remove", "name": "origin"}))
    for answer in (added, tree, removed, dropped):
        assert "error" not in answer and not answer["meta"].get("no_op"), answer


async def test_a_pop_that_stops_on_conflicts_says_the_entry_stays(tmp_path: Path) -> None:
    """git says "The stash entry is kept in case you need it again"; the answer did not, so an agent believed the
    stash gone (and a later pop took an older entry)."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    with running_server(repo, "--profile", "full") as server:
        async with mcp_client(server) as client:
            (repo / "a.txt").write_text("stashed\n")
            await client.call_tool("git_stash", {"action": "push", "message": "wip"})
            (repo / "a.txt").write_text("committed meanwhile\n")
            git(repo, "commit", "-qam", "conflicting")
            res = await client.call_tool("git_stash", {"action": "pop"})
    body = envelope(res)["result"]
    assert body["result"]["conflicts"] and "stays (stash@{0})" in body["note"], body
    assert "stays (stash@{0})" in answer_text(res)
    assert git(repo, "stash", "list").stdout.count("stash@") == 1


def _conflicting(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"a.txt": "1\n2\n3\n", "keep.txt": "k\n"})
    git(repo, "checkout", "-q", "-b", "feat")
    (repo / "a.txt").write_text("1\n2\nfeat\n")
    (repo / "new.txt").write_text("from feat\n")
    git(repo, "add", "-A")
    subprocess.run(["git", "commit", "-qm", "feat"], cwd=repo, check=True, env={
        **os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@x",
        "GIT_AUTHOR_DATE": "2001-01-01T00:00:00+00:00"})
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("1\n2\nmain\n")
    git(repo, "commit", "-qam", "main")
    return repo


async def test_a_stopped_merge_aborts_keeping_unrelated_local_changes(tmp_path: Path) -> None:
    """There was no way out of a conflict but ``git_reset hard``, which also threw away unrelated local changes
    (git's ``merge --abort`` keeps them). ``action=abort`` ends it as git does; the 8005 of a later call says so."""
    repo = _conflicting(tmp_path)
    (repo / "keep.txt").write_text("local edit\n")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            stopped = await call(client, "git_merge", {"ref": "feat"})
            assert stopped["success"] is False and (repo / "new.txt").exists()
            busy = await call_error(client, "git_merge", {"ref": "feat"})
            assert busy["code"] == 8005 and "git_merge action=abort" in busy["message"], busy
            answer = await client.call_tool("git_merge", {"action": "abort"})
            aborted = envelope(answer)["result"]
            again = await call_error(client, "git_merge", {"action": "abort"})
    assert aborted["aborted"] is True and aborted["effect"]["recovery_point"], aborted
    assert "aborted=" not in answer_text(answer), answer_text(answer)  # the caller's own action, not said back
    assert (repo / "a.txt").read_text() == "1\n2\nmain\n" and not (repo / "new.txt").exists()
    assert (repo / "keep.txt").read_text() == "local edit\n"
    assert not (repo / ".git" / "MERGE_HEAD").exists()
    assert git(repo, "status", "--porcelain").stdout == " M keep.txt\n"
    assert again["code"] == 8005, again


async def test_unrelated_histories_are_refused_unless_allowed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(repo, "checkout", "-q", "--orphan", "other")
    git(repo, "rm", "-rqf", ".")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    git(repo, "commit", "-qm", "other root")
    git(repo, "checkout", "-q", "main")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            refused = await call_error(client, "git_merge", {"ref": "other"})
            head = git(repo, "rev-parse", "HEAD").stdout
            merged = await call(client, "git_merge", {"ref": "other", "allow_unrelated": True})
    assert refused["code"] == 8005 and "unrelated histories" in refused["message"], refused
    assert head == git(repo, "rev-parse", "HEAD~1").stdout and merged["success"] is True
    assert (repo / "b.txt").exists()


async def test_a_concluded_cherry_pick_keeps_its_author_and_the_environment_names_new_authors(
        tmp_path: Path) -> None:
    """A cherry-pick that stopped on a conflict, resolved and committed, had the local user as author (git keeps
    the picked commit's author and date) and refused an empty message (git takes ``MERGE_MSG``); a server started
    with ``GIT_AUTHOR_NAME`` committed as the configured user."""
    repo = _conflicting(tmp_path)
    env = cpl_env({"GIT_AUTHOR_NAME": "Env Author", "GIT_AUTHOR_EMAIL": "env@x"})
    with running_server(repo, env=env) as server:
        async with mcp_client(server) as client:
            picked = await call(client, "git_merge", {"action": "cherry_pick", "ref": "feat"})
            assert picked["success"] is False
            (repo / "a.txt").write_text("1\n2\nboth\n")
            await call(client, "git_stage_and_commit", {"paths": ["a.txt", "new.txt"], "message": ""})
            picked_commit = git(repo, "log", "-1", "--format=%an <%ae> %aI|%s").stdout.strip()
            (repo / "c.txt").write_text("c\n")
            await call(client, "git_stage_and_commit", {"paths": ["c.txt"], "message": "mine"})
            mine = git(repo, "log", "-1", "--format=%an|%cn").stdout.strip()
    assert picked_commit == "Alice <alice@x> 2001-01-01T00:00:00+00:00|feat", picked_commit
    assert mine.split("|")[0] == "Env Author" and mine.split("|")[1] != "Env Author", mine


async def test_writes_that_change_the_index_the_state_or_the_stash_list_are_no_no_op(tmp_path: Path) -> None:
    """A reset that ended a merge (index and state changed, no path or ref), and a drop of ``stash@{1}`` (refs/stash
    stays), were flagged ``no_op``: an agent told its call did nothing calls it again."""
    repo = _conflicting(tmp_path)
    for n in (1, 2):
        (repo / "keep.txt").write_text(f"stash {n}\n")
        git(repo, "stash", "-q")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            await call(client, "git_merge", {"ref": "feat"})
            answer = await client.call_tool("git_reset", {})
            reset = envelope(answer)
            dropped = envelope(await client.call_tool("git_stash", {"action": "drop", "index": 1, "confirm": True}))
            again = envelope(await client.call_tool("git_stage", {"paths": ["keep.txt"]}))
    assert not reset["meta"].get("no_op") and "changed: state merge -> none" in answer_text(answer), reset
    assert not dropped["meta"].get("no_op"), dropped
    assert again["meta"].get("no_op"), again  # nothing to stage: that one did nothing
