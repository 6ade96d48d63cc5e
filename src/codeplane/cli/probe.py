"""Finding and talking to a repository's running server from another process."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from typing import Any

from codeplane.core.layout import RepoLayout
from codeplane.core.procs import pid_alive, pid_suspended
from codeplane.server.instance import lock_is_held, read_running
from codeplane.server.security import REPO_HEADER


@dataclass(frozen=True)
class ServerProbe:
    running: bool
    pid: int | None
    port: int | None
    status: dict[str, Any] | None
    answering: bool
    repo_matches: bool
    error: str | None = None


def probe(layout: RepoLayout, timeout_s: float = 2.0) -> ServerProbe:
    files = read_running(layout)
    running = lock_is_held(layout)
    if not running:
        return ServerProbe(False, files.pid, files.port, None, False, False)
    if files.port is None:
        return ServerProbe(True, files.pid, None, None, False, False, "server is starting (no port file yet)")
    import httpx  # ~0.2 s: `cpl up` imports this module (via main) but must not pay for it

    try:
        response = httpx.get(f"http://127.0.0.1:{files.port}/status", timeout=timeout_s, headers=auth_headers(layout))
    except httpx.HTTPError as exc:
        return ServerProbe(True, files.pid, files.port, None, False, False, f"{type(exc).__name__}: {exc}")
    matches = response.headers.get(REPO_HEADER) == str(layout.root)
    body = response.json() if response.status_code == 200 else None
    return ServerProbe(True, files.pid, files.port, body, response.status_code == 200, matches)


def auth_headers(layout: RepoLayout) -> dict[str, str]:
    """The bearer token of a server started with ``server.require_token`` (``.codeplane/token``): without it
    ``cpl status`` and ``doctor`` took such a server for one "running, not answering"."""
    try:
        token = layout.token_file.read_text(encoding="utf-8").strip()
    except OSError:
        return {}
    return {"Authorization": f"Bearer {token}"} if token else {}


#: How long ``--force`` waits for a SIGKILLed server to be gone (it is normally gone within milliseconds).
_KILL_WAIT_S = 5.0


def _stopped(layout: RepoLayout, pid: int) -> bool:
    """True once the server has let go of the instance lock or has exited. A SIGKILLed process stays a zombie
    until its parent reaps it, and ``kill(pid, 0)`` still succeeds on one: its released lock is what tells
    (``down --force`` said "did not stop" for a zombie). One that is our own child is reaped here."""
    with contextlib.suppress(ChildProcessError, OSError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    return not lock_is_held(layout) or not pid_alive(pid)


@dataclass(frozen=True)
class StopOutcome:
    stopped: bool
    pid: int | None
    #: The process was stopped by job control (Ctrl+Z, SIGSTOP): SIGTERM stays pending until it is continued.
    suspended: bool = False


def stop_server(layout: RepoLayout, timeout_s: float, *, force: bool = False) -> StopOutcome:
    """SIGTERM the recorded pid and wait for the lock to drop; with ``force``, SIGKILL it after ``timeout_s``
    and wait (bounded) until it has exited. A suspended server is not waited for: without ``force`` the answer
    says so at once, with it the SIGKILL comes at once (``down`` waited its whole deadline, 13.5 s, for a
    process that could not act on the signal)."""
    files = read_running(layout)
    pid = files.pid
    if pid is None or not pid_alive(pid):
        return StopOutcome(not lock_is_held(layout), pid)
    os.kill(pid, signal.SIGTERM)
    suspended = pid_suspended(pid)
    if not suspended and _wait_gone(layout, pid, timeout_s):
        return StopOutcome(True, pid)
    if not force:
        return StopOutcome(False, pid, suspended)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    # A fixed 0.2 s was too short for a stopped (SIGSTOP) process; the wait is bounded all the same.
    return StopOutcome(_wait_gone(layout, pid, _KILL_WAIT_S), pid, suspended)


def _wait_gone(layout: RepoLayout, pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if _stopped(layout, pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
