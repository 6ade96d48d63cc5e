"""How the indexer thread retries a failed epoch: backing off, and saying each failure once (QA44 §5).

A failure that repeats (a file-size limit, a full disk, a broken file) was retried every ~1.4 s forever with a
full traceback each time: 42 tracebacks a minute in the log, and a CPU kept busy rebuilding the same epoch. The
wait doubles from :data:`FIRST_WAIT_SEC` up to :data:`MAX_WAIT_SEC`; the traceback is logged the first time a
failure is seen (by type and message), later repeats as one line with the count and the next wait. Success
starts over.
"""

from __future__ import annotations

from pathlib import Path

from codeplane.core.logging import get_logger
from codeplane.core.storage import storage_error

log = get_logger(__name__)

FIRST_WAIT_SEC = 1.0
#: Long enough that a lasting failure costs little, short enough that freeing space is noticed soon.
MAX_WAIT_SEC = 30.0


class FailureBackoff:
    """Waits between retries of failed work; not thread-safe (the indexer thread's own)."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.failures = 0
        self._wait = FIRST_WAIT_SEC
        self._seen: str | None = None

    def failed(self, what: str, exc: BaseException) -> tuple[str, float]:
        """Log this failure of ``what`` (a traceback only when it is new); return what ``/status`` says of it
        (``index.error``: with its catalog entry when it is storage, e.g. 5010 for a file-size limit) and how long
        to wait before the retry."""
        mapped = storage_error(exc, doing=what, path=self.state_dir)
        self.failures += 1
        wait = self._wait
        self._wait = min(self._wait * 2, MAX_WAIT_SEC)
        said = f"{type(exc).__name__}: {exc}"
        fields: dict[str, object] = {"attempts": self.failures, "retry_in_sec": wait}
        if mapped is not None:
            fields["code"] = mapped.code
        error = str(mapped) if mapped is not None else f"{what} failed: {type(exc).__name__}: {exc}"
        if said != self._seen:
            self._seen = said
            log.exception(f"{what} failed; will retry", **fields)
        else:
            log.warning(f"{what} failed again; will retry", error=said, **fields)
        return error, wait

    def succeeded(self) -> None:
        self.failures = 0
        self._wait = FIRST_WAIT_SEC
        self._seen = None
