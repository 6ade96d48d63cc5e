"""Files every tool must read and write exactly: a UTF-8 byte-order mark and a symbolic link loop.

The mark is not text (``rg`` and editors do not show it, ``mutation.document`` edits the text after it), so
line 1's columns must not count it anywhere: in search hits, in the structural index's spans, in the edits a
refactor plans. Before, the index counted it and a rename on line 1 was refused as a stale precondition.
A link that points to itself used to end ``read_source`` in an internal error.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator

import pytest

from codeplane.repo.content import decode
from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

BOM = codecs.BOM_UTF8
FILES: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/signs.py": BOM + "def marked(value):\n    return 'é' + value\n".encode(),
    "pkg/user.py": "from pkg.signs import marked\n\n\ndef use():\n    return marked('x')\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("bom") / "repo", FILES)
    os.symlink("loop", repo / "loop")
    with running_server(repo) as handle:
        yield handle


def test_decode_drops_only_a_leading_mark() -> None:
    assert decode(BOM + b"a\n") == "a\n"
    assert decode(b"a" + BOM) == "a\ufeff"
    assert decode(BOM + BOM + b"a") == "\ufeffa"  # one mark is the encoding's; a second one is text
    assert decode(b"\xff") == "\ufffd"


async def test_line_one_has_the_columns_rg_reports(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        found = await call(client, "search", {"query": "marked", "syntax": "identifier",
                                              "scope": {"paths": ["pkg/signs.py"]}})
        read = await call(client, "read_source", {"targets": [{"symbol": "marked"}]})
    hit = found["results"][0]
    # ``rg -n --column -w marked`` prints 1:5 for this line: the mark is not a column.
    assert (hit["line"], hit["column"]) == (1, 5)
    assert "\ufeff" not in str(found)
    assert read["files"][0]["content"] == "def marked(value):\n    return 'é' + value\n"


async def test_rename_on_line_one_applies_and_keeps_the_mark(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        plan = await call(client, "refactor_rename", {"symbol": "pkg.signs.marked", "new_name": "signed",
                                                      "apply": True})
    assert "applied" in plan, plan
    assert (root / "pkg/signs.py").read_bytes() == BOM + "def signed(value):\n    return 'é' + value\n".encode()
    user = (root / "pkg/user.py").read_text()
    assert user == "from pkg.signs import signed\n\n\ndef use():\n    return signed('x')\n"


async def test_a_symlink_loop_is_refused_with_a_typed_error(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        read = await call_error(client, "read_source", {"targets": [{"path": "loop"}]})
        write = await call_error(client, "write_source", {"edits": [
            {"path": "loop", "action": "create", "content": "x\n"}]})
    for err in (read, write):
        assert err["code"] == 5001 and err["retryable"] is False, err
        assert "loop" in err["message"]
    assert os.readlink(root / "loop") == "loop"
