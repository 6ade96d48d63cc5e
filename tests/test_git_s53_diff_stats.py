"""QA50 #3 (spec §12.5 diff_stats/short_diff, §10 deltas): a git write records the lines it changed in the work tree
and marks added files ``+``. A fast-forward merge, a branch switch, a rebase, a stash and a hard reset recorded 0/0
and ``~ added.txt``; the numbers now match ``git diff --numstat`` between the states before and after, and the
answer carries one ``N files +I -D`` line."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.builders import answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


def _rows(root: Path) -> list[tuple[str, dict[str, int], str]]:
    """(op_type, diff_stats, short_diff) of every ledger row with diff stats, oldest first (straight from the file)."""
    conn = sqlite3.connect(f"{(root / '.codeplane' / 'ledger.db').as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT op_type, diff_stats, short_diff FROM operations WHERE diff_stats IS NOT NULL "
                            "ORDER BY op_id").fetchall()
    finally:
        conn.close()
    return [(str(op), json.loads(stats), str(short or "")) for op, stats, short in rows]


def _numstat(root: Path, old: str, new: str) -> dict[str, int]:
    """git's own count between two commits, as the ledger's diff_stats."""
    lines = [ln.split("\t") for ln in git(root, "diff", "--numstat", old, new).stdout.splitlines()]
    # A binary file counts as a file with no lines (numstat's ``-``).
    return {"files_changed": len(lines), "insertions": sum(int(a) for a, _, _ in lines if a != "-"),
            "deletions": sum(int(d) for _, d, _ in lines if d != "-")}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


async def _calls(root: Path, *steps: tuple[str, dict[str, Any]]) -> list[tuple[dict[str, Any], str]]:
    """Each step's (result, text) through the real server; the ledger is read once it has stopped."""
    out: list[tuple[dict[str, Any], str]] = []
    with running_server(root, "--profile", "full") as server:
        async with mcp_client(server) as client:
            for tool, args in steps:
                res = await client.call_tool(tool, args)
                assert not res.is_error, envelope(res)
                out.append((envelope(res)["result"], answer_text(res)))
    return out


