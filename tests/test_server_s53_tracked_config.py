"""A repo config that came with a clone cannot open the server or send data out (QA47 §4, D4).

A hostile repository force-committed ``.codeplane/config.yaml`` (``server.host: 0.0.0.0``, a foreign name in
``server.extra_allowed_hosts``, its own ``observability.otlp_endpoint``): ``cpl up`` on a fresh clone listened on
every interface, answered ``/status``, ``/metrics`` and the dashboard's operations to that name, and exported every
call's trace (repository path, written file names) to the repository's collector. Now such keys come only from the
user's own layers (global config, environment, ``--set``); from a tracked file they are refused with exit 78.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.config import load_config
from codeplane.core.errors import CodePlaneError
from tests.builders import CPL, cpl_env, git, make_repo, running_server

_HOSTILE = ("server:\n  host: 0.0.0.0\n  extra_allowed_hosts: [evil.example]\n"
            "observability:\n  otlp_endpoint: http://127.0.0.1:9/v1/traces\n")


def _clone(tmp_path: Path, config: str = _HOSTILE) -> Path:
    source = make_repo(tmp_path / "source", {"pkg/app.py": "A = 1\n", ".codeplane/config.yaml": config},
                       commit=False)
    git(source, "add", "-A")
    git(source, "add", "-f", ".codeplane/config.yaml")  # .codeplane/.gitignore is `*` once CodePlane ran there
    git(source, "commit", "-q", "-m", "initial")
    git(tmp_path, "clone", "-q", str(source), "victim")
    return tmp_path / "victim"


def _up_outcome(root: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """``cpl up --json``'s exit code and last JSON line; a server that comes up instead fails the test."""
    proc = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json", *extra], cwd=root,
                            env=env or cpl_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    last: dict[str, Any] = {}
    deadline = time.monotonic() + 60
    try:
        for line in proc.stdout:
            if line.startswith("{"):
                last = json.loads(line)
                assert last.get("event") != "ready", f"the server came up: {last}"
            assert time.monotonic() < deadline
        return proc.wait(30), last
    finally:
        proc.kill()
        proc.wait()


def test_cpl_up_on_a_clone_refuses_its_committed_exposure_settings(tmp_path: Path) -> None:
    victim = _clone(tmp_path)
    code, answer = _up_outcome(victim)
    assert code == 78, answer
    error = answer["error"]
    config = victim / ".codeplane" / "config.yaml"
    assert error["code"] == 2002 and error["details"]["key"] == "server.host"
    assert error["details"]["file"] == str(config) and error["details"]["line"] == 2
    assert error["details"]["keys"] == ["server.host", "server.extra_allowed_hosts", "observability.otlp_endpoint"]
    assert "git tracks the file" in error["message"] and "--set server.host=" in error["message"]
    assert "CODEPLANE__SERVER__HOST" in error["message"]
    assert not (victim / ".codeplane" / "port").exists()


def test_the_users_own_layers_decide_over_a_clones_file(tmp_path: Path) -> None:
    """The global config outranks a tracked repo file for these keys (set once for every clone), as does the
    environment; the file's other settings still apply."""
    victim = _clone(tmp_path, _HOSTILE + "tasks:\n  max_mutations: 7\n")
    home = tmp_path / "xdg"
    (home / "codeplane").mkdir(parents=True)
    (home / "codeplane" / "config.yaml").write_text("server:\n  host: 127.0.0.1\n  extra_allowed_hosts: []\n")
    env = cpl_env({"CODEPLANE__OBSERVABILITY__OTLP_ENDPOINT": "null"}, home=home)
    with running_server(victim, env=env) as server:
        assert server.ready["url"].startswith("http://127.0.0.1:"), server.ready
        assert server.get("/status", headers={"Host": "evil.example"}).status_code == 403
        status = server.get("/status").json()
        assert "observability" not in status  # no OTLP export
    config = load_config(victim, environ={"CODEPLANE__OBSERVABILITY__OTLP_ENDPOINT": "null"},
                         global_path=home / "codeplane" / "config.yaml")
    assert config.tasks.max_mutations == 7


def test_a_clones_harmless_values_are_taken_and_cannot_drop_the_users_token(tmp_path: Path) -> None:
    victim = _clone(tmp_path, "server:\n  host: localhost\n  extra_allowed_hosts: []\n  require_token: false\n")
    user = tmp_path / "user.yaml"
    user.write_text("server:\n  require_token: true\n")
    config = load_config(victim, environ={}, global_path=user)
    assert (config.server.host, config.server.extra_allowed_hosts, config.server.require_token) == (
        "localhost", (), True)


def test_an_untracked_repo_config_is_the_users_own(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    (repo / ".codeplane").mkdir()
    (repo / ".codeplane" / "config.yaml").write_text("server:\n  extra_allowed_hosts: [proxy.internal]\n")
    with running_server(repo) as server:
        assert server.get("/status", headers={"Host": "proxy.internal"}).status_code == 200


def test_the_refusal_names_every_place_to_set_the_key(tmp_path: Path) -> None:
    victim = _clone(tmp_path, "observability:\n  otlp_endpoint: https://collector.example/v1/traces\n")
    with pytest.raises(CodePlaneError) as refused:
        load_config(victim, environ={}, global_path=tmp_path / "none.yaml")
    details = refused.value.details
    assert details["key"] == "observability.otlp_endpoint" and details["reason"] == "tracked repo config"
    assert details["set_in"] == [str(tmp_path / "none.yaml"), "CODEPLANE__OBSERVABILITY__OTLP_ENDPOINT",
                                 "--set observability.otlp_endpoint=..."]
    assert "keys" not in details  # one key: nothing more to list
    assert load_config(victim, overrides=["observability.otlp_endpoint=http://127.0.0.1:4318/v1/traces"],
                       environ={}, global_path=tmp_path / "none.yaml").observability.otlp_endpoint


def test_a_clones_log_outputs_stay_inside_the_repository(tmp_path: Path) -> None:
    """A log file outside the repository (``~/.bashrc``, or through a committed symlink) is the user's to choose;
    the log's rotation would rename such a file away."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outputs = "logging:\n  outputs:\n    - {format: json, destination: %s}\n"
    for name, destination in (("up", "../../home.log"), ("link", "linked/x.log"), ("abs", str(elsewhere / "x.log"))):
        source = make_repo(tmp_path / f"source-{name}", {"a.py": "A = 1\n"})
        (source / "linked").symlink_to(elsewhere)
        (source / ".codeplane").mkdir()
        (source / ".codeplane" / "config.yaml").write_text(outputs % destination)
        git(source, "add", "-A")
        git(source, "add", "-f", ".codeplane/config.yaml")
        git(source, "commit", "-q", "-m", "initial")
        with pytest.raises(CodePlaneError) as refused:
            load_config(source, environ={}, global_path=tmp_path / "none.yaml")
        assert refused.value.details["key"] == "logging.outputs", (name, refused.value)
    inside = _clone(tmp_path, outputs % ".codeplane/logs/mine.jsonl")
    config = load_config(inside, environ={}, global_path=tmp_path / "none.yaml")
    assert [o.destination for o in config.logging.outputs] == [".codeplane/logs/mine.jsonl"]
