"""Server lifecycle through the real CLI: one instance per repo, clean shutdown, stale files, down/clear."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.builders import CPL, cpl, cpl_env, cpl_json, git, make_repo, start_server


def _wait_gone(path: Path, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not path.exists():
            return True
        time.sleep(0.05)
    return not path.exists()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"main.py": "print('hi')\n"})


def test_init_outside_git_fails_with_catalog_code(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = cpl("init", str(plain), "--json", cwd=tmp_path)
    assert proc.returncode != 0
    body = json.loads(proc.stdout)
    assert body["error"]["code"] == 2003 and body["error"]["error"] == "NOT_A_GIT_REPOSITORY"
    human = cpl("init", str(plain), cwd=tmp_path)
    assert "2003" in human.stderr and "git" in human.stderr


def test_init_is_idempotent_and_writes_client_configs(repo: Path) -> None:
    first = cpl_json("init", cwd=repo)
    assert first["changed"] is True
    assert {".codeplane/config.yaml", ".codeplane/repo_id", ".codeplane/.gitignore", ".cplignore"} <= set(
        first["created"])
    assert (repo / ".codeplane" / ".gitignore").read_text() == "*\n"
    assert "node_modules/" in (repo / ".cplignore").read_text()
    before = {p: p.read_bytes() for p in (repo / ".codeplane").iterdir() if p.is_file()}
    second = cpl_json("init", cwd=repo)
    assert second["changed"] is False and second["created"] == []
    assert second["port"] == first["port"] and second["repo_id"] == first["repo_id"]
    assert {p: p.read_bytes() for p in before} == before
    assert second["client_config"]["claude_code"].startswith("claude mcp add --transport http codeplane ")
    written = cpl_json("init", "--write-client-config", cwd=repo)
    assert sorted(written["written"]) == [".mcp.json", ".vscode/mcp.json"]
    mcp_json = json.loads((repo / ".mcp.json").read_text())
    assert mcp_json["mcpServers"]["codeplane"]["url"] == first["mcp_url"]
    assert cpl_json("init", "--write-client-config", cwd=repo)["written"] == []


def test_client_configs_that_cannot_be_merged_are_named_and_nothing_is_written(repo: Path) -> None:
    """A ``.vscode/mcp.json`` with a comment (VS Code allows them) was a 9001 after ``.mcp.json`` had already been
    rewritten; ``["keep me"]`` was replaced silently; ``{"mcpServers": "str"}`` was a 9001. Each is refused with
    2002 naming the file, before either file is written; the user's keys keep their order."""
    (repo / ".vscode").mkdir()
    theirs = '{"zeta": 1, "mcpServers": {"other": {"url": "x"}}, "alpha": 2}\n'
    for rel, content in ((".vscode/mcp.json", '{\n  // mine\n  "servers": {}\n}\n'), (".mcp.json", '["keep me"]\n'),
                         (".mcp.json", '{"mcpServers": "str"}\n')):
        (repo / ".mcp.json").write_text(theirs)
        (repo / ".vscode" / "mcp.json").write_text('{"servers": {}}\n')
        (repo / rel).write_text(content)
        proc = cpl("init", "--write-client-config", "--json", cwd=repo)
        error = json.loads(proc.stdout)["error"]
        assert proc.returncode == 78 and error["code"] == 2002 and error["details"]["path"].endswith(rel), error
        assert (repo / rel).read_text() == content
        assert (repo / ".mcp.json").read_text() == (content if rel == ".mcp.json" else theirs)
    (repo / ".mcp.json").write_text(theirs)
    (repo / ".vscode" / "mcp.json").write_text("")
    assert sorted(cpl_json("init", "--write-client-config", cwd=repo)["written"]) == [".mcp.json", ".vscode/mcp.json"]
    assert list(json.loads((repo / ".mcp.json").read_text())) == ["zeta", "mcpServers", "alpha"]
    assert list(json.loads((repo / ".mcp.json").read_text())["mcpServers"]) == ["other", "codeplane"]


