"""An adopted artifact's SQLite integrity check: before adoption, or after ready when its sha256 is pinned
(index/artifact_integrity.py). Real artifacts, real SQLite and Tantivy, a real index service."""

from __future__ import annotations

import functools
import json
import os
import sqlite3
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import zstandard

from codeplane.core.errors import ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.index.artifact_integrity import FileArrival, check_tables
from codeplane.index.artifact_verify import unpack_verified
from codeplane.index.search import LexicalScope
from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from codeplane.index.store import IndexStore
from tests.builders import cpl, make_repo, running_server
from tests.test_index_artifact import (
    FILES,
    INDEXERS,
    _answers,
    _clone,
    _corrupt_page,
    _export,
    _repack,
    _running,
    _service,
    _set_manifest,
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
        problem, whole = check_tables(functools.partial(_open, bad), 2)
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


def _manifest_of(artifact: Path) -> dict[str, Any]:
    with tarfile.open(fileobj=zstandard.ZstdDecompressor().stream_reader(artifact.read_bytes()), mode="r|") as tar:
        for member in tar:
            if member.name == "manifest.json":
                source = tar.extractfile(member)
                assert source is not None
                manifest: dict[str, Any] = json.loads(source.read())
                return manifest
    raise AssertionError("no manifest in the artifact")


def test_the_export_records_where_each_table_ends_the_references_first(artifact: Path, tmp_path: Path) -> None:
    layout = [tuple(entry) for entry in _manifest_of(artifact)["index_db_layout"]]
    clean = _index_db_of(artifact, tmp_path / "clean.db")
    with _open(clean) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_schema").fetchall())
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
        created = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY rowid")]
        ends: dict[str, int] = {}
        for name, last in conn.execute("SELECT name, max(pageno) FROM dbstat GROUP BY name"):
            ends[owner.get(name, name)] = max(ends.get(owner.get(name, name), 0), last)
    assert layout == sorted(ends.items(), key=lambda item: (item[1], item[0]))
    assert {table for table, _ in layout} == tables | {"sqlite_schema"}
    assert layout[-1][1] == pages
    # VACUUM INTO copies the tables in the order they were created: the references (the largest table) right after
    # the store's own small tables, so their pages arrive first.
    assert next(name for name in created if name.startswith("st_")) == "st_ref", created


def _table_end(layout: list[tuple[str, int]], table: str) -> int:
    return dict(layout)[table]


def _write_partly(clean: Path, into: Path, upto: int) -> None:
    """``into`` at ``clean``'s final size with only its first ``upto`` bytes written (as the unpack leaves it)."""
    data = clean.read_bytes()
    with into.open("wb") as out:
        out.truncate(len(data))
        out.write(data[:upto])


def _finish(clean: Path, into: Path, arrival: FileArrival, upto: int) -> None:
    data = clean.read_bytes()
    with into.open("r+b") as out:
        out.seek(upto)
        out.write(data[upto:])
    arrival.wrote(len(data))
    arrival.finish(True)


@dataclass
class _PartlyWritten:
    """A check begun on a copy of an index.db of which only the first ``upto`` bytes are written."""
    path: Path
    arrival: FileArrival
    passed: list[str] = field(default_factory=list)
    result: list[Any] = field(default_factory=list)
    thread: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=lambda: self.result.append(check_tables(
            lambda: _open(self.path), 2, self.passed.append, self.arrival)), daemon=True)
        self.thread.start()


def _check_partly_written(source: Path, tmp_path: Path, layout: list[tuple[str, int]], upto: int) -> _PartlyWritten:
    path = tmp_path / "partial.db"
    _write_partly(source, path, upto)
    arrival = FileArrival(path, lambda: layout)
    arrival.wrote(upto)
    return _PartlyWritten(path, arrival)


def test_a_table_is_checked_as_soon_as_its_pages_are_written(artifact: Path, tmp_path: Path) -> None:
    layout = [tuple(entry) for entry in _manifest_of(artifact)["index_db_layout"]]
    clean = _index_db_of(artifact, tmp_path / "clean.db")
    page_size = int.from_bytes(clean.read_bytes()[16:18], "big")
    upto = _table_end(layout, "st_ref") * page_size
    assert upto < clean.stat().st_size
    check = _check_partly_written(clean, tmp_path, layout, upto)
    deadline = time.monotonic() + 30
    while "st_ref" not in check.passed:  # checked while the rest of the file is still zeros
        assert time.monotonic() < deadline and check.thread.is_alive(), (check.passed, check.result)
        time.sleep(0.01)
    later = {table for table, end in layout if end > _table_end(layout, "st_ref")}
    assert later and not later & set(check.passed)  # their pages are not written yet
    _finish(clean, check.path, check.arrival, upto)
    check.thread.join(30)
    assert check.result == [(None, False)]
    assert set(check.passed) == {table for table, _ in layout}


