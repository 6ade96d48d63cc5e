"""Issue 16: no answer's text is over 16 KB without a cursor, and following the cursors gives the whole answer,
exactly, each part once. Driven through the real server (``full`` profile) with the official client."""

from __future__ import annotations

import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from codeplane.server.tools.tests_run_models import MAX_FAILURES
from tests.builders import answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_LIMIT = 16 * 1024

#: ~100 KB of text with some non-ASCII characters (UTF-8 bytes, not characters, are what is bounded): more than
#: git_inspect once showed of a blob at all (64 KB).
_WORDS = ("\u00e9t\u00e9", "plain")
_BIG = "".join(f"row_{i:04d} = compute({_WORDS[i % 7 != 0]!r}, {i})  # line {i} of the generated module\n"
               for i in range(1400))
#: 1,500 short lines; the second commit changes every other one, so blame alternates commit per line.
_LINES = 1500
_BLAME_V1 = "".join(f"a{i} = {i}\n" for i in range(_LINES))
_BLAME_V2 = "".join(f"a{i} = {i}\n" if i % 2 else f"a{i} = {i} + 1\n" for i in range(_LINES))
#: Enough files that a listing of them all is well over 16 KB.
_MANY = {f"data/records/generated_record_module_number_{i:04d}.txt": f"{i}\n" for i in range(450)}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"gen/big.txt": _BIG, "gen/blame.py": _BLAME_V1, **_MANY})
    (root / "gen" / "blame.py").write_text(_BLAME_V2)
    (root / "gen" / "big.txt").write_text(_BIG.replace("compute(", "evaluate("))
    git(root, "commit", "-q", "-am", "second")
    return root


Call = Callable[[dict[str, Any]], Awaitable[tuple[dict[str, Any], str]]]


def _caller(client: Client, tool: str) -> Call:
    async def call(args: dict[str, Any]) -> tuple[dict[str, Any], str]:
        res = await client.call_tool(tool, args)
        body, text = envelope(res), answer_text(res)
        assert not res.is_error, (tool, text)
        return body["result"], text
    return call


async def _follow(call: Call, args: dict[str, Any], cursor_of: Callable[[dict[str, Any]], str | None]
                  ) -> list[dict[str, Any]]:
    """Every page of an answer: each text within the limit and naming the cursor the next call takes."""
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        record, text = await call({**args, "cursor": cursor} if cursor else args)
        assert len(text.encode()) <= _LIMIT, (len(text.encode()), text[-300:])
        pages.append(record)
        cursor = cursor_of(record)
        if cursor is None:
            return pages
        assert cursor in text, text[-300:]
        assert len(pages) < 100


def _cli_diff_lines(root: Path, *args: str) -> list[tuple[str, str]]:
    out = subprocess.run(["git", "diff", *args], cwd=root, capture_output=True, text=True, check=True).stdout
    lines, in_hunk = [], False
    for line in out.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line[:1] in ("+", "-", " ") and not line.startswith(("+++", "---")):
            lines.append((line[0], line[1:]))
        elif not line.startswith("\\"):
            in_hunk = False
    return lines


