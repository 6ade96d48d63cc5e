"""Hostile patterns must not hang or freeze the server (QA47 #1 and #2).

- ``search`` ``(?:[^']|[^'])*$`` (regex) never answered: the compile-time probe ran the user's regex over a
  1,240-character line with no time limit, holding the GIL. ``(?(DEFINE)(?<x>(?&x)))(?&x)`` grew ~560 MB per call
  and answered 9001 MemoryError. Both are 3006 now, in about a second, and other calls go on meanwhile.
- ``list_files`` ``*a*a*...*b`` (31 stars) over one 200-character name froze the whole server (``/health`` too):
  ``pathspec``'s backtracking regex, matched by ``re``. Globs now match in time linear in the path, with the same
  selection (``scope_spec`` stays the reference).
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.index.globs import path_matcher, scope_spec
from codeplane.index.query import compile_query
from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server
from tests.index_helpers import all_hits, running_index

pytestmark = pytest.mark.anyio

BACKTRACKING_REGEX = "(?:[^']|[^'])*$"
RECURSIVE_REGEX = "(?(DEFINE)(?<x>(?&x)))(?&x)"
HOSTILE_GLOB = "*a" * 31 + "*b"
LONG_NAME = "a" * 200


async def _health_meanwhile(server: ServerHandle, hostile: Any) -> tuple[Any, float]:
    """Run ``hostile()`` (a tool call), ask ``/health`` while it is in flight; (its answer, /health's time)."""
    answers: list[Any] = []

    async def run() -> None:
        # About a second of CPU; generous for a loaded test machine. Without the fix the call never answers.
        with anyio.fail_after(45):
            answers.append(await hostile())

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await anyio.sleep(0.3)
        began = time.monotonic()
        # A frozen server never answers.
        health = await anyio.to_thread.run_sync(lambda: httpx.get(server.base_url + "/health", timeout=15))
        took = time.monotonic() - began
        assert health.status_code == 200, health.text
    return answers[0], took


async def test_a_backtracking_regex_is_refused_while_health_answers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 'quoted'\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            error, health_took = await _health_meanwhile(server, lambda: call_error(
                client, "search", {"query": BACKTRACKING_REGEX, "syntax": "regex"}))
            assert error["code"] == 3006 and "backtrack" in error["message"], error
            assert health_took < 15, health_took
            # The server is still whole: a normal search answers after it.
            found = await call(client, "search", {"query": "quoted", "syntax": "identifier"})
            assert [h["path"] for h in found["results"]] == ["a.py"]


async def test_a_regex_recursing_before_it_reads_is_refused_not_an_internal_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = (1, (2, 3))\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            error = await call_error(client, "search", {"query": RECURSIVE_REGEX, "syntax": "regex"})
            assert error["code"] == 3006 and "recurses" in error["message"], error
            # Recursion that reads as it goes is a real search and still answers.
            found = await call(client, "search", {"query": r"\((?:[^()]|(?R))*\)", "syntax": "regex",
                                                  "scope": {"paths": ["*.py"]}})
            assert [(h["path"], h["column"]) for h in found["results"]] == [("a.py", 5)]


def test_the_recursion_probe_is_refused_not_an_internal_error() -> None:
    """The runaway recursion is refused (3006), not a 9001 MemoryError. Its memory is not bounded: stopped after
    0.1 s on a quiet machine it held tens of MB, but CI runs peaked at 293 and 515 MB (the budget's check comes
    late under load), so only the peak is printed, for the record (README: a known limit)."""
    code = ("import resource; from codeplane.index.query import compile_query\n"
            "from codeplane.core.errors import CodePlaneError\n"
            f"try:\n    compile_query({RECURSIVE_REGEX!r}, 'regex')\nexcept CodePlaneError as e:\n    print(e.code)\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    code_seen, peak_mb = out.stdout.split()
    assert code_seen == "3006" and int(peak_mb) > 0, out.stdout


def test_a_regex_recursing_only_after_some_text_is_refused_when_scanned(tmp_path: Path) -> None:
    """The probes lack a ``q``: the recursion starts on the file's line, where the scan refuses it (it answered
    9001 MemoryError)."""
    pattern = "q" + RECURSIVE_REGEX
    compile_query(pattern, "regex")  # passes the probes
    repo = make_repo(tmp_path / "repo", {"q.txt": "q\n"})
    with running_index(repo) as index, pytest.raises(CodePlaneError) as refused:
        all_hits(index, pattern, syntax="regex")
    assert refused.value.code == 3006, refused.value


async def test_a_hostile_glob_does_not_freeze_the_server(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"sub/" + LONG_NAME: "needle\n", "sub/ab": "needle\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            listed, health_took = await _health_meanwhile(server, lambda: call(
                client, "list_files", {"pattern": HOSTILE_GLOB}))
            assert listed.get("entries", []) == [] and health_took < 15, (listed, health_took)
            found = await call(client, "search", {"query": "needle", "syntax": "identifier",
                                                  "scope": {"paths": [HOSTILE_GLOB]}})
            assert found.get("results", []) == [], found
            # The same glob still selects what it names: a name with the a's in order and a final b.
            named = "*a*a*b"
            listed = await call(client, "list_files", {"pattern": named})
            assert listed.get("entries", []) == [], listed  # "ab" holds one a only
            found = await call(client, "search", {"query": "needle", "syntax": "identifier",
                                                  "scope": {"paths": ["*a*b"]}})
            assert [h["path"] for h in found["results"]] == ["sub/ab"], found


def test_the_glob_matcher_is_linear_in_the_path() -> None:
    """In a child process: a matcher holding the GIL would stall this test's own timeout."""
    code = ("import time; from codeplane.index.globs import path_matcher\n"
            f"selected = path_matcher([{HOSTILE_GLOB!r}, '*a*a*a*a*a*a*a*a*b', '**/a/**/a/**/a/**/a/**/b'])\n"
            "began = time.monotonic()\n"
            "assert not selected('sub/' + 'a' * 200) and not selected('a/' * 2000)\n"
            "assert selected('sub/' + 'a' * 200 + 'b')\n"
            "print(time.monotonic() - began)\n")
    # Tenths of a second (generous bounds for a loaded machine); ``re`` took hours for the first glob.
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert float(out.stdout) < 10, out.stdout


def test_the_linear_matcher_selects_what_the_gitignore_spec_selects() -> None:
    """Random globs of every construct against random paths, long enough to leave ``re`` for the automaton
    (``scope_spec`` is the reference, matched by ``re``: few stars keep it fast)."""
    rng = random.Random(53)
    atoms = ["*", "**", "?", "a", "b", "/", ".", "[ab]", "[!a]", "[a-c]", "\\*", "**/", "/**", "é", "{a,b}"]
    alphabet = "ab.cé*"
    checked = 0
    for _ in range(400):
        globs = ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 2))]
        globs = [("!" if rng.random() < 0.2 else "") + glob for glob in globs]
        try:
            spec, selected = scope_spec(globs), path_matcher(globs)
        except CodePlaneError:
            continue
        assert spec is not None and selected is not None
        if sum(glob.count("*") for glob in globs) > 4:
            continue
        for _ in range(20):
            # Canonical paths (no empty, ``.`` or ``..`` part), the only ones a matcher is asked about.
            parts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(rng.randint(1, 5))]
            path = "/".join(part if part.strip(".") else part + "a" for part in parts)
            assert selected(path) == spec.match_file(path), (globs, path)
            checked += 1
    assert checked > 3000
