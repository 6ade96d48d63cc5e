"""QA39 #1/#1b: the password of an index-artifact URL or an OTLP endpoint, and a presigned URL's signature, were
shown in clear in ``cpl status``, ``/status``, ``describe``, the log, index.db's ``origin`` and the bug-report
bundle; the artifact's sidecar was fetched as ``url + ".sha256"``, which broke a presigned URL's query. Both
URLs are now redacted as git remotes are, and ``.sha256`` goes on the URL's path."""

from __future__ import annotations

import json
import socket
import sqlite3
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, HTTPServer, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.redaction import redact_url, redact_urls
from codeplane.git.remotes import redact
from tests.builders import ServerHandle, answer_text, cpl, cpl_json, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

SECRETS = ("ARTIFACTPASS77", "SIG123SECRET", "otlpPASSWORD99")
FILES = {"pkg/core.py": "def helper(x):\n    return x + 1\n", "README.md": "# demo\n"}


def test_passwords_and_signatures_are_masked_and_the_rest_kept() -> None:
    presigned = ("https://bucket.s3.amazonaws.com/idx.tar.zst?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                 "&X-Amz-Credential=AKIA%2F20261206&X-Amz-Signature=abc123&X-Amz-Security-Token=tok")
    assert redact_url(presigned) == ("https://bucket.s3.amazonaws.com/idx.tar.zst?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                                     "&X-Amz-Credential=AKIA%2F20261206&X-Amz-Signature=***"
                                     "&X-Amz-Security-Token=***")
    assert redact_url("https://acct.blob.core.windows.net/c/i?sv=2022&sig=a%2Bb&se=2027") == \
        "https://acct.blob.core.windows.net/c/i?sv=2022&sig=***&se=2027"
    assert redact_url("https://h/{commit}.tar.zst?token=t&v=1") == "https://h/{commit}.tar.zst?token=***&v=1"
    for url in ("https://user:secret@host/x", "http://u:@h/x", "https://user@host/x", "ssh://host/x", "/a/b"):
        assert redact_url(url) == redact(url)  # the rule git remotes have always shown
        assert redact_url(redact_url(url)) == redact_url(url)
    assert redact_urls("fetching 'http://a:pw@127.0.0.1:9/x?sig=s' failed") == \
        "fetching 'http://a:***@127.0.0.1:9/x?sig=***' failed"


def test_the_sidecar_is_a_sibling_path_and_the_query_is_kept() -> None:
    from codeplane.index.artifact_fetch import sidecar_url

    assert sidecar_url("https://h/a/idx.tar.zst?X-Amz-Signature=abc") == \
        "https://h/a/idx.tar.zst.sha256?X-Amz-Signature=abc"
    assert sidecar_url("http://u:p@127.0.0.1:8/idx.tar.zst") == "http://u:p@127.0.0.1:8/idx.tar.zst.sha256"


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


@contextmanager
def _serving(directory: Path) -> Iterator[tuple[int, list[str]]]:
    requests: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()  # the query is not part of the file's name

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1], requests
    finally:
        server.shutdown()
        server.server_close()


def _bundle_text(root: Path) -> str:
    report = cpl_json("doctor", "--logs", cwd=root)
    with tarfile.open(report["bundle"]) as archive:
        parts = []
        for member in archive.getmembers():
            extracted = archive.extractfile(member)
            if extracted is not None:
                parts.append(extracted.read().decode("utf-8", errors="replace"))
    return "\n".join(parts)


async def _shown(handle: ServerHandle) -> dict[str, str]:
    """Everything a user or the agent reads of a running server."""
    async with mcp_client(handle) as client:
        described = await client.call_tool("describe", {})
    return {
        "/status": handle.get("/status").text,
        "/dashboard/api/live": handle.get("/dashboard/api/live").text,
        "describe text": answer_text(described),
        "describe structured": json.dumps(described.structured_content),
        "cpl status": cpl("status", cwd=handle.root).stdout,
        "cpl status --json": cpl("status", "--json", cwd=handle.root).stdout,
        "cpl status --verbose": cpl("status", "--verbose", cwd=handle.root).stdout,
        "log": (handle.root / ".codeplane" / "logs" / "codeplane.jsonl").read_text(),
        "bundle": _bundle_text(handle.root),
    }


