"""QA55 F7: ``git_status`` tells a submodule at another commit (`` M``) from one whose files changed (`` m``) or that
holds only untracked files (`` ?``), as ``git status --short`` does. All three were `` M``, and an agent trusting it
called ``git_stage_and_commit all:true`` and got 8008 (there is nothing to stage in the superproject)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import answer_text, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio


def _superproject(tmp: Path, subs: tuple[str, ...] = ("sub",)) -> Path:
    origin = make_repo(tmp / "origin", {"subm.py": "a = 1\n"})
    top = make_repo(tmp / "top", {"a.py": "x = 1\n"})
    for name in subs:
        run_git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), name)
        for key, value in (("user.name", "T"), ("user.email", "t@e")):
            run_git(top / name, "config", key, value)
    run_git(top, "commit", "-qm", "add " + ", ".join(subs))
    return top


def _edit(top: Path, case: str, sub_name: str = "sub") -> None:
    sub = top / sub_name
    if case == "content":
        (sub / "subm.py").write_text("a = 2\n")
    elif case == "untracked":
        (sub / "new.txt").write_text("new\n")
    else:  # another commit checked out, its files dirty too: git says M
        (sub / "subm.py").write_text("a = 3\n")
        run_git(sub, "commit", "-qam", "moves on")
        (sub / "subm.py").write_text("a = 4\n")


@pytest.mark.parametrize(("case", "status"), [("content", "modified content"), ("untracked", "untracked content"),
                                              ("commit", "modified")])
def test_status_of_a_changed_submodule_says_what_git_says(tmp_path: Path, case: str, status: str) -> None:
    top = _superproject(tmp_path)
    _edit(top, case)
    report = GitService(top).status()
    assert [(e.path, e.status) for e in report.modified] == [("sub", status)]
    assert report.staged == [] and report.untracked == [] and not report.is_clean


async def test_git_status_text_prints_git_short_letters_for_submodules(tmp_path: Path) -> None:
    # One superproject holds a submodule per case (one server start instead of three; each case's line is still
    # compared with `git status --short` for that submodule alone).
    cases = ("content", "untracked", "commit")
    top = _superproject(tmp_path, cases)
    for case in cases:
        _edit(top, case, case)
    with running_server(top) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_status", {}))
    for case in cases:
        expected = run_git(top, "status", "--short", "--", case).decode().splitlines()
        assert expected == [{"content": " m ", "untracked": " ? ", "commit": " M "}[case] + case]
        assert expected[0] in text.splitlines(), text
