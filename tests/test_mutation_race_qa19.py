"""An edit another program makes while a batch is being applied is never overwritten (spec §9.2, DECISIONS D8).

The targets were checked once, before the temp files were written and fsynced: an editor saving ``c.py`` after
``a.py`` was replaced lost its edit, and the answer said applied. Each target is checked again at its replace:
the batch answers 5002 and is rolled back, the other program's bytes stay."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from codeplane.mutation import PAUSE_ENV
from tests.builders import call_error, cpl_env, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {"a.py": "A = 0\n", "b.py": "B = 0\n", "sub/c.py": "C = 0\n"}
USER_EDIT = "C = 0\nUSER_EDIT = 'precious'\n"


def _save_like_an_editor(path: Path, text: str) -> None:
    temp = path.with_name(path.name + ".swp")
    temp.write_text(text)
    os.replace(temp, path)


def _edit_once_a_is_replaced(root: Path, done: threading.Event) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (root / "a.py").read_text() == "A = 1\n":
            _save_like_an_editor(root / "sub/c.py", USER_EDIT)
            done.set()
            return
        time.sleep(0.005)


async def test_an_edit_made_while_the_batch_replaces_its_files_is_kept_and_the_batch_undone(tmp_path: Path,
                                                                                         ) -> None:
    root = make_repo(tmp_path / "r", FILES)
    with running_server(root, env=cpl_env({PAUSE_ENV: "400"})) as handle:
        done = threading.Event()
        editor = threading.Thread(target=_edit_once_a_is_replaced, args=(root, done))
        editor.start()
        async with mcp_client(handle) as client:
            err = await call_error(client, "write_source", {"edits": [
                {"path": p, "action": "update", "old_text": "= 0\n", "new_text": "= 1\n"} for p in sorted(FILES)]})
        editor.join()
    assert done.is_set(), "the batch never replaced a.py"
    assert err["code"] == 5002 and err["details"]["path"] == "sub/c.py" and err["retryable"], err
    assert (root / "sub/c.py").read_text() == USER_EDIT
    assert (root / "a.py").read_text() == "A = 0\n" and (root / "b.py").read_text() == "B = 0\n"
    assert not [p for p in root.rglob("*") if p.name.endswith((".cpl-tmp", ".cpl-restore"))]


async def test_a_target_that_cannot_be_replaced_is_named_in_the_storage_error(tmp_path: Path) -> None:
    # The 5012 named the batch's temp file (``.c.py.mut_….cpl-tmp``), not the file the caller wrote.
    import shutil
    import subprocess

    root = make_repo(tmp_path / "r", FILES)
    target = root / "sub/c.py"
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(target)], check=False,
                                                        capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not possible here (needs root and a file system with the immutable flag)")
    try:
        with running_server(root) as handle:
            async with mcp_client(handle) as client:
                err = await call_error(client, "write_source", {"edits": [
                    {"path": p, "action": "update", "old_text": "= 0\n", "new_text": "= 1\n"}
                    for p in sorted(FILES)]})
    finally:
        subprocess.run(["chattr", "-i", str(target)], check=False)
    assert err["code"] == 5012 and err["details"]["path"] == str(target), err
    assert "cpl-tmp" not in err["message"]
    assert [(root / p).read_text() for p in sorted(FILES)] == [FILES[p] for p in sorted(FILES)]
