"""s54 #2: a commit that stages (``git_commit paths``, ``git_stage_and_commit``) staged into ``.git/index`` itself
before its hooks ran, so a server killed during ``pre-commit`` left the user's index holding paths they never
staged. git stages such a commit into ``index.lock`` / a temporary index and renames it in only after HEAD moved;
the commit now stages into a copy the same way (``git/commit_index.py``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.index_file import read_index
from codeplane.git.service import GitService
from tests.builders import envelope, git, install_hook, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio


def _repo(tmp_path: Path) -> Path:
    """A modified file the user has not staged (``a.txt``) and one they staged (``b.txt``)."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
    write_files(repo, {"a.txt": "a changed\n", "b.txt": "b staged\n", "c.txt": "c changed\n"})
    git(repo, "add", "b.txt")
    return repo


def _index(repo: Path) -> bytes:
    return (repo / ".git" / "index").read_bytes()


async def _killed_during_pre_commit(repo: Path, tool: str, args: dict[str, Any]) -> None:
    """Call ``tool`` on the real server, SIGKILL the server while its ``pre-commit`` hook runs, then the hook."""
    started = repo.parent / "hook.pid"
    install_hook(repo, "pre-commit", f'echo $$ > "{started}"\nexec sleep 30\n')
    killed = False
    with running_server(repo) as server:
        try:
            async with mcp_client(server) as client, anyio.create_task_group() as group:
                group.start_soon(client.call_tool, tool, args)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not (started.exists() and started.read_text().strip()):
                    await anyio.sleep(0.05)
                if started.exists():
                    server.stop(signal.SIGKILL)
                    os.kill(int(started.read_text()), signal.SIGKILL)
                    killed = True
                group.cancel_scope.cancel()
        except Exception:  # noqa: BLE001 - the server died under the call: the client's transport errors
            pass
    assert killed, "the pre-commit hook never started"


@pytest.mark.parametrize(("tool", "args"), [
    ("git_commit", {"message": "only a", "paths": ["a.txt"]}),
    ("git_stage_and_commit", {"message": "stage c", "paths": ["c.txt"]}),
    ("git_stage_and_commit", {"message": "stage all", "all": True}),
], ids=["commit-paths", "stage-and-commit-paths", "stage-and-commit-all"])
async def test_a_server_killed_during_pre_commit_leaves_the_index_as_the_user_had_it(
        tmp_path: Path, tool: str, args: dict[str, Any]) -> None:
    repo = _repo(tmp_path)
    head, index = git(repo, "rev-parse", "HEAD").stdout, _index(repo)
    await _killed_during_pre_commit(repo, tool, args)
    assert git(repo, "status", "--porcelain").stdout == " M a.txt\nM  b.txt\n M c.txt\n"
    assert _index(repo) == index
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert not (repo / ".git" / "index.lock").exists()  # git itself runs on: no lock left behind


async def test_a_failing_pre_commit_hook_is_8007_and_leaves_the_index_as_it_was(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    install_hook(repo, "pre-commit", "echo 'lint: a.txt is bad' >&2\nexit 3\n")
    index = _index(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            for tool, args in (("git_commit", {"message": "only a", "paths": ["a.txt"]}),
                               ("git_stage_and_commit", {"message": "stage c", "paths": ["c.txt"]}),
                               ("git_stage_and_commit", {"message": "stage all", "all": True}),
                               ("git_commit", {"message": "what is staged"})):
                res = await client.call_tool(tool, args)
                assert res.is_error, envelope(res)
                error = envelope(res)["error"]
                assert error["code"] == 8007, error
                assert "pre-commit hook exited 3; nothing was committed and the index is as before" in error["message"]
                assert "lint: a.txt is bad" in str(error["details"]), error
                assert git(repo, "status", "--porcelain").stdout == " M a.txt\nM  b.txt\n M c.txt\n", tool
                assert _index(repo) == index, (tool, args)
    assert not list((repo / ".git").glob("*index-*.lock"))


def test_a_commit_of_paths_stages_them_only_once_it_is_made_and_keeps_their_stat_data(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    seen = repo.parent / "seen.txt"
    # What the real index holds while the hook runs (the hook's own GIT_INDEX_FILE is the commit's index).
    install_hook(repo, "pre-commit", f'env -u GIT_INDEX_FILE git diff --cached --name-only > "{seen}"\n')
    made = GitService(repo).commit("only a", only=["a.txt"])
    assert seen.read_text() == "b.txt\n"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout == "a.txt\n"
    assert git(repo, "status", "--porcelain").stdout == "M  b.txt\n M c.txt\n"
    assert made.staged[0].path == "a.txt"
    # The entry went in with the file's stat data: git need not read the file again to call it clean.
    entry = next(e for e in read_index(repo / ".git" / "index").entries if e.path == b"a.txt")
    assert entry.size == len(b"a changed\n") and entry.mtime_s > 0 and entry.ino == (repo / "a.txt").stat().st_ino
    GitService(repo).commit("stage c", stage=["c.txt"])
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_staging_made_by_another_program_during_the_hooks_refuses_the_commit(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    # A stat refresh of the real index (what ``git status`` writes) is no reason to refuse...
    install_hook(repo, "pre-commit", "env -u GIT_INDEX_FILE git status --porcelain > /dev/null\n")
    GitService(repo).commit("only a", only=["a.txt"])
    assert git(repo, "status", "--porcelain").stdout == "M  b.txt\n M c.txt\n"
    # ...a staging of another file is: committing would drop it from the index.
    head = git(repo, "rev-parse", "HEAD").stdout
    install_hook(repo, "pre-commit", "env -u GIT_INDEX_FILE git add c.txt\n")
    with pytest.raises(CodePlaneError) as refused:
        GitService(repo).commit("stage all", stage_all=True)
    assert refused.value.error is ErrorCode.GIT_ERROR and refused.value.retryable
    assert "nothing was committed" in refused.value.message
    assert git(repo, "rev-parse", "HEAD").stdout == head
    assert git(repo, "status", "--porcelain").stdout == "M  b.txt\nM  c.txt\n"
    assert not (repo / ".git" / "index.lock").exists()
