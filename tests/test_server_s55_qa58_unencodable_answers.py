"""QA58 F0: an answer holding a string UTF-8 cannot carry (a lone surrogate: pygit2's form of a file or branch name
that is not UTF-8) was encoded after dispatch's failure handling. The transport then failed with a bare JSON-RPC
"Internal server error": no envelope, no catalog code, no ledger row. Now it is the call's 9001 (or its own error,
escaped), recorded like any other call."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.server.dispatch import ResponseMeta, _error_result
from tests.builders import ServerHandle, answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

BRANCH = os.fsdecode(b"br\xff")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("qa58_answers") / "repo", {"a.py": "def a():\n    return 1\n"})
    git(repo, "checkout", "-q", "-b", BRANCH)  # ``describe`` names the branch it is on
    with running_server(repo) as handle:
        yield handle


def _rows(root: Path) -> list[tuple[str, int | None]]:
    db = root / ".codeplane" / "ledger.db"
    if not db.exists():  # created by the first recorded call
        return []
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return [(str(op), code) for op, code in conn.execute(
            "SELECT op_type, error_code FROM operations WHERE op_type NOT LIKE 'task.%' ORDER BY op_id")]
    finally:
        conn.close()


async def test_an_answer_naming_a_branch_that_is_not_utf8_is_an_envelope_and_a_ledger_row(
        server: ServerHandle) -> None:
    before = _rows(server.root)
    async with mcp_client(server) as client:
        res = await client.call_tool("describe", {})  # raised MCPError "Internal server error"
        body = envelope(res)
        # Either describe escapes the name itself, or dispatch turns the unencodable answer into 9001.
        if res.is_error:
            assert body["error"]["code"] == 9001, body
            assert answer_text(res).startswith("error 9001 INTERNAL_ERROR"), answer_text(res)
        after = _rows(server.root)
        assert after[len(before):] == [("describe", 9001 if res.is_error else None)], after
        assert not (await client.call_tool("list_files", {})).is_error  # the server answers on


def test_an_error_naming_a_raw_file_name_is_sent_escaped() -> None:
    raw = os.fsdecode(b"m\xe9.py")
    error = CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{raw} is gone", details={"path": raw})
    res = _error_result(error, ResponseMeta(warnings=[os.fsdecode(b"w\xfe")]), "req_1")
    text = res.content[0].text  # type: ignore[union-attr]
    assert text.startswith("error 5004 FILE_NOT_FOUND: m\\xe9.py is gone"), ascii(text)
    assert "w\\xfe" in text, ascii(text)
    body = res.structured_content
    assert body is not None and body["error"]["details"]["path"] == "m\\xe9.py", ascii(body)
    res.model_dump_json()  # what the transport does: it raised UnicodeEncodeError