def _diff_lines(reports: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The diff lines of the pages in order; every hunk (a part of a split one too) counts its own lines."""
    lines = []
    for report in reports:
        for f in report["files"]:
            for h in f.get("hunks", []):
                body = [(ln.get("origin", " "), ln["content"].rstrip("\n")) for ln in h["lines"]]
                assert h["old_lines"] == sum(o != "+" for o, _ in body), h["header"]
                assert h["new_lines"] == sum(o != "-" for o, _ in body), h["header"]
                lines += body
    return lines


async def test_long_answers_come_in_parts_that_add_up_to_the_whole(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    with running_server(repo, "--profile", "full") as server:
        async with mcp_client(server) as client:
            inspect = _caller(client, "git_inspect")

            # A file at a revision: the blob's text in parts, together the file's bytes.
            pages = await _follow(inspect, {"ref": "HEAD~1", "path": "gen/big.txt"}, lambda r: r.get("next_cursor"))
            assert len(pages) >= 4 and [p["part"] for p in pages] == list(range(1, len(pages) + 1))
            assert "".join(p["show"]["blob"]["text"] for p in pages) == _BIG

            # A commit with a long diff (no line cap): its message once, its diff lines all, in git's order.
            pages = await _follow(inspect, {"ref": "HEAD", "max_lines": 100_000}, lambda r: r.get("next_cursor"))
            assert len(pages) >= 3
            assert pages[0]["show"]["commit"]["message"].strip() == "second"
            assert all("commit" not in p["show"] for p in pages[1:])
            shown = _diff_lines([p["show"]["diff"] for p in pages])
            assert shown == _cli_diff_lines(repo, "HEAD~1", "HEAD")
            # Its first part headed as git show heads it: the commit, its message, then the diff's totals (its
            # base, the only parent, not named: git show does not name it either; the record has it).
            _, text = await inspect({"ref": "HEAD", "max_lines": 100_000})
            stats, parent = pages[0]["show"]["diff"]["stats"], pages[0]["show"]["commit"]["parents"][0]
            assert text.splitlines()[2] == f"2 files, +{stats.get('insertions', 0)} -{stats.get('deletions', 0)}", \
                text[:300]
            assert parent[:12] not in text, text[:300]

            # The same diff through git_diff, between the two commits.
            pages = await _follow(_caller(client, "git_diff"), {"base": "HEAD~1", "target": head, "max_lines": 100_000},
                                  lambda r: r.get("next_cursor"))
            assert len(pages) >= 3 and _diff_lines(pages) == shown
            assert {p["stats"]["files_changed"] for p in pages} == {2}

            # Blame alternates commits line by line: each window fits, together they cover every line once.
            pages = await _follow(inspect, {"action": "blame", "path": "gen/blame.py", "limit": 2000},
                                  lambda r: r["blame"].get("pagination", {}).get("next_cursor"))
            assert len(pages) >= 2
            covered = [line for p in pages for h in p["blame"]["hunks"]
                       for line in range(h["start_line"], h["start_line"] + h["lines"])]
            assert covered == list(range(1, _LINES + 1))

            # A list action (tags here; recovery points, branches and stashes alike) in parts of whole entries.
            tags = sorted(f"release-candidate-with-a-long-descriptive-name-{i:03d}" for i in range(400))
            for tag in tags:
                git(repo, "tag", tag)
            pages = await _follow(inspect, {"action": "tags", "limit": 2000}, lambda r: r.get("next_cursor"))
            assert len(pages) >= 2 and {p["tags_total"] for p in pages} == {len(tags)}
            assert sorted(t["name"] for p in pages for t in p["tags"]) == tags

            # A cursor of another query is refused, not served.
            first, _ = await inspect({"ref": "HEAD~1", "path": "gen/big.txt"})
            res = await client.call_tool("git_inspect", {"ref": "HEAD", "path": "gen/big.txt",
                                                         "cursor": first["next_cursor"]})
            assert res.is_error and envelope(res)["error"]["code"] == 1005

            # The working tree's file: read_source parts by lines, read_file_full parts of one read.
            current = (repo / "gen" / "big.txt").read_text()
            pages = await _follow(_caller(client, "read_source"), {"targets": [{"path": "gen/big.txt"}]},
                                  lambda r: r.get("cursor"))
            assert len(pages) >= 4 and "".join(p["files"][0]["content"] for p in pages) == current
            # A line longer than a read (minified code, a data blob) continues inside the line, not after it.
            long = "head\n" + "".join(f"{_WORDS[i % 3 == 0]}{i}," for i in range(12_000)) + "\ntail\n"
            (repo / "gen" / "long.txt").write_text(long)
            pages, texts = [], []
            cursor = None
            while len(pages) < 20:
                args = {"targets": [{"path": "gen/long.txt"}], **({"cursor": cursor} if cursor else {})}
                record, text = await _caller(client, "read_source")(args)
                pages.append(record["files"][0])
                texts.append(text)
                cursor = record.get("cursor")
                if cursor is None:
                    break
            assert len(pages) >= 5 and "".join(p["content"] for p in pages) == long
            assert all(len(t.encode()) <= _LIMIT for t in texts)
            assert pages[0]["content"] == "head\n" and pages[1]["range"] == [2, 2] and pages[1]["partial"]
            column = 1 + len(pages[1]["content"])
            assert pages[2]["range"][0] == 2 and pages[2]["start_column"] == column, pages[2]
            assert texts[2].startswith(f"== gen/long.txt 2:{column}"), texts[2][:80]
            pages = await _follow(_caller(client, "read_file_full"), {"path": "gen/big.txt", "confirm": True},
                                  lambda r: r.get("next_cursor"))
            assert len(pages) >= 4 and "".join(p["content"] for p in pages) == current
            assert len({p["file_sha256"] for p in pages}) == 1

            # A listing asked for in one page of 1,000 comes in pages that fit, every file once.
            pages = await _follow(_caller(client, "list_files"), {"path": "data", "limit": 1000},
                                  lambda r: r.get("next_cursor"))
            assert len(pages) >= 2
            listed = [e["path"] for p in pages for e in p["entries"]]
            assert listed == sorted(_MANY) and pages[0]["total"] == len(_MANY)

            # A status of many new files: its lists in parts, every path once, the counts whole on each part.
            new = sorted(f"data/records/untracked_scratch_file_with_a_long_name_{i:04d}.tmp" for i in range(400))
            for path in new:
                (repo / path).write_text("x\n")
            pages = await _follow(_caller(client, "git_status"), {}, lambda r: r.get("next_cursor"))
            untracked = [u for p in pages for u in p.get("untracked", [])]
            assert len(pages) >= 2 and {p["untracked_total"] for p in pages} == {len(untracked)}
            assert [u for u in untracked if u.startswith("data/")] == new  # the server's own files aside


async def test_pages_by_items_hold_as_many_as_fit_and_the_cursor_resumes_after_them(repo: Path) -> None:
    with running_server(repo, "--profile", "full") as server:
        async with mcp_client(server) as client:
            # 100 hits seven lines apart with two context lines each are ~35 KB (windows that do not touch, so none
            # merge): fewer hits a page, every hit once, in order.
            pages = await _follow(_caller(client, "search"), {"query": _WORDS[0], "limit": 100, "context_lines": 2},
                                  lambda r: r.get("pagination", {}).get("next_cursor"))
            hits = [(h["path"], h["line"]) for p in pages for h in p["results"]]
            assert len(pages) >= 3 and all(len(p["results"]) < 100 for p in pages[:-1])
            lines = _BIG.count("\n")
            assert sorted(hits) == [("gen/big.txt", n) for n in range(1, lines + 1, 7)] and len(set(hits)) == len(hits)

            # A tree of 1,000 nodes a page is cut where the text is full; the next page starts after it.
            pages = await _follow(_caller(client, "map_repo"), {"include": ["structure"], "depth": 12,
                                                                "limit": 1000},
                                  lambda r: r["structure"].get("next_cursor"))
            nodes = [n["path"] for p in pages for n in p["structure"]["tree"]]
            assert len(pages) >= 2 and len(nodes) == len(set(nodes)) == pages[0]["structure"]["tree_total"]
            assert set(_MANY) <= set(nodes)


async def test_lint_diagnostics_come_in_pages_that_fit(tmp_path: Path) -> None:
    imports = "".join(f"import generated_module_with_a_rather_long_name_{i:03d}\n" for i in range(300))
    root = make_repo(tmp_path / "repo", {"pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\n"
                                                           "select = ['F']\n",
                                         "pkg/__init__.py": "", "pkg/unused.py": imports})
    with running_server(root, "--profile", "full") as server:
        async with mcp_client(server) as client:
            pages = await _follow(_caller(client, "lint_check"), {"tools": ["ruff"], "limit": 500},
                                  lambda r: r.get("next_cursor"))
            found = [(d["path"], d["line"]) for p in pages for d in p["diagnostics"]]
            assert len(pages) >= 2 and pages[0]["total"] == 300
            assert found == [("pkg/unused.py", n) for n in range(1, 301)]
            counts = [len(p["diagnostics"]) for p in pages]
            assert [p.get("offset", 0) for p in pages] == [sum(counts[:i]) for i in range(len(pages))]


_FAILING = 30


async def test_a_test_run_names_the_failures_that_fit_and_pages_the_rest(tmp_path: Path) -> None:
    cases = "".join(f"def test_case_{i:02d}():\n    raise ValueError('case {i:02d} ' + 'went wrong in a long way ' "
                    f"* 30)\n\n\n" for i in range(_FAILING))
    root = make_repo(tmp_path / "repo", {"pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.pytest.ini_options]\n"
                                                           "testpaths = ['tests']\n",
                                         "tests/test_many.py": cases})
    with running_server(root, "--profile", "full") as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("run_test_targets", {"targets": ["tests/test_many.py"], "wait_sec": 120})
            run, text = envelope(res)["result"], answer_text(res)
            assert run["state"] == "failed" and run["failures_total"] == _FAILING, text[:500]
            # Fewer than the record's usual MAX_FAILURES: they would not fit the text.
            assert len(text.encode()) <= _LIMIT and 0 < len(run["failures"]) < MAX_FAILURES < _FAILING
            assert f"{_FAILING - len(run['failures'])} more failing cases" in text
            # The rest, with their detail, page by page through the call the text names.
            pages = await _follow(_caller(client, "get_test_run"), {"run_id": run["run_id"], "include": "cases"},
                                  lambda r: r.get("next_cursor"))
            failing = [c["case_id"] for p in pages for c in p.get("cases", []) if c["outcome"] == "failed"]
            assert len(failing) == len(set(failing)) == _FAILING


async def test_a_chain_of_parts_stays_on_its_answer_when_the_same_call_is_made_again_after_a_change(
        tmp_path: Path) -> None:
    # The part cursor came from the call's arguments alone: the same call after the file changed took over the
    # earlier chain's id, and that chain went on into the new answer (188 old lines then 612 new, no error).
    old = "".join(f"OLD line {n:05} " + "x" * 60 + "\n" for n in range(800))
    new = old.replace("OLD", "NEW").replace("x" * 60, "y" * 60)
    root = make_repo(tmp_path / "repo", {"doc.txt": old})
    with running_server(root) as server:
        async with mcp_client(server) as client:
            call = _caller(client, "read_file_full")
            first, _ = await call({"path": "doc.txt", "confirm": True})
            (root / "doc.txt").write_text(new)
            again, _ = await call({"path": "doc.txt", "confirm": True})
            assert first["next_cursor"] != again["next_cursor"]
            pages = [first]
            while pages[-1].get("next_cursor"):
                record, _ = await call({"path": "doc.txt", "confirm": True, "cursor": pages[-1]["next_cursor"]})
                pages.append(record)
            assert "".join(p["content"] for p in pages) == old
            rest = await _follow(call, {"path": "doc.txt", "confirm": True, "cursor": again["next_cursor"]},
                                 lambda r: r.get("next_cursor"))
            assert again["content"] + "".join(p["content"] for p in rest) == new


async def test_a_status_in_parts_says_once_what_its_limit_cut(tmp_path: Path) -> None:
    # Each part counted only its own entries: "… 1,001 more untracked" on part 1 and "… 1,004 more" on the last
    # part, where the limit had cut 200.
    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    for n in range(1200):
        (root / f"untracked_dir_with_a_fairly_long_name/untracked_file_number_{n:04}.txt").parent.mkdir(exist_ok=True)
        (root / f"untracked_dir_with_a_fairly_long_name/untracked_file_number_{n:04}.txt").write_text("x\n")
    with running_server(root) as server:
        async with mcp_client(server) as client:
            call = _caller(client, "git_status")
            texts: list[str] = []
            listed = 0
            record, text = await call({"limit": 1000, "untracked": "all"})
            while True:
                texts.append(text)
                listed += len(record.get("untracked", []))
                if not record.get("next_cursor"):
                    break
                record, text = await call({"limit": 1000, "untracked": "all", "cursor": record["next_cursor"]})
            assert len(texts) >= 2 and listed == 1000
            said = [line for t in texts for line in t.splitlines() if line.startswith("… ")]
            assert said == ["… 200 more untracked (narrow with paths, or raise limit)"], said
            assert said[0] in texts[-1]
