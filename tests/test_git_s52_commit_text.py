"""QA46 F5 and the blame header: a commit's text listed every committed path with the sha256 of its (unchanged)
work-tree file, 2.7 KB for 56 files where ``git commit`` prints 80 B, and with 300 new files said "… 300 more"
and then "… 200 more paths" about the same paths; a mixed reset repeated ``mode=mixed``. A commit (and a soft or
mixed reset) now says git's one-line stat, the first paths and one "… N more paths"; blame's header uses the
12-digit id like everything else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.builders import answer_text, call, envelope, git, make_repo, mcp_client, running_server, write_files

pytestmark = pytest.mark.anyio

_HEX12 = re.compile(r"\b[0-9a-f]{12}\b")


def _shortstat(repo: Path) -> tuple[int, int, int]:
    out = git(repo, "show", "--shortstat", "--format=", "HEAD").stdout
    numbers = [int(re.search(rf"(\d+) {word}", out).group(1)) if re.search(rf"(\d+) {word}", out) else 0  # type: ignore[union-attr]
               for word in ("file", "insertion", "deletion")]
    return numbers[0], numbers[1], numbers[2]


async def test_a_commit_says_its_stat_not_a_hash_per_file(tmp_path: Path) -> None:
    files = {f"pkg/mod_{i:02d}.py": f"x = {i}\n" for i in range(56)}
    repo = make_repo(tmp_path / "repo", files)
    write_files(repo, {path: text + "y = 0\n" for path, text in files.items()})
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("git_stage_and_commit", {"message": "i18n marker", "all": True})
    text, record = answer_text(res), envelope(res)["result"]
    new = git(repo, "rev-parse", "HEAD").stdout.strip()
    changed, plus, minus = _shortstat(repo)
    assert text.splitlines()[0] == f"[main {new[:12]}] i18n marker", text
    assert f"{changed} files changed, +{plus} -{minus}" in text and changed == 56, text
    # The header only: a ``HEAD old..new`` line said the new id again (s54, QA52 F8); the parent is the record's.
    assert _HEX12.findall(text) == [new[:12]] and head != new, text
    paths = [line for line in text.splitlines() if line.startswith("M ")]
    assert len(paths) == 10 and text.splitlines()[-1] == "… 46 more paths", text
    assert len(text.encode()) < 700, len(text.encode())
    assert record["oid"] == new  # the full id stays in the record


async def test_three_hundred_new_files_are_counted_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"})
    write_files(repo, {f"build_out/generated_file_{i}.py": f"x={i}\n" for i in range(300)})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            committed = answer_text(await client.call_tool("git_stage_and_commit", {"message": "gen", "all": True}))
            write_files(repo, {"a.py": "b\n"})
            await call(client, "git_stage", {"paths": ["a.py"]})
            single = answer_text(await client.call_tool("git_commit", {"message": "one"}))
            reset = await client.call_tool("git_reset", {"ref": "HEAD~1", "mode": "mixed"})
    assert "300 files changed, +300" in committed, committed
    assert [line for line in committed.splitlines() if "more" in line] == ["… 290 more paths"], committed
    assert "git_status" not in committed and len(committed.encode()) < 800, committed
    assert single.splitlines()[1:] == ["1 file changed, +1 -1", "a.py"], single
    reset_text = answer_text(reset)
    assert "mode=" not in reset_text and "a.py" in reset_text, reset_text
    assert not re.search(r"a\.py [0-9a-f]{12}", reset_text), reset_text  # a mixed reset changes no file
    assert envelope(reset)["result"]["mode"] == "mixed"


async def test_blame_header_uses_the_twelve_digit_id(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\nb\n"})
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_inspect", {"action": "blame", "path": "a.py"}))
    assert text.splitlines()[0] == f"blame a.py @ {head[:12]} (2 lines)", text
    assert head not in text
