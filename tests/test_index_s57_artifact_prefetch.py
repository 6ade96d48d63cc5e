"""``cpl up --index-from URL`` downloads the artifact before it listens (QA62 #5, #6): meanwhile ``--json`` prints
``fetching_artifact`` lines and ``cpl status`` says what the process is doing instead of "not running"; SIGTERM
during the download stops it as it stops a server (the partial file removed, exit 0); and the partial downloads a
killed fetch left are removed by the next fetch, the next start and ``cpl doctor --fix``, never one being written."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import portalocker
import pytest

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.artifact_adopt import adopt_configured
from codeplane.index.artifact_fetch import fetch_artifact
from tests.builders import CPL, cpl, cpl_env, cpl_json, make_repo
from tests.test_index_artifact import FILES, INDEXERS, _clone, _export


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the origin repository, its artifact)."""
    base = tmp_path_factory.mktemp("prefetch")
    origin = make_repo(base / "origin", FILES)
    return origin, _export(_clone(origin, base / "ci"), base / "out" / "index.tar.zst")


@contextmanager
def _stalling_host(artifact: Path) -> Iterator[tuple[str, threading.Event]]:
    """Serves ``artifact`` (and its sidecar) but stops after half of it until the event is set: a slow download."""
    data = artifact.read_bytes()
    sidecar = artifact.with_name(artifact.name + ".sha256").read_bytes()
    go_on = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = sidecar if self.path.endswith(".sha256") else data
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body is sidecar:
                self.wfile.write(body)
                return
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            go_on.wait(60)
            self.wfile.write(body[len(body) // 2:])

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{artifact.name}", go_on
    finally:
        go_on.set()
        server.shutdown()
        server.server_close()


def _cache(root: Path) -> Path:
    return root / ".codeplane" / "artifact-cache"


def _wait_for(what: str, check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"no {what}"
        time.sleep(0.1)
    return found


def test_sigterm_during_the_download_stops_cpl_up_and_removes_the_partial_file(published: tuple[Path, Path],
                                                                               tmp_path: Path) -> None:
    origin, artifact = published
    root = _clone(origin, tmp_path / "dev")
    size = artifact.stat().st_size
    with _stalling_host(artifact) as (url, _go_on), (tmp_path / "up.err").open("w") as errors:
        up = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json", "--index-from", url], cwd=root,
                              env=cpl_env(), stdout=subprocess.PIPE, stderr=errors, text=True)
        try:
            assert up.stdout is not None
            first = json.loads(up.stdout.readline())
            # Before anything listens: the download says so, on stdout and to `cpl status` (another process).
            assert first["event"] == "fetching_artifact" and first["source"] == url and first["pid"] == up.pid, first

            def halfway() -> dict[str, Any] | None:
                fetching = cpl_json("status", str(root), cwd=root).get("fetching_artifact")
                return fetching if fetching and fetching["bytes"] == size // 2 else None

            fetching = _wait_for("download half-way in cpl status", halfway)
            assert fetching["pid"] == up.pid and fetching["total"] == size and fetching["source"] == url, fetching
            shown = cpl("status", str(root), cwd=root).stdout
            assert "CodePlane: starting, not listening yet" in shown, shown
            assert f"downloading the index artifact from {url}: {size // 2 / 1e3:.1f} of {size / 1e3:.1f} KB" \
                in shown, shown
            assert [p.name for p in _cache(root).glob(".*.part")], "no partial download while it runs"
            up.send_signal(signal.SIGTERM)
            code = up.wait(timeout=20)
        finally:
            if up.poll() is None:
                up.kill()
                up.wait()
    assert code == 0, (code, (tmp_path / "up.err").read_text()[-2000:])
    assert sorted(p.name for p in _cache(root).iterdir()) == [], "the partial download and the record stay"
    assert cpl_json("status", str(root), cwd=root).get("fetching_artifact") is None
    assert not (root / ".codeplane" / "port").exists()  # it never served


def _stale_partial(cache: Path, name: str) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f".{name}.part"
    path.write_bytes(b"x" * 4096)
    return path


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_what_a_killed_download_left_is_removed_but_a_live_one_is_kept(published: tuple[Path, Path],
                                                                      tmp_path: Path) -> None:
    origin, artifact = published
    root = _clone(origin, tmp_path / "dev")
    cache = _cache(root)
    live = _stale_partial(cache, "live")
    with live.open("rb") as held:
        portalocker.lock(held, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)  # a fetch's
        # cpl doctor --fix
        killed = _stale_partial(cache, "killed")
        (cache / "fetching.json").write_text(json.dumps({"pid": _dead_pid(), "source": "x", "bytes": 1}))
        assert cpl_json("status", str(root), cwd=root).get("fetching_artifact") is None  # its process is gone
        fixed = cpl_json("doctor", str(root), "--fix", cwd=root)
        assert not killed.exists() and not (cache / "fetching.json").exists(), fixed
        assert any("killed" in str(r) for r in fixed.get("repairs", [])), fixed
        # the next start (the index service's adoption step runs first, artifact or not)
        killed = _stale_partial(cache, "killed")
        adopt_configured(root, RepoLayout(root), IndexConfig(watch=False), INDEXERS)
        assert not killed.exists()
        # the next fetch
        killed = _stale_partial(cache, "killed")
        sha = hashlib.sha256(artifact.read_bytes()).hexdigest()
        with _stalling_host(artifact) as (url, go_on):
            go_on.set()
            fetched = fetch_artifact(url, root=root, cache_dir=cache, pinned=sha, retries=0)
        assert fetched.path.read_bytes() == artifact.read_bytes()
        assert not killed.exists()
        assert live.exists()
    assert sorted(p.name for p in cache.glob(".*.part")) == [live.name]


def test_stopping_cpl_up_during_the_download_leaves_nothing_of_it(published: tuple[Path, Path],
                                                                  tmp_path: Path) -> None:
    """Ctrl+C (SIGINT) too: a stop like the server's, exit 0, nothing left (it was a traceback and exit 130). Started
    with SIGINT ignored, as a script's background job inherits it (CI's runner did): the server takes SIGINT all the
    same, and the download waited for a KeyboardInterrupt that never came."""
    origin, artifact = published
    root = _clone(origin, tmp_path / "dev")
    with _stalling_host(artifact) as (url, _go_on), (tmp_path / "up.err").open("w") as errors:
        up = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--index-from", url], cwd=root,
                              env={**cpl_env(), "COLUMNS": "200"}, stdout=subprocess.PIPE, stderr=errors, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))  # noqa: PLW1509
        try:
            _wait_for("partial download", lambda: list(_cache(root).glob(".*.part")))
            time.sleep(0.5)
            os.kill(up.pid, signal.SIGINT)
            out, _ = up.communicate(timeout=20)
        finally:
            if up.poll() is None:
                up.kill()
                up.wait()
    assert up.returncode == 0, (up.returncode, (tmp_path / "up.err").read_text()[-2000:])
    assert "CodePlane stopped." in out, out
    assert sorted(p.name for p in _cache(root).iterdir()) == []
