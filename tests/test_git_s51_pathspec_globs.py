"""QA41 #9: ``git_status``/``git_diff`` ``paths`` took ``*.py`` or ``dir/*.py`` literally and answered "clean" / 0
files while ``git status -- 'dir/*.py'`` lists the change. They now read paths as git's default pathspecs: a path
and everything below it, and, for a spec with glob characters, every path it matches whole (``*`` and ``?`` cross
``/``, as in git). Checked against the git CLI, a file literally named ``[ab].py`` included."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import call, git, make_repo, mcp_client, running_server, write_files

_FILES = {"dir/x.py": "a\n", "dir/sub/y.py": "b\n", "top.py": "c\n", "[ab].py": "d\n", "a.py": "e\n",
          "notes.md": "f\n"}
_SPECS = ["*.py", "dir/*.py", "d?r", "di*", "dir/*", "[ab].py", "dir/s*", "*/y.py", "dir", "d[i]r/x.py",
          "[!d]*.py", "[^d]*.py", "*.md", "nothing*"]


def _changed_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", _FILES)
    write_files(repo, {path: text + "z\n" for path, text in _FILES.items()})
    write_files(repo, {"dir/new.py": "n\n"})  # untracked
    return repo


def _git_status(repo: Path, spec: str) -> list[str]:
    out = git(repo, "-c", "core.quotepath=false", "status", "--porcelain", "-uall", "--", spec).stdout
    return sorted(line[3:] for line in out.splitlines())


def _git_diff(repo: Path, spec: str) -> list[str]:
    return sorted(git(repo, "diff", "--name-only", "--", spec).stdout.splitlines())


@pytest.mark.parametrize("spec", _SPECS)
def test_status_and_diff_paths_are_git_pathspecs(tmp_path: Path, spec: str) -> None:
    repo = _changed_repo(tmp_path)
    service = GitService(repo)
    report = service.status([spec])
    assert sorted([e.path for e in report.modified] + report.untracked) == _git_status(repo, spec)
    for base in (None, "HEAD"):
        diff = service.diff(base=base, paths=[spec])
        assert sorted(f.path for f in diff.files) == _git_diff(repo, spec)


@pytest.mark.anyio
async def test_a_glob_over_mcp_lists_the_change_instead_of_clean(tmp_path: Path) -> None:
    repo = _changed_repo(tmp_path)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            status = await call(client, "git_status", {"paths": ["dir/*.py"]})
            diff = await call(client, "git_diff", {"paths": ["*.py"], "include_hunks": False})
    assert [e["path"] for e in status["modified"]] == ["dir/sub/y.py", "dir/x.py"]
    assert status["untracked"] == ["dir/new.py"]
    assert [f["path"] for f in diff["files"]] == ["[ab].py", "a.py", "dir/sub/y.py", "dir/x.py", "top.py"]
