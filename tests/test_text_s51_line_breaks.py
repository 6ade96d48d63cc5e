"""One line model everywhere: a line ends at ``\\n`` (``\\r\\n`` included), as git, ``rg`` and tree-sitter count;
a lone ``\\r`` is an ordinary character.

Before, the index's change hash and the write engine folded a lone CR into a line break while the line model
(``read_source``, search, the structural index, line counts) did not: turning a lone CR into LF (``mac2unix``,
an editor) was taken for a line-ending flip and never reindexed, so references, reads by symbol and line counts
pointed at the wrong lines and a rename failed with 4001; in a CR-only file ``write_source``'s line 1 was not
``read_source``'s.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from codeplane.core.config import MutationConfig
from codeplane.core.hashing import content_hash
from codeplane.core.layout import RepoLayout
from codeplane.index.pipeline import CONTENT_RULES_KEY
from codeplane.mutation import MutationEngine, UpdateSpan
from codeplane.mutation.document import Document
from tests.builders import ServerHandle, call, make_repo, mcp_client, running_server
from tests.index_helpers import running_index

pytestmark = pytest.mark.anyio

CR_LINE = b"import os\nqval = 1 # x\ry\nqval2 = qval\nprint(qval, qval2)\n"
LF_LINE = CR_LINE.replace(b"\r", b"\n")  # the same size: only a lone CR became LF


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("linebreaks") / "repo", {"seed.py": "x = 1\n"})
    with running_server(repo) as handle:
        yield handle


def test_only_crlf_folds_in_the_change_hash_and_the_engine_splits_on_lf_alone() -> None:
    assert content_hash(b"a\r\nb\r\n") == content_hash(b"a\nb\n")  # a line-ending flip moves no line
    assert content_hash(CR_LINE) != content_hash(LF_LINE)  # a lone CR turned LF adds one
    doc = Document.decode(b"a = 1\rb = 2\rc = 3\r", "cr.py")
    assert doc.line_count == 1 and doc.line(1) == "a = 1\rb = 2\rc = 3\r"
    assert Document.decode(b"a\r\nb\rc\n", "m.py").lines() == ["a", "b\rc"]


async def _listed_lines(client: Client, path: str) -> int | None:
    listed = await call(client, "list_files", {"pattern": path})
    entries = [e for e in listed.get("entries", []) if e["path"] == path]  # none yet: no entries key
    return entries[0].get("line_count") if entries else None


async def _until(client: Client, path: str, lines: int) -> None:
    deadline = time.monotonic() + 20
    while (seen := await _listed_lines(client, path)) != lines:
        assert time.monotonic() < deadline, f"{path} is still listed with {seen} lines, not {lines}"
        await anyio.sleep(0.2)


def _reference_lines(found: dict[str, Any], path: str) -> set[int]:
    return {hit["line"] for hit in found["results"] if hit["path"] == path}


async def test_a_lone_cr_turned_lf_outside_is_reindexed(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        (root / "stale.py").write_bytes(CR_LINE)
        await _until(client, "stale.py", 4)
        time.sleep(1.1)  # a new mtime second: the conversion below is not hidden by the stat check either
        (root / "stale.py").write_bytes(LF_LINE)
        await _until(client, "stale.py", 5)
        read = await call(client, "read_source", {"targets": [{"symbol": "stale.qval2"}]})
        found = await call(client, "search", {"query": "qval", "mode": "references"})
        plan = await call(client, "refactor_rename", {"symbol": "stale.qval", "new_name": "rval", "apply": True})
    assert read["files"][0]["content"] == "qval2 = qval\n"
    assert _reference_lines(found, "stale.py") >= {4, 5} and 3 not in _reference_lines(found, "stale.py")
    assert "applied" in plan, plan
    assert (root / "stale.py").read_bytes() == b"import os\nrval = 1 # x\ny\nqval2 = rval\nprint(rval, qval2)\n"


async def test_read_line_one_is_write_line_one_in_a_cr_only_file(server: ServerHandle) -> None:
    root = server.root
    (root / "cr.py").write_bytes(b"a = 1\rb = 2\rc = 3\r")
    async with mcp_client(server) as client:
        await _until(client, "cr.py", 1)
        read = await call(client, "read_source", {"targets": [{"path": "cr.py", "start_line": 1, "end_line": 1}]})
        await call(client, "write_source", {"edits": [{"path": "cr.py", "start_line": 1, "end_line": 1,
                                                       "expected_content": read["files"][0]["content"],
                                                       "new_content": "X = 0\n"}]})
    assert read["files"][0]["content"] == "a = 1\rb = 2\rc = 3\r"
    assert (root / "cr.py").read_bytes() == b"X = 0\n"


def test_a_row_an_older_build_left_with_the_old_lines_is_reindexed_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"stale.py": LF_LINE.decode()})
    with running_index(repo) as index:
        record = index.file_record("stale.py")
        assert record is not None and record.line_count == 5
    # What an older build left: the LF text's hash (a lone CR was folded), the CR text's 4 lines, rules 2.
    db = sqlite3.connect(RepoLayout(repo).index_db)
    with db:
        db.execute("UPDATE files SET line_count = 4 WHERE path = 'stale.py'")
        db.execute("UPDATE meta SET value = '2' WHERE key = ?", (CONTENT_RULES_KEY,))
    db.close()
    with running_index(repo) as index:
        record = index.file_record("stale.py")
        assert record is not None and record.line_count == 5


def test_a_dry_run_diff_numbers_lines_as_the_edit_does(tmp_path: Path) -> None:
    # A form feed (or a lone CR) is no line break: the file has two lines, and the diff changes the second.
    repo = make_repo(tmp_path / "repo", {"f.py": "a = 1\x0cb = 2\nc = 3\n"})
    engine = MutationEngine(repo, MutationConfig())
    delta = engine.apply([UpdateSpan(path="f.py", start_line=2, end_line=2, new_content="c = 4\n")], dry_run=True)
    assert delta.diff == "--- a/f.py\n+++ b/f.py\n@@ -1,2 +1,2 @@\n a = 1\x0cb = 2\n-c = 3\n+c = 4\n", delta.diff
