"""Config input that used to hang, crash or be silently misread (QA32 §2, §3, §4, §6, §7 and cosmetics)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.core.config import load_config
from codeplane.core.errors import CodePlaneError
from tests.builders import cpl, cpl_env, make_repo


def _refused(repo: Path | None, *overrides: str, env: dict[str, str] | None = None,
             global_path: Path | None = None) -> CodePlaneError:
    with pytest.raises(CodePlaneError) as caught:
        load_config(repo, overrides=overrides, environ=env or {}, global_path=global_path or Path("/nonexistent"))
    return caught.value


def _repo_config(tmp_path: Path, text: str) -> Path:
    repo = make_repo(tmp_path / "repo")
    (repo / ".codeplane").mkdir(exist_ok=True)
    (repo / ".codeplane" / "config.yaml").write_text(text)
    return repo


# -- §2: a config file that is not a regular file, or is huge ----------------------------------------------------


def test_a_fifo_as_config_is_refused_at_once_and_status_down_still_work(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / ".codeplane").mkdir(exist_ok=True)
    os.mkfifo(repo / ".codeplane" / "config.yaml")
    up = cpl("up", "--port", "0", cwd=repo, timeout=30)  # a FIFO blocked every command on open()
    assert up.returncode == 78 and "2001" in up.stderr and "a FIFO, not a regular file" in up.stderr, up.stderr
    assert str(repo / ".codeplane" / "config.yaml") in " ".join(up.stderr.split())
    for command in ("status", "down"):
        assert cpl(command, cwd=repo, timeout=30).returncode == 0, command
    doctor = cpl("doctor", "--json", cwd=repo, timeout=60)
    assert doctor.returncode == 1 and "FIFO" in doctor.stdout


def test_a_fifo_as_the_global_config_does_not_hang_status(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    xdg = tmp_path / "xdg"
    (xdg / "codeplane").mkdir(parents=True)
    os.mkfifo(xdg / "codeplane" / "config.yaml")
    proc = cpl("status", cwd=repo, env=cpl_env(home=xdg), timeout=30)
    assert proc.returncode == 0, proc.stderr


def test_a_device_or_an_oversized_file_is_refused_with_2001(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / ".codeplane").mkdir(exist_ok=True)
    config = repo / ".codeplane" / "config.yaml"
    config.symlink_to("/dev/zero")  # read_text() grew without limit
    refused = _refused(repo)
    assert refused.code == 2001 and "a character device" in refused.message and str(config) in refused.message
    config.unlink()
    config.write_text("tasks:\n  max_mutations: 5\n" + "# padding\n" * 120_000)  # 1.2 MB of comments
    refused = _refused(repo)
    assert refused.code == 2001 and "at most 1,048,576" in refused.message and refused.details["file"] == str(config)


# -- §3, §4: numbers that are not finite or absurdly large ----------------------------------------------------


@pytest.mark.parametrize("override", [
    "tests.run_timeout_sec=.inf", "tests.run_timeout_sec=1e400", "tests.run_timeout_sec=1e23",
    "tests.target_timeout_sec=.inf", "tests.target_timeout_sec=.nan", "server.shutdown_timeout_sec=.inf",
    "tasks.ledger_retention_days=999999999999", "tasks.ledger_retention_tasks=10000000000000",
    "tasks.artifact_retention_hours=10000000000000", "tasks.session_idle_timeout_sec=10000000000000",
    "tasks.maintenance_interval_sec=10000000000000", "refactor.plan_ttl_sec=10000000000000",
    "tasks.read_budget_calls=10000000000000", "index.max_file_bytes=10000000000000",
])
def test_a_non_finite_or_absurd_number_is_refused(override: str) -> None:
    refused = _refused(None, override)
    assert refused.code == 2002 and refused.details["key"] == override.partition("=")[0], refused.message


def test_a_run_timeout_of_infinity_stops_cpl_up_with_78(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    proc = cpl("up", "--port", "0", "--set", "tests.run_timeout_sec=.inf", cwd=repo, timeout=60)
    assert proc.returncode == 78 and "tests.run_timeout_sec" in proc.stderr, proc.stderr


def test_bounds_still_take_the_largest_sane_values() -> None:
    config = load_config(None, overrides=["tests.run_timeout_sec=86400", "tasks.ledger_retention_days=36500"],
                         environ={}, global_path=Path("/nonexistent"))
    assert config.tests.run_timeout_sec == 86400 and config.tasks.ledger_retention_days == 36500


# -- §6: a key given twice; a bad section hidden by --port ------------------------------------------------------


@pytest.mark.parametrize("overrides", [
    ("tasks.max_mutations=7", "tasks.max_mutations=9"),
    ("tasks={max_mutations: 7}", "tasks.max_mutations=9"),
    ("server=5", "server.port=4"),
])
def test_a_key_given_twice_by_set_is_an_error(overrides: tuple[str, ...]) -> None:
    refused = _refused(None, *overrides)
    assert refused.code == 2002 and "given twice" in refused.message and overrides[-1] in refused.message


def test_a_key_given_twice_by_environment_variables_is_an_error() -> None:
    env = {"CODEPLANE__TASKS__MAX_MUTATIONS": "7", "CODEPLANE__tasks__max_mutations": "9"}
    refused = _refused(None, env=env)
    assert refused.code == 2002 and "given twice" in refused.message
    assert "CODEPLANE__TASKS__MAX_MUTATIONS" in refused.message and "CODEPLANE__tasks__max_mutations" in refused.message


def test_different_keys_of_one_section_and_layers_still_combine() -> None:
    config = load_config(None, overrides=["tasks={max_mutations: 7}", "tasks.max_test_runs=9"],
                         environ={"CODEPLANE__TASKS__MAX_MUTATIONS": "3"}, global_path=Path("/nonexistent"))
    assert (config.tasks.max_mutations, config.tasks.max_test_runs) == (7, 9)


@pytest.mark.parametrize(("options", "said"), [
    (("--port", "47464", "--port", "47465"), "by --port 47464 and by --port 47465"),
    (("--profile", "full", "--profile", "read_only"), "by --profile full and by --profile read_only"),
])
def test_an_option_standing_for_a_key_given_twice_is_refused_not_last_one_wins(
        tmp_path: Path, options: tuple[str, ...], said: str) -> None:
    # Was: `--port 47464 --port 47465` served on 47465 (QA s55), though a key given twice is an error.
    proc = cpl("up", *options, cwd=make_repo(tmp_path / "repo"), timeout=60)
    assert proc.returncode == 78 and "given twice" in proc.stderr and said in " ".join(proc.stderr.split()), \
        proc.stderr


@pytest.mark.parametrize("text", ["server: 5\n", "server:\n"])
def test_port_does_not_hide_a_bad_server_section(tmp_path: Path, text: str) -> None:
    repo = _repo_config(tmp_path, text)
    refused = _refused(repo, "server.port=47461")
    assert refused.code == 2002 and refused.details["key"] == "server" and refused.details["line"] == 1
    proc = cpl("up", "--port", "47462", cwd=repo, timeout=60)
    assert proc.returncode == 78 and "config.yaml:1:1" in " ".join(proc.stderr.split()), proc.stderr


def test_a_scalar_section_from_the_environment_is_not_dropped_by_set() -> None:
    refused = _refused(None, "server.port=4", env={"CODEPLANE__SERVER": "5"})
    assert refused.code == 2002 and refused.details["source"] == "environment variable CODEPLANE__SERVER"


# -- §7: keys that are not names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "line", "column"), [
    ("? [a, b]\n: 1\n", 1, 3), ("1: 2\n", 1, 1), ("server:\n  1: 2\n", 2, 3),
])
def test_a_key_that_is_not_a_name_is_a_parse_error_with_its_place(tmp_path: Path, text: str, line: int,
                                                                   column: int) -> None:
    repo = _repo_config(tmp_path, text)
    refused = _refused(repo, "server.port=47463")
    assert refused.code == 2001 and (refused.details["line"], refused.details["column"]) == (line, column)
    assert "a key must be a name" in refused.message


def test_an_unhashable_key_stops_cpl_up_with_78_not_70(tmp_path: Path) -> None:
    repo = _repo_config(tmp_path, "? [a, b]\n: 1\n")
    proc = cpl("up", "--port", "0", cwd=repo, timeout=60)
    assert proc.returncode == 78 and "INTERNAL_ERROR" not in proc.stderr, proc.stderr


# -- cosmetics ---------------------------------------------------------------------------------------------------


def test_a_runner_given_a_number_names_the_runner_and_the_number(tmp_path: Path) -> None:
    repo = _repo_config(tmp_path, "tests:\n  runners:\n    pytest: 5\n")
    refused = _refused(repo)
    assert refused.details["key"] == "tests.runners.pytest" and refused.details["value"] == "5"
    assert refused.details["line"] == 3


def test_a_custom_runner_without_a_command_and_an_empty_host_are_refused() -> None:
    assert _refused(None, 'tests.custom=[{pattern: "*.sh", runner: sh, cmd: []}]').details["key"] == "tests.custom.cmd"
    assert _refused(None, "server.host=").details["key"] == "server.host"


def test_an_env_var_with_a_double_underscore_inside_a_key_suggests_that_key() -> None:
    refused = _refused(None, env={"CODEPLANE__TASKS__MAX__MUTATIONS": "9"})
    assert refused.details["suggestion"] == "tasks.max_mutations", refused.message
