"""Runner processes a killed server left behind.

A cancel or a timeout kills a runner's whole process group, but a server killed outright (SIGKILL, a crash)
cannot: its runners keep going, a hung test forever. So every process a run starts carries, in its
environment, ``CODEPLANE_TEST_OWNER=<server pid>:<its start time>:<state dir>`` (inherited by whatever it
starts in turn). When a :class:`~codeplane.testing.service.TestingService` starts, it kills the processes of
its repository whose owner is gone — no such pid, or one started at another time (a reused pid) — with their
process groups. Their run already ended as ``failed`` (``run_store.py``). Linux only (``/proc``); elsewhere
nothing is found.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from codeplane.core.logging import get_logger

log = get_logger(__name__)

OWNER_ENV = "CODEPLANE_TEST_OWNER"
_PROC = Path("/proc")


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or None if there is no such process."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name may hold spaces and parentheses: fields are counted after its closing one.
    return int(stat.rsplit(")", 1)[1].split()[19])


def owner_token(state_dir: Path) -> str:
    """This process as the owner of the runners it starts for the repository at ``state_dir``."""
    return f"{os.getpid()}:{start_time(os.getpid()) or 0}:{state_dir}"


def _owner_alive(token: str) -> bool:
    pid, _, rest = token.partition(":")
    started, _, _ = rest.partition(":")
    return pid.isdigit() and str(start_time(int(pid))) == started


def reap_orphans(state_dir: Path) -> list[int]:
    """Kill the runner processes of ``state_dir``'s repository whose server is gone; returns their pids."""
    suffix = f":{state_dir}".encode()
    found: list[int] = []
    try:
        pids = [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        try:
            environ = (_PROC / str(pid) / "environ").read_bytes()
        except OSError:
            continue  # gone, or another user's
        for entry in environ.split(b"\0"):
            if entry.startswith(OWNER_ENV.encode() + b"=") and entry.endswith(suffix):
                if not _owner_alive(entry.split(b"=", 1)[1].decode(errors="replace")):
                    found.append(pid)
                break
    own_group = os.getpgrp()
    for pid in found:
        try:
            group = os.getpgid(pid)
            # The group is still in use by this marked process, so its id cannot belong to anyone else.
            if group != own_group:
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        except PermissionError as exc:
            log.warning("cannot kill a leftover test process", pid=pid, error=str(exc))
    if found:
        log.warning("killed test processes a previous server left running", pids=found)
    return found
