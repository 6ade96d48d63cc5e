"""A file-size limit (``ulimit -f``: EFBIG, QA44 §5) is a storage failure like a full disk or a quota (5010,
retryable), not 9001; an index build that fails on it says so in ``/status`` and retries with a growing wait, not
with a traceback every 1.4 s forever."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import ErrorCode
from codeplane.core.storage import storage_error
from tests.builders import CPL, ServerHandle, call_error, cpl_env, make_repo, mcp_client

pytestmark = pytest.mark.anyio

#: Bytes: the click-sized repo below indexes to ~2 MB, the ledger and the other stores stay far below.
_LIMIT = 1 << 20


def test_efbig_is_storage_full() -> None:
    error = storage_error(OSError(errno.EFBIG, "File too large", "/r/big.bin"), doing="writing big.bin")
    assert error is not None and error.error is ErrorCode.STORAGE_FULL and error.retryable, error
    assert error.details["errno"] == "EFBIG", error.details


def test_sqlite_disk_io_error_under_a_file_size_limit_is_storage_full(tmp_path: Path) -> None:
    """SQLite says only "disk I/O error" when a write passes the limit: under a limit, that is 5010 naming it."""
    script = textwrap.dedent(f"""
        import json, resource, sqlite3, sys
        from codeplane.core.storage import storage_error
        resource.setrlimit(resource.RLIMIT_FSIZE, ({_LIMIT}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        conn = sqlite3.connect(sys.argv[1], isolation_level=None)
        conn.execute("CREATE TABLE t (v BLOB)")
        try:
            conn.execute("INSERT INTO t VALUES (zeroblob(2000000))")
        except sqlite3.Error as exc:
            mapped = storage_error(exc, doing="writing t")
            print(json.dumps([type(exc).__name__, str(exc), mapped and mapped.to_payload()]))
    """)
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path / "t.db")], capture_output=True, text=True,
                          check=True, timeout=60)
    name, said, payload = json.loads(proc.stdout)
    assert payload is not None, (name, said)
    assert payload["code"] == 5010 and payload["retryable"] and payload["details"]["errno"] == "EFBIG", payload
    assert f"file-size limit, ulimit -f, of {_LIMIT:,} bytes" in payload["message"], payload


#: ``cpl`` exec'd under the limit (no ``preexec_fn``: unsafe in a process with threads).
_UNDER_LIMIT = ("import os, resource, sys; "
                f"resource.setrlimit(resource.RLIMIT_FSIZE, ({_LIMIT}, resource.getrlimit(resource.RLIMIT_FSIZE)[1])); "
                "os.execv(sys.argv[1], sys.argv[1:])")


@contextmanager
def _server_under_limit(root: Path, log: Path) -> Iterator[ServerHandle]:
    """``cpl up`` as ``tests.builders.start_server`` runs it, under the file-size limit; stderr in ``log``."""
    with log.open("w") as errors:
        # The boot stops waiting for the first build after a second: /status then answers from the index service.
        proc = subprocess.Popen([sys.executable, "-c", _UNDER_LIMIT, *CPL, "up", str(root), "--port", "0", "--json"],
                                cwd=root,
                                env=cpl_env({"CODEPLANE__INDEX__STARTUP_WAIT_SEC": "1"}),
                                stdout=subprocess.PIPE, stderr=errors, text=True)
    assert proc.stdout is not None
    handle: ServerHandle | None = None
    try:
        deadline = time.monotonic() + 60
        while handle is None:
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            line = proc.stdout.readline()
            ready: dict[str, Any] = json.loads(line) if line.startswith("{") else {}
            if ready.get("event") == "ready":
                handle = ServerHandle(proc=proc, root=root, port=int(ready["port"]), ready=ready)
        yield handle
    finally:
        if handle is not None:
            handle.stop()
        else:
            proc.kill()
            proc.wait()


async def test_a_build_failing_on_the_file_size_limit_says_5010_and_backs_off(tmp_path: Path) -> None:
    files = {f"pkg/m{n}.py": "".join(f"def function_{n}_{k}(value):\n    return value + {k}\n\n" for k in range(30))
             for n in range(80)}
    repo = make_repo(tmp_path / "repo", files)
    log = tmp_path / "server.log"
    with _server_under_limit(repo, log) as handle:
        deadline = time.monotonic() + 60
        while not (index := handle.get("/status").json().get("index") or {}).get("error"):
            assert time.monotonic() < deadline, index
            time.sleep(0.1)
        # ``cpl status``'s "last error" too, not "none" while the index fails (s52).
        last_error = str(handle.get("/status").json().get("last_error"))
        async with mcp_client(handle) as client:
            error = await call_error(client, "write_source", {"edits": [
                {"path": "big.txt", "action": "create", "content": "abcdefghi\n" * 150_000}]})
        assert error["code"] == 5010 and error["retryable"], error
        assert not (repo / "big.txt").exists()
        time.sleep(4)  # the old loop: a failure and a traceback every ~1.4 s
        said = log.read_text()
    assert said.count("Traceback") == 1, said[-3000:]
    assert said.count("updating the index failed") <= 3, said[-3000:]
    assert str(index["error"]).startswith("5010 STORAGE_FULL: "), index["error"]
    assert "file-size limit, ulimit -f" in index["error"], index["error"]
    assert last_error.startswith("5010 STORAGE_FULL: "), last_error
