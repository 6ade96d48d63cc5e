"""An adopted artifact's SQLite integrity check: before adoption, or after ready when its sha256 is pinned
(index/artifact_integrity.py). Real artifacts, real SQLite and Tantivy, a real index service."""

from __future__ import annotations

import os
import sqlite3
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from codeplane.core.errors import ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.index.artifact_integrity import check_tables
from codeplane.index.search import LexicalScope
from codeplane.index.service import IndexService, LexicalRequest
from codeplane.index.store import IndexStore
from tests.builders import cpl, make_repo, running_server
from tests.test_index_artifact import (
    FILES,
    _answers,
    _clone,
    _corrupt_page,
    _export,
    _repack,
    _running,
    _service,
    _status,
)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin", FILES)


@pytest.fixture
def artifact(origin: Path, tmp_path: Path) -> Path:
    return _export(_clone(origin, tmp_path / "ci"), tmp_path / "out" / "index.tar.zst")


def _pinned(path: Path) -> str:
    return path.with_name(path.name + ".sha256").read_text().split()[0]


def _wait_for(service: IndexService, done: Any, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status = _status(service)
        if done(status):
            return status
        assert time.monotonic() < deadline, status
        time.sleep(0.05)


def _next_open_check(root: Path) -> str:
    """How the server's store would check ``root``'s index.db at its next open (``cheap`` after a clean close)."""
    store = IndexStore(RepoLayout(root).index_db, trust_clean_close=True)
    store.open()
    try:
        return store.open_check
    finally:
        store.close()


def _engine_paths(service: IndexService) -> set[str]:
    hits = service.search_lexical(LexicalRequest(query="Engine", syntax="identifier", scope=LexicalScope()), limit=50)
    return {h.path for h in hits.hits}


def test_a_pinned_artifact_is_checked_after_ready_and_then_closes_clean(origin: Path, artifact: Path,
                                                                        tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(artifact), artifact_sha256=_pinned(artifact)) as service:
        assert _status(service)["source"]["integrity"] == "after_ready"
        status = _wait_for(service, lambda s: s["source"]["integrity_check"]["state"] == "ok")
        assert status["source"]["kind"] == "artifact" and status["state"] == "ready"
    # The owed check passed: the close leaves the clean-close marker, and the next open only checks cheaply.
    assert _next_open_check(root) == "cheap"


def test_a_sidecar_verified_artifact_is_checked_before_adoption(origin: Path, artifact: Path,
                                                               tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(artifact)) as service:
        source = _status(service)["source"]
        assert source["integrity"] == "before_adopt"
        if (os.cpu_count() or 1) > 1:
            # Every table's b-trees were checked before adoption, on two cores; the whole file's page accounting
            # is checked after ready.
            assert source["whole_file_check"] == "after_ready"
            _wait_for(service, lambda s: s["source"]["integrity_check"]["state"] == "ok")
        else:
            assert "whole_file_check" not in source and "integrity_check" not in source
    assert _next_open_check(root) == "cheap"


def _index_db_of(artifact: Path, into: Path) -> Path:
    with tarfile.open(fileobj=zstandard.ZstdDecompressor().stream_reader(artifact.read_bytes()), mode="r|") as tar:
        for member in tar:
            if member.name == "index.db":
                source = tar.extractfile(member)
                assert source is not None
                into.write_bytes(source.read())
                return into
    raise AssertionError("no index.db in the artifact")


def _open(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True, isolation_level=None,
                           check_same_thread=False)


def test_the_table_by_table_check_finds_a_corrupt_page_of_any_table(artifact: Path, tmp_path: Path) -> None:
    clean = _index_db_of(artifact, tmp_path / "clean.db")
    assert check_tables(lambda: _open(clean), 2) == (None, False)
    assert check_tables(lambda: _open(clean), 1) == (None, True)
    with _open(clean) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        # The root page of a small table and of the largest one: the check must reach each, whichever thread.
        roots = dict(conn.execute("SELECT name, rootpage FROM sqlite_schema WHERE name IN ('st_ref', 'meta')"))
    assert set(roots) == {"st_ref", "meta"}
    for table, root in sorted(roots.items()):
        data = bytearray(clean.read_bytes())
        start = (root - 1) * page_size
        data[start + 8:start + page_size] = b"\xa5" * (page_size - 8)
        bad = tmp_path / f"bad-{table}.db"
        bad.write_bytes(bytes(data))
        problem, whole = check_tables(lambda path=bad: _open(path), 2)
        assert problem is not None and not whole, table


def _corrupt_table(table: str) -> Callable[[dict[str, bytes]], None]:
    """Garbage over the root page of ``table`` (a table or an index) in the artifact's index.db (its header's
    first 8 bytes kept)."""
    def mutate(parts: dict[str, bytes]) -> None:
        data = bytearray(parts["index.db"])
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / "index.db"
            copy.write_bytes(bytes(data))
            with _open(copy) as conn:
                page_size = conn.execute("PRAGMA page_size").fetchone()[0]
                root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = ?", (table,)).fetchone()[0]
        start = (root - 1) * page_size
        data[start + 8:start + page_size] = b"\xa5" * (page_size - 8)
        parts["index.db"] = bytes(data)
    return mutate


@pytest.mark.parametrize("table", ["st_ref_token", "files"])
def test_a_corrupt_table_is_refused_before_adoption_whichever_check_reads_it(origin: Path, artifact: Path,
                                                                            tmp_path: Path, table: str) -> None:
    # st_ref's index: checked with st_ref, on its own thread, while the checks of the schema, meta and file table
    # run beside it (nothing but the integrity check reads it); files is read by those checks once its own
    # b-trees passed.
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_table(table))
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad)) as service:
        status = _status(service)
        assert status["source"]["kind"] == "local", status["source"]
        refused = status["source"]["artifact_refused"]
        assert refused["code"] == ErrorCode.ARTIFACT_INVALID.code
        assert "integrity check" in refused["message"] or "cannot be read" in refused["message"], refused
        assert status["file_count"] == len(FILES)


