"""A log file that fails while serving, maintenance steps that fail, and a forced stop of a stopped server (QA32 §4,
§5, §8)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import TasksConfig
from codeplane.tasks import Ledger, TaskTracker, TrackerSettings
from tests.builders import CPL, ServerHandle, cpl, cpl_env, cpl_json, make_repo, start_server


def test_a_log_file_that_fails_while_serving_falls_back_to_stderr_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    logs = repo / ".codeplane" / "logs"
    logs.mkdir(parents=True)
    (logs / "codeplane.jsonl").symlink_to("/dev/full")  # opens fine; every write is ENOSPC
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as sink:
        proc = subprocess.Popen([*CPL, "up", str(repo), "--port", "0", "--json"], cwd=repo, env=cpl_env(),
                                stdout=subprocess.PIPE, stderr=sink, text=True)
    try:
        assert proc.stdout is not None
        ready = json.loads(next(line for line in proc.stdout if line.startswith("{")))
        deadline = time.monotonic() + 60
        while httpx.get(f"http://127.0.0.1:{ready['port']}/health", timeout=10).json()["phase"] != "serving":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    errors = stderr.read_text()
    # Each record printed "--- Logging error ---" and a traceback of about 40 lines.
    assert "Logging error" not in errors and "Traceback" not in errors, errors
    assert errors.count("cannot be written") == 1, errors
    assert "server started" in errors  # the records still reach the console


def test_artifact_clean_up_runs_when_ledger_retention_fails_and_the_failure_is_kept(tmp_path: Path) -> None:
    state = tmp_path / ".codeplane"
    state.mkdir()
    settings = TrackerSettings.from_config(TasksConfig())
    # Not reachable from the config any more (bounded there); stands for any retention failure.
    broken = TrackerSettings(settings.default_limits, settings.read_limits, settings.idle_timeout_sec,
                             retention_days=999_999_999_999, retention_tasks=settings.retention_tasks)
    artifacts = ArtifactStore(state / "artifacts", retention_hours=1)
    artifacts.put_text("an old test log")
    later = int(time.time() * 1000) + 3 * 3600 * 1000
    tracker = TaskTracker(Ledger(state / "ledger.db"), broken, artifacts=artifacts, clock=lambda: later)
    tracker.start()
    try:
        out = tracker.maintain()
        assert out["deleted_artifacts"] == 1 and artifacts.stats()["artifacts"] == 0
        assert tracker.maintenance_error is not None and "ledger retention failed" in tracker.maintenance_error
        assert "OverflowError" in tracker.maintenance_error
    finally:
        tracker.stop()


def _stopped_server(repo: Path) -> ServerHandle:
    (repo / ".codeplane").mkdir(exist_ok=True)
    # A short drain: ``down`` waits shutdown_timeout_sec + 2 s before SIGKILL.
    (repo / ".codeplane" / "config.yaml").write_text("server:\n  shutdown_timeout_sec: 0.5\n")
    server = start_server(repo)
    os.kill(server.ready["pid"], signal.SIGSTOP)
    return server


def test_down_force_stops_a_stopped_server_and_removes_its_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    server = _stopped_server(repo)
    try:
        # This test process is the server's parent and does not reap it: after SIGKILL it stays a zombie, which
        # ``down`` took for a server still running ("did not stop", exit 1, port and pid files left).
        proc = cpl("down", "--force", "--json", cwd=repo, timeout=60)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert '"stopped": true' in proc.stdout
        assert not (repo / ".codeplane" / "port").exists() and not (repo / ".codeplane" / "server.pid").exists()
    finally:
        server.stop(signal.SIGKILL)


def test_clear_force_removes_the_state_of_a_stopped_server(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    server = _stopped_server(repo)
    try:
        result = cpl_json("clear", "--force", cwd=repo)
        assert result["ok"] is True and result["removed"] is True, result
        assert not (repo / ".codeplane").exists()
    finally:
        server.stop(signal.SIGKILL)


def test_down_that_cannot_stop_the_server_exits_2_with_the_catalog_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    server = _stopped_server(repo)
    try:
        proc = cpl("down", "--json", cwd=repo, timeout=60)  # no --force: SIGTERM cannot reach a stopped process
        assert proc.returncode == 2 and '"code": 2004' in proc.stdout, proc.stdout + proc.stderr
        # Said at once, with the way out, instead of "did not stop within 14s" after waiting the whole deadline.
        error = json.loads(proc.stdout)["error"]
        assert error["details"]["suspended"] is True, error
        assert f"kill -CONT {server.ready['pid']}" in error["message"] and "--force" in error["message"], error
    finally:
        os.kill(server.ready["pid"], signal.SIGCONT)
        server.stop(signal.SIGKILL)
