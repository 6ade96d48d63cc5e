"""``cpl up``'s side of starting from a shared index artifact: ``--index-from`` and the download before serving.

The server adopts the artifact while it boots (``index/artifact_adopt.py``); a URL is downloaded first, here, so
the terminal can show progress. The download lands in the content-addressed cache the server's adoption reads, so
it happens once. It runs before the server binds its port — in the boot, the index's start would wait for it and a
stop could not cut it short — so until it ends nothing listens: ``cpl up --json`` prints ``fetching_artifact`` lines
(bytes so far, and the total when the host sends it) and then ``artifact_fetched`` or ``artifact_fetch_failed``
before ``ready``, and ``cpl status`` reads the progress the download records (``index/artifact_progress.py``).
Ctrl+C or SIGTERM during it stops ``cpl up`` as they stop a server: the partial download is removed and nothing
is served. A failed download is printed and handed to the server, whose adoption refuses with it (recorded in
``/status`` and the log like any refusal) rather than fetching again (it would only fail the same way): the
index is built from disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType

from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

from codeplane.cli.output import console, err_console, styled
from codeplane.cli.repo_context import RepoContext
from codeplane.core.clock import monotonic, now_ms
from codeplane.core.errors import CodePlaneError
from codeplane.core.logging import get_logger
from codeplane.core.redaction import redact_url
from codeplane.index import artifact_progress
from codeplane.index.artifact_adopt import cache_dir, fetch_configured, fetch_failed, should_adopt
from codeplane.index.artifact_fetch import FetchedArtifact, is_url

log = get_logger(__name__)
#: How often ``--json`` prints a ``fetching_artifact`` line while bytes arrive.
_JSON_EVERY_SEC = 1.0


def index_from_overrides(source: str | None) -> list[str]:
    """``--index-from`` as config overrides: the artifact (a local path made absolute) and ``always``."""
    if not source:
        return []
    value = source if is_url(source) else str(Path(source).expanduser().resolve())
    return [f"index.artifact={value}", "index.artifact_adopt=always"]


class _Stop(BaseException):
    """SIGTERM or SIGINT during the download: it unwinds the wait for it as Ctrl+C's ``KeyboardInterrupt`` does."""


_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


class _Reports:
    """The download's progress for whoever is not looking at the bar: ``--json`` lines and ``cpl status``'s record,
    both kept by a thread of their own, so a host that stalls leaves neither silent nor stale."""

    def __init__(self, source: str, cache: Path, *, as_json: bool) -> None:
        self.source, self.cache, self.as_json = source, cache, as_json
        self.started_ms, self.began = now_ms(), monotonic()
        self.done: int = 0
        self.total: int | None = None
        self._ended = threading.Event()
        self._thread = threading.Thread(target=self._run, name="codeplane-artifact-progress", daemon=True)

    def __enter__(self) -> _Reports:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ended.set()
        self._thread.join()
        artifact_progress.clear(self.cache)

    def progress(self, done: int, total: int | None) -> None:
        self.done, self.total = done, total

    def _run(self) -> None:
        printed = -_JSON_EVERY_SEC
        while True:
            done, total = self.done, self.total
            artifact_progress.record(self.cache, source=self.source, done=done, total=total,
                                     started_ms=self.started_ms)
            if monotonic() - printed >= _JSON_EVERY_SEC:
                printed = monotonic()
                self.line({"event": "fetching_artifact", "source": self.source, "pid": os.getpid(), "bytes": done,
                           "total": total})
            if self._ended.wait(artifact_progress.EVERY_SEC):
                return

    def line(self, payload: dict[str, object]) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps(payload) + "\n")
            sys.stdout.flush()

    def ms(self) -> int:
        return int((monotonic() - self.began) * 1000)


def _in_worker(fetch: Callable[[], FetchedArtifact]) -> FetchedArtifact:
    """``fetch()`` on a thread of its own while this one waits in short joins: a stop signal's exception is raised
    here, between two joins, never inside the HTTP client (raised there it could leave the connection pool's lock
    held, and the unwinding that closes the response then waited on it for good: a Ctrl+C hung under load). The
    download itself, stalled on a host, is left to end with the process (a daemon thread)."""
    outcome: list[FetchedArtifact | BaseException] = []

    def run() -> None:
        try:
            outcome.append(fetch())
        except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread, which raises it as it is)
            outcome.append(exc)

    worker = threading.Thread(target=run, name="codeplane-artifact-fetch", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


def _remove_own_partials(cache: Path) -> None:
    """The partial download this process still holds open (its fetch thread is left blocked on the host): removed
    as the fetch's own clean-up would (another process's download in progress is not touched)."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:  # no /proc: the next fetch, start or `cpl doctor --fix` sweeps it once this process has ended
        return
    held = set()
    for fd in fds:
        with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
            held.add(os.path.realpath(os.readlink(f"/proc/self/fd/{fd}")))
    for partial in cache.glob(".*.part"):
        if os.path.realpath(partial) in held:
            partial.unlink(missing_ok=True)


def prefetch_artifact(ctx: RepoContext, *, show_progress: bool, as_json: bool = False) -> bool:
    """Download a URL artifact the server is about to adopt (a failure is the adoption's refusal). False: a stop
    signal (SIGTERM, Ctrl+C) ended the download, its partial file removed; nothing is to be served."""
    config = ctx.config.index
    if not config.artifact or not is_url(config.artifact) or should_adopt(ctx.layout, config) is not None:
        return True
    reports = _Reports(redact_url(config.artifact), cache_dir(ctx.layout), as_json=as_json)
    columns = (TextColumn("Fetching index artifact"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    # SIGTERM is how `cpl up` is stopped (`cpl down`, a supervisor): its default action killed the process mid-write,
    # leaving the partial download (QA62 #6). SIGINT too, as the server takes it once it starts: a process started in
    # the background of a script inherits SIGINT ignored, and Ctrl+C's KeyboardInterrupt then never came.
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, _stop) for sig in _STOP_SIGNALS} if main else {}
    try:
        try:
            with reports, Progress(*columns, console=console, transient=True, disable=not show_progress) as bar:
                task = bar.add_task("fetch", total=None)

                def progress(done: int, total: int | None) -> None:
                    bar.update(task, completed=done, total=total)
                    reports.progress(done, total)

                fetched = _in_worker(lambda: fetch_configured(ctx.root, ctx.layout, config, progress=progress))
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    except (_Stop, KeyboardInterrupt):
        _remove_own_partials(reports.cache)
        log.info("stopped during the index artifact download; the partial download was removed",
                 source=reports.source, bytes=reports.done)
        return False
    except CodePlaneError as exc:
        reports.line({"event": "artifact_fetch_failed", "source": reports.source, "ms": reports.ms(),
                      "error": exc.to_payload()})
        err_console.print(styled(("index artifact not used", "yellow"), f" ({exc.code} {exc.error.name}): "
                                 f"{exc.message}; building the index from disk"))
        fetch_failed(ctx.layout, exc)
        return True
    reports.line({"event": "artifact_fetched", "source": reports.source, "bytes": fetched.path.stat().st_size,
                  "ms": reports.ms()})
    return True