def test_a_file_with_a_free_list_is_checked_whole(tmp_path: Path) -> None:
    path = tmp_path / "free.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,) for _ in range(200)])
        conn.execute("DELETE FROM t")
    with _open(path) as conn:
        assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    assert check_tables(lambda: _open(path), 2) == (None, True)


def test_a_corrupt_pinned_artifact_is_adopted_then_dropped_and_built_from_disk(origin: Path, artifact: Path,
                                                                             tmp_path: Path) -> None:
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_page)
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad), artifact_sha256=_pinned(bad)) as service:
        # Ready first, from the artifact; then the background check fails and the index is built from disk.
        status = _wait_for(service, lambda s: s["source"]["kind"] == "local" and s["ready"])
        refused = status["source"]["artifact_refused"]
        assert refused["code"] == ErrorCode.ARTIFACT_INVALID.code
        assert "integrity check" in refused["message"] or "cannot be read" in refused["message"]
        assert any("refused after adoption" in w for w in status["warnings"])
        assert status["file_count"] == len(FILES) and status["last_reconcile"]["added"] == len(FILES)
        assert _engine_paths(service) == {"pkg/__init__.py", "pkg/core.py", "tests/test_core.py", "README.md"}
        rebuilt = _answers(service, root, keep_ids=True)
    # The index built from disk owes no check: its clean close lets the next open check cheaply.
    assert _next_open_check(root) == "cheap"
    cold_root = _clone(origin, tmp_path / "cold")
    with _running(cold_root) as cold:
        assert _answers(cold, cold_root, keep_ids=True) == rebuilt


def test_before_adopt_refuses_a_corrupt_pinned_artifact_up_front(origin: Path, artifact: Path,
                                                                 tmp_path: Path) -> None:
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_page)
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad), artifact_sha256=_pinned(bad),
                  artifact_integrity="before_adopt") as service:
        status = _status(service)
        assert status["source"]["kind"] == "local"
        assert "integrity check" in status["source"]["artifact_refused"]["message"]


def test_cpl_init_runs_an_owed_check_before_it_finishes(origin: Path, artifact: Path, tmp_path: Path) -> None:
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_page)
    root = _clone(origin, tmp_path / "dev")
    service = _service(root, artifact=str(bad), artifact_sha256=_pinned(bad))
    summary = service.build()
    assert any("refused after adoption" in w for w in summary.warnings)
    assert summary.report.added == len(FILES)
    assert service.status()["source"]["kind"] == "local"  # type: ignore[index]


def test_a_store_owing_its_check_leaves_no_clean_close_marker(tmp_path: Path) -> None:
    for owed, expected in ((False, "cheap"), (True, "full")):
        path = tmp_path / f"owed-{owed}" / "index.db"
        store = IndexStore(path, trust_clean_close=True)
        store.open()
        store.check_owed = owed
        store.close()
        again = IndexStore(path, trust_clean_close=True)
        again.open()
        assert again.open_check == expected
        again.close()


@pytest.mark.parametrize("value", ["sometimes", ""])
def test_an_unknown_integrity_mode_is_a_config_error(value: str) -> None:
    from pydantic import ValidationError

    from codeplane.core.config import IndexConfig

    with pytest.raises(ValidationError):
        IndexConfig(artifact_integrity=value)


def test_cpl_up_with_a_pinned_artifact_reports_the_check_in_status(origin: Path, artifact: Path,
                                                                   tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with running_server(root, "--index-from", str(artifact), "--set",
                        f"index.artifact_sha256={_pinned(artifact)}") as server:
        server.wait_serving()
        deadline = time.monotonic() + 30
        while (source := server.get("/status").json()["index"]["source"])["integrity_check"]["state"] != "ok":
            assert time.monotonic() < deadline, source
            time.sleep(0.05)
        shown = cpl("status", str(root), cwd=root).stdout
    assert source["integrity"] == "after_ready" and "integrity check after ready: ok" in shown, shown


def test_ready_is_withdrawn_while_the_index_rebuilds_from_disk() -> None:
    from codeplane.server.services import Readiness

    building = {"ready": False}
    readiness = Readiness(ready=False, reason="index: first reconcile running", index_ready=lambda: building["ready"])
    assert readiness.now() == (False, "index: first reconcile running")
    building["ready"] = True
    readiness.ready, readiness.reason = True, "index ready"
    assert readiness.now() == (True, "index ready")
    building["ready"] = False  # the adopted artifact failed its deferred check: the index builds from disk
    ready, reason = readiness.now()
    assert not ready and "rebuilding from disk" in reason