def test_a_layout_that_lies_only_delays_the_check(artifact: Path, tmp_path: Path) -> None:
    layout = [tuple(entry) for entry in _manifest_of(artifact)["index_db_layout"]]
    clean = _index_db_of(artifact, tmp_path / "clean.db")
    page_size = int.from_bytes(clean.read_bytes()[16:18], "big")
    schema_end = _table_end(layout, "sqlite_schema") * page_size
    # Every table "ends" with the schema: each check reads pages not written yet, finds zeros, and is checked
    # again once the file is whole.
    schema_page = _table_end(layout, "sqlite_schema")
    lie = [("sqlite_schema", schema_page), *sorted((table, schema_page) for table, _ in layout
                                                   if table != "sqlite_schema")]
    check = _check_partly_written(clean, tmp_path, lie, schema_end)
    time.sleep(0.5)
    assert "st_ref" not in check.passed  # its first check failed on zeros; it waits for the whole file
    _finish(clean, check.path, check.arrival, schema_end)
    check.thread.join(30)
    assert check.result == [(None, False)]


def test_a_corrupt_table_checked_early_is_still_refused(artifact: Path, tmp_path: Path) -> None:
    layout = [tuple(entry) for entry in _manifest_of(artifact)["index_db_layout"]]
    clean = _index_db_of(artifact, tmp_path / "clean.db")
    with _open(clean) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'st_ref_token'").fetchone()[0]
    data = bytearray(clean.read_bytes())
    data[(root - 1) * page_size + 8:root * page_size] = b"\xa5" * (page_size - 8)
    bad = tmp_path / "bad.db"
    bad.write_bytes(bytes(data))
    upto = _table_end(layout, "st_ref") * page_size
    check = _check_partly_written(bad, tmp_path, layout, upto)
    _finish(bad, check.path, check.arrival, upto)
    check.thread.join(30)
    assert check.result and check.result[0][0] is not None and "st_ref" not in check.passed


def test_an_unpack_that_fails_ends_the_check_waiting_for_it(artifact: Path, tmp_path: Path) -> None:
    layout = [tuple(entry) for entry in _manifest_of(artifact)["index_db_layout"]]
    clean = _index_db_of(artifact, tmp_path / "clean.db")
    partial = tmp_path / "partial.db"
    _write_partly(clean, partial, 4096)
    arrival = FileArrival(partial, lambda: layout)
    arrival.wrote(4096)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            check_tables(lambda: _open(partial), 2, None, arrival)
        except sqlite3.Error as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    arrival.finish(False)
    thread.join(30)
    assert not thread.is_alive() and errors


def test_an_artifact_whose_layout_lies_is_still_adopted(artifact: Path, tmp_path: Path) -> None:
    def reverse(manifest: dict[str, Any]) -> None:
        # Well formed (sorted by page) but wrong: the tables named in reverse order.
        entries = manifest["index_db_layout"]
        manifest["index_db_layout"] = [[name, page] for (name, _), (_, page) in
                                       zip(reversed(entries), entries, strict=True)]
    lied = _repack(artifact, tmp_path / "lied.tar.zst", _set_manifest(reverse))
    sha = lied.with_name("lied.tar.zst.sha256").read_text().split()[0]
    manifest = unpack_verified(lied, sha, tmp_path / "staging", INDEXERS)
    assert manifest.layout and manifest.layout[0][0] != _manifest_of(artifact)["index_db_layout"][0][0]


def test_while_the_file_is_written_one_check_runs_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "growing.db"
    path.write_bytes(b"\0" * 4096)
    arrival = FileArrival(path, lambda: [("a", 1), ("b", 1)])
    arrival.wrote(4096)
    second_began = threading.Event()
    completes: list[bool] = []

    def second() -> None:
        with arrival.turn("b") as complete:
            completes.append(complete)
            second_began.set()

    with arrival.turn("a") as first_complete:
        assert not first_complete
        thread = threading.Thread(target=second, daemon=True)
        thread.start()
        assert not second_began.wait(0.3)  # "a" holds the one turn while the file is written
        arrival.finish(True)  # once whole, every check runs at once
        assert second_began.wait(5)
    thread.join(5)
    assert completes == [True]
