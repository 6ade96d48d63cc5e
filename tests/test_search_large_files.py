"""Files over ``index.max_file_bytes`` have no Tantivy document; ``search`` still finds what ``rg`` finds in them.

Before, a phrase on the last line of a 4 MB text file answered "no hits" (the file was only counted as oversized).
Now such files are scanned from disk after the indexed candidates; a binary one stays out, and one too large to
read (over ``LARGE_SCAN_MAX_BYTES``) is named in the answer instead of silently missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from codeplane.index.search import LARGE_SCAN_MAX_BYTES
from tests.builders import ServerHandle, answer_text, call, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

LIMIT = 4096  # index.max_file_bytes for this server: the "big" files below are over it
BIG_TEXT = "".join(f"filler line {i}\n" for i in range(600)) + "12345\nthe needle_big is here\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("large") / "repo", {
        "small.py": "NEEDLE = 'needle_big in a small file'\n",
        "data/big.txt": BIG_TEXT,
        "data/big.bin": b"\x00" * 8 + BIG_TEXT.encode(),
    })
    with open(repo / "data/huge.txt", "wb") as handle:  # text in its first 8 KiB, then sparse: never read whole
        handle.write(b"text\n" * 2000)
        handle.truncate(LARGE_SCAN_MAX_BYTES + 1)
    with open(repo / "data/huge.bin", "wb") as handle:  # binary: not searched and not named, as rg skips it
        handle.truncate(LARGE_SCAN_MAX_BYTES + 1)
    assert os.path.getsize(repo / "data/big.txt") > LIMIT
    with running_server(repo, "--set", f"index.max_file_bytes={LIMIT}") as handle:
        yield handle


async def test_a_phrase_in_an_oversized_text_file_is_found_and_a_binary_one_is_not(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("search", {"query": "needle_big", "syntax": "phrase"})
    found = envelope(res)["result"]
    assert [(h["path"], h["line"], h["column"]) for h in found["results"]] == [
        ("small.py", 1, 11), ("data/big.txt", 602, 5)]
    assert found["unsearched"] == ["data/huge.txt"]
    assert "not searched (over 64 MiB): data/huge.txt" in answer_text(res)


async def test_a_regex_without_a_literal_scans_oversized_files_too(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        found = await call(client, "search", {"query": r"^\d{5}$", "syntax": "regex"})
    assert [(h["path"], h["line"]) for h in found["results"]] == [("data/big.txt", 601)]


async def test_a_scope_that_excludes_the_huge_file_names_nothing(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("search", {"query": "needle_big", "syntax": "phrase",
                                                 "scope": {"paths": ["*.py"]}})
    found = envelope(res)["result"]
    assert [h["path"] for h in found["results"]] == ["small.py"] and "unsearched" not in found
    assert "not searched" not in answer_text(res)
