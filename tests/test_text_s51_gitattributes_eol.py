"""A path's ``.gitattributes`` decides the line ending ``write_source`` gives new text; the repository's dominant
ending is only the fallback.

Before, ``create`` sampled the repository's dominant ending alone: a ``*.sh`` marked ``eol=lf`` got CRLF in a
CRLF checkout (``/bin/sh\\r``: "required file not found"), and a ``*.bat`` marked ``eol=crlf`` got LF in an LF
one. Now ``eol`` decides for a created or overwritten file, whatever endings the content carries (git converts
to it on checkout); ``-text`` (``binary``) converts nothing, so the content is written as given; an updated file
keeps its own ending, and one with no line break yet takes its ``eol``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import ServerHandle, call, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

ATTRIBUTES = "*.sh text eol=lf\n*.bat text eol=crlf\n*.dat -text\n"


def _crlf_checkout(root: Path) -> dict[str, str | bytes]:
    # A Windows checkout: every tracked text file CRLF (the blobs are what they are; only the work tree counts).
    files: dict[str, str | bytes] = {".gitattributes": ATTRIBUTES, "one.sh": b"echo one"}
    files.update({f"m{i}.py": f"def f{i}():\r\n    return {i}\r\n".encode() for i in range(3)})
    return files


@pytest.fixture(scope="module")
def crlf_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    root = tmp_path_factory.mktemp("eol_crlf") / "repo"
    with running_server(make_repo(root, _crlf_checkout(root))) as handle:
        yield handle


async def test_eol_lf_and_minus_text_win_over_a_crlf_repository(crlf_server: ServerHandle) -> None:
    root = crlf_server.root
    async with mcp_client(crlf_server) as client:
        await call(client, "write_source", {"edits": [
            {"path": "build.sh", "content": "#!/bin/sh\necho built\n"},
            {"path": "crlf_given.sh", "content": "a\r\nb\r\n"},
            {"path": "raw.dat", "content": "a\nb\n"},
            {"path": "plain.py", "content": "x = 1\ny = 2\n"},
            {"path": "one.sh", "start_line": 2, "end_line": 1, "new_content": "echo two\n"},
        ]})
    assert (root / "build.sh").read_bytes() == b"#!/bin/sh\necho built\n"
    assert (root / "crlf_given.sh").read_bytes() == b"a\nb\n"  # what git would check out
    assert (root / "raw.dat").read_bytes() == b"a\nb\n"  # -text: as given, never converted
    assert (root / "plain.py").read_bytes() == b"x = 1\r\ny = 2\r\n"  # no attribute: the repository's ending
    assert (root / "one.sh").read_bytes() == b"echo one\necho two\n"  # no line break yet: its eol


async def test_eol_crlf_wins_over_an_lf_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {".gitattributes": ATTRIBUTES, "a.py": "a = 1\n", "b.py": "b = 2\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            await call(client, "write_source", {"edits": [{"path": "x.bat", "content": "@echo off\necho hi\n"}]})
            await call(client, "write_source", {"edits": [{"path": "x.bat", "start_line": 2, "end_line": 2,
                                                           "new_content": "echo there\n"}]})
    assert (repo / "x.bat").read_bytes() == b"@echo off\r\necho there\r\n"
