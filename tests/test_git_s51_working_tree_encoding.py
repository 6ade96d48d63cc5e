"""QA41 #1: a path ``.gitattributes`` gives ``working-tree-encoding=UTF-16`` is UTF-8 in the blob and UTF-16 on
disk; git converts both ways, libgit2 does not. Staging committed the raw UTF-16 bytes (a binary blob git itself
then failed to check out) and a restore wrote the blob's UTF-8. Every operation that would store or write such a
path is now refused with 8005 as for a filter driver, and nothing changes; ``working-tree-encoding=UTF-8`` (no
conversion in git either) is staged as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from tests.builders import call_error, git, make_repo, mcp_client, running_server, write_files

_ATTRS = "*.ps1 text working-tree-encoding=UTF-16 eol=crlf\n*.u8 text working-tree-encoding=utf-8\n"


def _utf16(text: str) -> bytes:
    return ("\ufeff" + text.replace("\n", "\r\n")).encode("utf-16-le")


def _encoded_repo(tmp_path: Path) -> Path:
    """``a.ps1`` committed by git (UTF-8 blob, UTF-16 work tree); branch ``other`` changes it."""
    repo = make_repo(tmp_path / "repo", {".gitattributes": _ATTRS, "a.ps1": _utf16('Write-Host "one"\n$x = 1\n'),
                                         "n.u8": "plain\n", "b.txt": "b\n"})
    assert git(repo, "cat-file", "-p", "HEAD:a.ps1").stdout == 'Write-Host "one"\n$x = 1\n'
    git(repo, "checkout", "-q", "-b", "other")
    write_files(repo, {"a.ps1": _utf16('Write-Host "two"\n$x = 1\n')})
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    return repo


def _state(repo: Path) -> tuple[str, str, str, bytes]:
    return (git(repo, "rev-parse", "HEAD").stdout, git(repo, "ls-files", "-s").stdout,
            git(repo, "status", "--porcelain").stdout, (repo / "a.ps1").read_bytes())


def _refused(call_: Callable[[], Any]) -> CodePlaneError:
    with pytest.raises(CodePlaneError) as refused:
        call_()
    assert refused.value.error is ErrorCode.GIT_INVALID_STATE
    assert refused.value.details["paths"] == ["a.ps1"]
    assert refused.value.details["filters"] == ["working-tree-encoding=UTF-16"]
    assert "working-tree-encoding=UTF-16" in refused.value.message and "git CLI" in refused.value.message
    return refused.value


def test_staging_and_committing_an_encoded_file_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    repo = _encoded_repo(tmp_path)
    write_files(repo, {"a.ps1": _utf16('Write-Host "one"\n$x = 2\n'), "b.txt": "changed\n", "n.u8": "as is\n"})
    before = _state(repo)
    service = GitService(repo)
    for call_ in (lambda: service.stage(["a.ps1", "b.txt"]), service.stage,
                  lambda: service.commit("edit", stage_all=True), lambda: service.commit("edit", only=["a.ps1"]),
                  service.stash_push):
        _refused(call_)
        assert _state(repo) == before
    # UTF-8 is git's own encoding: no conversion, so the bytes are staged as git stages them.
    assert [s.path for s in service.stage(["b.txt", "n.u8"]).changed] == ["b.txt", "n.u8"]
    assert git(repo, "rev-parse", ":n.u8").stdout == git(repo, "hash-object", "--path=n.u8", "n.u8").stdout


def test_switching_merging_and_resetting_onto_an_encoded_change_is_refused(tmp_path: Path) -> None:
    repo = _encoded_repo(tmp_path)
    before = _state(repo)
    service = GitService(repo)
    for call_ in (lambda: service.merge("other"), lambda: service.cherry_pick("other"),
                  lambda: service.reset("other", "hard", confirm=True)):
        _refused(call_)
        assert _state(repo) == before
    assert git(repo, "for-each-ref", "refs/codeplane").stdout == ""


@pytest.mark.anyio
async def test_checkout_and_restore_of_an_encoded_file_are_refused_over_mcp(tmp_path: Path) -> None:
    repo = _encoded_repo(tmp_path)
    write_files(repo, {"a.ps1": _utf16('Write-Host "one"\n$x = 3\n')})
    before = _state(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            switch = await call_error(client, "git_checkout", {"ref": "other", "force": True, "confirm": True})
            restore = await call_error(client, "git_checkout", {"paths": ["a.ps1"], "confirm": True})
            commit = await call_error(client, "git_stage_and_commit", {"message": "edit", "all": True})
    for refused in (switch, restore, commit):
        assert refused["code"] == 8005 and refused["details"]["paths"] == ["a.ps1"], refused
    assert _state(repo) == before
    git(repo, "checkout", "-q", "--", "a.ps1")  # what the answer points to: git writes UTF-16 with its BOM
    assert (repo / "a.ps1").read_bytes() == _utf16('Write-Host "one"\n$x = 1\n')
