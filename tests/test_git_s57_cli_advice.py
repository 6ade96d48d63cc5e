"""A rebase or bisect the git CLI started: the way out an answer names is one that works (QA61 defect 3).

During a ``git rebase`` stopped on a conflict, ``git_checkout`` and ``git_merge`` said to finish it with
``git_rebase action=continue`` or ``abort``, which then answered "no CodePlane rebase is in progress": a loop with
no exit named. During a ``git bisect``, ``git_checkout`` and ``git_merge`` were refused (git checks out and merges
freely then; ``git bisect`` itself checks out) with advice to ``git_merge action=abort``, which had no merge to
abort. Through the real server.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import ServerHandle, call, call_error, cpl_env, make_repo, mcp_client, running_server, write_files
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _commit(root: Path, message: str, files: dict[str, str]) -> None:
    write_files(root, files)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """main and topic both change f.txt's second line; each test starts its operation with the git CLI and ends it."""
    root = make_repo(tmp_path_factory.mktemp("cli_advice") / "r", {"f.txt": "l1\nl2\nl3\n"})
    run_git(root, "checkout", "-q", "-b", "topic")
    _commit(root, "t1", {"f.txt": "l1\ntopic\nl3\n"})
    _commit(root, "t2", {"x.txt": "x\n"})
    run_git(root, "checkout", "-q", "main")
    _commit(root, "m1", {"f.txt": "l1\nmain\nl3\n"})
    run_git(root, "checkout", "-q", "topic")
    with running_server(root, env=cpl_env(home=tmp_path_factory.mktemp("xdg"))) as handle:
        yield handle


async def test_a_cli_rebase_is_sent_to_the_git_cli_not_to_git_rebase(server: ServerHandle) -> None:
    root = server.root
    run_git(root, "rebase", "main", check=False)
    try:
        async with mcp_client(server) as client:
            assert (await call(client, "git_status"))["state"] == "rebase"
            refusals = [await call_error(client, "git_checkout", {"ref": "main"}),
                        await call_error(client, "git_merge", {"ref": "main"})]
            write_files(root, {"f.txt": "l1\nboth\nl3\n"})
            await call(client, "git_stage", {"paths": ["f.txt"]})
            refusals += [await call_error(client, "git_rebase", {"action": "continue"}),
                         await call_error(client, "git_rebase", {"action": "abort", "confirm": True})]
        for refusal in refusals:
            assert refusal["code"] == 8005, refusal
            message = refusal["message"]
            assert "`git rebase --continue`" in message and "`git rebase --abort`" in message, message
            assert "git_rebase action=" not in message, message
        # The advice works: git's continue finishes the rebase.
        run_git(root, "-c", "core.editor=true", "rebase", "--continue")
        assert run_git(root, "symbolic-ref", "HEAD").decode().strip() == "refs/heads/topic"
    finally:
        run_git(root, "rebase", "--abort", check=False)


async def test_a_bisect_lets_checkouts_through_and_names_git_bisect_reset(server: ServerHandle) -> None:
    root = server.root
    run_git(root, "bisect", "start")
    run_git(root, "bisect", "bad", "HEAD")
    run_git(root, "bisect", "good", "HEAD~2")
    try:
        async with mcp_client(server) as client:
            switched = await call(client, "git_checkout", {"ref": "HEAD~1"})
            assert switched["detached"] is True, switched
            merged = await call(client, "git_merge", {"ref": "topic"})  # git merges during a bisect too
            assert merged["fastforward"] is True, merged
            status = await call(client, "git_status")
            refused = await call_error(client, "git_merge", {"action": "abort"})
        assert status["state"] == "bisect", status
        assert refused["code"] == 8005 and "`git bisect reset`" in refused["message"], refused
        assert "git_merge action=abort" not in refused["message"], refused
        # The checkout was git's own move during a bisect: the bisect goes on.
        assert b"git bisect start" in run_git(root, "bisect", "log")
    finally:
        run_git(root, "bisect", "reset", check=False)