def test_init_leaves_the_work_tree_clean_in_a_clone_and_in_a_linked_worktree(repo: Path) -> None:
    """The ``.cplignore`` init writes is excluded locally (``info/exclude``): ``git status`` stays clean, so
    ``git add -A`` (or ``git_stage_and_commit(all=true)``) does not put CodePlane's file in the user's commit."""
    cpl_json("init", cwd=repo)
    cpl_json("init", cwd=repo)
    assert (repo / ".cplignore").is_file()
    assert git(repo, "status", "--porcelain", "--untracked-files=all").stdout == ""
    exclude = (repo / ".git" / "info" / "exclude").read_text()
    assert exclude.splitlines().count("/.cplignore") == 1
    linked = repo.parent / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    assert cpl_json("init", cwd=linked)["created"]
    assert (linked / ".cplignore").is_file()
    assert git(linked, "status", "--porcelain", "--untracked-files=all").stdout == ""
    # The default file an earlier version wrote and left untracked: hidden the same way at the next init.
    older = repo.parent / "older"
    make_repo(older, {"a.py": "x = 1\n"})
    (older / ".cplignore").write_text((repo / ".cplignore").read_text())
    assert git(older, "status", "--porcelain").stdout == "?? .cplignore\n"
    cpl_json("init", cwd=older)
    assert git(older, "status", "--porcelain", "--untracked-files=all").stdout == ""
    # A rule the user already shares is theirs: init neither rewrites it nor hides it.
    shared = repo.parent / "shared"
    make_repo(shared, {"a.py": "x = 1\n", ".cplignore": "gen/\n"})
    cpl_json("init", cwd=shared)
    assert (shared / ".cplignore").read_text() == "gen/\n"
    assert "/.cplignore" not in (shared / ".git" / "info" / "exclude").read_text()


def test_second_up_refuses_naming_pid_and_port_then_sigterm_cleans_up(repo: Path) -> None:
    server = start_server(repo)
    layout = repo / ".codeplane"
    try:
        assert (layout / "port").read_text().strip() == str(server.port)
        assert (layout / "server.pid").read_text().strip() == str(server.ready["pid"])
        second = cpl("up", "--port", "0", "--json", cwd=repo, timeout=30)
        assert second.returncode != 0
        err = json.loads(second.stdout)["error"]
        assert err["code"] == 2004
        assert err["details"]["pid"] == server.ready["pid"] and err["details"]["port"] == server.port
        assert str(server.ready["pid"]) in err["message"]
    finally:
        rc = server.stop(signal.SIGTERM)
    assert rc == 0
    assert not (layout / "port").exists() and not (layout / "server.pid").exists()


def test_stale_files_after_sigkill_are_detected_and_cleaned(repo: Path) -> None:
    server = start_server(repo)
    server.stop(signal.SIGKILL)
    layout = repo / ".codeplane"
    assert (layout / "port").exists() and (layout / "server.pid").exists()
    doctor = cpl_json("doctor", cwd=repo)
    assert doctor["ok"] is False
    assert any(c["name"] == "port/pid files consistent" and not c["ok"] for c in doctor["checks"])
    status = cpl_json("status", cwd=repo)
    assert status["running"] is False
    again = start_server(repo)
    try:
        assert "stale" in " ".join(again.ready["warnings"])
        assert (layout / "server.pid").read_text().strip() == str(again.ready["pid"])
    finally:
        again.stop()


def test_down_stops_the_server_from_another_process(repo: Path) -> None:
    server = start_server(repo)
    status = cpl_json("status", cwd=repo)
    assert status["running"] is True and status["port"] == server.port and status["branch"] == "main"
    assert status["head"] and status["index"]
    result = cpl_json("down", cwd=repo)
    assert result["stopped"] is True and result["pid"] == server.ready["pid"]
    server.proc.wait(timeout=10)
    assert _wait_gone(repo / ".codeplane" / "port")
    assert cpl_json("down", cwd=repo)["was_running"] is False


def test_a_server_whose_pid_and_port_files_were_deleted_is_still_named_and_stopped(repo: Path) -> None:
    """``rm .codeplane/server.pid .codeplane/port`` under a running server: ``status`` showed pid None and
    ``down --force`` tried to stop "pid None" and failed, so the server could only be killed by hand. The lock
    file the server holds names it too."""
    server = start_server(repo)
    try:
        (repo / ".codeplane" / "server.pid").unlink()
        (repo / ".codeplane" / "port").unlink()
        status = cpl_json("status", cwd=repo)
        assert status["running"] is True and status["pid"] == server.ready["pid"] and status["port"] == server.port
        result = cpl_json("down", cwd=repo)
        assert result["stopped"] is True and result["pid"] == server.ready["pid"]
        server.proc.wait(timeout=10)
        assert (repo / ".codeplane" / "server.lock").read_text() == ""  # a dead server's pid is never read
    finally:
        server.stop()


