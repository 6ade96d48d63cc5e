"""Issue 16: git listings and writes read as the git CLI prints them (``git branch -v``, ``git stash list``,
``git remote -v``, ``git worktree list``, ``git push``'s ref lines, ``git rebase -i``'s plan, ``git commit``'s
``[main abc] summary``), ids at 12 digits, never the record as JSON, and an empty listing says so in words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio


def _oid(root: Path, ref: str) -> str:
    return git(root, "rev-parse", ref).stdout.strip()


async def test_git_listings_and_writes_are_git_shaped_lines_with_short_ids(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    root = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_server(root) as server:
        async with mcp_client(server) as client:
            async def text(tool: str, args: dict[str, object]) -> str:
                result = await client.call_tool(tool, args)
                assert not result.is_error, answer_text(result)
                body = answer_text(result)
                assert '{"' not in body and not any(len(w) == 40 for w in body.split()), body
                return body

            assert await text("git_stash", {"action": "list"}) == "no stashes"
            assert await text("git_remote", {"action": "list"}) == "no remotes"
            assert await text("git_inspect", {"action": "tags"}) == "no tags"
            assert await text("git_remote", {"action": "add", "name": "origin", "url": str(remote)}) \
                == f"origin {remote}"
            write_files(root, {"a.py": "x = 2\n"})
            assert await text("git_stage", {"paths": ["a.py"]}) == "M a.py"
            parent = _oid(root, "HEAD")
            committed = (await text("git_commit", {"message": "two\n\nbody"})).splitlines()
            head = _oid(root, "HEAD")
            # The commit line says where HEAD went; no ``HEAD old..new`` line names it again (s54, QA52 F8).
            assert committed[0] == f"[main {head[:12]}] two" and not any(line.startswith("HEAD ") for line in committed)
            assert parent[:12] not in "\n".join(committed), committed
            pushed = (await text("git_push", {"remote": "origin", "branch": "main"})).splitlines()
            assert pushed == ["remote=origin", "[new branch] main -> main", f"refs/remotes/origin/main 0..{head[:12]}"]
            await text("git_branch", {"action": "create", "name": "topic", "ref": parent})
            branches = await text("git_branch", {"action": "list"})
            assert f"* main {head[:12]}" in branches.splitlines() and f"  topic {parent[:12]}" in branches
            write_files(root, {"a.py": "x = 3\n"})
            await text("git_stash", {"action": "push", "message": "wip"})
            assert (await text("git_stash", {"action": "list"})).startswith("stash@{0} ")
            worktrees = await text("git_worktree", {"action": "list"})
            assert worktrees == f"{root} {head[:12]} [main]", worktrees
            await text("git_inspect", {"action": "tag_create", "name": "v1", "ref": "HEAD", "message": "one"})
            assert (await text("git_inspect", {"action": "tags"})).startswith("v1 ")
            plan = (await text("git_rebase", {"action": "plan", "upstream": parent})).splitlines()
            assert plan == [f"onto {parent[:12]}", f"pick {head[:12]} two"], plan
            assert (await text("git_pull", {})).splitlines()[0] == "already up to date with origin/main"


async def test_a_write_over_many_files_lists_a_bounded_number_and_says_how_many_more(tmp_path: Path) -> None:
    # A stage of 1,500 files answered 23-112 KB of text, one JSON line of every path for git_stage_and_commit,
    # and no cursor: every answer is bounded; git_status pages the repository's state.
    files = {f"pkg/m{n:03}.py": "x = 1\n" for n in range(260)}
    root = make_repo(tmp_path / "repo", files)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            async def call(tool: str, args: dict[str, object]) -> tuple[str, dict[str, object]]:
                result = await client.call_tool(tool, args)
                assert not result.is_error, answer_text(result)
                record = result.structured_content or {}
                return answer_text(result), record.get("result", record)

            assert (await call("git_inspect", {"action": "recovery_points"}))[0] == "no recovery points"
            write_files(root, {path: "x = 2\n" for path in files})
            text, record = await call("git_stage", {"all": True})
            assert record["changed_total"] == 260 and len(record["changed"]) == 100  # type: ignore[arg-type]
            assert text.splitlines()[-1].startswith("… 160 more") and len(text) < 16_000, text[-300:]
            write_files(root, {path: "x = 3\n" for path in files})
            text, record = await call("git_stage_and_commit", {"all": True, "message": "three"})
            assert record["staged_total"] == 260 and len(record["staged"]) == 100  # type: ignore[arg-type]
            assert "260 files changed" in text and "… 250 more paths" in text, text[-300:]
            assert len(text) < 16_000 and '{"' not in text, text[-300:]
            write_files(root, {path: "x = 4\n" for path in files})
            text, record = await call("git_checkout", {"paths": ["pkg"], "confirm": True})
            assert record["restored_paths_total"] == 260, record
            assert "… 160 more" in text and len(text) < 16_000, text[-300:]
            assert git(root, "status", "--porcelain").stdout == ""
