"""The CLI prints data as written: ``[...]`` in an error message, a path or a config value is not Rich markup.

Rich read it as markup: ``tools: {profile: "[/x]"}`` made ``cpl up`` die with a MarkupError traceback (exit 1,
not 78), an untracked ``app/[slug]/page.py`` was named ``app//page.py``, and the runners hint lost its
``[python, -m, pytest]``. ``:name:`` was an emoji code. Real ``cpl`` subprocesses on real repositories."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from codeplane.cli.live_view import render
from tests.builders import cpl, cpl_env, make_repo


def _env_without_profile() -> dict[str, str]:
    # cpl_env pins tools.profile in the environment, which would hide the config file's value.
    env = cpl_env()
    env.pop("CODEPLANE__TOOLS__PROFILE", None)
    return env


def _write_config(repo: Path, text: str) -> Path:
    config = repo / ".codeplane" / "config.yaml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(text)
    return config


def test_a_config_value_like_a_closing_tag_is_a_config_error_not_a_traceback(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    config = _write_config(repo, 'tools: {profile: "[/x]"}\n')
    proc = cpl("up", str(repo), "--port", "0", cwd=repo, env=_env_without_profile())
    assert proc.returncode == 78, proc.stderr
    assert "Traceback" not in proc.stderr and "MarkupError" not in proc.stderr
    assert f"{config}:1:9: invalid config value for 'tools.profile' = '[/x]'" in proc.stderr, proc.stderr


def test_a_config_value_like_an_opening_tag_is_shown_as_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    _write_config(repo, 'tools: {profile: "[bold]core2"}\n')
    proc = cpl("up", str(repo), "--port", "0", cwd=repo, env=_env_without_profile())
    assert proc.returncode == 78, proc.stderr
    assert "'tools.profile' = '[bold]core2'" in proc.stderr, proc.stderr


def test_the_runners_error_keeps_its_example_and_names_file_line_column(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    config = _write_config(repo, "tests:\n  runners:\n    pytest: {cmd: 5}\n")
    proc = cpl("up", str(repo), "--port", "0", cwd=repo)
    assert proc.returncode == 78, proc.stderr
    assert (f"{config}:3:14: tests.runners.pytest.cmd: expected a command as a list of strings "
            "(e.g. [python, -m, pytest])") in proc.stderr, proc.stderr


def test_the_runners_error_names_a_set_option_it_came_from(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    proc = cpl("up", str(repo), "--port", "0", "--set", "tests.runners.pytest.cmd=5", cwd=repo)
    assert proc.returncode == 78, proc.stderr
    assert "(from --set tests.runners.pytest.cmd=5)" in proc.stderr, proc.stderr


def test_export_names_a_bracketed_untracked_path_exactly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "app" / "[slug]").mkdir(parents=True)
    (repo / "app" / "[slug]" / "page.py").write_text("v = 1\n")
    proc = cpl("index", "export", str(repo), "--out", str(tmp_path / "x.tar.zst"), cwd=repo, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "(e.g. app/[slug]/page.py)" in proc.stderr, proc.stderr


def test_export_names_a_directory_like_a_closing_tag_without_crashing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / "[" / "x]").mkdir(parents=True)  # the directory "[/x]"... as two path parts: "[" then "x]"
    (repo / "[" / "x]" / "p.py").write_text("v = 1\n")
    proc = cpl("index", "export", str(repo), "--out", str(tmp_path / "x.tar.zst"), cwd=repo, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "MarkupError" not in proc.stderr
    assert "(e.g. [/x]/p.py)" in proc.stderr, proc.stderr


def test_status_prints_a_repository_path_with_brackets_and_colons_as_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "[b]a:smile:b", {"a.py": "x = 1\n"})
    proc = cpl("status", str(repo), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert f"repo:   {repo}\n" in proc.stdout, proc.stdout


def _booting(repo: str) -> dict[str, object]:
    return {"booting": True, "status": {"ready_reason": "index: first reconcile [/x]", "repo": repo, "pid": 7,
                                        "uptime_ms": 3000}}


def _live(repo: str) -> dict[str, object]:
    return {
        "server": {"ready": False, "ready_reason": "reason [/y]", "repo": repo, "pid": 7, "uptime_ms": 5000,
                   "version": "1"},
        "index": {"state": "ready", "epoch": 3, "head_drift": True, "pending_changes": 0, "watcher": "running"},
        "calls": {"window_s": 300, "tools": {}}, "tasks": [], "recent_operations": [], "test_runs": [],
    }


def test_the_live_view_renders_bracketed_repo_paths_and_reasons_as_written() -> None:
    out = io.StringIO()
    screen = Console(file=out, width=300, markup=False)
    screen.print(render(_booting("/r/[/x]"), []))
    screen.print(render(_live("/r/[bold]q"), []))
    text = out.getvalue()
    assert "index: first reconcile [/x]  /r/[/x]  pid 7  up 3 s" in text, text
    assert "reason [/y]  /r/[bold]q  pid 7" in text, text
    # The drift note is coloured, not printed as its markup source.
    assert "watcher running (index behind HEAD)" in text and "[yellow]" not in text, text
