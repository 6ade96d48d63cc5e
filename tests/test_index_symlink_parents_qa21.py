"""A path below a symlinked directory is no repository file (QA21 #1).

git stores the symlink itself and the walk never descends into one, but the watcher's recursive watch follows
links: with ``cyc/up -> ..`` a new ``z.txt`` was also reported as ``cyc/up/z.txt``, and ``cyc/up2 -> ../..``
put files from outside the repository into the index (search served them; the read tools refused them). A
restart's reconcile kept such rows, since ``lstat`` of ``cyc/up/z.txt`` follows the link in its parent.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from tests.builders import call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


async def _paths(client: Any, query: str) -> list[str]:
    found = await call(client, "search", {"query": query, "syntax": "identifier", "limit": 100})
    return sorted(h["path"] for h in found.get("results", []))  # (left out when empty)


async def _listed(client: Any) -> list[str]:
    found = await call(client, "list_files", {"depth": 20, "limit": 1000})
    return sorted(e["path"] for e in found.get("entries", []) if e["path"] != ".cplignore")  # the server writes it


async def _until(client: Any, query: str, path: str, timeout: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        paths = await _paths(client, query)
        if path in paths or time.monotonic() > deadline:
            return paths
        await asyncio.sleep(0.2)


async def test_the_watcher_indexes_no_path_through_a_symlink_to_an_ancestor(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = make_repo(tmp_path / "repo", {"a.txt": "alpha\n", "cyc/keep.txt": "keep\n"})
    os.symlink("..", repo / "cyc/up")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            await _watched(client, repo, outside, tmp_path)


async def _watched(client: Any, repo: Path, outside: Path, tmp_path: Path) -> None:
    (repo / "z.txt").write_text("zebra\n")
    assert await _until(client, "zebra", "z.txt") == ["z.txt"]
    os.symlink("../..", repo / "cyc/up2")  # the directory holding the repository: outside it
    deadline = time.monotonic() + 30
    while "cyc/up2" not in await _listed(client) and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    (outside / "s3.txt").write_text("secretqq outside\n")
    (tmp_path / "s4.txt").write_text("secretqq parent\n")
    (repo / "marker.txt").write_text("markerqq\n")  # after the outside writes: its batch comes no earlier
    assert await _until(client, "markerqq", "marker.txt") == ["marker.txt"]
    await asyncio.sleep(1.0)  # a later batch of the followed link's events would land by now
    assert await _paths(client, "secretqq") == []
    assert await _paths(client, "zebra") == ["z.txt"]
    listed = await _listed(client)
    assert listed == ["a.txt", "cyc/keep.txt", "cyc/up", "cyc/up2", "marker.txt", "z.txt"], listed


async def test_a_restart_drops_rows_below_a_directory_that_became_a_symlink(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"z.txt": "zebra\n", "cyc/up/z.txt": "zebra\n"})
    with running_server(repo, "--set", "index.watch=false") as server:
        async with mcp_client(server) as client:
            assert await _paths(client, "zebra") == ["cyc/up/z.txt", "z.txt"]
    # While the server is down the directory becomes a link to the root, which holds a z.txt too.
    shutil.rmtree(repo / "cyc/up")
    os.symlink("..", repo / "cyc/up")
    with running_server(repo, "--set", "index.watch=false") as server:
        async with mcp_client(server) as client:
            assert await _paths(client, "zebra") == ["z.txt"]
            assert await _listed(client) == ["cyc/up", "z.txt"]
