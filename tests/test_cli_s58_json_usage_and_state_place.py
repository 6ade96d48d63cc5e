"""``--json`` for usage errors, and ``cpl status`` with something other than a directory at ``.codeplane`` (QA64
F4, F5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import cpl, cpl_json, make_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("usage") / "repo", {"a.py": "x = 1\n"})


@pytest.mark.parametrize(("args", "named"), [
    (("up", "--port", "abc"), "--port"),
    (("status", "--bogus"), "--bogus"),
    (("index", "export"), "--out"),
])
def test_a_usage_error_under_json_is_the_catalogs_1003_on_stdout(repo: Path, args: tuple[str, ...],
                                                                 named: str) -> None:
    # Typer printed its boxed usage text on stderr and nothing on stdout: a script parsing stdout got "".
    proc = cpl(*args, "--json", cwd=repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == 1003 and error["retryable"] is False and named in error["message"], error
    assert not (repo / ".codeplane").exists()  # nothing started, nothing written


def test_a_usage_error_without_json_is_still_typers_text(repo: Path) -> None:
    proc = cpl("status", "--bogus", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == "" and "--bogus" in proc.stderr


def test_status_names_a_file_where_codeplane_keeps_its_state(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (root / ".codeplane").write_text("not a directory\n")
    refused = cpl_json("init", cwd=root)
    assert refused["error"]["code"] == 2007, refused
    status = cpl_json("status", cwd=root)
    # It said "no index yet; `cpl init` or `cpl up` builds it" and nothing else: both then refuse with 2007.
    assert status["state_dir_error"]["code"] == 2007, status
    assert "cpl init` or `cpl up` builds it" not in status["index"]["note"], status["index"]
    assert "2007" in status["index"]["note"]
    text = cpl("status", cwd=root)
    assert text.returncode == 0 and "state error 2007" in text.stdout, text.stdout
