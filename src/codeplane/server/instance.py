"""One server per repository: the instance lock and the ``port`` / ``server.pid`` files.

Invariants:
- The lock (portalocker, exclusive, on ``.codeplane/server.lock``) is held for the server's whole life;
  the OS drops it when the process dies, so a held lock means a live server.
- ``port`` and ``server.pid`` are written atomically only once the server accepts connections, and
  removed on shutdown, when the process really ends: a server whose stop left a thread running keeps them (and the
  lock) until it is gone, so ``cpl down --force`` finds it (server/hard_stop.py). Files found while the lock is
  free are stale and are cleaned.
- The lock file itself holds ``<pid> <port>`` while the lock is held: deleted ``port``/``server.pid`` files
  must not leave a running server that no ``cpl`` command can name (and so stop). It is read only while the lock
  is held: after a crash its pid may be another process's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import portalocker

from codeplane.core.atomic import remove_state_path, write_atomic
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout

#: What a stop may take beyond ``server.shutdown_timeout_sec``: the calls cut short get 2 s to answer
#: (server/drain.py), uvicorn closes the connections (1 s at least), the subsystems stop, and a thread still
#: running gets 2 s more (server/hard_stop.py). Measured with a call that never returns: about 7 s under load.
STOP_SLACK_SEC = 8.0


def stop_deadline_sec(shutdown_timeout_sec: float) -> float:
    """How long after its first stop signal a server has ended, a write batch in flight or a stuck subsystem aside:
    a call's thread that would hold it longer is not waited for (server/hard_stop.py). ``cpl down`` waits that long
    (and a margin) before it answers 2004."""
    return shutdown_timeout_sec + STOP_SLACK_SEC


@dataclass(frozen=True)
class RunningServer:
    pid: int | None
    port: int | None


def read_running(layout: RepoLayout) -> RunningServer:
    def _int(path: Path) -> int | None:
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            return None

    pid, port = _int(layout.pid_file), _int(layout.port_file)
    if (pid is None or port is None) and lock_is_held(layout):
        recorded = _from_lock_file(layout)
        pid, port = pid or recorded.pid, port or recorded.port
    return RunningServer(pid=pid, port=port)


def _from_lock_file(layout: RepoLayout) -> RunningServer:
    try:
        fields = layout.lock_file.read_text().split()
    except OSError:
        return RunningServer(None, None)
    numbers = [int(f) if f.isdigit() else None for f in fields[:2]] + [None, None]
    return RunningServer(pid=numbers[0], port=numbers[1])


def lock_is_held(layout: RepoLayout) -> bool:
    """True when another process holds the instance lock (i.e. a server is running).

    Only reads: the file is opened read-only (``flock`` takes an exclusive lock on any descriptor), so on a
    read-only ``.codeplane/`` (a file system remounted ro) ``cpl status`` and ``cpl down`` still see, and can stop,
    the server. Opening it for appending, as this did, failed there with 5011 and the server could not be stopped.
    """
    try:
        handle = open(layout.lock_file, "rb")  # noqa: SIM115 - closed below, whatever the lock answers
    except (FileNotFoundError, NotADirectoryError):
        return False
    with handle:
        try:
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except (portalocker.exceptions.LockException, portalocker.exceptions.AlreadyLocked):
            return True
        portalocker.unlock(handle)
        return False


class InstanceLock:
    """Acquire on start; refuse with 2004 naming pid and port if another server holds it."""

    def __init__(self, layout: RepoLayout) -> None:
        self.layout = layout
        self._handle: IO[str] | None = None
        self.cleaned_stale: list[str] = []

    def acquire(self) -> None:
        self.layout.state_dir.mkdir(parents=True, exist_ok=True)
        handle = open(self.layout.lock_file, "a")  # noqa: SIM115 - held for the server's lifetime
        try:
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except (portalocker.exceptions.LockException, portalocker.exceptions.AlreadyLocked) as exc:
            handle.close()
            running = read_running(self.layout)
            raise CodePlaneError(
                ErrorCode.SERVER_ALREADY_RUNNING,
                f"a CodePlane server already runs for {self.layout.root} "
                f"(pid {running.pid or 'unknown'}, port {running.port or 'unknown'}); "
                "stop it with `cpl down` first",
                details={"pid": running.pid, "port": running.port, "repo": str(self.layout.root)},
            ) from exc
        self._handle = handle
        self._record(None)
        for stale in (self.layout.port_file, self.layout.pid_file):
            if remove_state_path(stale):  # a directory there too (damage): cpl up answered 9001
                self.cleaned_stale.append(stale.name)

    def publish(self, port: int) -> None:
        """Announce the running server; call only once it accepts connections."""
        write_atomic(self.layout.port_file, f"{port}\n".encode())
        write_atomic(self.layout.pid_file, f"{os.getpid()}\n".encode())
        self._record(port)

    def _record(self, port: int | None) -> None:
        handle = self._handle
        if handle is not None:
            handle.truncate(0)
            handle.write(f"{os.getpid()} {port or '-'}\n")
            handle.flush()

    def restore_if_removed(self, port: int) -> bool:
        """Put back what a deleted ``.codeplane/`` took from a running server: its ``.gitignore`` (or git sees the
        stores the server recreates, and ``git add -A`` commits the index) and its lock, pid and port (or
        ``cpl status``/``cpl down`` say no server runs, and a second ``cpl up`` starts). True when it did."""
        layout = self.layout
        if layout.lock_file.exists() and layout.gitignore_file.exists():
            return False
        layout.state_dir.mkdir(parents=True, exist_ok=True)
        if not layout.gitignore_file.exists():
            write_atomic(layout.gitignore_file, b"*\n")
        if not layout.lock_file.exists():
            handle = open(layout.lock_file, "a")  # noqa: SIM115 - held for the server's lifetime
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
            old, self._handle = self._handle, handle
            if old is not None:
                old.close()  # its lock was on the deleted file
            self.publish(port)
        return True

    def release(self) -> None:
        for path in (self.layout.port_file, self.layout.pid_file):
            remove_state_path(path)
        if self._handle is not None:
            self._handle.truncate(0)
            portalocker.unlock(self._handle)
            self._handle.close()
            self._handle = None


def clean_stale_files(layout: RepoLayout) -> list[str]:
    """Remove port/pid files left by a dead server (only when no server holds the lock)."""
    if lock_is_held(layout):
        return []
    removed = []
    for path in (layout.port_file, layout.pid_file):
        if remove_state_path(path):
            removed.append(path.name)
    return removed
