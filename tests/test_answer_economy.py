"""Issue 16: every tool's answer is lean, its text carries every handle the next call needs, and no answer
is large without a cursor. Driven through the real server with the official client, tool by tool."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.server.answers import short_fingerprint
from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    cpl_env,
    envelope,
    git,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio

#: Keys whose values a next call passes back: they must appear in the text the model reads. Ids no tool
#: accepts (a test attempt's batch, an artifact: logs for people and programs) are not handles.
_HANDLE_KEYS = {"cursor", "next_cursor", "def_uid", "file_sha256", "new_sha256", "fingerprint",
                "mutation_fingerprint", "failure_fingerprint", "recovery_point", "oid"}
_NOT_HANDLES = {"batch_id", "request_id", "artifact_id", "mutation_id"}
_MAX_TEXT_WITHOUT_CURSOR = 16 * 1024

_FILES = {
    "pyproject.toml": ("[project]\nname = 'pkg'\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"
                       "pythonpath = ['.']\n"),
    "pkg/__init__.py": "",
    "pkg/util.py": "def helper(x, scale=2):\n    return x * scale\n\n\nLIMIT = 3\n",
    "pkg/app.py": "from pkg.util import helper\n\n\ndef main():\n    return helper(1)\n",
    "tests/test_app.py": "from pkg.app import main\n\n\ndef test_main():\n    assert main() == 2\n\n\n"
                         "def test_fails():\n    assert main() == 3\n",
    "README.md": "# pkg\n",
}


def _handles(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _handles(v, k)
    elif isinstance(value, list):
        for item in value:
            yield from _handles(item, key)
    elif isinstance(value, str) and key not in _NOT_HANDLES and (key in _HANDLE_KEYS or key.endswith("_id")):
        yield key, value


def _empties(value: Any, where: str = "") -> Iterator[str]:
    """Fields a lean answer must not carry: null, [] or {}."""
    if isinstance(value, dict):
        for k, v in value.items():
            if v is None or v in ([], {}):
                yield f"{where}.{k}"
            yield from _empties(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _empties(item, f"{where}[{i}]")


def _has_cursor(value: Any) -> bool:
    return any(k in ("cursor", "next_cursor") for k, _ in _handles(value))


def _repo(base: Path) -> Path:
    root = make_repo(base / "repo", _FILES)
    bare = base / "remote.git"
    git(base, "init", "-q", "--bare", str(bare))
    git(root, "remote", "add", "origin", str(bare))
    git(root, "push", "-q", "origin", "main")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return _repo(tmp_path)


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """One server for the tests that only search and read (a start costs ~2 s of CPU); tests that write start
    their own on ``repo``."""
    root = _repo(tmp_path_factory.mktemp("answer_economy"))
    with running_server(root, env=cpl_env(home=tmp_path_factory.mktemp("xdg"))) as server:
        yield server


async def test_every_tool_answers_lean_with_its_handles_in_the_text(repo: Path) -> None:
    seen: dict[str, str] = {}
    texts: dict[str, str] = {}
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            listed = {t.name for t in (await client.list_tools()).tools}

            async def check(tool: str, args: dict[str, Any]) -> dict[str, Any]:
                res = await client.call_tool(tool, args)
                body, text = envelope(res), answer_text(res)
                seen[tool] = "error" if res.is_error else "ok"
                texts[tool] = text
                if res.is_error:
                    err = body["error"]
                    assert text.startswith(f"error {err['code']} {err['error']}"), (tool, text)
                    return {}
                record = body["result"]
                # An applied refactor's symbol is the definition as it was: its uid (name and path hashed)
                # names nothing any more.
                gone = record["symbol"]["def_uid"] if "applied" in record and "symbol" in record else None
                for key, value in _handles(record):
                    # A short sha and a short commit id are accepted back (write_source, git refs); a
                    # fingerprint is only compared, by its kind and first digits.
                    shown = value[:12] if "sha256" in key or key == "oid" else \
                        short_fingerprint(value) if key.endswith("fingerprint") else value
                    assert shown in text or value == gone, f"{tool}: {key}={value} is missing from the text:\n{text}"
                assert not list(_empties(record)), (tool, list(_empties(record)))
                # Every tool has a rendering written for a model: never the record dumped as JSON.
                assert '={"' not in text and '=[{"' not in text and not text.startswith("{"), (tool, text)
                assert len(text.encode()) <= _MAX_TEXT_WITHOUT_CURSOR or _has_cursor(record), tool
                return dict(record)

            await check("describe", {})
            await check("describe", {"action": "tool", "name": "search"})
            await check("map_repo", {})
            await check("list_files", {"limit": 2})
            await check("list_files", {"path": "pkg"})
            # Like `ls pkg`: the entries under the listed directory by their names; the head line says where.
            assert texts["list_files"].splitlines()[1:] == ["__init__.py  0 B 0L", "app.py  63 B 5L",
                                                            "util.py  57 B 5L"], texts["list_files"]
            page = await check("search", {"query": "helper", "syntax": "identifier", "limit": 1})
            assert page["pagination"]["next_cursor"]
            await check("search", {"query": "helper", "cursor": page["pagination"]["next_cursor"],
                                   "syntax": "identifier", "limit": 1})
            await check("search", {"query": "helper", "mode": "symbol"})
            await check("search", {"query": "pkg.util.helper", "mode": "references"})
            read = await check("read_source", {"targets": [{"path": "pkg/util.py"}]})
            sha = read["files"][0]["file_sha256"]
            await check("read_file_full", {"path": "README.md", "confirm": True})
            await check("write_source", {"edits": [{"path": "pkg/util.py", "action": "update", "old_text": "scale=2",
                                                    "new_text": "scale=2 ", "expected_file_sha256": sha}],
                                         "dry_run": True})
            wrote = await check("write_source", {"edits": [{"path": "pkg/util.py", "action": "update",
                                                            "old_text": "LIMIT = 3", "new_text": "LIMIT = 4",
                                                            "expected_file_sha256": sha}]})
            assert wrote["applied"] and wrote["delta"]["mutation_id"]
            await check("discover_test_targets", {})
            await check("inspect_affected_tests", {"changed_files": ["pkg/util.py"]})
            run = await check("run_test_targets", {"targets": ["tests/test_app.py"], "wait_sec": 120})
            assert run["state"] == "failed" and run["fingerprint"]
            # The re-run failed the same case again: the head line says the counts once, no attempt tallies.
            head = texts["run_test_targets"].splitlines()[0]
            assert re.fullmatch(rf"{run['run_id']}: 1 passed, 1 failed in [\d.]+s "
                                rf"fingerprint={run['fingerprint'][:15]}", head), texts["run_test_targets"]
            await check("get_test_run", {"run_id": run["run_id"]})
            await check("get_test_run", {"run_id": run["run_id"], "include": "cases"})
            await check("cancel_test_run", {"run_id": run["run_id"], "wait_sec": 0})
            await check("git_status", {})
            await check("git_diff", {})
            await check("git_log", {"limit": 5})
            await check("git_history", {"path": "pkg/util.py"})
            await check("git_inspect", {})
            await check("git_inspect", {"action": "blame", "path": "pkg/util.py"})
            await check("git_branch", {})
            await check("git_branch", {"action": "create", "name": "side"})
            await check("git_stage", {"paths": ["pkg/util.py"]})
            committed = await check("git_commit", {"message": "bump limit"})
            shown = await check("git_inspect", {})
            # Like `git show`: the commit as a log line and its message, then the diff from its parent (not
            # named, as git show does not: the record has it).
            assert texts["git_inspect"].splitlines()[:3] == [
                f"commit {committed['oid'][:12]} {shown['show']['commit']['author']['time'][:10]} Test", "bump limit",
                "--- modified pkg/util.py +1 -1"], texts["git_inspect"]
            assert shown["show"]["commit"]["parents"][0][:12] not in texts["git_inspect"], texts["git_inspect"]
            (repo / "pkg" / "app.py").write_text(_FILES["pkg/app.py"] + "#\n")
            pushed = await check("git_stash", {"action": "push"})
            # The entry pushed once, in ``result``; the list (the same entry again) is action=list's.
            assert "stashes" not in pushed and pushed["result"]["stash"]["name"] == "stash@{0}", pushed
            await check("git_stash", {"action": "list"})
            await check("git_stash", {"action": "pop"})
            await check("git_stage_and_commit", {"all": True, "message": "comment"})
            await check("git_remote", {})
            await check("git_push", {"remote": "origin"})
            await check("git_pull", {"remote": "origin", "branch": "main"})
            await check("git_submodule", {})
            await check("git_worktree", {})
            await check("git_rebase", {"action": "plan", "upstream": "side"})
            await check("git_merge", {"ref": "side"})
            await check("git_checkout", {"ref": "side"})
            await check("git_checkout", {"ref": "main"})
            await check("git_reset", {"ref": "HEAD", "mode": "soft"})
            renamed = await check("refactor_rename", {"symbol": "pkg.util.helper", "new_name": "assist"})
            await check("refactor_inspect", {"refactor_id": renamed["refactor_id"]})
            await check("refactor_impact", {"target": "pkg.util.helper"})
            moved = await check("refactor_move", {"from_path": "pkg/app.py", "to_path": "pkg/main.py"})
            await check("refactor_cancel", {"refactor_id": moved["refactor_id"]})
            await check("refactor_apply", {"refactor_id": renamed["refactor_id"]})
            at_once = await check("refactor_rename", {"symbol": "pkg.util.assist", "new_name": "aid", "apply": True})
            assert at_once["applied"]["applied_edits"] >= 2, at_once
            diff = await check("semantic_diff", {"limit": 1})
            assert diff["pagination"]["next_cursor"]
            await check("semantic_diff", {"limit": 1, "cursor": diff["pagination"]["next_cursor"]})
            await check("lint_tools", {})
            await check("lint_check", {"fix": True})
            await check("get_task", {"operations": 3})
            await check("reset_budget", {})
            await check("open_task", {})
            await check("close_task", {"outcome": "success"})
    missing = sorted(listed - seen.keys())
    assert not missing, f"tools not exercised here (add them): {missing}"
    failed = sorted(t for t, outcome in seen.items() if outcome == "error")
    assert not failed, f"tools that failed on valid input: {failed}"


async def test_ordinary_meta_is_tiny_and_hits_cost_about_an_rg_line(reader: ServerHandle) -> None:
    async with mcp_client(reader) as client:
        await client.call_tool("describe", {})
        res = await client.call_tool("search", {"query": "helper", "syntax": "identifier"})
        body = envelope(res)
        assert len(json.dumps(body["meta"], separators=(",", ":"))) <= 80
        text = answer_text(res)
        mixed = envelope(await client.call_tool("search", {"query": "pkg", "syntax": "identifier"}))["result"]
    # What every hit shares is said once: the language of a page of Python hits is the answer's, not each hit's;
    # hits in several languages keep their own.
    record = body["result"]
    assert record["language"] == "python" and len(record["results"]) > 1, record
    assert not [hit for hit in record["results"] if "language" in hit], record["results"]
    assert "language" not in mixed and {hit["language"] for hit in mixed["results"]} >= {"python", "markdown"}, mixed
    # Like `rg -n --trim`: a lone hit line without its indentation (pkg/app.py's `    return helper(1)`).
    rg = [re.sub(r"^([^:]+:\d+:)\s+", r"\1", line)
          for line in git(reader.root, "grep", "-n", "-w", "helper").stdout.splitlines()]
    assert any(line.endswith(":return helper(1)") for line in rg)
    # Every hit fits one page: no header; hits under their file's path, like `rg --heading`.
    hits, heading = [], ""
    for line in text.splitlines():
        if re.match(r"\d+:", line):
            hits.append(f"{heading}:{line}")
        else:
            heading = line
    assert sorted(hits) == sorted(rg) and len(rg) == body["result"]["pagination"]["total_estimate"]
    assert len(text) <= 1.2 * len("\n".join(rg))


async def test_a_definition_hit_says_only_what_its_line_and_path_do_not(reader: ServerHandle) -> None:
    """``13:[function click.globals.get_current_context #e653…] def get_current_context(`` repeated the kind and the
    name the line shows and the module its path does: 1.4-1.9 times ``rg -n``'s line."""
    async with mcp_client(reader) as client:
        res = await client.call_tool("search", {"query": "helper", "mode": "symbol"})
        uid = envelope(res)["result"]["results"][0]["symbol"]["def_uid"]
        # The form the text prints is one every symbol argument takes (it was 3007 with its '#').
        read = await call(client, "read_source", {"targets": [{"symbol": f"#{uid}"}]})
        impact = await call(client, "refactor_impact", {"target": f"#{uid}"})
    assert answer_text(res).splitlines() == ["pkg/util.py", f"1:[#{uid}] def helper(x, scale=2):"], answer_text(res)
    assert "def helper(x, scale=2):" in read["files"][0]["content"], read
    assert impact, impact


async def test_a_hit_is_shown_without_the_indentation_its_lines_share(reader: ServerHandle) -> None:
    async with mcp_client(reader) as client:
        lone = answer_text(await client.call_tool("search", {"query": "x * scale", "syntax": "phrase"}))
        framed = answer_text(await client.call_tool("search", {"query": "x * scale", "syntax": "phrase",
                                                               "context_lines": 1}))
    # A lone line like `rg --trim`; with context, the lines keep their indentation relative to one another.
    assert lone.splitlines() == ["pkg/util.py", "2:return x * scale"], lone
    assert framed.splitlines() == ["pkg/util.py", "1-def helper(x, scale=2):", "2:    return x * scale", "3-"], framed


async def test_a_short_sha_from_the_text_is_a_precondition_and_a_stale_one_refuses(repo: Path) -> None:
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("read_source", {"targets": [{"path": "pkg/util.py"}]})
            full = envelope(res)["result"]["files"][0]["file_sha256"]
            assert answer_text(res).splitlines()[0] == f"== pkg/util.py 1-5/5 {full[:12]}"
            edit = {"path": "pkg/util.py", "action": "update", "old_text": "LIMIT = 3", "new_text": "LIMIT = 5"}
            short = await client.call_tool("write_source", {"edits": [{**edit, "expected_file_sha256": full[:11]}]})
            assert short.is_error and envelope(short)["error"]["code"] == 1003, "fewer than 12 digits is a typo"
            stale = "0" * 12 if not full.startswith("0" * 12) else "f" * 12
            refused = await client.call_tool("write_source", {"edits": [{**edit, "expected_file_sha256": stale}]})
            assert refused.is_error and envelope(refused)["error"]["code"] == 5002
            assert (repo / "pkg" / "util.py").read_text() == _FILES["pkg/util.py"]
            ok = await client.call_tool("write_source", {"edits": [{**edit, "expected_file_sha256": full[:12]}]})
            assert not ok.is_error, answer_text(ok)
            now = envelope(ok)["result"]["delta"]["files"][0]["file_sha256"]
            # LIMIT is referenced nowhere: its importers' tests are selected (issue 22's fallback) on a line apart.
            first = answer_text(ok).splitlines()[0]
            assert first == f"pkg/util.py {now[:12]}", "a write says what the next write needs"
    assert "LIMIT = 5" in (repo / "pkg" / "util.py").read_text()
