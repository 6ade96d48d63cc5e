"""Config layering (§4.2): defaults < global < repo < env < --set, and precise errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codeplane.core.config import load_config
from codeplane.core.errors import CodePlaneError
from tests.builders import CPL, cpl, cpl_env, make_repo


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_five_layers_in_precedence_order(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    gpath = _write(tmp_path / "g" / "config.yaml",
                   "index:\n  debounce_ms: 11\n  freshness_wait_ms: 11\n  max_file_bytes: 11\n"
                   "  watch: false\n")
    _write(repo / ".codeplane" / "config.yaml",
           "index:\n  freshness_wait_ms: 22\n  max_file_bytes: 22\n  watch: true\n")
    env = {"CODEPLANE__INDEX__MAX_FILE_BYTES": "33", "CODEPLANE__INDEX__WATCH": "false"}
    config = load_config(repo, environ=env, global_path=gpath, overrides=["index.watch=true"])
    assert config.index.debounce_ms == 11  # global beats default
    assert config.index.freshness_wait_ms == 22  # repo beats global
    assert config.index.max_file_bytes == 33  # env beats repo
    assert config.index.watch is True  # --set beats env
    defaults = load_config(None, environ={}, global_path=tmp_path / "none")
    assert config.tasks.max_mutations == defaults.tasks.max_mutations


def test_invalid_value_names_key_value_source_and_code(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    rpath = _write(repo / ".codeplane" / "config.yaml", "server:\n  shutdown_timeout_sec: -3\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    err = info.value
    assert err.code == 2002
    assert err.details["key"] == "server.shutdown_timeout_sec"
    assert err.details["value"] == "-3"
    assert str(rpath) in err.details["source"]
    assert "server.shutdown_timeout_sec" in err.message and str(rpath) in err.message


def test_log_levels_are_read_in_either_case(tmp_path: Path) -> None:
    """``level: DEBUG`` (logging's own spelling) was refused with 2002 while ``warn`` and ``warning`` were both fine."""
    repo = make_repo(tmp_path / "repo")
    _write(repo / ".codeplane" / "config.yaml", "logging:\n  level: DEBUG\n")
    assert load_config(repo, environ={}, global_path=tmp_path / "none").logging.level == "debug"
    _write(repo / ".codeplane" / "config.yaml", "logging:\n  level: LOUD\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert info.value.code == 2002 and info.value.details["key"] == "logging.level"


def test_a_key_given_twice_is_a_parse_error_naming_its_line(tmp_path: Path) -> None:
    """``port: 47001`` then ``port: 47002``: YAML keeps the last without a word, so the server bound 47002."""
    repo = make_repo(tmp_path / "repo")
    path = _write(repo / ".codeplane" / "config.yaml", "server:\n  port: 47001\n  port: 47002\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert info.value.code == 2001 and info.value.details["line"] == 3, info.value.to_payload()
    assert f"{path}:3:3" in info.value.message and "'port' is given twice" in info.value.message


def test_invalid_env_and_override_values_name_their_source(tmp_path: Path) -> None:
    with pytest.raises(CodePlaneError) as info:
        load_config(None, environ={"CODEPLANE__SERVER__PORT": "not-a-port"}, global_path=tmp_path / "n")
    assert info.value.code == 2002 and "CODEPLANE__SERVER__PORT" in info.value.details["source"]
    with pytest.raises(CodePlaneError) as info:
        load_config(None, environ={}, global_path=tmp_path / "n", overrides=["tasks.max_mutations=0"])
    assert info.value.code == 2002 and "--set" in info.value.details["source"]
    with pytest.raises(CodePlaneError) as info:
        load_config(None, environ={}, global_path=tmp_path / "n", overrides=["server.no_such_key=1"])
    assert info.value.code == 2002 and info.value.details["key"] == "server.no_such_key"
    with pytest.raises(CodePlaneError) as info:
        load_config(None, environ={}, global_path=tmp_path / "n", overrides=["missing-equals"])
    assert info.value.code == 2002


def test_unparsable_yaml_is_2001_with_the_file(tmp_path: Path) -> None:
    gpath = _write(tmp_path / "g.yaml", "server: [unclosed\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(None, environ={}, global_path=gpath)
    assert info.value.code == 2001 and str(gpath) in info.value.message


@pytest.mark.parametrize("text", ["tasks:\n  max_mutations: true\n", "tests:\n  keep_runs: yes\n",
                                  "server:\n  shutdown_timeout_sec: false\n"])
def test_a_boolean_for_a_number_is_refused_not_read_as_1(tmp_path: Path, text: str) -> None:
    """``max_mutations: true`` started fine and limited the task to one mutation."""
    repo = make_repo(tmp_path / "repo")
    _write(repo / ".codeplane" / "config.yaml", text)
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert info.value.code == 2002 and "expected a number" in info.value.message, info.value.message


def test_cli_up_reports_invalid_set_value_without_starting(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    proc = cpl("up", "--port", "0", "--set", "server.shutdown_timeout_sec=abc", "--json", cwd=repo,
               env=cpl_env(home=tmp_path / "xdg"))
    assert proc.returncode != 0
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == 2002 and err["details"]["key"] == "server.shutdown_timeout_sec"
    assert not (repo / ".codeplane" / "port").exists()


@pytest.mark.parametrize(("value", "key", "said"), [
    ('{"python": "nosuchrunner"}', "tests.runners.python", "expected a language"),
    ('{"pytest": {"cmdd": ["x"]}}', "tests.runners.pytest.cmdd", "did you mean 'cmd'"),
    ('{"pytest": {"cmd": "pytest -x"}}', "tests.runners.pytest.cmd", "list of strings")])
def test_cli_up_refuses_an_unusable_test_runner_config_at_start(tmp_path: Path, value: str, key: str,
                                                                said: str) -> None:
    """It started (exit 0) and answered 2002 only at the first test run; an option typo was ignored."""
    repo = make_repo(tmp_path / "repo")
    proc = cpl("up", "--port", "0", "--set", f"tests.runners={value}", "--json", cwd=repo,
               env=cpl_env(home=tmp_path / "xdg"))
    assert proc.returncode == 78, proc.stdout + proc.stderr
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == 2002 and err["details"]["key"] == key and said in err["message"], err


def test_cli_up_names_an_unknown_profile_as_the_option_given(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    proc = cpl("up", "--port", "0", "--profile", "everything", "--json", cwd=repo, env=cpl_env(home=tmp_path / "xdg"))
    assert proc.returncode != 0
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == 2002 and err["details"]["source"] == "--profile", err
    assert err["message"] == "--profile 'everything': use one of full, core, read_only"


def test_global_config_file_is_read_via_xdg(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    xdg = tmp_path / "xdg"
    _write(xdg / "codeplane" / "config.yaml", "logging:\n  level: nope\n")
    proc = cpl("up", "--port", "0", "--json", cwd=repo, env=cpl_env(home=xdg))
    err = json.loads(proc.stdout)["error"]
    assert err["code"] == 2002 and "global config" in err["details"]["source"]


def test_unknown_key_names_file_line_column_and_the_key_it_meant(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    rpath = _write(repo / ".codeplane" / "config.yaml", "# mine\nserver:\n  prot: 1\nport: 8000\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    err = info.value
    assert err.code == 2002 and err.details["key"] == "server.prot"
    assert err.message.startswith(f"{rpath}:3:3: unknown key 'server.prot' (did you mean server.port?)")
    assert "1 more problem" in err.message
    _write(rpath, "port: 8000\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert info.value.message == f"{rpath}:1:1: unknown key 'port' (did you mean server.port?)"
    assert info.value.details["suggestion"] == "server.port" and info.value.details["line"] == 1
    _write(rpath, "tasks:\n  MAX_MUTATIONS: 5\n")  # no suggestion was given for a key in another case
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert info.value.details["suggestion"] == "tasks.max_mutations", info.value.message


def test_yaml_syntax_error_names_line_and_column(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    rpath = _write(repo / ".codeplane" / "config.yaml", "server:\n  port: [unclosed\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert info.value.code == 2001 and info.value.message.startswith(f"{rpath}:3:1: ")
    assert "started at line 2, column 9" in info.value.message


@pytest.mark.parametrize("text", ["server:\n  port: [unclosed\n", "port: 8000\n", "- a list\n"])
def test_broken_config_gives_no_traceback_and_leaves_status_clear_doctor_working(tmp_path: Path, text: str) -> None:
    repo = make_repo(tmp_path / "repo")
    env = cpl_env(home=tmp_path / "xdg")
    assert cpl("init", "--json", cwd=repo, env=env).returncode == 0
    config = repo / ".codeplane" / "config.yaml"
    config.write_text(text)
    up = cpl("up", "--port", "0", cwd=repo, env=env)
    assert up.returncode == 78 and "Traceback" not in up.stderr + up.stdout
    assert f"{config}:" in up.stderr and ("2001" in up.stderr or "2002" in up.stderr)
    status = cpl("status", "--json", cwd=repo, env=env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["config_error"]["code"] in (2001, 2002)
    assert "config error" in cpl("status", cwd=repo, env=env).stdout
    doctor = cpl("doctor", "--json", cwd=repo, env=env)
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr
    bad = [c for c in json.loads(doctor.stdout)["checks"] if not c["ok"]]
    assert bad[0]["name"] == "config parses and validates" and str(config) in bad[0]["detail"]
    cleared = cpl("clear", "--force", "--json", cwd=repo, env=env)
    assert cleared.returncode == 0 and not (repo / ".codeplane").exists()


def test_up_never_rewrites_the_users_config(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = cpl_env(home=tmp_path / "xdg")
    config = _write(repo / ".codeplane" / "config.yaml",
                    "# my settings, my layout\nlogging:   # keep this comment\n    level: info\n")
    before = config.read_bytes()
    first = cpl("init", "--json", cwd=repo, env=env)
    port = json.loads(first.stdout)["port"]
    assert config.read_bytes() == before
    assert (repo / ".codeplane" / "chosen_port").read_text().strip() == str(port)
    proc = subprocess.Popen([*CPL, "up", "--json"], cwd=repo, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        assert ready["port"] == port  # the stored port, so client configs stay valid
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert config.read_bytes() == before


def test_cpl_up_help_names_what_each_option_takes(tmp_path: Path) -> None:
    """``--set`` takes ``KEY=VALUE`` (typer would print its Python type, ``<list[str]>``), ``--profile`` one of
    its three values; the README's usage line spells them the same way."""
    proc = cpl("up", "--help", cwd=tmp_path, env={**cpl_env(home=tmp_path / "xdg"), "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "KEY=VALUE" in proc.stdout and "core|full|read_only" in proc.stdout and "PATH|URL" in proc.stdout
    assert "list[str]" not in proc.stdout


def test_aliases_are_refused_and_a_huge_value_is_shown_cut(tmp_path: Path) -> None:
    """Nine levels of YAML aliases in a dozen lines hung ``status``, ``up`` and ``doctor`` (3 GB and counting), and
    seven printed a 56 MB error line: aliases are a parse error naming the line; a long refused value is cut."""
    repo = make_repo(tmp_path / "repo")
    (repo / ".codeplane").mkdir()
    config = repo / ".codeplane" / "config.yaml"
    levels = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
    config.write_text("\n".join(levels) + "\ntests:\n  exclude: *a8\n")
    with pytest.raises(CodePlaneError) as aliased:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert aliased.value.code == 2001 and "aliases" in aliased.value.message, aliased.value
    assert aliased.value.details["line"] == 2, aliased.value.details
    config.write_text("tests:\n  target_timeout_sec: [" + ", ".join(["1"] * 50_000) + "]\n")
    with pytest.raises(CodePlaneError) as huge:
        load_config(repo, environ={}, global_path=tmp_path / "none")
    assert huge.value.code == 2002 and len(huge.value.message) < 1_000, len(huge.value.message)


def test_a_files_bad_key_is_blamed_on_the_file_when_an_override_sets_another_key_of_its_section(
        tmp_path: Path) -> None:
    """``server: {shutdown_timeout_sec: 1e3}`` with ``--set server.port=0`` (what ``cpl up --port 0`` sets) was
    reported "(from --set server.port=0)", without file, line or column."""
    repo = make_repo(tmp_path / "repo")
    path = _write(repo / ".codeplane" / "config.yaml", "server:\n  shutdown_timeout_sec: 1e3\n")
    with pytest.raises(CodePlaneError) as info:
        load_config(repo, environ={}, global_path=tmp_path / "none", overrides=["server.port=0"])
    assert info.value.details["source"] == f"repo config {path}", info.value.details
    assert info.value.message.startswith(f"{path}:2:3: "), info.value.message


def test_task_budgets_in_the_config_take_open_tasks_bounds(tmp_path: Path) -> None:
    """``tasks.max_mutations: 1e29`` was accepted while ``open_task`` refuses the same limit past 1,000,000."""
    with pytest.raises(CodePlaneError) as info:
        load_config(None, environ={}, global_path=tmp_path / "n", overrides=["tasks.max_mutations=1000001"])
    assert info.value.code == 2002 and info.value.details["key"] == "tasks.max_mutations"
