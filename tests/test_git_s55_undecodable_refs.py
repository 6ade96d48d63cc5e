"""Refs and worktrees whose names are not UTF-8 (``git branch $'br\\xff'``, a tag ``$'t\\xe9'``, a worktree directory
``$'w\\xfe'``). pygit2 hands such a name as lone surrogates: git_status, git_branch and git_worktree listings were
8001 (UnicodeEncodeError), git_inspect tags and describe 9001. Now every such name is shown as the git tools show a
path that is not UTF-8 (``\\xNN`` per byte), in the record and the text, and the same ``\\xNN`` form names the ref
again wherever a tool takes a ref, branch, tag or worktree name (git refuses ``\\`` in a ref name, so the escape
cannot name another ref)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

BRANCH, BRANCH_SHOWN = os.fsdecode(b"br\xff"), "br\\xff"
TAG, TAG_SHOWN = os.fsdecode(b"t\xe9"), "t\\xe9"
WORKTREE, WORKTREE_SHOWN = os.fsdecode(b"w\xfe"), "w\\xfe"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    base = tmp_path_factory.mktemp("s55_refs")
    repo = make_repo(base / "repo", {"a.py": "x = 1\n"})
    git(repo, "tag", TAG)
    git(repo, "tag", "-a", "-m", "annotated", "ann" + TAG)
    for name in ("gone" + BRANCH, "old" + BRANCH):
        git(repo, "branch", name)
    git(repo, "tag", "del" + TAG)
    git(repo, "worktree", "add", "-q", "-b", "wb" + BRANCH, str(base / WORKTREE))
    git(repo, "checkout", "-q", "-b", "u" + BRANCH)  # a commit no other branch has: deleting it needs confirm
    git(repo, "commit", "-q", "--allow-empty", "-m", "only on u")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", BRANCH)  # HEAD on it: status and describe name it
    with running_server(repo) as handle:
        yield handle


async def _ok(client: Any, tool: str, args: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    res = await client.call_tool(tool, args or {})
    body = envelope(res)
    assert not res.is_error, (tool, body)
    return body["result"], answer_text(res)


async def test_listings_show_names_that_are_not_utf8_as_byte_escapes(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        status, text = await _ok(client, "git_status")  # was 8001
        assert status["branch"] == BRANCH_SHOWN and not status.get("detached"), status
        assert text.startswith(f"## {BRANCH_SHOWN} "), text

        branches, text = await _ok(client, "git_branch")  # was 8001
        by_name = {b["name"]: b for b in branches["branches"]}
        assert {BRANCH_SHOWN, "wb" + BRANCH_SHOWN, "main"} <= set(by_name), by_name
        assert by_name[BRANCH_SHOWN]["ref"] == f"refs/heads/{BRANCH_SHOWN}" and by_name[BRANCH_SHOWN]["is_head"]
        assert f"* {BRANCH_SHOWN} " in text, text

        worktrees, text = await _ok(client, "git_worktree")  # was 8001
        linked = [w for w in worktrees["worktrees"] if not w.get("is_main")]
        assert [(w["name"], os.path.basename(w["path"]), w["branch"]) for w in linked] == [
            (WORKTREE_SHOWN, WORKTREE_SHOWN, "wb" + BRANCH_SHOWN)], worktrees
        assert f"({WORKTREE_SHOWN})" in text and f"[wb{BRANCH_SHOWN}]" in text, text

        tags, text = await _ok(client, "git_inspect", {"action": "tags"})  # was 9001
        names = [t["name"] for t in tags["tags"]]
        assert {TAG_SHOWN, "ann" + TAG_SHOWN} <= set(names), names
        assert TAG_SHOWN in text.split() and f"ann{TAG_SHOWN}" in text, text

        described, text = await _ok(client, "describe")  # was 9001
        assert described["branch"] == BRANCH_SHOWN, described
        assert f" {BRANCH_SHOWN} " in text.splitlines()[0], text


async def test_the_escaped_form_names_the_ref_again(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        head = (await _ok(client, "git_status"))[0]["head_commit"]
        for ref in (TAG_SHOWN, "ann" + TAG_SHOWN, BRANCH_SHOWN, f"{BRANCH_SHOWN}~0"):
            log, _ = await _ok(client, "git_log", {"ref": ref, "limit": 1})  # was 8002: no such ref
            assert log["commits"][0]["oid"] == head, (ref, log)

        # A branch named in that form is switched to (not its commit detached), and back.
        await _ok(client, "git_checkout", {"ref": "main"})
        checkout, _ = await _ok(client, "git_checkout", {"ref": BRANCH_SHOWN})
        assert not checkout.get("detached"), checkout
        status, _ = await _ok(client, "git_status")
        assert status["branch"] == BRANCH_SHOWN and not status.get("detached"), status

        renamed, _ = await _ok(client, "git_branch", {"action": "rename", "name": "old" + BRANCH_SHOWN,
                                                         "new_name": "renamed"})
        assert renamed["branch"]["name"] == "renamed", renamed
        deleted, _ = await _ok(client, "git_branch", {"action": "delete", "name": "gone" + BRANCH_SHOWN})
        assert deleted["branch"]["name"] == "gone" + BRANCH_SHOWN, deleted
        tag, _ = await _ok(client, "git_inspect", {"action": "tag_delete", "name": "del" + TAG_SHOWN})
        assert tag["tag"]["name"] == "del" + TAG_SHOWN, tag
        names = {b["name"] for b in (await _ok(client, "git_branch"))[0]["branches"]}
        assert "renamed" in names and not {"old" + BRANCH_SHOWN, "gone" + BRANCH_SHOWN} & names, names

        for action in ("lock", "unlock"):
            changed, _ = await _ok(client, "git_worktree", {"action": action, "name": WORKTREE_SHOWN})
            assert changed["worktree"]["name"] == WORKTREE_SHOWN, changed
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=server.root, check=True,
                          capture_output=True).stdout.split()  # bytes: git's own names, not UTF-8
    assert sorted(refs) == sorted([b"refs/heads/main", b"refs/heads/br\xff", b"refs/heads/wbbr\xff",
                                   b"refs/heads/ubr\xff", b"refs/heads/renamed", b"refs/tags/t\xe9",
                                   b"refs/tags/annt\xe9"]), refs


async def test_a_new_ref_name_with_an_escape_is_a_clear_1003(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("git_branch", {"action": "create", "name": "new\\xff"})
        body = envelope(res)
        assert res.is_error and body["error"]["code"] == 1003, body


async def test_a_recovery_point_brings_back_a_branch_that_is_not_utf8(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        deleted, text = await _ok(client, "git_branch", {"action": "delete", "name": "u" + BRANCH_SHOWN,
                                                         "confirm": True})
        point = deleted["effect"]["recovery_point"]
        assert deleted["unmerged"] and f"refs/heads/u{BRANCH_SHOWN} " in text, (deleted, text)
        restored, _ = await _ok(client, "git_reset", {"recovery_point": point, "confirm": True})  # was 8001
        assert restored, restored
        status, _ = await _ok(client, "git_status")
        assert status["branch"] == BRANCH_SHOWN and not status.get("detached"), status  # HEAD's branch put back
        names = {b["name"] for b in (await _ok(client, "git_branch"))[0]["branches"]}
        assert "u" + BRANCH_SHOWN in names, names
    head = subprocess.run(["git", "symbolic-ref", "HEAD"], cwd=server.root, check=True, capture_output=True).stdout
    assert head.strip() == b"refs/heads/br\xff", head
