"""QA55 F8: a tracked symlink pointing outside the repository can be named in paths-filtered git calls, which read,
stage and restore the link itself (``git checkout -- host_link``); they answered 5001. Anything below such a link
stays refused, a path restore still never writes through it (F1), and calls that create something at the path
(worktree and submodule add) still refuse it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import answer_text, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _repo(tmp: Path) -> tuple[Path, Path]:
    """``host_link -> <outside>/hostname`` and ``dir_link -> <outside>`` committed; ``host_link`` then retargeted to
    ``<outside>/hosts``; branch ``other`` has ``host_link/`` as a directory."""
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "hostname").write_text("box\n")
    (outside / "hosts").write_text("127.0.0.1 box\n")
    root = make_repo(tmp / "repo", {"a.py": "x = 1\n"})
    os.symlink(outside / "hostname", root / "host_link")
    os.symlink(outside, root / "dir_link")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "links")
    run_git(root, "checkout", "-q", "-b", "other")
    run_git(root, "rm", "-q", "host_link")
    (root / "host_link").mkdir()
    (root / "host_link/evil.py").write_text("EVIL = 1\n")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "dir")
    run_git(root, "checkout", "-q", "main")
    (root / "host_link").unlink()
    os.symlink(outside / "hosts", root / "host_link")
    return root, outside


def test_paths_filtered_calls_read_stage_and_restore_the_link_itself(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    service = GitService(root)
    assert [(e.path, e.status) for e in service.status(paths=["host_link"]).modified] == [("host_link", "modified")]
    assert [f.path for f in service.diff(paths=["host_link"]).files] == ["host_link"]
    service.stage(["host_link", "dir_link"])
    assert run_git(root, "diff", "--cached", "--name-only").decode() == "host_link\n"
    assert run_git(root, "ls-files", "-s", "dir_link").decode().startswith("120000 ")  # the link, not its files
    restored = service.checkout("HEAD", paths=["host_link"], confirm=True)
    assert restored.restored_paths == ["host_link"]
    assert os.readlink(root / "host_link") == str(outside / "hostname")
    assert run_git(root, "status", "--porcelain").decode() == ""
    assert sorted(os.listdir(outside)) == ["hostname", "hosts"]


def test_a_restore_naming_the_link_replaces_it_by_the_sources_directory(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    GitService(root).checkout("other", paths=["host_link"], confirm=True)
    assert not (root / "host_link").is_symlink() and (root / "host_link/evil.py").read_text() == "EVIL = 1\n"
    assert sorted(os.listdir(outside)) == ["hostname", "hosts"]


def test_paths_below_an_outside_link_and_creating_calls_stay_refused(tmp_path: Path) -> None:
    root, _ = _repo(tmp_path)
    service = GitService(root)
    calls: list[Callable[[], object]] = [
        lambda: service.status(paths=["dir_link/hosts"]), lambda: service.stage(["dir_link/hosts"]),
        lambda: service.checkout("other", paths=["dir_link/x"]),
        lambda: service.worktree_change("add", name="wt", path="dir_link"),
        lambda: service.submodule_change("add", paths=["dir_link"], url=str(root))]
    for call in calls:
        with pytest.raises(CodePlaneError) as refused:
            call()
        assert refused.value.code == 5001


async def test_git_checkout_restores_a_retargeted_outside_link(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            result = await client.call_tool("git_checkout", {"paths": ["host_link"], "confirm": True})
    assert not result.is_error, answer_text(result)
    assert os.readlink(root / "host_link") == str(outside / "hostname")
