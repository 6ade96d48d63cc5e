"""Test builders: real git repositories in temp dirs and the real server as a subprocess.

No mocks: ``make_repo`` runs git, ``running_server`` starts ``cpl up`` and ``mcp_session`` connects
with the official ``mcp`` client over streamable HTTP.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from mcp_types import Implementation

from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer

CPL = [sys.executable, "-m", "codeplane.cli"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, env=env, check=check, capture_output=True, text=True)


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


def until(check: Callable[[], bool], timeout: float = 15.0) -> None:
    """Poll ``check`` every 20 ms until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def install_hook(root: Path, name: str, body: str) -> None:
    """An executable ``sh`` hook ``name`` in the repository at ``root``."""
    hook = root / ".git" / "hooks" / name
    hook.write_text("#!/bin/sh\n" + body)
    os.chmod(hook, 0o755)


def make_repo(root: Path, files: Mapping[str, str | bytes] | None = None, *, commit: bool = True) -> Path:
    """A real git repository at ``root`` holding ``files`` (committed unless ``commit=False``)."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    if files:
        write_files(root, files)
        if commit:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "initial")
    return root


def cpl_env(extra: Mapping[str, str] | None = None, *, home: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CODEPLANE__")}
    env.update(GIT_ENV)
    # The default profile is `core`; the suite exercises every tool (test_mcp_server checks the default).
    env["CODEPLANE__TOOLS__PROFILE"] = "full"
    if home is not None:
        env["XDG_CONFIG_HOME"] = str(home)
    env.update(extra or {})
    return env


def cpl(*args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 60,
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CPL, *args], check=False, cwd=cwd, env=dict(env) if env else cpl_env(),
                          capture_output=True, text=True, timeout=timeout)


def cpl_json(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> Any:
    proc = cpl(*args, "--json", cwd=cwd, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"no JSON from cpl {args}: rc={proc.returncode} out={proc.stdout!r} err={proc.stderr!r}"
    return json.loads(lines[-1])


@dataclass
class ServerHandle:
    proc: subprocess.Popen[str]
    root: Path
    port: int
    ready: dict[str, Any]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    def get(self, route: str, **kwargs: Any) -> httpx.Response:
        return httpx.get(self.base_url + route, timeout=10, **kwargs)

    def wait_serving(self, timeout: float = 60) -> None:
        """Wait until the MCP stack has booted behind the listening socket (``/health`` phase)."""
        deadline = time.monotonic() + timeout
        while self.get("/health").json()["phase"] != "serving":
            assert time.monotonic() < deadline, "server did not finish booting"
            time.sleep(0.02)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def start_server(root: Path, *extra: str, env: Mapping[str, str] | None = None,
                 timeout: float = 60) -> ServerHandle:
    """Start ``cpl up --port 0 --json`` and wait for its ready line."""
    # stderr goes to a file, not a pipe: nobody drains a pipe while a test runs, and a server that logs
    # more than the pipe holds would block inside a logging call, holding its locks.
    errors = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (outlives this function, like proc)
    proc = subprocess.Popen(
        [*CPL, "up", str(root), "--port", "0", "--json", *extra],
        cwd=root, env=dict(env) if env else cpl_env(), stdout=subprocess.PIPE, stderr=errors,
        text=True,
    )
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            if proc.poll() is not None:
                errors.seek(0)
                raise RuntimeError(f"cpl up exited {proc.returncode}: {errors.read()}")
            continue
        if line.startswith("{"):
            ready = json.loads(line)
            if ready.get("event") == "ready":
                return ServerHandle(proc=proc, root=root, port=int(ready["port"]), ready=ready)
    proc.kill()
    raise RuntimeError("cpl up did not become ready")


@contextmanager
def running_server(root: Path, *extra: str, env: Mapping[str, str] | None = None) -> Iterator[ServerHandle]:
    handle = start_server(root, *extra, env=env)
    try:
        yield handle
    finally:
        handle.stop()


@asynccontextmanager
async def mcp_client(handle: ServerHandle, name: str | None = None) -> AsyncIterator[Client]:
    """A connected client. Stateless clients get one default session per client program (clientInfo),
    so each test client gets its own program name unless ``name`` says otherwise."""
    info = Implementation(name=name or f"test-client-{uuid.uuid4().hex[:12]}", version="0")
    async with Client(handle.mcp_url, client_info=info) as client:
        yield client


def envelope(result: Any) -> dict[str, Any]:
    """The ``{result|error, meta}`` envelope of a ``CallToolResult`` (its structured content). The text block
    is the rendering for the model (``server/answers.py``); ``answer_text`` returns it."""
    body: dict[str, Any] = result.structured_content
    assert isinstance(body, dict) and ("result" in body or "error" in body), result
    return body


def answer_text(result: Any) -> str:
    text: str = result.content[0].text
    return text


async def call(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Call a tool that must succeed; returns ``result`` of the envelope."""
    res = await client.call_tool(tool, args or {})
    body = envelope(res)
    assert not res.is_error, f"{tool} failed: {body}"
    out: dict[str, Any] = body["result"]
    return out


async def call_error(client: Client, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Call a tool that must fail; returns the catalog ``error`` object."""
    res = await client.call_tool(tool, args or {})
    body = envelope(res)
    assert res.is_error, f"{tool} unexpectedly succeeded: {body}"
    err: dict[str, Any] = body["error"]
    return err


@contextmanager
def indexed_repo(root: Path, files: Mapping[str, str]) -> Iterator[tuple[Path, IndexService]]:
    """A real git repository holding ``files`` and its started index (lexical and structural), stopped after."""
    repo = make_repo(root, files)
    index = IndexService(repo, RepoLayout(repo), CodePlaneConfig().index)
    index.register_indexer(StructuralIndexer())
    index.start()
    try:
        assert index.wait_ready(60)
        yield repo, index
    finally:
        index.stop()


#: The bound every answer's text keeps without a cursor (issue 16).
TEXT_BOUND = 16 * 1024


async def follow_parts(client: Client, tool: str, args: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """Every part's (record, text), following ``next_cursor`` to the end; each text checked against the bound."""
    parts: list[tuple[dict[str, Any], str]] = []
    cursor: str | None = None
    while True:
        res = await client.call_tool(tool, {**args, **({"cursor": cursor} if cursor else {})})
        assert not res.is_error, envelope(res)
        text = answer_text(res)
        assert len(text.encode()) <= TEXT_BOUND, (tool, args, len(parts), len(text.encode()))
        result: dict[str, Any] = envelope(res)["result"]
        parts.append((result, text))
        cursor = result.get("next_cursor")
        if cursor is None:
            return parts

