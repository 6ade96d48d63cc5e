"""Sharing an index artifact, as QA24 found it wanting: ``/ready`` after a rebuild from disk, the ``source`` of a
rebuilt store, URL refusals the server never heard of, another repository's artifact, the fetch's deadline, and
an all-digit pinned sha256. Real repositories, artifacts, HTTP servers and ``cpl up``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.config import load_config
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.index.artifact_fetch import fetch_artifact
from codeplane.index.epochs import EpochSummary
from codeplane.index.pipeline import ReconcileReport
from tests.builders import cpl, git, make_repo, running_server, write_files
from tests.test_index_artifact import (
    FILES,
    _clone,
    _corrupt_page,
    _export,
    _http_server,
    _repack,
    _running,
    _service,
    _status,
)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin", FILES)


@pytest.fixture
def artifact(origin: Path, tmp_path: Path) -> Path:
    return _export(_clone(origin, tmp_path / "ci"), tmp_path / "out" / "index.tar.zst")


def _pinned(path: Path) -> str:
    return path.with_name(path.name + ".sha256").read_text().split()[0]


def _wait_ready(server: Any, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while server.get("/ready").status_code != 200:
        assert time.monotonic() < deadline, server.get("/ready").text
        time.sleep(0.05)


# -- 1: /ready follows the index after a rebuild from disk ---------------------------------------------------
def test_a_ready_listener_that_comes_during_a_rebuild_is_told_when_the_rebuild_is_published(
        origin: Path, artifact: Path, tmp_path: Path) -> None:
    """The server wires ``/ready`` after the index has started on its own thread: when a pinned artifact's check
    has already failed by then and the index is being built from disk, ``/ready`` must follow that build."""
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_page)
    root = _clone(origin, tmp_path / "dev")
    service = _service(root, artifact=str(bad), artifact_sha256=_pinned(bad))
    told = threading.Event()
    came: list[bool] = []

    def on_publish(_report: ReconcileReport, _summary: EpochSummary | None) -> None:
        # The rebuild's epoch is published before the index is marked ready again: a listener that comes now
        # is one that came while the index was rebuilding.
        if not came and service.artifact is not None and service.artifact.result == "refused":
            came.append(service.ready)
            service.on_ready(told.set)

    service.on_reconcile(on_publish)
    service.start()
    try:
        deadline = time.monotonic() + 60
        while not came:
            assert time.monotonic() < deadline, _status(service)
            time.sleep(0.02)
        assert came == [False]
        assert told.wait(20), "the ready listener was never told"
        assert service.ready and _status(service)["source"]["kind"] == "local"
    finally:
        service.stop()


def test_ready_answers_200_once_a_corrupt_pinned_artifact_is_rebuilt(origin: Path, tmp_path: Path) -> None:
    # Enough files that the rebuild from disk outlasts the server's boot, which wires /ready meanwhile.
    write_files(origin, {f"gen/m{i:04d}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(1200)})
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "more")
    artifact = _export(_clone(origin, tmp_path / "ci"), tmp_path / "out" / "index.tar.zst")
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_page)
    root = _clone(origin, tmp_path / "dev")
    with running_server(root, "--index-from", str(bad), "--set", f"index.artifact_sha256={_pinned(bad)}") as server:
        deadline = time.monotonic() + 60
        while True:
            index = server.get("/status").json().get("index") or {}  # none until the boot has wired it
            if index.get("ready") and index["source"]["kind"] == "local":
                break
            assert time.monotonic() < deadline, index
            time.sleep(0.05)
        assert index["source"]["artifact_refused"]["code"] == ErrorCode.ARTIFACT_INVALID.code
        _wait_ready(server, timeout=10)


# -- 2: a store rebuilt from disk says so ----------------------------------------------------------------------
def test_an_adopted_index_rebuilt_at_start_because_it_was_damaged_says_it_was_built_here(
        origin: Path, artifact: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with running_server(root, "--index-from", str(artifact)) as server:
        _wait_ready(server)
        assert server.get("/status").json()["index"]["source"]["kind"] == "artifact"
    db = RepoLayout(root).index_db
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big") or 65536
    # The last page: a b-tree page of the file table's indexes, far from ``meta`` (where the origin is kept).
    data[len(data) - page:] = b"\xa5" * page
    db.write_bytes(bytes(data))
    with running_server(root) as server:
        _wait_ready(server)
        index = server.get("/status").json()["index"]
        shown = cpl("status", str(root), cwd=root).stdout
    source = index["source"]
    assert source["kind"] == "local" and "commit" not in source, source
    assert source["rebuilt_from_disk"].startswith("index.db was unusable"), source
    assert "source: built from this checkout (rebuilt from disk: index.db was unusable" in shown, shown
    assert "artifact of" not in shown


# -- 3: a URL that cannot be fetched is a refusal the server records ------------------------------------------
def test_a_url_artifact_cpl_up_cannot_fetch_is_recorded_as_refused(origin: Path, artifact: Path,
                                                                   tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with _http_server(artifact.parent) as (base, behaviour):
        url = f"{base}/missing.tar.zst"
        with running_server(root, "--index-from", url, "--set", "index.artifact_retries=0") as server:
            _wait_ready(server)
            index = server.get("/status").json()["index"]
            shown = cpl("status", str(root), cwd=root).stdout
    refused = index["source"]["artifact_refused"]
    assert index["source"]["kind"] == "local"
    # Neither a sidecar nor an artifact there: not found (3101), not "unverified" (QA62 #8).
    assert refused["code"] == ErrorCode.ARTIFACT_FETCH_FAILED.code and url in refused["message"], refused
    # cpl up's attempt only (the sidecar, then whether the artifact is there): the server does not retry it
    assert behaviour.requests == ["/missing.tar.zst.sha256", "/missing.tar.zst"]
    assert "artifact refused" in shown and "3101" in shown, shown
    logged = [json.loads(line) for line in
              (root / ".codeplane" / "logs" / "codeplane.jsonl").read_text().splitlines() if line.startswith("{")]
    assert any("artifact refused" in str(entry.get("event")) and url in str(entry.get("reason")) for entry in logged)


# -- 4: another repository's artifact ----------------------------------------------------------------------------
def test_an_artifact_of_another_repository_is_refused(origin: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other", {"lib/x.py": "def x():\n    return 1\n"})
    foreign = _export(_clone(other, tmp_path / "other-ci"), tmp_path / "foreign" / "index.tar.zst")
    commit = git(other, "rev-parse", "HEAD").stdout.strip()
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(foreign), artifact_adopt="always") as service:
        status = _status(service)
    refused = status["source"]["artifact_refused"]
    assert status["source"]["kind"] == "local"
    assert refused["code"] == ErrorCode.ARTIFACT_FOREIGN_COMMIT.code and refused["details"]["commit"] == commit
    assert status["file_count"] == len(FILES)


def test_a_shallow_clone_without_the_artifacts_commit_still_adopts_it(origin: Path, artifact: Path,
                                                                      tmp_path: Path) -> None:
    built_at = git(origin, "rev-parse", "HEAD").stdout.strip()
    write_files(origin, {"pkg/extra.py": "X = 1\n"})
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "one ahead")
    root = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(root))
    assert git(root, "cat-file", "-e", built_at, check=False).returncode != 0
    with _running(root, artifact=str(artifact)) as service:
        source = _status(service)["source"]
    assert source["kind"] == "artifact" and source["commit"] == built_at


# -- 5: index.artifact_timeout_sec bounds the whole fetch -------------------------------------------------------
@contextmanager
def _trickling_server(seconds: float) -> Iterator[str]:
    """Answers every GET with 1 KiB every 0.1 s for ``seconds``: never slow enough for a per-read timeout."""
    total = int(seconds / 0.1) * 1024

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(total))
            self.end_headers()
            try:
                for _ in range(total // 1024):
                    self.wfile.write(b"x" * 1024)
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:  # the client gave up
                return

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_trickling_host_cannot_hold_the_fetch_past_its_timeout(tmp_path: Path) -> None:
    with _trickling_server(8.0) as base:
        started = time.monotonic()
        with pytest.raises(CodePlaneError) as caught:
            fetch_artifact(f"{base}/index.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache", pinned="a" * 64,
                           timeout=1.0, retries=2)
        elapsed = time.monotonic() - started
    assert caught.value.error is ErrorCode.ARTIFACT_FETCH_FAILED, caught.value.message
    assert "1 s for the whole fetch" in caught.value.message
    assert elapsed < 3.0
    assert not list((tmp_path / "cache").glob(".*.part"))


# -- 6: an all-digit pinned sha256 --------------------------------------------------------------------------------
def test_an_all_digit_pinned_sha256_is_taken_as_text(tmp_path: Path) -> None:
    def load(value: str) -> str | None:
        return load_config(None, overrides=[f"index.artifact_sha256={value}"], environ={},
                           global_path=tmp_path / "none.yaml").index.artifact_sha256

    assert load("1" * 64) == "1" * 64
    assert load("0" + "9" * 63) == "0" + "9" * 63  # YAML keeps it text (not octal)
    assert load("'0" + "1" * 63 + "'") == "0" + "1" * 63
    with pytest.raises(CodePlaneError) as caught:
        load("0" + "1" * 63)  # YAML 1.1 reads it as an octal number: its digits are gone
    assert caught.value.error is ErrorCode.CONFIG_INVALID_VALUE
    assert caught.value.details["key"] == "index.artifact_sha256" and "must be quoted" in caught.value.message
