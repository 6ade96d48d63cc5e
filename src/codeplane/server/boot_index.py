"""The index's part of the boot, begun before the MCP stack is imported (issue 19's warm restart).

The boot's imports (the MCP SDK, pydantic models, ~40 tool modules) hold one core for most of half a second;
the index's start (crash recovery, opening ``index.db`` and Tantivy, the watcher's inotify setup, the startup
reconcile's stat walk) does not need any of them. :class:`EarlyIndex` starts it on its own thread as the boot
begins, so the two overlap instead of queueing; ``build_services`` then takes the running index, and its
``index`` lifecycle waits for the startup reconcile exactly as it did (``/ready`` means the same).

Order is unchanged where it matters: a batch a crash left half-written is rolled back before the index reads
the tree (recovery used to be the first lifecycle); recovery and the index's start run in that order on one
thread. This module must stay light to import: only the index and the journal, nothing of the SDK.
"""

from __future__ import annotations

import threading
from pathlib import Path

from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.mutation.journal import recover


def build_index(root: Path, config: CodePlaneConfig) -> IndexService:
    """The index service with every fact indexer registered; the server and ``cpl init`` both use it."""
    index = IndexService(root, RepoLayout(root), config.index)
    # Facts are written in the same transaction as each epoch, so the indexer is registered before start.
    index.register_indexer(StructuralIndexer())
    return index


class EarlyIndex:
    """Crash recovery, then the index service's start, on a thread begun by the boot (see the module docstring).

    Failures are kept, not raised on that thread: :meth:`recovered` and :meth:`started` raise them on the
    caller's, where the lifecycle that used to run the step would have (so a failed recovery or index start
    still fails the boot with its own error).
    """

    def __init__(self, root: Path, config: CodePlaneConfig) -> None:
        self.root = root
        self.index = build_index(root, config)
        self._recovered = threading.Event()
        self._recovery_error: Exception | None = None
        #: The write batches a crash left unfinished that recovery rolled back.
        self._rolled_back: list[str] = []
        self._start_error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="cpl-index-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._rolled_back = recover(self.root, RepoLayout(self.root).journal_dir)
        except Exception as exc:  # noqa: BLE001 - raised by recovered()/started() on the boot's side
            self._recovery_error = exc
            return
        finally:
            self._recovered.set()
        try:
            self.index.start()
        except Exception as exc:  # noqa: BLE001 - raised by started()
            self._start_error = exc

    def recovered(self) -> list[str]:
        """Wait for crash recovery; raise its error, else return the batches it rolled back."""
        self._recovered.wait()
        if self._recovery_error is not None:
            raise self._recovery_error
        return self._rolled_back

    def started(self) -> IndexService:
        """Wait until the index service has started (its startup reconcile queued or running); raise what failed."""
        self._thread.join()
        self.recovered()
        if self._start_error is not None:
            raise self._start_error
        return self.index

    def abandon(self) -> None:
        """Stop the index if it started: the boot failed, or the server stops before it serves."""
        self._thread.join()
        if self._recovery_error is None and self._start_error is None:
            self.index.stop()