async def test_a_fast_forward_merge_and_a_commit_record_the_added_files_and_their_lines(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    git(root, "checkout", "-q", "-b", "side")
    (root / "added.txt").write_text("1\n2\n3\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "add")
    git(root, "checkout", "-q", "main")
    (root / "new.py").write_text("x = 1\ny = 2\n")  # and a commit marks the file it adds (one server for both)
    [(merged, text), _] = await _calls(root, ("git_merge", {"ref": "side"}),
                                       ("git_stage_and_commit", {"message": "add new.py", "paths": ["new.py"]}))
    assert _rows(root) == [("git_merge", {"files_changed": 1, "insertions": 3, "deletions": 0}, "+ added.txt"),
                           ("git_stage_and_commit", {"files_changed": 1, "insertions": 2, "deletions": 0},
                            "+ new.py")]
    sha = _sha("1\n2\n3\n")
    assert merged["effect"]["paths"] == [{"path": "added.txt", "sha256": sha, "change": "added"}]
    lines = text.splitlines()
    assert f"A added.txt {sha[:12]}" in lines and "1 file +3 -0" in lines, text


async def test_a_branch_switch_records_each_files_lines_as_git_counts_them(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\nb\nc\n", "gone.txt": "x\ny\n", "bin.dat": b"\x00\x01"})
    git(root, "checkout", "-q", "-b", "side")
    (root / "a.txt").write_text("a\nB\nc\nd\n")
    (root / "gone.txt").unlink()
    (root / "new.txt").write_text("n\n")
    (root / "bin.dat").write_bytes(b"\x00\x02\x03")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "side")
    git(root, "checkout", "-q", "main")
    [(switched, text)] = await _calls(root, ("git_checkout", {"ref": "side"}))
    expected = _numstat(root, "main", "side")
    assert expected == {"files_changed": 4, "insertions": 3, "deletions": 3}  # the binary file: a file, no lines
    [(tool, stats, short)] = _rows(root)
    assert (tool, stats) == ("git_checkout", expected)
    assert short.splitlines() == ["~ a.txt", "~ bin.dat", "- gone.txt", "+ new.txt"]
    paths = {p["path"]: p for p in switched["effect"]["paths"]}
    # The hash each file had before, as write_source's delta gives it (none for a file the switch created).
    assert paths["gone.txt"] == {"path": "gone.txt", "sha256": "", "change": "deleted", "old_sha256": _sha("x\ny\n")}
    assert paths["a.txt"]["old_sha256"] == _sha("a\nb\nc\n") and "old_sha256" not in paths["new.txt"]
    assert "4 files +3 -3" in text.splitlines(), text


async def test_a_rebase_records_the_deleted_and_the_added_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n", "gone.txt": "g1\ng2\n"})
    git(root, "checkout", "-q", "-b", "feat")
    (root / "a.txt").write_text("a\nfeat\n")
    git(root, "commit", "-qam", "feat")
    git(root, "checkout", "-q", "main")
    git(root, "rm", "-q", "gone.txt")
    (root / "m.txt").write_text("m1\nm2\nm3\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "checkout", "-q", "feat")
    before = git(root, "rev-parse", "HEAD").stdout.strip()
    [(_, text)] = await _calls(root, ("git_rebase", {"action": "start", "upstream": "main", "confirm": True}))
    assert "state=done" in text, text
    [(tool, stats, short)] = _rows(root)
    assert (tool, stats) == ("git_rebase", _numstat(root, before, "HEAD"))
    assert stats == {"files_changed": 2, "insertions": 3, "deletions": 2}
    assert short.splitlines() == ["- gone.txt", "+ m.txt"]


async def test_a_stash_and_a_hard_reset_count_the_local_changes_they_move(tmp_path: Path) -> None:
    """The lines of a dirty file are only on disk: the tracker keeps them before the write replaces them."""
    root = make_repo(tmp_path / "r", {"a.txt": "a\nb\nc\n"})
    (root / "a.txt").write_text("a\nB\nc\nd\n")
    (root / "new.txt").write_text("n1\nn2\n")
    steps = await _calls(root, ("git_stash", {"action": "push", "include_untracked": True}),
                         ("git_stash", {"action": "pop"}),
                         ("git_reset", {"mode": "hard", "confirm": True}))
    assert _rows(root) == [
        ("git_stash", {"files_changed": 2, "insertions": 1, "deletions": 4}, "~ a.txt\n- new.txt"),
        ("git_stash", {"files_changed": 2, "insertions": 4, "deletions": 1}, "~ a.txt\n+ new.txt"),
        # new.txt is untracked: a hard reset leaves it
        ("git_reset", {"files_changed": 1, "insertions": 1, "deletions": 2}, "~ a.txt"),
    ]
    assert "2 files +4 -1" in steps[1][1].splitlines(), steps[1][1]
    assert steps[2][0]["effect"]["paths"][0]["old_sha256"] == _sha("a\nB\nc\nd\n")


async def test_lines_out_of_reach_are_said_not_counted(tmp_path: Path) -> None:
    """A file too large to read for counting is no measured 0: the answer says how many files the totals leave out."""
    big = "".join(f"line {i:07d}\n" for i in range(700_000))  # ~9 MiB, past the 8 MiB read bound
    many = {f"m/f{n:03}.txt": "m\n" for n in range(120)}  # more than an answer lists (100)
    root = make_repo(tmp_path / "r", {"big.txt": big, "small.txt": "s\n", **many})
    with (root / "big.txt").open("a") as handle:
        handle.write("one more\n")
    (root / "small.txt").write_text("s\nt\n")
    for path in many:
        (root / path).write_text("m\nn\n")
    steps = await _calls(root, ("git_stash", {"action": "push"}), ("git_stash", {"action": "pop"}))
    popped, text = steps[1]
    assert popped["effect"]["uncounted"] == 1 and popped["effect"]["insertions"] == 121, popped["effect"]
    assert "122 files +121 -0 (1 file not counted)" in text.splitlines(), text
    pushed = steps[0][0]["effect"]  # the stash holds the big file's lines: both blobs, counted
    assert (pushed.get("uncounted", 0), pushed["deletions"]) == (0, 122), pushed
    # The ledger row counts every file, not the 100 listed, and says the lines of one were out of reach.
    conn = sqlite3.connect(f"{(root / '.codeplane' / 'ledger.db').as_uri()}?mode=ro", uri=True)
    try:
        [(stats, detail)] = conn.execute("SELECT diff_stats, detail FROM operations WHERE op_type = 'git_stash' "
                                         "AND diff_stats IS NOT NULL ORDER BY op_id DESC LIMIT 1").fetchall()
    finally:
        conn.close()
    assert json.loads(stats) == {"files_changed": 122, "insertions": 121, "deletions": 0}
    assert json.loads(detail)["lines_uncounted"] == 1


async def test_a_line_ending_conversion_is_no_line_change(tmp_path: Path) -> None:
    """With ``core.autocrlf`` the file on disk has CRLF and its blob LF: a dirty file a reset discards is compared
    with the blob as checked out, and the hash before is the one read_source gave for the file on disk."""
    root = make_repo(tmp_path / "r", {"f.txt": "a\nb\n"})
    git(root, "config", "core.autocrlf", "true")
    git(root, "checkout", "-q", "-b", "side")
    (root / "f.txt").write_text("a\nb\nside\n")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "main")
    (root / "f.txt").unlink()
    git(root, "checkout", "--", "f.txt")
    assert (root / "f.txt").read_bytes() == b"a\r\nb\r\n"
    (root / "f.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    steps = await _calls(root, ("git_reset", {"mode": "hard", "confirm": True}), ("git_checkout", {"ref": "side"}))
    assert [stats for _, stats, _ in _rows(root)] == [{"files_changed": 1, "insertions": 0, "deletions": 1},
                                                      {"files_changed": 1, "insertions": 1, "deletions": 0}]
    crlf = hashlib.sha256(b"a\r\nb\r\n").hexdigest()
    assert steps[0][0]["effect"]["paths"] == [{"path": "f.txt", "sha256": crlf,
                                               "old_sha256": hashlib.sha256(b"a\r\nb\r\nc\r\n").hexdigest()}]
    assert steps[1][0]["effect"]["paths"][0]["old_sha256"] == crlf
