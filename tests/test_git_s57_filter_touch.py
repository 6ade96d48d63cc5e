"""QA61 #4: a file under a ``.gitattributes`` filter driver (git-lfs style) or a working-tree encoding that was only
touched is unchanged for git (it compares the converted bytes) but read as modified here (libgit2 compared the
smudged file with the cleaned blob): ``git_status`` listed it, ``git_diff`` showed a bogus change, and ``all``
staging and stashes were refused over it. A file really changed under a filter still shows, with git's diff."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from tests.builders import ServerHandle, call, git, make_repo, mcp_client, running_server, write_files
from tests.git_oracle import run_git


def _touch(path: Path) -> None:
    """A new mtime (and ctime), same bytes: what a build tool or a copy does."""
    stamp = path.stat().st_mtime_ns - 5_000_000_000
    os.utime(path, ns=(stamp, stamp))


def _filtered_repo(root: Path) -> Path:
    """``*.dat`` through an upper-casing clean filter (the blob is upper case, the file on disk lower case)."""
    repo = make_repo(root, {".gitattributes": "*.dat filter=upper\n", "p.txt": "p\n"})
    git(repo, "config", "filter.upper.clean", "tr a-z A-Z")
    git(repo, "config", "filter.upper.smudge", "tr A-Z a-z")
    write_files(repo, {"x.dat": "hello world\n", "y.dat": "second file\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "filtered")
    assert git(repo, "show", "HEAD:x.dat").stdout == "HELLO WORLD\n"
    return repo


def _git_short(repo: Path) -> str:
    return run_git(repo, "--no-optional-locks", "status", "--porcelain").decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(_filtered_repo(tmp_path_factory.mktemp("s57filter") / "repo")) as handle:
        yield handle


@pytest.mark.anyio
async def test_a_touched_filtered_file_is_clean_and_blocks_neither_all_staging_nor_a_stash(
        server: ServerHandle) -> None:
    repo = server.root
    _touch(repo / "x.dat")
    write_files(repo, {"p.txt": "p\np2\n"})
    assert _git_short(repo) == " M p.txt\n"
    async with mcp_client(server) as client:
        status = await call(client, "git_status")
        assert [m["path"] for m in status["modified"]] == ["p.txt"], status
        diff = await call(client, "git_diff")
        assert [f["path"] for f in diff["files"]] == ["p.txt"], diff
        assert (await call(client, "git_diff", {"paths": ["x.dat"]})).get("files", []) == []
        committed = await call(client, "git_stage_and_commit", {"all": True, "message": "p only"})
        assert [p["path"] for p in committed["effect"]["paths"]] == ["p.txt"], committed
        assert run_git(repo, "show", "--name-only", "--format=", "HEAD").decode() == "p.txt\n"

        _touch(repo / "y.dat")
        write_files(repo, {"p.txt": "p\np3\n"})
        pushed = await call(client, "git_stash", {"action": "push"})
        assert [p["path"] for p in pushed["effect"]["paths"]] == ["p.txt"], pushed
    # The stash holds the real change only, and the touched files were left as they were on disk (libgit2's
    # stash stored the smudged bytes as a change and wrote the raw blob, upper case, over the file).
    assert run_git(repo, "stash", "show", "--name-only", "stash@{0}").decode() == "p.txt\n"
    assert (repo / "x.dat").read_text() == "hello world\n" and (repo / "y.dat").read_text() == "second file\n"
    assert _git_short(repo) == ""


@pytest.mark.anyio
async def test_a_filtered_file_really_changed_shows_with_the_diff_git_prints(server: ServerHandle) -> None:
    repo = server.root
    write_files(repo, {"x.dat": "hello there\n"})
    _touch(repo / "y.dat")
    try:
        async with mcp_client(server) as client:
            status = await call(client, "git_status")
            assert [(m["path"], m["status"]) for m in status["modified"]] == [("x.dat", "modified")], status
            for args in ({}, {"base": "HEAD"}):
                diff = await call(client, "git_diff", args)
                assert [f["path"] for f in diff["files"]] == ["x.dat"], (args, diff)
                lines = [(ln["origin"], ln["content"]) for ln in diff["files"][0]["hunks"][0]["lines"]]
                # git compares the cleaned bytes: the diff is between upper-case texts.
                assert lines == [("-", "HELLO WORLD"), ("+", "HELLO THERE")], (args, lines)
                assert run_git(repo, "diff", *(["HEAD"] if args else [])).decode().splitlines()[-2:] == \
                    ["-HELLO WORLD", "+HELLO THERE"]
    finally:
        git(repo, "checkout", "--", "x.dat")


def test_a_touched_filtered_file_is_no_change_to_stage_reset_or_encode(tmp_path: Path) -> None:
    repo = _filtered_repo(tmp_path / "repo")
    service = GitService(repo)
    _touch(repo / "x.dat")
    # Named explicitly: nothing to stage (git add stages nothing), no refusal.
    assert service.stage(["x.dat"]).changed == []
    write_files(repo, {"x.dat": "hello again\n"})
    with pytest.raises(CodePlaneError) as refused:  # a real change is still git's to store
        service.stage(["x.dat"])
    assert refused.value.error is ErrorCode.GIT_INVALID_STATE and refused.value.details["paths"] == ["x.dat"]
    git(repo, "checkout", "--", "x.dat")
    _touch(repo / "x.dat")
    write_files(repo, {"p.txt": "dirty\n"})
    service.reset("HEAD", "hard", confirm=True)  # refused over x.dat before, then libgit2 wrote the raw blob
    assert (repo / "x.dat").read_text() == "hello world\n" and (repo / "p.txt").read_text() == "p\n"
    assert _git_short(repo) == ""

    encoded = make_repo(tmp_path / "encoded", {
        ".gitattributes": "*.ps1 text working-tree-encoding=UTF-16\n",
        "a.ps1": ("\ufeff" + "Write-Host 1\n").encode("utf-16-le")})
    _touch(encoded / "a.ps1")
    assert _git_short(encoded) == ""
    status = GitService(encoded).status()
    assert status.is_clean and status.modified == [], status
