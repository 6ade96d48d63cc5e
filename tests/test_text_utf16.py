"""Text saved as UTF-16 with a byte-order mark (Windows editors, PowerShell, SQL Server scripts) is text.

Before, its NUL bytes made it binary to the index: ``read_source`` answered 5008 and ``search`` found nothing,
while ``rg`` transcodes and searches it and ``write_source`` could already edit it (``mutation.document``).
Now ``repo.content`` decodes it as the engine does, so a search hit's line and column, a read's text and an
edit's ``old_text`` all speak of the same characters, and the file keeps its encoding, mark and line endings.
"""

from __future__ import annotations

import codecs
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.hashing import sha256_bytes
from codeplane.core.layout import RepoLayout
from codeplane.index.pipeline import CONTENT_RULES_KEY
from codeplane.repo.content import decode, is_binary
from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server
from tests.index_helpers import hit_lines, running_index

pytestmark = pytest.mark.anyio

SCRIPT = "# réglages\r\nfunction Get-Thing {\r\n    Write-Host 'héllo'\r\n}\r\n"
LE = codecs.BOM_UTF16_LE + SCRIPT.encode("utf-16-le")
BE = codecs.BOM_UTF16_BE + "SELECT marker_be FROM t;\n".encode("utf-16-be")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("utf16") / "repo", {
        "tools/setup.ps1": LE, "db/query.sql": BE,
        "blob.bin": b"Get-Thing\x00\x01\x02", "fake.bin": codecs.BOM_UTF16_LE + b"\x00\x00" * 8})
    with running_server(repo) as handle:
        yield handle


def test_a_utf16_mark_explains_nul_bytes_but_not_nul_characters() -> None:
    assert not is_binary(LE) and not is_binary(BE) and not is_binary(LE[:9])  # a window may cut a character
    assert is_binary(b"Get-Thing\x00") and is_binary(codecs.BOM_UTF16_LE + b"\x00\x00" * 8)
    assert decode(LE) == SCRIPT and decode(BE) == "SELECT marker_be FROM t;\n"


async def test_search_and_read_see_the_text_with_rg_s_line_and_column(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        found = await call(client, "search", {"query": "Get-Thing", "syntax": "phrase"})
        big_endian = await call(client, "search", {"query": "marker_be", "syntax": "identifier"})
        read = await call(client, "read_source", {"targets": [{"path": "tools/setup.ps1"}]})
        err = await call_error(client, "read_source", {"targets": [{"path": "fake.bin"}]})
    assert [(h["path"], h["line"], h["column"]) for h in found["results"]] == [("tools/setup.ps1", 2, 10)]
    assert [(h["path"], h["line"], h["column"]) for h in big_endian["results"]] == [("db/query.sql", 1, 8)]
    [file] = read["files"]
    assert file["content"] == SCRIPT and file["file_sha256"] == sha256_bytes(LE) and file["line_count"] == 4
    assert err["code"] == 5008


async def test_an_edit_from_the_read_keeps_utf16_its_mark_and_crlf(server: ServerHandle) -> None:
    path = server.root / "tools/setup.ps1"
    async with mcp_client(server) as client:
        sha = (await call(client, "read_source", {"targets": [{"path": "tools/setup.ps1"}]}))["files"][0]["file_sha256"]
        await call(client, "write_source", {"edits": [{
            "path": "tools/setup.ps1", "action": "update", "old_text": "Write-Host 'héllo'",
            "new_text": "Write-Host 'héllo wörld'", "expected_file_sha256": sha}]})
        found = await call(client, "search", {"query": "wörld", "syntax": "phrase"})
    assert path.read_bytes() == codecs.BOM_UTF16_LE + SCRIPT.replace("héllo", "héllo wörld").encode("utf-16-le")
    assert [(h["line"], h["column"]) for h in found["results"]] == [(3, 23)]


def test_an_index_classified_by_the_old_rules_reads_such_files_again_at_the_next_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"tools/setup.ps1": LE, "img.bin": b"\x89PNG\x00\x00Get-Thing"})
    for name in ("tools/setup.ps1", "img.bin"):  # old enough that the reconcile trusts an unchanged stat
        os.utime(repo / name, (1_600_000_000, 1_600_000_000))
    with running_index(repo):
        pass
    # What an index built before content rules 2 holds: the file as binary, its stat unchanged since.
    db = sqlite3.connect(RepoLayout(repo).index_db)
    with db:
        db.execute("UPDATE files SET kind = 'binary', line_count = 0 WHERE path = 'tools/setup.ps1'")
        db.execute("DELETE FROM meta WHERE key = ?", (CONTENT_RULES_KEY,))
    db.close()
    with running_index(repo) as index:
        record = index.file_record("tools/setup.ps1")
        assert record is not None and record.kind == "text" and record.line_count == 4
        assert hit_lines(index, "Get-Thing", "phrase") == {("tools/setup.ps1", 2)}
        binary = index.file_record("img.bin")
        assert binary is not None and binary.kind == "binary"
