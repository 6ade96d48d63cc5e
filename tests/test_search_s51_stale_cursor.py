"""A search cursor continued after an edit (QA42 §3): hits must never carry line numbers the file no longer has.

A page that would serve hits of a file the chain read before it (the scan stopped inside it, or produced its hits
ahead) refuses with 1005 when that file changed since, as ``read_source`` refuses a stale continuation; a file the
chain has finished, or not reached yet, does not stop it (the latter is read as it is when reached).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_QUERY = {"query": "needle", "syntax": "identifier"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path / "repo", {
        "dense.py": "needle = 1\nneedle = 2\nneedle = 3\nneedle = 4\n",
        "sparse.py": "a = 0\nb = 0\nneedle = 5\n" + "c = 0\n" * 40,
        "far.py": "needle = 6\n" + "c = 0\n" * 200,  # the longest file: BM25 ranks it last
    })
    with running_server(repo) as handle:
        yield handle


def _on_disk(root: Path, hits: list[dict[str, Any]]) -> None:
    for hit in hits:
        line = (root / hit["path"]).read_text().split("\n")[hit["line"] - 1]
        assert line == hit["snippet"], hit


def _prepend(root: Path, path: str, text: str) -> None:
    target = root / path
    target.write_text(text + target.read_text())


async def test_a_page_inside_a_file_edited_since_it_was_read_is_refused(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        first = await call(client, "search", {**_QUERY, "limit": 1, "scope": {"paths": ["dense.py"]}})
        assert [h["line"] for h in first["results"]] == [1]
        cursor = first["pagination"]["next_cursor"]
        _prepend(server.root, "dense.py", "# moved\n# down\n")
        error = await call_error(client, "search", {**_QUERY, "limit": 1, "scope": {"paths": ["dense.py"]},
                                                    "cursor": cursor})
        assert error["code"] == 1005
        assert "dense.py" in error["message"] and "search again" in error["message"]
        again = await call(client, "search", {**_QUERY, "limit": 10, "scope": {"paths": ["dense.py"]}})
        assert [h["line"] for h in again["results"]] == [3, 4, 5, 6]
        _on_disk(server.root, again["results"])


async def test_a_page_after_a_finished_file_was_edited_reads_the_rest_from_disk(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        first = await call(client, "search", {**_QUERY, "limit": 4})
        assert [(h["path"], h["line"]) for h in first["results"]] == [("dense.py", n) for n in (1, 2, 3, 4)]
        # dense.py was served whole (sparse.py's hit was produced ahead, to know a next page exists); far.py was
        # not reached yet.
        _prepend(server.root, "dense.py", "# moved\n")
        _prepend(server.root, "far.py", "# moved\n# down\n")
        second = await call(client, "search", {**_QUERY, "limit": 4, "cursor": first["pagination"]["next_cursor"]})
        assert [(h["path"], h["line"]) for h in second["results"]] == [("sparse.py", 3), ("far.py", 3)]
        _on_disk(server.root, second["results"])


async def test_a_page_holding_a_hit_produced_ahead_from_a_file_edited_since_is_refused(
        server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        first = await call(client, "search", {**_QUERY, "limit": 4})
        _prepend(server.root, "sparse.py", "# moved\n")
        error = await call_error(client, "search", {**_QUERY, "limit": 4,
                                                    "cursor": first["pagination"]["next_cursor"]})
        assert error["code"] == 1005 and error["details"]["path"] == "sparse.py"
