"""QA42 §2: once ``max_lines`` had cut the hunks, every later file of a diff went into the last part unmeasured:
``git_diff`` and ``git_inspect show`` answered a last part of up to 176 KB of text with no cursor. Every part
now keeps to the 16 KB bound with a cursor to the rest, and the parts together hold every changed file once,
each with git's own counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.builders import follow_parts, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio

_FILES = 900


async def _parts(client: Any, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every part's record, following ``next_cursor``; each answer's text checked against the bound."""
    return [record for record, _ in await follow_parts(client, tool, args)]


def _files(parts: list[list[dict[str, Any]]]) -> dict[str, tuple[int, int]]:
    """Each file's counts, checking that a file split across parts is its own continuation (same counts)."""
    seen: dict[str, tuple[int, int]] = {}
    last: str | None = None
    for files in parts:
        for i, f in enumerate(files):
            counts = (f.get("insertions", 0), f.get("deletions", 0))
            if f["path"] in seen:  # only the first file of a part may continue the previous part's last
                assert i == 0 and f["path"] == last and seen[f["path"]] == counts, f["path"]
            seen[f["path"]] = counts
            last = f["path"]
    return seen


def _numstat(repo: Path, *args: str) -> dict[str, tuple[int, int]]:
    out = git(repo, "diff", "--numstat", *args).stdout.splitlines()
    return {path: (int(ins), int(dels)) for ins, dels, path in (line.split("\t") for line in out)}


async def test_every_part_of_a_diff_cut_by_max_lines_keeps_to_the_bound(tmp_path: Path) -> None:
    names = [f"pkg/module_{i:04d}.py" for i in range(_FILES)]
    repo = make_repo(tmp_path / "repo", {name: "".join(f"value_{k} = {k}\n" for k in range(6)) for name in names})
    git(repo, "checkout", "-qb", "big")
    write_files(repo, {name: "value_0 = -1\nvalue_1 = 1\nvalue_2 = 2\nvalue_3 = 3\nvalue_4 = 4\nvalue_5 = -5\n"
                       for name in names})
    git(repo, "commit", "-qam", "touch every module twice")
    git(repo, "checkout", "-q", "main")
    write_files(repo, {name: f"value_0 = 'edited {i}'\n" + "".join(f"value_{k} = {k}\n" for k in range(1, 6))
                       for i, name in enumerate(names)})
    whole = _numstat(repo, "main", "big")
    assert len(whole) == _FILES
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("git_diff", {"base": "main", "target": "big", "max_lines": 1, "max_files": 2000}),
                ("git_diff", {"base": "main", "target": "big", "max_files": 2000}),
                ("git_diff", {"max_files": 2000, "max_lines": 3}),
                ("git_inspect", {"action": "show", "ref": "big", "max_files": 2000, "max_lines": 1}),
                ("git_inspect", {"action": "show", "ref": "big", "max_files": 2000}),
            ]
            answers = [await _parts(client, tool, args) for tool, args in calls]
    unstaged = _numstat(repo)
    for (tool, args), parts in zip(calls, answers, strict=True):
        assert len(parts) > 1, (tool, args)
        assert [p["part"] for p in parts] == list(range(1, len(parts) + 1))
        diffs = [p["show"]["diff"] if tool == "git_inspect" else p for p in parts]
        assert _files([d["files"] for d in diffs]) == (whole if "big" in args.values() else unstaged), args
        # What was cut is told once, after the last file.
        assert all(not d.get("truncation") for d in diffs[:-1]) and diffs[-1].get("truncation"), args
