"""A Python file that is not UTF-8 and declares its coding (PEP 263 ``# -*- coding: latin-1 -*-``): edits that add
no non-ASCII text write its bytes back as they were, but new non-ASCII text would be written as UTF-8, which
Python reads through the declared coding as other characters (``Ã©`` for ``é``): such an edit is refused, typed,
and nothing is written."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.builders import call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

LATIN = b'# -*- coding: latin-1 -*-\nname = "Jos\xe9"\ncount = 1\n'


async def test_new_non_ascii_text_in_a_declared_latin1_file_is_refused_and_ascii_edits_keep_its_bytes(
        tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"old.py": LATIN})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            error = await call_error(client, "write_source", {"edits": [
                {"path": "old.py", "old_text": "count = 1", "new_text": 'count = 1\ncity = "Zürich"'}]})
            before = (repo / "old.py").read_bytes()
            await call(client, "write_source", {"edits": [
                {"path": "old.py", "old_text": "count = 1", "new_text": "count = 2"}]})
    assert error["code"] == 1003 and "declares coding latin-1" in error["message"], error
    assert before == LATIN, hashlib.sha256(before).hexdigest()  # nothing written by the refused edit
    assert (repo / "old.py").read_bytes() == LATIN.replace(b"count = 1", b"count = 2")
