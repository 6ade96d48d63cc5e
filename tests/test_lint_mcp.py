"""lint_tools and lint_check through the real server and the official MCP client: the text the model reads,
fixes that land as one counted mutation visible to the index, pages and typed errors."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from codeplane.core.hashing import sha256_bytes
from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    cpl_env,
    envelope,
    make_repo,
    mcp_client,
    running_server,
    start_server,
)

pytestmark = pytest.mark.anyio

FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F', 'I']\n\n"
                      "[tool.mypy]\nfiles = ['pkg']\n",
    "pkg/__init__.py": "",
    "pkg/a.py": "import sys\nimport os\n\n\ndef f(x: int) -> str:\n    return x\n\n\nprint(sys.argv)\n",
    "pkg/b.py": "import json\nimport re\n\nvalue = json.dumps(1)\n",
    "web/package.json": '{"name": "web"}\n',
    "web/eslint.config.js": "export default [];\n",
}

@pytest.fixture(scope="module")
def checker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """One server for the tests that only check (no fix: the files stay as FILES has them); a start costs ~2 s
    of CPU. The fix and the timeouts start their own."""
    root = make_repo(tmp_path_factory.mktemp("lint_mcp") / "repo", FILES)
    with running_server(root, env=cpl_env(home=tmp_path_factory.mktemp("xdg"))) as server:
        yield server


_LINE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<code>\S+) (?P<msg>.+) \[(?P<tool>[^\]]+)\]")


async def _call(client: Any, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    res = await client.call_tool(tool, args)
    assert not res.is_error, answer_text(res)
    return envelope(res)["result"], answer_text(res)


async def test_lint_tools_and_lint_check_answer_in_the_model_text(checker: ServerHandle) -> None:
    async with mcp_client(checker) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert {"lint_tools", "lint_check"} <= listed

        linters, text = await _call(client, "lint_tools", {})
        names = {(i["name"], i["root"]): i for i in linters["linters"]}
        assert set(names) == {("eslint", "web"), ("mypy", "."), ("ruff", ".")}
        assert names[("ruff", ".")]["found"] and names[("ruff", ".")]["can_fix"]
        assert "found" not in names[("eslint", "web")]  # lean: false is the default
        assert "eslint web/ web/eslint.config.js" in text and "MISSING - `npm install" in text

        notes: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            notes.append((progress, total, message))

        res = await client.call_tool("lint_check", {}, progress_callback=on_progress)
        report, text = envelope(res)["result"], answer_text(res)
        # One progress notification per linter run that ended (eslint is missing: nothing runs).
        assert [(p, t) for p, t, _ in notes] == [(1.0, 2.0), (2.0, 2.0)]
        assert {m for _, _, m in notes} == {"mypy finished", "ruff finished"}
        diags = report["diagnostics"]
        lines = [m.groupdict() for m in map(_LINE.match, text.splitlines()) if m]
        assert [(m["path"], int(m["line"]), int(m["col"]), m["code"]) for m in lines] == [
            (d["path"], d["line"], d["column"], d["code"]) for d in diags]
        assert {(d["path"], d["code"], d["tool"]) for d in diags} == {
            ("pkg/a.py", "F401", "ruff"), ("pkg/a.py", "I001", "ruff"), ("pkg/a.py", "return-value", "mypy"),
            ("pkg/b.py", "F401", "ruff")}
        assert {r["tool"]: r["status"] for r in report["runs"]} == {"eslint": "missing", "mypy": "ok",
                                                                     "ruff": "ok"}
        # The same repository and call answer the same bytes: no timings, and a cursor-id of what was found.
        assert answer_text(await client.call_tool("lint_check", {})) == text
        # Errors only: the total says their count, a zero count is not said (s54, QA52 F9).
        assert text.splitlines()[-1] == "4 diagnostic(s): 3 fixable ([*])", text


async def test_fix_is_one_mutation_the_index_and_the_task_see(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("lint_check", {"tools": ["ruff"], "fix": True})
            body, text = envelope(res), answer_text(res)
            report = body["result"]
            fix = report["fix"]
            assert [f["path"] for f in fix["files"]] == ["pkg/a.py", "pkg/b.py"]
            # The mutation id stays in the record (no tool takes it back); the text has the files and their hashes.
            assert fix["mutation_id"] not in text and fix["delta"]["mutation_id"] == fix["mutation_id"]
            for fixed in fix["files"]:
                on_disk = sha256_bytes((root / fixed["path"]).read_bytes())
                assert fixed["new_sha256"] == on_disk
                assert any(line.startswith(f"{fixed['path']} ") and line.endswith(f" by ruff {on_disk[:12]}")
                           for line in text.splitlines()), text
            assert (root / "pkg/a.py").read_text().startswith("import sys\n\n\ndef f")
            assert (root / "pkg/b.py").read_text() == "import json\n\nvalue = json.dumps(1)\n"
            assert "diagnostics" not in report  # what was left: nothing ruff reports
            task = (await call(client, "get_task", {}))["task"]
            assert task["counters"]["mutation_count"] == 1 and task["last_mutation_fingerprint"]

            # The index already serves the fixed text, with the hash the fix reported.
            read = await call(client, "read_source", {"targets": [{"path": "pkg/b.py"}]})
            assert read["files"][0]["file_sha256"] == fix["files"][1]["new_sha256"]
            assert (await call(client, "get_task", {}))["task"]["counters"]["mutation_count"] == 1

            # Nothing left to fix: no batch, no mutation.
            again, _ = await _call(client, "lint_check", {"tools": ["ruff"], "fix": True})
            assert "fix" not in again


async def test_pages_and_bad_input_over_mcp(checker: ServerHandle) -> None:
    async with mcp_client(checker) as client:
        first, text = await _call(client, "lint_check", {"limit": 3})
        assert len(first["diagnostics"]) == 3 and first["total"] == 4
        assert f"next cursor: {first['next_cursor']}" in text
        rest, _ = await _call(client, "lint_check", {"cursor": first["next_cursor"]})
        assert len(rest["diagnostics"]) == 1 and rest["offset"] == 3 and "next_cursor" not in rest

        assert (await call_error(client, "lint_check", {"cursor": "lint_0:1"}))["code"] == 1005
        err = await call_error(client, "lint_check", {"tools": ["pylint"]})
        assert err["code"] == 1003 and "ruff" in err["details"]["available"]
        assert (await call_error(client, "lint_check", {"paths": ["../x.py"]}))["code"] == 5001
        assert (await call_error(client, "lint_check", {"paths": ["nope.py"]}))["code"] == 5004
        assert (await call_error(client, "lint_check", {"limit": 0}))["code"] == 1003


async def test_a_hanging_linter_times_out_at_the_configured_limit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    fake = root / ".venv" / "bin" / "ruff"  # the project's own ruff comes first; this one never answers
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\nexec sleep 300\n")
    fake.chmod(0o755)
    with running_server(root, "--set", "lint.timeout_sec=1.5") as server:
        async with mcp_client(server) as client:
            report, text = await _call(client, "lint_check", {"tools": ["ruff"]})
            (run,) = report["runs"]
            assert run["status"] == "timed_out" and "killed after 1.5s (lint.timeout_sec)" in run["message"]
            assert "ruff: timed_out" in text and "diagnostics" not in report


async def test_stopping_the_server_kills_a_running_linter(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    pidfile = tmp_path / "linter.pid"
    fake = root / ".venv" / "bin" / "ruff"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 300\n")
    fake.chmod(0o755)
    server = start_server(root)
    took: float | None = None
    try:
        # The client's own follow-up requests meet a stopped server as it closes: that is not what is tested.
        with contextlib.suppress(Exception):
            async with mcp_client(server) as client, anyio.create_task_group() as group:
                async def lint() -> None:
                    with contextlib.suppress(Exception):
                        await client.call_tool("lint_check", {"tools": ["ruff"]})

                group.start_soon(lint)
                with anyio.fail_after(30):
                    while not pidfile.exists() or not pidfile.read_text().strip():
                        await anyio.sleep(0.05)
                began = time.monotonic()
                assert server.stop(timeout=30) is not None
                took = time.monotonic() - began
                group.cancel_scope.cancel()
    finally:
        server.stop()
    assert took is not None and took < 15  # not lint.timeout_sec (120 s)
    linter = int(pidfile.read_text())
    assert not Path(f"/proc/{linter}").exists() or "Z" in Path(f"/proc/{linter}/stat").read_text().split(")")[-1][:3]
