"""The git tools end to end through the real server and the official MCP client (one server per module)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    make_repo,
    mcp_client,
    running_server,
    write_files,
)
from tests.git_oracle import full_state, run_git

pytestmark = pytest.mark.anyio

GIT_TOOLS = {"git_status", "git_diff", "git_commit", "git_stage_and_commit", "git_log", "git_push", "git_pull",
             "git_checkout", "git_merge", "git_reset", "git_stage", "git_branch", "git_remote", "git_stash",
             "git_rebase", "git_inspect", "git_history", "git_submodule", "git_worktree"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    root = make_repo(tmp_path_factory.mktemp("gitmcp") / "repo", {"app.py": "print('one')\n", "README.md": "hi\n",
                                                                 ".cplignore": "node_modules/\n"})
    run_git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"feature_only.py": "ZEBRA_MARKER_4711 = True\n"})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "feature file")
    run_git(root, "checkout", "-q", "main")
    with running_server(root) as handle:
        yield handle


async def test_all_nineteen_git_tools_are_listed_with_honest_annotations(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools if t.name.startswith("git_")}
        assert set(listed) == GIT_TOOLS
        for name in ("git_status", "git_diff", "git_log", "git_history"):
            annotations = listed[name].annotations
            assert annotations and annotations.read_only_hint is True
        for name in ("git_reset", "git_checkout", "git_stash", "git_branch", "git_rebase", "git_push"):
            annotations = listed[name].annotations
            assert annotations and annotations.destructive_hint is True and annotations.read_only_hint is False
            doc = await call(client, "describe", {"action": "tool", "name": name})
            assert "recovery_point" in doc["description"], name
        # Said once per session, not in every destructive tool's listing (issue 16).
        assert "recovery point" in (client.instructions or "")
        doc = await call(client, "describe", {"action": "tool", "name": "git_reset"})
        assert "refs/codeplane/recovery" in doc["description"] and doc["examples"]


async def test_edit_stage_commit_and_log_through_mcp(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        write_files(root, {"app.py": "print('two')\n", "notes.txt": "n\n"})
        status = await call(client, "git_status")
        assert status["branch"] == "main" and status["untracked"] == ["notes.txt"]
        assert [m["path"] for m in status["modified"]] == ["app.py"]
        diff = await call(client, "git_diff")
        assert diff["files"][0]["hunks"][0]["lines"][-1] == {"origin": "+", "content": "print('two')",
                                                            "new_lineno": 1}
        parent = run_git(root, "rev-parse", "HEAD").decode().strip()
        res = await client.call_tool("git_stage_and_commit", {"paths": ["app.py", "notes.txt"], "message": "two"})
        assert not res.is_error
        body = res.structured_content
        oid = run_git(root, "rev-parse", "HEAD").decode().strip()
        assert body and body["result"]["oid"] == oid
        # The text: the commit once (where HEAD went; the parent is the record's, s54), each path with its change
        # and new hash, once.
        text = answer_text(res).splitlines()
        assert text[0] == f"[main {oid[:12]}] two", text
        assert not any(line.startswith("HEAD ") for line in text) and answer_text(res).count(oid[:12]) == 1, text
        assert parent[:12] not in answer_text(res), text
        assert not any(line.startswith("refs/heads/main") for line in text), "the branch moved with HEAD: one line"
        assert [line for line in text if line[:2] in ("A ", "M ")] == ["M app.py", "A notes.txt"], text
        assert "staged" not in answer_text(res) and "parents" not in answer_text(res)
        created = await client.call_tool("git_branch", {"action": "create", "name": "topic"})
        assert answer_text(created).splitlines() == [f"refs/heads/topic 0..{oid[:12]}"]
        deleted = await client.call_tool("git_branch", {"action": "delete", "name": "topic"})
        assert answer_text(deleted).splitlines() == [f"refs/heads/topic {oid[:12]}..0"]
        assert (await call(client, "get_task", {}))["task"]["last_mutation_fingerprint"]
        first = await call(client, "git_log", {"limit": 1})
        assert first["commits"][0]["summary"] == "two" and first["pagination"]["next_cursor"]
        second = await call(client, "git_log", {"limit": 1, "cursor": first["pagination"]["next_cursor"]})
        assert second["commits"][0]["summary"] == "initial"
        err = await call_error(client, "git_log", {"limit": 1, "cursor": "not-a-cursor"})
        assert err["code"] == 1005


async def test_checkout_reconciles_the_index_before_returning(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        switched = await call(client, "git_checkout", {"ref": "feature"})
        assert switched["branch"] == "feature"
        hits = await call(client, "search", {"query": "ZEBRA_MARKER_4711"})
        assert [h["path"] for h in hits["results"]] == ["feature_only.py"]
        await call(client, "git_checkout", {"ref": "main"})
        hits = await call(client, "search", {"query": "ZEBRA_MARKER_4711"})
        assert "results" not in hits


async def test_destructive_reset_needs_confirm_and_restores_from_recovery_point(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        write_files(root, {"README.md": "precious edit\n", "scratch.txt": "untracked\n"})
        before = full_state(root)
        refused = await call_error(client, "git_reset", {"mode": "hard"})
        assert refused["code"] == 5009 and refused["error"] == "CONFIRMATION_REQUIRED"
        assert (root / "README.md").read_text() == "precious edit\n"
        reset = await call(client, "git_reset", {"mode": "hard", "confirm": True})
        point = reset["effect"]["recovery_point"]
        assert point.startswith("refs/codeplane/recovery/") and (root / "README.md").read_text() == "hi\n"
        listed = await call(client, "git_inspect", {"action": "recovery_points"})
        assert listed["recovery_points"][0]["name"] == point
        await call(client, "git_reset", {"recovery_point": point, "confirm": True})
        assert full_state(root) == before
        run_git(root, "checkout", "-q", "--", "README.md")
        (root / "scratch.txt").unlink()


async def test_bad_arguments_get_catalog_errors(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        assert (await call_error(client, "git_diff", {"base": "--output=/tmp/pwned"}))["code"] == 1003
        assert (await call_error(client, "git_status", {"paths": ["../outside"]}))["code"] == 5001
        assert (await call_error(client, "git_checkout", {"ref": "no-such-branch"}))["code"] == 8002
        assert (await call_error(client, "git_stage", {}))["code"] == 1003
        assert (await call_error(client, "git_branch", {"action": "delete"}))["code"] == 1003
        # An argument the action does not use is refused, not ignored: ``git_branch(name=...)`` listed branches.
        ignored = await call_error(client, "git_branch", {"name": "topic"})
        assert ignored["code"] == 1003, ignored
        assert ignored["details"]["problems"] == [
            {"field": "name", "problem": "used by action create/delete/rename only, not list"}]
        assert (await call_error(client, "git_stash", {"action": "list", "message": "wip"}))["code"] == 1003
        assert (await call_error(client, "git_inspect", {"action": "tags", "path": "app.py"}))["code"] == 1003
        # A default passed explicitly is no mistake.
        await call(client, "git_branch", {"action": "list", "force": False})
        assert b"topic" not in run_git(server.root, "branch")
        conflict = await call(client, "git_branch", {"action": "list"})
        assert {b["name"] for b in conflict["branches"]} == {"main", "feature"}


async def test_show_narrows_a_commits_diff_to_paths_and_lists_max_files(server: ServerHandle) -> None:
    # The note of a diff cut at its files said "raise max_files or narrow paths", which git_inspect could not do;
    # a root commit's files past the first 200 were out of reach of every tool.
    root = run_git(server.root, "rev-list", "--max-parents=0", "HEAD").decode().strip()  # app.py, README.md, .cplignore
    async with mcp_client(server) as client:
        capped = await client.call_tool("git_inspect", {"ref": root, "max_files": 1})
        narrowed = await call(client, "git_inspect", {"ref": root, "paths": ["app.py"]})
        missing = await call_error(client, "git_inspect", {"ref": root, "paths": ["../outside"]})
    diff = capped.structured_content["result"]["show"]["diff"]
    assert len(diff["files"]) == 1 and diff["files_omitted"] == 2 and diff["stats"]["files_changed"] == 3
    # Once, with the max_files that lists every file (s54, QA52 F10).
    assert "… 2 files omitted: max_files=3 lists all" in answer_text(capped).splitlines()
    assert "more files" not in answer_text(capped), answer_text(capped)
    only = narrowed["show"]["diff"]
    assert [f["path"] for f in only["files"]] == ["app.py"] and only["stats"]["files_changed"] == 1
    assert missing["code"] == 5001, missing  # as git_diff refuses it


async def test_a_commit_concluding_a_merge_names_the_resolved_path_as_resolved(tmp_path_factory: pytest.TempPathFactory,
                                                                             ) -> None:
    """``R`` is a rename in ``git status --short``: a conflict resolved and committed says ``resolved``."""
    root = make_repo(tmp_path_factory.mktemp("resolve") / "repo", {"a.py": "X = 1\n"})
    run_git(root, "checkout", "-q", "-b", "other")
    write_files(root, {"a.py": "X = 10\n"})
    run_git(root, "commit", "-qam", "ten")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"a.py": "X = 100\n"})
    run_git(root, "commit", "-qam", "hundred")
    with running_server(root) as handle:
        async with mcp_client(handle) as client:
            merged = await call(client, "git_merge", {"ref": "other"})
            assert merged["success"] is False
            write_files(root, {"a.py": "X = 110\n"})
            res = await client.call_tool("git_stage_and_commit", {"paths": ["a.py"], "message": "merged"})
    lines = answer_text(res).splitlines()
    assert not res.is_error and any(line == "resolved a.py" for line in lines), lines
    assert not any(line.startswith("R ") for line in lines), lines
