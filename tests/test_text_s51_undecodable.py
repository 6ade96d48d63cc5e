"""A file with a byte UTF-8 cannot decode is edited as it is read: UTF-8, the byte shown as U+FFFD.

Before, one stray byte made ``write_source`` decode the whole file as Latin-1 while ``read_source`` and search
showed UTF-8: ``old_text`` copied from a read was not found, new non-ASCII text was written as Latin-1 bytes, a
rename on a line holding the byte failed as "another write landed first", and a BOM plus one stray byte could
not be edited at all (5008). Now every edit changes only the bytes it asks for: a stray byte the edit leaves
alone is written back as itself, new text is UTF-8. A new Python file that starts with a BOM parses (no false
warning): Python reads the mark as the encoding's.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from codeplane.mutation.document import Document, keep_undecodable
from codeplane.mutation.edits import ReplaceText
from codeplane.repo.content import decode
from tests.builders import ServerHandle, answer_text, call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

BOM = codecs.BOM_UTF8
MIXED = b'caf\xc3\xa9 = 1\nname = "Jos\xc3\xa9"\nstray = "\xff"\nx = 0\nprint(name)\n'
FILES: dict[str, str | bytes] = {
    "m.py": MIXED,
    "bomstray.py": BOM + b'x = 1\ny = "\xe9"\n',
    "lat.py": b'x = "\xe9"; lat_v = 1\nprint(lat_v)\n',
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("undecodable") / "repo", FILES)
    with running_server(repo) as handle:
        yield handle


def test_the_engine_sees_the_text_a_read_shows_and_keeps_the_bytes_beneath() -> None:
    doc = Document.decode(MIXED, "m.py")
    assert doc.text == decode(MIXED)  # one view: offsets, lines and old_text mean the same as in a read
    assert doc.encode(doc.raw, "m.py") == MIXED
    # A truncated sequence is two undecodable bytes: two U+FFFD (the codec's "replace" gave one), so a column
    # in a read is a column in the engine.
    assert decode(b"\xe2\x82a") == "\ufffd\ufffda" and len(Document.decode(b"\xe2\x82a", "f").raw) == 3
    assert keep_undecodable("a\udcff = 1\nb\n", "a\ufffd = 2\nb\n") == "a\udcff = 2\nb\n"


def test_a_lone_surrogate_sent_as_text_is_refused() -> None:
    with pytest.raises(ValidationError):
        ReplaceText(path="m.py", old_text="x = 0", new_text="x = '\udcff'")


async def test_old_text_copied_from_a_read_is_found_and_only_its_bytes_change(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        read = await call(client, "read_source", {"targets": [{"path": "m.py"}]})
        assert read["files"][0]["content"].startswith('café = 1\nname = "José"\nstray = "\ufffd"\n')
        await call(client, "write_source", {"edits": [{"path": "m.py", "old_text": "café = 1",
                                                       "new_text": "café = 2"}]})
        assert (root / "m.py").read_bytes() == MIXED.replace(b"caf\xc3\xa9 = 1", b"caf\xc3\xa9 = 2")
        # New non-ASCII text is UTF-8, never Latin-1; the stray byte two lines up stays what it was.
        await call(client, "write_source", {"edits": [{"path": "m.py", "start_line": 4, "end_line": 4,
                                                       "new_content": 'x = "naïve"\n'}]})
        assert b'x = "na\xc3\xafve"\n' in (root / "m.py").read_bytes()
        assert b'stray = "\xff"\n' in (root / "m.py").read_bytes()
        # A line holding the byte, quoted as the read showed it: the part the edit leaves alone keeps the byte.
        await call(client, "write_source", {"edits": [{"path": "m.py", "old_text": 'stray = "\ufffd"',
                                                       "new_text": 'stray = "\ufffd"  # kept'}]})
        assert b'stray = "\xff"  # kept\n' in (root / "m.py").read_bytes()
        again = await call(client, "read_source", {"targets": [{"path": "m.py", "start_line": 4, "end_line": 4}]})
    assert again["files"][0]["content"] == 'x = "naïve"\n'


async def test_a_bom_and_a_stray_byte_can_be_edited(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        await call(client, "write_source", {"edits": [{"path": "bomstray.py", "old_text": "x = 1",
                                                       "new_text": "x = 2"}]})
    assert (root / "bomstray.py").read_bytes() == BOM + b'x = 2\ny = "\xe9"\n'


async def test_a_rename_on_a_line_holding_a_stray_byte_applies(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        plan = await call(client, "refactor_rename", {"symbol": "lat.lat_v", "new_name": "lv", "apply": True})
    assert "applied" in plan, plan
    assert (root / "lat.py").read_bytes() == b'x = "\xe9"; lv = 1\nprint(lv)\n'


async def test_a_new_python_file_with_a_bom_is_not_called_unparsable(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        res = await client.call_tool("write_source", {"edits": [{"path": "bomnew.py", "content": "\ufeffx = 1\n"}]})
    assert not res.is_error and "does not parse" not in answer_text(res), answer_text(res)
    assert (root / "bomnew.py").read_bytes() == BOM + b"x = 1\n"
