"""Per-file exclusive locks for the duration of a batch (spec §9.2–9.3).

One lock file per repository path under ``.codeplane/locks/`` (named by the path's hash), locked with
portalocker (``flock``: exclusive between processes *and* between threads of this process, because each
acquisition opens its own file description). Paths are locked in sorted order, so two overlapping
batches never deadlock: the later one waits up to ``timeout`` and then fails with 5003 (retryable),
having released whatever it held. Lock files are never deleted (unlinking a lock file someone waits on
would let two holders in).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import portalocker

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_error

log = get_logger(__name__)

_POLL_S = 0.005


class PathLocks:
    """A set of held locks; use as a context manager (``with locks.acquire(paths):``)."""

    def __init__(self, lock_dir: Path, timeout_s: float) -> None:
        self.lock_dir = lock_dir
        self.timeout_s = timeout_s

    def acquire(self, paths: Iterable[str]) -> HeldLocks:
        """Lock every path (sorted) or none: raises 5003 naming the busy path after ``timeout_s``."""
        self._ensure_dir()
        held = HeldLocks()
        deadline = time.monotonic() + self.timeout_s
        try:
            for path in sorted(set(paths)):
                held.fds.append(self._lock_one(path, deadline))
        except BaseException:
            held.release()
            raise
        return held

    def _ensure_dir(self) -> None:
        """Create the lock directory; a file in its place is damage (derived state) and is replaced."""
        try:
            if self.lock_dir.exists() and not self.lock_dir.is_dir():
                log.warning("a file stood where the lock directory belongs; replacing it", path=str(self.lock_dir))
                self.lock_dir.unlink()
            self.lock_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _storage(exc) from exc

    def _lock_one(self, path: str, deadline: float) -> int:
        name = hashlib.sha256(path.encode("utf-8")).hexdigest()[:32] + ".lock"
        try:
            fd = os.open(self.lock_dir / name, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise _storage(exc) from exc
        while True:
            try:
                portalocker.lock(fd, portalocker.LOCK_EX | portalocker.LOCK_NB)
                return fd
            except portalocker.LockException:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise CodePlaneError(
                        ErrorCode.MUTATION_LOCK_TIMEOUT,
                        f"{path} is being changed by another operation; retry shortly",
                        details={"path": path, "waited_ms": int(self.timeout_s * 1000)},
                    ) from None
                time.sleep(_POLL_S)


class HeldLocks:
    def __init__(self) -> None:
        self.fds: list[int] = []

    def release(self) -> None:
        while self.fds:
            fd = self.fds.pop()
            try:
                portalocker.unlock(fd)
            finally:
                os.close(fd)

    def __enter__(self) -> HeldLocks:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def _storage(exc: OSError) -> BaseException:
    mapped = storage_error(exc, doing="taking the batch's file locks", outcome="nothing was written")
    return mapped if mapped is not None else exc
