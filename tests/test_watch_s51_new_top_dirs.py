"""Nothing written while the root gains directories is lost (QA42 finding 1).

Each directory the root gains re-plans the tree watch. The old tree watch used to be stopped first (dropping the
events it had collected) and the new one started without waiting for it: writes anywhere in the tree during that
gap were never reported, and the new directory was walked before its watch was live. The index then left those
files out until a restart, with nothing pending."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from tests.builders import make_repo

_NEW_DIRS = 20
_FILES = 300


def _indexed_under(service: IndexService, prefix: str) -> set[str]:
    with service.read_connection() as conn:
        rows = conn.execute("SELECT path FROM files WHERE path GLOB ?", (prefix + "*",)).fetchall()
    return {str(row[0]) for row in rows}


def _write_slowly(directory: Path, stem: str, until: threading.Event) -> list[str]:
    """Files into ``directory`` at a steady pace while the other thread adds top-level directories (and a few
    more after it, so writes straddle the last re-plan too)."""
    names: list[str] = []
    extra = 0
    for i in range(_FILES):
        if until.is_set():
            extra += 1
            if extra > 30:
                break
        name = f"{stem}{i:04d}.txt"
        (directory / name).write_text("needle\n")
        names.append(name)
        time.sleep(0.003)
    return names


def test_files_written_while_the_root_gains_directories_are_all_indexed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"existing/seed.txt": "x\n", "top.py": "x = 1\n"})
    service = IndexService(repo, RepoLayout(repo), IndexConfig(watch=True, debounce_ms=20))
    service.start()
    try:
        assert service.wait_ready(60)
        deadline = time.monotonic() + 15
        while service._watcher is None:  # started once the first build is published
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert service._watcher.wait_live(15)

        done = threading.Event()

        def add_top_level_directories() -> None:
            for i in range(_NEW_DIRS):
                (repo / f"top_{i:02d}").mkdir()
                (repo / f"top_{i:02d}" / "a.txt").write_text("x\n")
                time.sleep(0.04)
            done.set()

        (repo / "fresh").mkdir()  # a new top-level directory that keeps receiving files through the re-plans
        maker = threading.Thread(target=add_top_level_directories)
        fresh_names: list[str] = []
        into_fresh = threading.Thread(target=lambda: fresh_names.extend(_write_slowly(repo / "fresh", "g", done)))
        maker.start()
        into_fresh.start()
        existing_names = _write_slowly(repo / "existing", "f", done)
        maker.join()
        into_fresh.join()

        want_existing = {f"existing/{n}" for n in existing_names} | {"existing/seed.txt"}
        want_fresh = {f"fresh/{n}" for n in fresh_names}
        want_tops = {f"top_{i:02d}/a.txt" for i in range(_NEW_DIRS)}
        # A lost change is lost for good (nothing stays pending), so waiting longer would not help: wait until the
        # watcher's batches have settled, then the index must hold every file.
        deadline = time.monotonic() + 8
        while True:
            existing, fresh, tops = (_indexed_under(service, "existing/"), _indexed_under(service, "fresh/"),
                                     _indexed_under(service, "top_"))
            if (existing, fresh, tops) == (want_existing, want_fresh, want_tops) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert service.watcher_state == "running"
        assert sorted(want_existing - existing) == []
        assert sorted(want_fresh - fresh) == []
        assert sorted(want_tops - tops) == []
    finally:
        service.stop()
