"""QA20 #5: a path ``.gitattributes`` gives a filter driver (clean/smudge, as git-lfs) is refused by staging and
checkout, since git would run the driver and CodePlane cannot: it stored the raw file (git stores the cleaned one)
and wrote the raw blob (git writes the smudged one), and ``git status`` then hid the difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from tests.builders import call_error, git, make_repo, mcp_client, running_server, write_files


def _filtered_repo(tmp_path: Path) -> Path:
    """``*.up`` goes through an upper-casing clean filter; ``*.raw`` names a driver nobody configured; branch
    ``withup`` holds a blob git committed through the filter."""
    repo = make_repo(tmp_path / "repo", {".gitattributes": "*.up filter=up\n*.raw filter=nothing\n", "a.txt": "a\n"})
    git(repo, "config", "filter.up.clean", "tr a-z A-Z")
    git(repo, "config", "filter.up.smudge", "tr A-Z a-z")
    git(repo, "checkout", "-q", "-b", "withup")
    write_files(repo, {"s.up": "hello smudge\n"})
    git(repo, "add", "s.up")
    git(repo, "commit", "-qm", "filtered by git")
    git(repo, "checkout", "-q", "main")
    return repo


def _state(repo: Path) -> tuple[str, str, str]:
    return (git(repo, "rev-parse", "HEAD").stdout, git(repo, "ls-files", "-s").stdout,
            git(repo, "status", "--porcelain").stdout)


def test_staging_a_file_with_a_filter_driver_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    repo = _filtered_repo(tmp_path)
    write_files(repo, {"f.up": "hello filter\n", "a.txt": "changed\n", "n.raw": "as is\n"})
    before = _state(repo)
    service = GitService(repo)
    for call_ in (lambda: service.stage(["f.up", "a.txt"]), service.stage,
                  lambda: service.commit("filtered", stage=["f.up"])):
        with pytest.raises(CodePlaneError) as refused:
            call_()
        assert refused.value.error is ErrorCode.GIT_INVALID_STATE
        assert refused.value.details["paths"] == ["f.up"] and refused.value.details["filters"] == ["up"]
        assert "git CLI" in refused.value.message
        assert _state(repo) == before
    # Paths without a driver git would run are staged as before (git too stores them unchanged).
    assert [s.path for s in service.stage(["a.txt", "n.raw"]).changed] == ["a.txt", "n.raw"]
    assert git(repo, "show", ":n.raw").stdout == "as is\n"


@pytest.mark.anyio
async def test_checking_out_a_file_with_a_filter_driver_is_refused(tmp_path: Path) -> None:
    repo = _filtered_repo(tmp_path)
    before = _state(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            switch = await call_error(client, "git_checkout", {"ref": "withup"})
            restore = await call_error(client, "git_checkout", {"ref": "withup", "paths": ["s.up"]})
    for refused in (switch, restore):
        assert refused["code"] == 8005 and refused["details"]["paths"] == ["s.up"], refused
    assert _state(repo) == before and not (repo / "s.up").exists()
    assert git(repo, "for-each-ref", "refs/codeplane").stdout == ""  # refused before any recovery point
    git(repo, "checkout", "-q", "withup")  # what the answer points to: git smudges it
    assert (repo / "s.up").read_text() == "hello smudge\n"


def test_merges_picks_and_hard_resets_that_would_write_a_filtered_file_are_refused(tmp_path: Path) -> None:
    repo = _filtered_repo(tmp_path)
    before = _state(repo)
    service = GitService(repo)
    for call_ in (lambda: service.merge("withup"), lambda: service.cherry_pick("withup"),
                  lambda: service.reset("withup", "hard", confirm=True)):
        with pytest.raises(CodePlaneError) as refused:
            call_()
        assert refused.value.error is ErrorCode.GIT_INVALID_STATE and refused.value.details["paths"] == ["s.up"]
        assert _state(repo) == before
    assert git(repo, "for-each-ref", "refs/codeplane").stdout == ""
    # Operations that write no filtered file go ahead.
    write_files(repo, {"a.txt": "dirty\n"})
    assert service.reset("HEAD", "hard", confirm=True).head == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert (repo / "a.txt").read_text() == "a\n"


def test_stashes_and_rebases_that_would_touch_a_filtered_file_are_refused(tmp_path: Path) -> None:
    repo = _filtered_repo(tmp_path)
    service = GitService(repo)
    git(repo, "checkout", "-q", "withup")
    write_files(repo, {"s.up": "edited\n"})
    before = _state(repo)
    with pytest.raises(CodePlaneError) as stash:
        service.stash_push()
    assert stash.value.details["paths"] == ["s.up"] and _state(repo) == before
    git(repo, "checkout", "-q", "--", "s.up")
    git(repo, "checkout", "-q", "-b", "later", "main")
    write_files(repo, {"a.txt": "later\n"})
    git(repo, "commit", "-qam", "later")
    git(repo, "checkout", "-q", "withup")
    before = _state(repo)
    with pytest.raises(CodePlaneError) as rebase:
        service.rebase_start("later", confirm=True)
    assert rebase.value.error is ErrorCode.GIT_INVALID_STATE and rebase.value.details["paths"] == ["s.up"]
    assert _state(repo) == before and git(repo, "for-each-ref", "refs/codeplane").stdout == ""
