"""Extraction across cores: a lazily started pool of worker processes, reused across batches.

Small batches (a typical edit) are extracted in-process: starting workers costs about a second, worth it
only for a cold index of a big tree (``START_POOL_CHARS`` of text in one batch); once started, the pool
serves the epoch's other batches above ``USE_POOL_CHARS``, split into contiguous runs of about equal parsing
cost whose big tables come back staged (``staging``), and is let go when the epoch's extraction is done.
A first build of a big tree starts them (``prewarm``) while the tree is walked, so their start-up overlaps it.
``submit`` returns at once, so the caller writes one batch while the workers parse the next. Workers come
from a ``forkserver`` (``spawn`` where unavailable) so they never inherit the server's threads or locks, and exit
when the server does, even killed (``exit_with``). If the pool breaks, extraction continues in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from codeplane.core.logging import get_logger
from codeplane.core.procs import exit_with
from codeplane.index.languages import detect
from codeplane.index.structural.extract import MAX_CHARS, Outcome
from codeplane.index.structural.staging import Staged, StagedOutcomes, extract_staged

_log = get_logger("index.structural.workers")
#: Text in one batch that justifies starting the workers, and, once they run, using them (a batch's text, not
#: its cost: a cold index starts with a batch of translation catalogs, and the workers should be up by the next).
#: Low once they run: a batch extracted in-process stalls the single writer while both cores could parse it.
START_POOL_CHARS = 1_000_000
USE_POOL_CHARS = 64_000
#: What a file no grammar parses costs to extract, in characters of parsed text (it is only detected).
_SKIPPED_COST = 16
_MAIN_LOCK = threading.Lock()
#: What a warmed-up worker extracts first: next to nothing, but through the Python grammar most trees need.
_WARM_UP = [("__warm_up__.py", "pass\n")]


@contextmanager
def _plain_main() -> Iterator[None]:
    """Workers need nothing from ``__main__``. Without this, each one would re-run the entry script's imports
    (the whole CLI, seconds) before serving its first batch; workers start during ``submit``."""
    with _MAIN_LOCK:  # the warm-up thread and a batch's submit must not save each other's ``None``s
        main = sys.modules.get("__main__")
        saved = {name: getattr(main, name) for name in ("__file__", "__spec__") if hasattr(main, name)}
        try:
            for name in saved:
                setattr(main, name, None)
            yield
        finally:
            for name, value in saved.items():
                setattr(main, name, value)


class ExtractionPool:
    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else max(1, min(os.cpu_count() or 1, 8))
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                methods = multiprocessing.get_all_start_methods()
                context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
                if "forkserver" in methods:
                    context.set_forkserver_preload(["codeplane.core.procs", "codeplane.index.structural.staging",
                                                    "codeplane.index.structural.adapters.python",
                                                    "codeplane.index.structural.adapters.generic"])
                self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context,
                                                 initializer=exit_with, initargs=(os.getpid(),))
            return self._pool

    def prewarm(self, size: int) -> None:
        """Start the workers now, in a thread, when a first build of ``size`` bytes would start them anyway: that
        takes the forkserver's imports and a process per worker, a fraction of a second the first batch would
        otherwise wait for (more on a busy machine); done while the caller walks the tree, it overlaps the walk."""
        if self.workers <= 1 or size < START_POOL_CHARS or self._pool is not None:
            return
        # The pool object is made here (cheap); the thread only starts its processes, so a pool let go meanwhile
        # (``release``) is never brought back to life by it.
        threading.Thread(target=self._warm, args=(self._executor(),), name="codeplane-extraction-warmup",
                         daemon=True).start()

    def _warm(self, pool: ProcessPoolExecutor) -> None:
        try:
            with _plain_main():
                for _ in range(self.workers):
                    # A job of a module the forkserver preloaded: one of this module would make each worker import
                    # it (and the logging it pulls in): measured on Django, +1 s of CPU and +40 MB for two workers.
                    pool.submit(extract_staged, _WARM_UP)
        except (BrokenProcessPool, OSError, RuntimeError) as exc:  # let go meanwhile, or refused: batches start it
            _log.info("extraction_pool_warmup_skipped", error=str(exc))

    def submit(self, items: list[tuple[str, str]]) -> Extraction:
        """Start extracting ``items``; big batches run in the workers while the caller goes on (a cold index
        writes one batch while the next is parsed), small ones in-process when the result is asked for."""
        threshold = USE_POOL_CHARS if self._pool is not None else START_POOL_CHARS
        if self.workers <= 1 or sum(len(text) for _, text in items) < threshold or len(items) < 2:
            return Extraction(self, items, [])
        costs = [_cost(path, text) for path, text in items]
        batches = _runs(costs, self.workers * 3)
        try:
            pool = self._executor()
            with _plain_main():
                futures = [pool.submit(extract_staged, items[start:end]) for start, end in batches]
        except (BrokenProcessPool, OSError, RuntimeError) as exc:
            self.broken(exc)
            return Extraction(self, items, [])
        return Extraction(self, items, futures, sum(costs))

    def broken(self, exc: BaseException) -> None:
        """The pool failed (a worker died, the system refused a process): drop it; the next batch starts anew."""
        _log.warning("extraction_pool_failed", error=str(exc))
        self.close()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def release(self) -> None:
        """Let the workers go once an epoch's extraction is done, without waiting for them to exit: idle, they would
        hold their memory (about 50 MB each) for the server's whole life. The next big batch starts them again."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _cost(path: str, text: str) -> int:
    """About what extracting a file costs: its text if a grammar parses it, next to nothing otherwise (a batch
    of translation catalogs and one of JavaScript weigh very differently for the same size)."""
    info = detect(path)
    if info is None or info.grammar is None or len(text) > MAX_CHARS:
        return _SKIPPED_COST
    return len(text)


def _runs(costs: list[int], count: int) -> list[tuple[int, int]]:
    """``count`` contiguous runs of about equal cost (contiguous so staged rows keep the file order)."""
    total = sum(costs)
    runs: list[tuple[int, int]] = []
    start, done = 0, 0
    for index, cost in enumerate(costs):
        done += cost
        if done * count >= total * (len(runs) + 1) and index + 1 < len(costs):
            runs.append((start, index + 1))
            start = index + 1
    runs.append((start, len(costs)))
    return runs


class Extraction:
    """One submitted batch: its outcomes come from the workers, or from this process if the pool was not used
    or broke (extraction is pure, so redoing it here gives the same answer)."""

    def __init__(self, pool: ExtractionPool, items: list[tuple[str, str]],
                 futures: list[Future[StagedOutcomes]], pooled_cost: int = 0) -> None:
        self._pool = pool
        self._items = items
        self._futures = futures
        #: What the batch gives the workers to do (``_cost``); 0 for one extracted in this process.
        self.pooled_cost = pooled_cost

    def result(self) -> tuple[list[Outcome], list[Staged]]:
        """Outcomes in the order of the submitted items, and their staged rows in the same order."""
        if not self._futures:
            return _joined([extract_staged(self._items)])
        try:
            return _joined([future.result() for future in self._futures])
        except (BrokenProcessPool, OSError, CancelledError) as exc:
            self._pool.broken(exc)
            return _joined([extract_staged(self._items)])

    def cancel(self) -> None:
        """Drop the batch (its epoch was rolled back); work already running finishes unseen."""
        for future in self._futures:
            future.cancel()


def _joined(parts: list[StagedOutcomes]) -> tuple[list[Outcome], list[Staged]]:
    return [o for part in parts for o in part.outcomes], [p.staged for p in parts if p.staged is not None]