def test_codeplane_dir_deleted_under_a_running_server_is_restored_and_kept_out_of_git(repo: Path) -> None:
    """``rm -rf .codeplane`` while serving: the server recreated its stores without the ``.gitignore`` (git saw
    ``?? .codeplane/``, ``git add -A`` would commit the index), and ``cpl status``/``cpl down`` said no server ran."""
    server = start_server(repo)
    try:
        shutil.rmtree(repo / ".codeplane")
        deadline = time.monotonic() + 15
        while not (repo / ".codeplane" / "server.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        status = cpl_json("status", cwd=repo)
        assert status["running"] is True and status["pid"] == server.ready["pid"], status
        assert (repo / ".codeplane" / ".gitignore").read_text() == "*\n"
        assert ".codeplane" not in git(repo, "status", "--porcelain").stdout
        assert cpl_json("down", cwd=repo)["stopped"] is True
        server.proc.wait(timeout=10)
    finally:
        server.stop()


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_an_out_of_range_port_is_a_config_error_not_an_internal_one(repo: Path, port: str) -> None:
    proc = cpl("up", "--port", port, "--json", cwd=repo)  # was 9001: bind()'s OverflowError
    assert proc.returncode == 78, proc.stdout + proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == 2002 and error["details"]["key"] == "server.port"
    # Named as the option typed: it said "(from --set server.port=99999)", which was never typed.
    assert error["details"]["source"] == f"--port {port}" and "--set" not in error["message"], error


def test_a_file_where_codeplane_keeps_its_state_is_named_and_never_touched(repo: Path) -> None:
    """A regular file ``.codeplane``: init and up failed with 9001 (FileExistsError), clear and doctor --fix with
    NotADirectoryError, and doctor said all was well."""
    (repo / ".codeplane").write_text("someone's notes\n")
    for command in (["init"], ["up", "--port", "0"], ["clear"], ["doctor", "--fix"]):
        proc = cpl(*command, "--json", cwd=repo)
        assert proc.returncode != 0 and json.loads(proc.stdout)["error"]["code"] == 2007, (command, proc.stdout)
    doctor = cpl("doctor", "--json", cwd=repo)
    failed = [c["name"] for c in json.loads(doctor.stdout)["checks"] if not c["ok"]]
    assert doctor.returncode == 1 and ".codeplane is a directory" in failed, doctor.stdout
    assert (repo / ".codeplane").read_text() == "someone's notes\n"


def test_a_codeplane_link_is_never_followed(repo: Path, tmp_path: Path) -> None:
    """A ``.codeplane`` symlink (committed in a cloned repository) to another directory: ``cpl up`` wrote its stores
    there, replacing a file named ``index.db`` it found "unusable" (the user's notes), and ``clear`` failed with
    9001. Every command refuses it (2007) and nothing there is touched."""
    elsewhere = tmp_path / "victim"
    elsewhere.mkdir()
    (elsewhere / "index.db").write_text("user notes\n")
    (repo / ".codeplane").symlink_to(elsewhere)
    for command in (["init"], ["up", "--port", "0"], ["clear"], ["doctor", "--fix"]):
        proc = cpl(*command, "--json", cwd=repo)
        error = json.loads(proc.stdout)["error"]
        assert proc.returncode != 0 and error["code"] == 2007 and "symbolic link" in error["message"], (command, error)
    doctor = cpl("doctor", "--json", cwd=repo)
    assert doctor.returncode == 1, doctor.stdout
    assert sorted(p.name for p in elsewhere.iterdir()) == ["index.db"]
    assert (elsewhere / "index.db").read_text() == "user notes\n"


def test_a_busy_port_the_user_asked_for_is_refused_and_the_one_init_picked_falls_back(repo: Path) -> None:
    """``--port 47555`` (or ``server.port``) busy: the server ran on another port with a warning, while every
    client config still named 47555. Refused now (2006); only the port ``cpl init`` chose itself moves."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        for args in (["--port", str(port)], ["--set", f"server.port={port}"]):
            proc = cpl("up", *args, "--json", cwd=repo)
            assert proc.returncode != 0 and json.loads(proc.stdout)["error"]["code"] == 2006, proc.stdout
        cpl_json("init", cwd=repo)
        (repo / ".codeplane" / "chosen_port").write_text(f"{port}\n")
        server = subprocess.Popen([*CPL, "up", "--json"], cwd=repo, env=cpl_env(), stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            assert server.stdout is not None
            ready = json.loads(server.stdout.readline())
            assert ready["port"] != port and any(f"port {port} is busy" in w for w in ready["warnings"]), ready
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


def test_clear_refuses_while_running_and_force_stops_first(repo: Path) -> None:
    server = start_server(repo)
    try:
        refused = cpl("clear", "--json", cwd=repo)
        assert refused.returncode != 0
        assert json.loads(refused.stdout)["error"]["code"] == 2004
        assert (repo / ".codeplane").is_dir()
        forced = cpl_json("clear", "--force", cwd=repo)
        assert forced["removed"] is True
        server.proc.wait(timeout=15)
        assert not (repo / ".codeplane").exists()
        assert (repo / ".cplignore").exists()
    finally:
        server.stop()


def test_doctor_passes_on_healthy_repo_and_fails_on_bad_config(repo: Path) -> None:
    cpl_json("init", cwd=repo)
    healthy = cpl("doctor", "--json", cwd=repo)
    assert healthy.returncode == 0, healthy.stdout
    config = repo / ".codeplane" / "config.yaml"
    config.write_text(config.read_text() + "logging:\n  level: loud\n")
    broken = cpl("doctor", "--json", cwd=repo)
    assert broken.returncode == 1
    checks = json.loads(broken.stdout)["checks"]
    bad = next(c for c in checks if c["name"] == "config parses and validates")
    assert bad["ok"] is False and "2002" in bad["detail"] and "logging.level" in bad["detail"]
    assert bad["fix"]


def test_json_log_file_has_required_fields(repo: Path) -> None:
    server = start_server(repo)
    server.stop()
    log_file = repo / ".codeplane" / "logs" / "codeplane.jsonl"
    lines = [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()]
    assert lines, "server wrote no JSON log lines"
    for entry in lines:
        assert {"ts", "level", "event"} <= entry.keys()
        assert entry["ts"].endswith("Z") and "T" in entry["ts"]
    # The first build is in the log, with its size and time (nothing said it was built).
    built = [e for e in lines if e["event"] == "index.reconciled"]
    assert built and built[0]["reason"] == "startup" and built[0]["added"] >= 1, built


def test_up_on_unborn_repo_with_no_commits_serves(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "empty")
    server = start_server(repo)
    try:
        assert server.get("/health").status_code == 200
        assert os.path.exists(repo / ".codeplane" / "config.yaml")
    finally:
        server.stop()


def test_health_answers_while_booting_and_a_failed_boot_exits_with_its_error(repo: Path) -> None:
    # The socket listens before the MCP stack boots. A write batch whose journal cannot be read back (so
    # the work tree may be half-written) deliberately fails the boot: held requests get the error, the
    # server exits non-zero and leaves no port/pid behind, and last_error says why. (Derived stores never
    # fail a boot: test_damage.py.)
    cpl_json("init", cwd=repo)
    state = repo / ".codeplane"
    (state / "journal" / "mut_garbled").mkdir(parents=True)
    (state / "journal" / "mut_garbled" / "manifest.json").write_text("{not json")
    handle = start_server(repo)
    health = httpx.get(f"http://127.0.0.1:{handle.port}/health", timeout=10)
    assert health.status_code == 200 and health.json()["phase"] in ("starting", "failed")
    assert handle.proc.wait(timeout=30) != 0
    assert handle.proc.stdout is not None
    error = json.loads(handle.proc.stdout.read().strip().splitlines()[-1])["error"]
    assert error["code"] == 9001 and "mut_garbled" in error["message"]
    assert not (state / "port").exists() and not (state / "server.pid").exists()
    assert "mut_garbled" in (state / "last_error").read_text()


def test_a_server_that_requires_a_token_is_seen_by_the_cli_and_refuses_callers_without_it(repo: Path) -> None:
    """``server.require_token`` was documented nowhere and no test started such a server: ``cpl status`` took it for
    one "running, not answering" (its probe sent no token) and ``doctor`` said to kill it."""
    server = start_server(repo, "--set", "server.require_token=true")
    try:
        token = (repo / ".codeplane" / "token").read_text().strip()
        assert len(token) >= 32 and oct((repo / ".codeplane" / "token").stat().st_mode & 0o777) == "0o600"
        status = cpl_json("status", cwd=repo)
        assert status["running"] is True and status.get("answering", True) is True, status
        base = f"http://127.0.0.1:{server.port}"
        refused = httpx.get(f"{base}/status", timeout=10)
        assert refused.status_code == 401 and refused.json()["code"] == 1001, refused.text
        allowed = httpx.get(f"{base}/status", timeout=10, headers={"Authorization": f"Bearer {token}"})
        assert allowed.status_code == 200
        # The scheme's name in any case (RFC 7235); a wrong token or a prefix of it is still refused.
        lower = httpx.get(f"{base}/status", timeout=10, headers={"Authorization": f"bearer {token}"})
        wrong = httpx.get(f"{base}/status", timeout=10, headers={"Authorization": f"BEARER {token[:-1]}"})
        assert lower.status_code == 200 and wrong.status_code == 401 and wrong.json()["code"] == 1002
    finally:
        server.stop()
