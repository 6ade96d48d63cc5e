"""Extraction across cores: a lazily started pool of worker processes, reused across batches.

Small batches (a typical edit) are extracted in-process: starting or feeding workers would cost more than
parsing a few files. Workers come from a ``forkserver`` (``spawn`` where unavailable) so they never inherit
the server's threads or locks. If the pool breaks, extraction continues in-process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from codeplane.core.logging import get_logger
from codeplane.index.structural.extract import Outcome, extract_many

_log = get_logger("index.structural.workers")
#: Below this many files a batch is extracted in the calling thread.
PARALLEL_MIN_FILES = 24


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
                    context.set_forkserver_preload(["codeplane.index.structural.extract"])
                self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
            return self._pool

    def extract(self, items: list[tuple[str, str]]) -> list[Outcome]:
        """Outcomes in the order of ``items``."""
        if self.workers <= 1 or len(items) < PARALLEL_MIN_FILES:
            return extract_many(items)
        # Balance by size: biggest files first, dealt round-robin into a few batches per worker.
        order = sorted(range(len(items)), key=lambda i: -len(items[i][1]))
        batches: list[list[int]] = [[] for _ in range(self.workers * 3)]
        for position, index in enumerate(order):
            batches[position % len(batches)].append(index)
        batches = [b for b in batches if b]
        try:
            pool = self._executor()
            futures = [pool.submit(extract_many, [items[i] for i in batch]) for batch in batches]
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
