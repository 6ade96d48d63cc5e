"""``cpl up``'s terminal line while the server builds its first index (the server is the same process).

The index pipeline records the running full reconcile (``codeplane.index.progress``); this follows it with a
transient progress bar and prints one summary line when it ends. A warm start's reconcile ends within a second
and shows nothing.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

from codeplane.index import progress as build_progress

#: How long to wait for the server's boot to start the first reconcile, and how long one must run to be shown.
APPEAR_SEC = 120.0
SHOW_AFTER_SEC = 1.0
_LABELS = {"scanning": "Scanning files", "indexing": "Indexing", "finishing": "Linking and committing"}


def follow_first_index(root: Path, console: Console) -> threading.Thread:
    """Show the first index build's progress from a daemon thread; returns the thread."""
    thread = threading.Thread(target=_follow, args=(root, console), name="codeplane-index-progress", daemon=True)
    thread.start()
    return thread


def _follow(root: Path, console: Console) -> None:
    deadline = time.monotonic() + APPEAR_SEC
    while build_progress.current(root) is None:
        if time.monotonic() > deadline:
            return
        time.sleep(0.05)
    time.sleep(SHOW_AFTER_SEC)
    snapshot = build_progress.current(root)
    if snapshot is None:
        return
    # The bar is the build's percentage (the finish included), not the files': all files indexed is not built.
    columns = (TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TextColumn("{task.fields[files]}"),
               TimeElapsedColumn())
    last, serial = snapshot, snapshot.serial
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(_LABELS["scanning"], total=None, files="")
        while snapshot is not None and snapshot.serial == serial:
            last = snapshot
            files = f"{snapshot.files_done:,}/{snapshot.files_total:,} files" if snapshot.files_total else ""
            bar.update(task, description=_LABELS.get(snapshot.phase, "Indexing"), completed=snapshot.percent,
                       total=100.0 if snapshot.files_total else None, files=files)
            time.sleep(0.2)
            snapshot = build_progress.current(root)
    outcome = build_progress.ended(root, serial)
    if outcome is not None:
        done, last = outcome
    else:  # another reconcile has ended since: this one published (a failed first build is retried, not followed)
        done = True
    if done:
        console.print(f"Index built: {last.files_total:,} files in {last.elapsed_sec:.1f} s")
    else:
        console.print(f"Index build stopped at {last.files_done:,} of {last.files_total:,} files after "
                      f"{last.elapsed_sec:.1f} s: nothing of it was kept; the next cpl up builds it again")