async def test_an_adopted_presigned_artifact_url_is_shown_and_stored_redacted(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin", FILES)
    out = tmp_path / "art" / "idx.tar.zst"
    cpl_json("index", "export", str(origin), "--out", str(out), cwd=origin)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    with _serving(out.parent) as (port, requests):
        url = f"http://artuser:ARTIFACTPASS77@127.0.0.1:{port}/idx.tar.zst?X-Amz-Signature=SIG123SECRET&v=1"
        with running_server(clone, "--index-from", url) as handle:
            shown = await _shown(handle)
            source = handle.get("/status").json()["index"]["source"]
    # The sidecar's path carries ".sha256"; the signature reaches the server unchanged (and the password too).
    assert requests[:1] == ["/idx.tar.zst.sha256?X-Amz-Signature=SIG123SECRET&v=1"], requests
    assert source["kind"] == "artifact", source
    assert source["source"] == f"http://artuser:***@127.0.0.1:{port}/idx.tar.zst?X-Amz-Signature=***&v=1"
    assert {where: _leaks(text) for where, text in shown.items() if _leaks(text)} == {}
    assert "artuser:***@" in shown["cpl status"]
    db = clone / ".codeplane" / "index.db"
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT value FROM meta WHERE key = 'origin'").fetchone()[0]
    assert "artuser:***@" in stored and not _leaks(stored)
    # An index.db an earlier version adopted holds the URL in clear: offline status still shows it redacted.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'origin'", (json.dumps({**json.loads(stored),
                                                                                  "source": url}),))
    with (clone / ".codeplane" / "logs" / "codeplane.jsonl").open("a") as log:  # and so did its log
        log.write(json.dumps({"event": "adopted index artifact", "source": url}) + "\n")
    offline = "".join(cpl("status", *flags, cwd=clone).stdout for flags in ((), ("--json",), ("--verbose",)))
    assert "artuser:***@" in offline and not _leaks(offline)


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_a_refused_artifact_and_an_otlp_endpoint_never_show_their_passwords(tmp_path: Path) -> None:
    receiver = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://otluser:otlpPASSWORD99@127.0.0.1:{receiver.server_port}/v1/traces"
    url = f"http://artuser:ARTIFACTPASS77@127.0.0.1:{_closed_port()}/idx.tar.zst?sig=SIG123SECRET"
    repo = make_repo(tmp_path / "repo", FILES)
    try:
        with running_server(repo, "--index-from", url, "--set", "index.artifact_retries=0",
                            "--set", "index.artifact_timeout_sec=2",
                            "--set", f"observability.otlp_endpoint={endpoint}") as handle:
            shown = await _shown(handle)
            index = handle.get("/status").json()["index"]
    finally:
        receiver.shutdown()
        receiver.server_close()
    refused = index["source"]["artifact_refused"]
    assert refused["details"]["url"].startswith("http://artuser:***@127.0.0.1:"), refused
    assert refused["details"]["url"].endswith("/idx.tar.zst.sha256?sig=***"), refused  # the sidecar, asked first
    assert any("artuser:***@" in warning for warning in index["warnings"]), index["warnings"]
    assert f"otluser:***@127.0.0.1:{receiver.server_port}/v1/traces" in shown["log"]
    assert {where: _leaks(text) for where, text in shown.items() if _leaks(text)} == {}


def test_a_bundle_redacts_log_lines_an_older_version_wrote_in_clear(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    cpl_json("init", cwd=root)
    logs = root / ".codeplane" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "codeplane.jsonl").write_text(json.dumps({
        "event": "exporting traces over OTLP", "endpoint": "http://otluser:otlpPASSWORD99@127.0.0.1:9/v1/traces",
        "artifact": "https://b.s3.amazonaws.com/i.tar.zst?X-Amz-Signature=SIG123SECRET&v=1"}) + "\n")
    bundled = _bundle_text(root)
    assert "otluser:***@127.0.0.1" in bundled and "X-Amz-Signature=***" in bundled, bundled[-2000:]
    assert not _leaks(bundled), _leaks(bundled)


def test_a_git_remotes_query_token_is_masked_by_the_same_rule() -> None:
    assert redact("https://host/r.git?token=abc&x=1") == "https://host/r.git?token=***&x=1"
    assert redact("https://user:pw@host/r.git") == "https://user:***@host/r.git"
