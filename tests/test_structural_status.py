"""The structural status section follows every structural apply, though it is kept between calls."""

from __future__ import annotations

import time
from pathlib import Path

from codeplane.index.structural import status
from codeplane.index.structural.status import structural_status
from tests.builders import indexed_repo


def test_status_counts_follow_each_apply(tmp_path: Path) -> None:
    with indexed_repo(tmp_path, {"pkg/a.py": "def one():\n    return 1\n"}) as (repo, index):
        db = repo / ".codeplane" / "index.db"
        first = structural_status(db)
        assert first["state"] == "ready" and first["defs"] == 1
        assert structural_status(db) == first  # kept: same apply, same answer

        (repo / "pkg" / "a.py").write_text("def one():\n    return two()\n\n\ndef two():\n    return 2\n")
        index.refresh_paths(["pkg/a.py"])
        second = structural_status(db)
        assert second["defs"] == 2 and second["refs"] > first["refs"]  # type: ignore[operator]

        (repo / "pkg" / "a.py").unlink()
        index.refresh_paths(["pkg/a.py"])
        third = structural_status(db)
        assert third["defs"] == 0 and third["files"] == 0 and third["by_language"] == {}


def test_a_returned_section_is_the_callers_own(tmp_path: Path) -> None:
    with indexed_repo(tmp_path, {"a.py": "x = 1\n"}) as (repo, _index):
        db = repo / ".codeplane" / "index.db"
        mine = structural_status(db)
        mine["defs"] = -1
        mine["by_language"]["python"]["parsed"] = -1  # type: ignore[index]
        again = structural_status(db)
        assert again["defs"] != -1 and again["by_language"] == {"python": {"parsed": 1}}


def test_without_waiting_the_counts_come_from_a_thread(tmp_path: Path) -> None:
    with indexed_repo(tmp_path, {"a.py": "def one():\n    return 1\n"}) as (repo, index):
        db = repo / ".codeplane" / "index.db"
        first = structural_status(db, wait=False)
        assert first["state"] == "ready" and first["files"] == 1
        assert first.get("counts_pending") is True and "defs" not in first  # nothing counted yet
        deadline = time.monotonic() + 30
        while structural_status(db, wait=False).get("counts_pending"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert structural_status(db, wait=False)["defs"] == 1

        (repo / "a.py").write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
        index.refresh_paths(["a.py"])
        stale = structural_status(db, wait=False)  # the last counts, marked, until the thread has read the new ones
        assert stale["defs"] in (1, 2) and (stale["defs"] == 2 or stale.get("counts_pending") is True)
        while structural_status(db, wait=False).get("counts_pending"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert structural_status(db, wait=False)["defs"] == 2


def test_a_recount_waits_in_proportion_to_the_last_count(tmp_path: Path) -> None:
    """Counting a big store's facts takes seconds; a client polling ``/status`` while edits land must not pay one
    count per apply: the last counts stay (marked pending) until the pause after the last count is over."""
    with indexed_repo(tmp_path, {"a.py": "def one():\n    return 1\n"}) as (repo, index):
        db = repo / ".codeplane" / "index.db"
        deadline = time.monotonic() + 30
        while structural_status(db, wait=False).get("counts_pending"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        status._count_ended[db] = (time.monotonic(), 60.0)  # as if the last count had taken a minute
        (repo / "a.py").write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
        index.refresh_paths(["a.py"])
        for _ in range(10):  # no recount within the pause: the last counts, marked
            paused = structural_status(db, wait=False)
            assert paused["files"] == 1 and paused["defs"] == 1 and paused["counts_pending"] is True
            time.sleep(0.02)
        status._count_ended[db] = (time.monotonic() - 2.0, 0.05)  # the pause (20 × 0.05 s) is over
        while structural_status(db, wait=False).get("counts_pending"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert structural_status(db, wait=False)["defs"] == 2
