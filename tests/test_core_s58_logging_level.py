"""QA64 F1: ``logging.level`` sets the level of every log output that names none of its own, the two default ones
included (console and JSON file); it was a no-op because the defaults carried ``info``/``debug`` of their own, so
``cpl up --set logging.level=debug`` (the example ``cpl up --help`` gives) showed nothing more."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import structlog

from codeplane.core.config import load_config
from codeplane.core.logging import configure_logging, get_logger
from tests.builders import CPL, cpl_env, make_repo

_LOG = Path(".codeplane") / "logs" / "codeplane.jsonl"


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """configure_logging changes process-wide state: put back what the other tests of this worker had."""
    root = logging.getLogger("codeplane")
    saved = (list(root.handlers), root.level, root.propagate, structlog.get_config())
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    handlers, level, propagate, config = saved
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    root.propagate = propagate
    structlog.configure(**config)


def _emit_each_level(repo: Path, *overrides: str) -> None:
    configure_logging(load_config(repo, overrides=overrides, environ={}, global_path=repo / "none").logging, repo)
    log = get_logger("s58")
    log.debug("at-debug")
    log.info("at-info")
    log.error("at-error")


def _file_events(repo: Path) -> list[str]:
    return [json.loads(line)["event"] for line in (repo / _LOG).read_text().splitlines()]


def _console_events(text: str) -> list[str]:
    return [event for event in ("at-debug", "at-info", "at-error") if event in text]


def test_logging_level_error_quiets_the_default_outputs_but_not_one_with_its_own_level(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    _emit_each_level(repo, "logging.level=error")
    assert _console_events(capsys.readouterr().err) == ["at-error"]
    assert _file_events(repo) == ["at-error"]
    (repo / _LOG).unlink()
    (repo / ".codeplane" / "config.yaml").write_text(
        "logging:\n  outputs:\n    - {format: console, destination: stderr, level: info}\n"
        f"    - {{format: json, destination: {_LOG}}}\n")
    _emit_each_level(repo, "logging.level=error")
    assert _console_events(capsys.readouterr().err) == ["at-info", "at-error"]
    assert _file_events(repo) == ["at-error"]


def test_logging_level_debug_reaches_the_console_which_shows_info_when_unset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = make_repo(tmp_path / "repo")
    _emit_each_level(repo)
    assert _console_events(capsys.readouterr().err) == ["at-info", "at-error"]
    assert _file_events(repo) == ["at-debug", "at-info", "at-error"]
    (repo / _LOG).unlink()
    _emit_each_level(repo, "logging.level=debug")
    assert _console_events(capsys.readouterr().err) == ["at-debug", "at-info", "at-error"]
    assert _file_events(repo) == ["at-debug", "at-info", "at-error"]


@pytest.mark.parametrize("level", ["debug", "error"])
def test_cpl_up_set_logging_level_changes_what_it_logs(tmp_path: Path, level: str) -> None:
    """The documented one-off override, end to end: the console and the log file of a real ``cpl up``."""
    repo = make_repo(tmp_path / "repo")
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as sink:
        proc = subprocess.Popen([*CPL, "up", str(repo), "--port", "0", "--json", "--set", f"logging.level={level}"],
                                cwd=repo, env=cpl_env(), stdout=subprocess.PIPE, stderr=sink, text=True)
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
    console = {line.split("[", 1)[1].split()[0] for line in stderr.read_text().splitlines()
               if line.startswith("20") and "[" in line}
    logged = {json.loads(line)["level"] for line in (repo / _LOG).read_text().splitlines()}
    if level == "debug":
        assert "debug" in console and "debug" in logged, (console, logged)
    else:
        assert not console & {"debug", "info"} and not logged & {"debug", "info"}, (console, logged)
