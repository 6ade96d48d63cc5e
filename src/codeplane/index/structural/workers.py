"""Extraction across cores: a lazily started pool of worker processes, reused across batches.

Small batches (a typical edit) are extracted in-process: starting workers costs about a second, worth it
only for a cold index of a big tree (``START_POOL_CHARS`` of text in one batch); once started, the pool
serves any batch above ``USE_POOL_CHARS``. Workers come from a ``forkserver`` (``spawn`` where unavailable)
so they never inherit the server's threads or locks. If the pool breaks, extraction continues in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from codeplane.core.logging import get_logger
from codeplane.index.structural.extract import Outcome, extract_many, extract_wire

_log = get_logger("index.structural.workers")
#: Text in one batch that justifies starting the workers, and, once they run, using them.
START_POOL_CHARS = 1_000_000
USE_POOL_CHARS = 200_000


@contextmanager
def _plain_main() -> Iterator[None]:
    """Workers need nothing from ``__main__``. Without this, each one would re-run the entry script's imports
    (the whole CLI, seconds) before serving its first batch; workers start during ``submit``."""
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
                    context.set_forkserver_preload(["codeplane.index.structural.extract",
                                                    "codeplane.index.structural.adapters.python",
                                                    "codeplane.index.structural.adapters.generic"])
                self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
            return self._pool

    def extract(self, items: list[tuple[str, str]]) -> list[Outcome]:
        """Outcomes in the order of ``items``."""
        size = sum(len(text) for _, text in items)
        threshold = USE_POOL_CHARS if self._pool is not None else START_POOL_CHARS
        if self.workers <= 1 or size < threshold or len(items) < 2:
            return extract_many(items)
        # Balance by size: biggest files first, dealt round-robin into a few batches per worker.
        order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
        batches: list[list[int]] = [[] for _ in range(self.workers * 3)]
        for position, index in enumerate(order):
            batches[position % len(batches)].append(index)
        batches = [b for b in batches if b]
        try:
            pool = self._executor()
            with _plain_main():
                futures = [pool.submit(extract_wire, [items[i] for i in batch]) for batch in batches]
            results: list[Outcome | None] = [None] * len(items)
            for batch, future in zip(batches, futures, strict=True):
                for index, outcome in zip(batch, future.result(), strict=True):
                    results[index] = outcome
            return [r for r in results if r is not None]
        except (BrokenProcessPool, OSError, CancelledError) as exc:
            _log.warning("extraction_pool_failed", error=str(exc))
            self.close()
            return extract_many(items)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
