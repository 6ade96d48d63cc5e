"""Stores an older CodePlane built (QA60 F2): `cpl doctor` warns (exit 0) that the next start rebuilds them rather
than failing and pointing at `--fix`, offline `cpl status` says the figures are of the older schema, and the start
that drops and refills an indexer's facts says so in the log and `/status`, as the Tantivy rebuild always did."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from codeplane.core.layout import RepoLayout
from codeplane.index.lexical import LEXICAL_SCHEMA_VERSION, VERSION_FILE
from codeplane.index.structural.schema import SCHEMA_VERSION
from tests.builders import cpl, cpl_json, make_repo, running_server

_OLD_STRUCTURAL, _OLD_LEXICAL = SCHEMA_VERSION - 2, LEXICAL_SCHEMA_VERSION - 6


def _initialised(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"a.py": "def upgraded_name():\n    return 1\n", "b.py": "import a\n"})
    built = cpl("init", str(repo), cwd=repo)
    assert built.returncode == 0, built.stderr
    assert "rebuilt" not in built.stdout + built.stderr  # a first build refills nothing
    return repo


def _as_an_older_version_left_it(repo: Path, *, lexical: bool) -> None:
    """What an older CodePlane leaves: its versions recorded (the tables' shapes do not matter to what is tested:
    the start drops and refills whatever is recorded as another version's)."""
    layout = RepoLayout(repo)
    with sqlite3.connect(layout.index_db) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'indexer.structural.schema'", (str(_OLD_STRUCTURAL),))
    if lexical:
        (layout.tantivy_dir / VERSION_FILE).write_text(json.dumps({"schema_version": _OLD_LEXICAL}))


def test_doctor_warns_but_passes_when_an_older_version_built_the_index(tmp_path: Path) -> None:
    repo = _initialised(tmp_path)
    _as_an_older_version_left_it(repo, lexical=True)
    proc = cpl("doctor", str(repo), "--json", cwd=repo)
    report = json.loads(proc.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert proc.returncode == 0 and report["ok"], report
    assert checks["structural facts"]["detail"] == (
        f"built by an older CodePlane: rebuilt at the next start (schema {_OLD_STRUCTURAL} -> {SCHEMA_VERSION})")
    assert checks["tantivy"]["detail"] == (
        f"built by an older CodePlane: rebuilt at the next start (schema {_OLD_LEXICAL} -> {LEXICAL_SCHEMA_VERSION})")
    for name in ("structural facts", "tantivy"):  # a warning: passed, with a note that never points at --fix
        assert checks[name]["ok"] and "--fix" not in checks[name]["fix"] and "`cpl up`" in checks[name]["fix"]
    human = cpl("doctor", str(repo), cwd=repo, env=None)
    assert human.returncode == 0 and "warn" in human.stdout and "FAIL" not in human.stdout


def test_offline_status_says_which_figures_an_older_schema_built(tmp_path: Path) -> None:
    repo = _initialised(tmp_path)
    status = cpl_json("status", str(repo), cwd=repo)
    assert not status["index"].get("warnings") and "warnings" not in status["structural"]
    _as_an_older_version_left_it(repo, lexical=True)
    status = cpl_json("status", str(repo), cwd=repo)
    assert status["structural"]["warnings"] == [
        f"structural facts built by an older CodePlane: rebuilt at the next start (schema {_OLD_STRUCTURAL} -> "
        f"{SCHEMA_VERSION})"]
    assert status["index"]["warnings"] == [
        f"Tantivy index built by an older CodePlane: rebuilt at the next start (schema {_OLD_LEXICAL} -> "
        f"{LEXICAL_SCHEMA_VERSION})"]
    human = cpl("status", str(repo), cwd=repo).stdout
    assert f"structural facts built by an older CodePlane: rebuilt at the next start (schema {_OLD_STRUCTURAL}" \
        in human


def test_the_start_that_refills_older_structural_facts_says_so(tmp_path: Path) -> None:
    repo = _initialised(tmp_path)
    _as_an_older_version_left_it(repo, lexical=False)
    line = (f"structural facts are rebuilt from disk: schema {_OLD_STRUCTURAL} -> {SCHEMA_VERSION} (every text "
            "file is extracted again)")
    with running_server(repo) as server:
        assert server.get("/ready?wait=60").status_code == 200
        assert line in server.get("/status").json()["index"]["warnings"]
        deadline = time.monotonic() + 10
        while line not in RepoLayout(repo).log_file.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, "the refill was not logged"
            time.sleep(0.05)
        running = cpl("status", str(repo), cwd=repo).stdout
        assert line in running
    with sqlite3.connect(RepoLayout(repo).index_db) as conn:  # refilled under this version's schema
        assert conn.execute("SELECT value FROM meta WHERE key = 'indexer.structural.schema'").fetchone()[0] == \
            str(SCHEMA_VERSION)
        assert conn.execute("SELECT count(*) FROM st_def WHERE name = 'upgraded_name'").fetchone()[0] == 1
    # Rebuilt once: the next start and the offline views have nothing more to say.
    assert not cpl_json("status", str(repo), cwd=repo)["structural"].get("warnings")
    with running_server(repo) as server:
        assert server.get("/ready?wait=60").status_code == 200
        assert not server.get("/status").json()["index"]["warnings"]
