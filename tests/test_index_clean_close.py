"""index.db's open check after a clean close and after a crash (issue 19 warm restart, issue 24 damage).

A clean close leaves ``index.db-clean``; the next open then runs only the cheap check. A kill, a marker that
no longer describes the file, or damage seen while running means the full ``quick_check``.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from codeplane.core.layout import RepoLayout
from codeplane.index.doctor import check_index
from codeplane.index.store import CLEAN_SUFFIX, IndexStore
from tests.builders import ServerHandle, make_repo, start_server


def _filled(path: Path, rows: int = 2000) -> IndexStore:
    store = IndexStore(path, trust_clean_close=True)
    store.open()
    conn = store.conn
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO files(path, kind, language, size, mtime_ns, inode, content_hash, file_sha256, "
                     "line_count, indexed_epoch) VALUES (?, 'text', 'python', 1, 1, 1, ?, ?, 1, 1)",
                     [(f"pkg/m{n:05}.py", f"h{n}", f"s{n}") for n in range(rows)])
    conn.execute("COMMIT")
    return store


def _marker(path: Path) -> Path:
    return Path(f"{path}{CLEAN_SUFFIX}")


def _forge_marker(path: Path) -> None:
    """A marker describing the file as it is now: what a clean close would have written."""
    st = path.stat()
    _marker(path).write_text(json.dumps({"size": st.st_size, "ino": st.st_ino, "mtime_ns": st.st_mtime_ns,
                                         "ctime_ns": st.st_ctime_ns, "wal": 0}), encoding="utf-8")


def _garble_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    start = len(data) // 2 // 4096 * 4096
    data[start:start + 4096] = b"\x5a" * 4096
    path.write_bytes(bytes(data))


def test_a_clean_close_skips_the_full_check_and_an_open_store_does_not(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    _filled(db).close()
    assert _marker(db).is_file()
    again = IndexStore(db, trust_clean_close=True)
    again.open()
    assert again.open_check == "cheap"
    assert not _marker(db).exists()  # taken at open: a crash from here on is not a clean close
    assert len(again.all_records()) == 2000
    # Never closed (the process dies): the next open checks fully.
    after_crash = IndexStore(db, trust_clean_close=True)
    after_crash.open()
    assert after_crash.open_check == "full"
    assert after_crash.rebuilt_reason is None
    after_crash.close()
    again.close()


def test_damage_after_a_clean_close_makes_the_marker_stale_and_is_rebuilt(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    _filled(db).close()
    _garble_middle(db)
    store = IndexStore(db, trust_clean_close=True)
    store.open()
    assert store.open_check == "full"
    assert store.rebuilt_reason is not None
    assert store.all_records() == {}
    store.close()


def test_the_cheap_check_catches_truncation_and_garbage_even_with_a_valid_marker(tmp_path: Path) -> None:
    damages: list[tuple[str, Callable[[Path], object]]] = [
        ("truncated", lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2 + 100])),
        ("garbage", lambda p: p.write_bytes(b"this is not a database\n" * 400)),
    ]
    for name, damage in damages:
        db = tmp_path / name / "index.db"
        db.parent.mkdir()
        _filled(db).close()
        damage(db)
        _forge_marker(db)
        store = IndexStore(db, trust_clean_close=True)
        store.open()
        assert store.open_check == "cheap", name
        assert store.rebuilt_reason is not None, name
        store.close()


def test_garbled_pages_inside_a_clean_file_are_left_to_doctor(tmp_path: Path) -> None:
    """The documented gap: a page garbled in the middle while size and timestamps look untouched."""
    root = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    db = RepoLayout(root).index_db
    db.parent.mkdir(parents=True, exist_ok=True)
    _filled(db, rows=20000).close()
    _garble_middle(db)
    _forge_marker(db)
    store = IndexStore(db, trust_clean_close=True)
    store.open()
    assert (store.open_check, store.rebuilt_reason) == ("cheap", None)
    store.close()
    os.unlink(_marker(db))
    checks = {c.name: c for c in check_index(root)}
    assert not checks["index.db"].ok


def test_damage_seen_while_running_means_no_marker(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "index.db"
    store = _filled(db)
    err = sqlite3.DatabaseError("database disk image is malformed")
    err.sqlite_errorcode = 11
    store.note_error(err)
    store.close()
    assert not _marker(db).exists()


def test_a_scratch_store_leaves_no_marker(tmp_path: Path) -> None:
    db = tmp_path / "scratch.db"
    store = IndexStore(db)
    store.open()
    store.close()
    assert not _marker(db).exists()


def _ready(root: Path) -> ServerHandle:
    """A server whose index is open and reconciled (``/ready`` 200), not only listening."""
    server = start_server(root)
    deadline = time.monotonic() + 60
    while server.get("/ready").status_code != 200:
        assert time.monotonic() < deadline, "index did not become ready"
        time.sleep(0.02)
    return server


def _last_check(root: Path) -> str:
    events = [json.loads(line) for line in RepoLayout(root).log_file.read_text().splitlines() if line.strip()]
    checks: list[str] = [e["check"] for e in events if e.get("event") == "index.db checked"]
    return checks[-1]


def test_the_server_skips_the_full_check_after_a_clean_stop_and_runs_it_after_sigkill(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"src/app.py": "def hello():\n    return 1\n"})
    db = RepoLayout(root).index_db
    _ready(root).stop(signal.SIGTERM)
    assert _marker(db).is_file()
    server = _ready(root)
    assert _last_check(root) == "cheap"
    assert not _marker(db).exists()
    server.stop(signal.SIGKILL)
    assert not _marker(db).exists()
    server = _ready(root)
    assert _last_check(root) == "full"
    server.stop(signal.SIGTERM)
    assert _marker(db).is_file()
