"""The one subprocess runner: argument lists only (never a shell), a timeout, and process-group kill.

Each child starts in its own session/process group, so a timeout or cancel kills the whole tree
(test runners spawn workers; a leftover grandchild would keep pipes open and leak CPU).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ProcResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")

    def err_text(self) -> str:
        return self.stderr.decode("utf-8", errors="replace")


def kill_process_group(proc: subprocess.Popen[bytes], grace_s: float = 0.5) -> None:
    """SIGTERM the child's process group, then SIGKILL whatever is left after ``grace_s``."""
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        return
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            time.sleep(0.02)
    # The leader may be gone while grandchildren survive; SIGKILL the group once more regardless.
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class ExitWaiter:
    """Sleeps up to a given time, waking at once if the process exits.

    ``Popen.wait(timeout)`` polls with a backoff (about seven wake-ups per 50 ms), which for a watcher that
    naps in 50 ms steps through a whole test run costs more CPU than everything else it does; a Linux pidfd
    makes each nap one ``select``. Elsewhere (no ``pidfd_open``, or a kernel without it) it falls back to
    ``Popen.wait``.
    """

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._fd: int | None = None
        if hasattr(os, "pidfd_open"):
            try:  # the pid cannot be reused before it is reaped, and only this process reaps it
                self._fd = os.pidfd_open(proc.pid)
            except OSError:
                self._fd = None

    def nap(self, seconds: float) -> None:
        if self._fd is None:
            try:
                self.proc.wait(seconds)
            except subprocess.TimeoutExpired:
                pass
            return
        select.select([self._fd], [], [], seconds)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ExitWaiter:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def start(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None,
          stdin: bytes | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own process group with captured output."""
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def run(argv: Sequence[str], *, cwd: Path, timeout_s: float = 60.0,
        env: Mapping[str, str] | None = None, stdin: bytes | None = None,
        on_start: Callable[[subprocess.Popen[bytes]], None] | None = None) -> ProcResult:
    """Run to completion or timeout; on timeout the process group is killed and ``timed_out`` set.

    ``on_start`` gets the process as soon as it runs, so an owner can kill its group on shutdown (the run
    then returns with the signal's return code).
    """
    began = time.monotonic()
    proc = start(argv, cwd=cwd, env=env, stdin=stdin)
    if on_start is not None:
        on_start(proc)
    timed_out = False
    try:
        out, err = proc.communicate(input=stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        kill_process_group(proc)
        out, err = proc.communicate()
    except BaseException:
        kill_process_group(proc)
        proc.communicate()
        raise
    return ProcResult(tuple(argv), proc.returncode, out, err, time.monotonic() - began, timed_out)


def exit_with(owner_pid: int) -> None:
    """In a worker process: exit as soon as ``owner_pid`` has (a pool's initializer).

    A process pool's workers wait on a queue whose writing end they hold themselves, so the owner's SIGKILL (an OOM
    kill, ``kill -9``) never wakes them: they, and the forkserver they came from, stayed forever.
    """
    def watch() -> None:
        try:
            handle = os.pidfd_open(owner_pid)
        except (AttributeError, OSError):  # an old kernel: poll instead
            while True:
                time.sleep(1.0)
                try:
                    os.kill(owner_pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:  # alive, another user's (cannot be ours, but not gone either)
                    continue
        else:
            select.select([handle], [], [])
        os._exit(1)

    threading.Thread(target=watch, name="codeplane-owner-watch", daemon=True).start()


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user counts: signalling it is refused, not absent)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pid_suspended(pid: int) -> bool:
    """Whether ``pid`` is stopped by job control (Ctrl+Z, SIGSTOP) or a tracer: such a process cannot act on
    SIGTERM until it is continued, so waiting for it to stop by itself only spends the user's time."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    # The command name (field 2) is parenthesised and may itself contain ") "; the state follows the last ")".
    state = stat[stat.rfind(")") + 1:].split()[:1]
    return state in (["T"], ["t"])
