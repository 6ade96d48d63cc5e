"""s54 #1 (QA48 F7): ``git_inspect show`` of a large commit made a full libgit2 patch for every file, listed or not,
even with ``include_hunks: false``: Django's 6,890-file root commit took 1.8-2.4x ``git show --stat``. Patches are
now made for the listed files only; the stats of the whole come from git's own numstat (``git/tree_stats.py``) and
stay exact. ``git_diff`` of two commits is counted the same way."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from codeplane.git.diffs import DiffLimits
from codeplane.git.service import GitService
from tests.builders import call, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio


def _numstat(root: Path, *args: str) -> dict[str, int]:
    """git's own count (``git show --numstat`` / ``git diff --numstat``), as the answer's ``stats``."""
    rows = [ln.split("\t") for ln in git(root, *args).stdout.splitlines() if ln.strip()]
    return {"files_changed": len(rows), "insertions": sum(int(a) for a, _, _ in rows if a != "-"),
            "deletions": sum(int(d) for _, d, _ in rows if d != "-")}


def _history(tmp_path: Path) -> Path:
    """A root commit of 40 files, then one that modifies, deletes, renames (with an edit), adds a binary and adds
    files in two directories: more files than a page of 5."""
    files: dict[str, str | bytes] = {f"src/m{i:02}.py": "".join(f"x{j} = {i}\n" for j in range(i + 3))
                                     for i in range(30)}
    files.update({f"docs/d{i}.md": f"# d{i}\n\ntext\n" for i in range(10)})
    root = make_repo(tmp_path / "repo", files)
    write_files(root, {f"src/m{i:02}.py": f"changed = {i}\n" for i in range(0, 12, 2)})
    write_files(root, {"src/new.py": "a = 1\nb = 2\n", "docs/new.md": "new\n", "logo.bin": b"\x00\x01\x02" * 50,
                       "docs/renamed.md": "# d3\n\ntext\nmore\n"})
    for gone in ("docs/d3.md", "src/m29.py"):
        (root / gone).unlink()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "second")
    return root


async def test_show_and_diff_of_more_files_than_the_page_count_every_file_as_git_does(tmp_path: Path) -> None:
    root = _history(tmp_path)
    whole = _numstat(root, "show", "--numstat", "--format=", "HEAD")
    assert whole["files_changed"] > 10
    cases: list[tuple[str, dict[str, Any], dict[str, int]]] = [
        ("git_inspect", {"action": "show", "ref": "HEAD", "include_hunks": False, "max_files": 5}, whole),
        ("git_inspect", {"action": "show", "ref": "HEAD", "max_files": 5}, whole),
        ("git_inspect", {"action": "show", "ref": "HEAD~1", "include_hunks": False, "max_files": 5},
         _numstat(root, "show", "--numstat", "--format=", "HEAD~1")),
        ("git_inspect", {"action": "show", "ref": "HEAD", "max_files": 2, "paths": ["docs"]},
         _numstat(root, "show", "--numstat", "--format=", "HEAD", "--", "docs")),
        ("git_inspect", {"action": "show", "ref": "HEAD", "max_files": 2, "paths": ["*.py"]},
         _numstat(root, "show", "--numstat", "--format=", "HEAD", "--", "*.py")),
        ("git_diff", {"base": "HEAD~1", "target": "HEAD", "include_hunks": False, "max_files": 5},
         _numstat(root, "diff", "--numstat", "HEAD~1", "HEAD")),
    ]
    with running_server(root) as server:
        async with mcp_client(server) as client:
            for tool, args, expected in cases:
                result = await call(client, tool, args)
                report = result["show"]["diff"] if tool == "git_inspect" else result
                assert report["stats"] == expected, (args, report["stats"])
                listed = min(args["max_files"], expected["files_changed"])
                assert len(report["files"]) == listed, args
                assert report.get("files_omitted", 0) == expected["files_changed"] - listed, args
    assert not (root / ".git" / "index.lock").exists()


def test_a_commit_past_its_page_makes_no_patch_for_the_unlisted_files(tmp_path: Path) -> None:
    """The work of a page of one file against the page of every file, in this thread's CPU time (git's numstat runs
    in a child): a patch per file made them equal."""
    root = make_repo(tmp_path / "repo", {f"d{i % 20}/f{i}.txt": "".join(f"line {j} of {i}\n" for j in range(40))
                                         for i in range(1500)})
    service = GitService(root)

    def cpu(max_files: int) -> float:
        best = float("inf")
        for _ in range(3):
            start = time.thread_time()
            shown = service.show("HEAD", limits=DiffLimits(include_hunks=False, max_files=max_files))
            best = min(best, time.thread_time() - start)
            assert shown.diff is not None and shown.diff.stats.files_changed == 1500
            assert shown.diff.stats.insertions == 60_000 and len(shown.diff.files) == min(max_files, 1500)
        return best

    one, every = cpu(1), cpu(2000)
    assert one < 0.4 * every, (one, every)


def test_without_the_git_executable_the_unlisted_files_are_counted_with_libgit2(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    root = _history(tmp_path)
    expected = _numstat(root, "show", "--numstat", "--format=", "HEAD")
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    shown = GitService(root).show("HEAD", limits=DiffLimits(include_hunks=False, max_files=3))
    assert shown.diff is not None and shown.diff.stats.model_dump() == expected
    assert len(shown.diff.files) == 3 and shown.diff.files_omitted == expected["files_changed"] - 3
