"""A read-only ``.codeplane/`` (a disk remounted ro) must not trap a running server: ``cpl status`` sees it,
``cpl down`` stops it, and ``cpl doctor`` names the read-only storage (5011) instead of "report this as a bug".

``lock_is_held`` opened ``server.lock`` for appending just to test the lock, so both commands answered 5011 and
the server could only be killed by hand. The read-only view is real: the commands run in a private mount
namespace (``unshare -m``) where ``.codeplane/`` is bind-mounted read-only; the server outside it keeps a
writable view. Skipped where mount namespaces are not allowed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.builders import CPL, cpl_env, make_repo, start_server

_RO = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def _read_only_mounts_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", _RO, "sh", "/tmp", "true"], capture_output=True,
                           check=False)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _read_only_mounts_work(), reason="needs unshare -m and bind mounts")


def _read_only(state_dir: Path, argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` seeing ``state_dir`` read-only (and check that it really is, from inside)."""
    check = subprocess.run(["unshare", "-m", "sh", "-c", _RO, "sh", str(state_dir), "touch",
                            str(state_dir / "probe")], capture_output=True, text=True, check=False)
    assert check.returncode != 0 and "Read-only" in check.stderr, check
    return subprocess.run(["unshare", "-m", "sh", "-c", _RO, "sh", str(state_dir), *argv], cwd=cwd, env=cpl_env(),
                          capture_output=True, text=True, timeout=120, check=False)


_LOCK_HELD = "from pathlib import Path; import sys; from codeplane.core.layout import RepoLayout; " \
             "from codeplane.server.instance import lock_is_held; print(lock_is_held(RepoLayout(Path(sys.argv[1]))))"


def test_lock_is_held_answers_on_a_read_only_state_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    handle = start_server(repo)
    try:
        held = _read_only(repo / ".codeplane", [sys.executable, "-c", _LOCK_HELD, str(repo)], repo)
        assert (held.returncode, held.stdout.strip()) == (0, "True"), held.stderr
    finally:
        handle.stop()
    free = _read_only(repo / ".codeplane", [sys.executable, "-c", _LOCK_HELD, str(repo)], repo)
    assert (free.returncode, free.stdout.strip()) == (0, "False"), free.stderr


def test_status_and_down_work_on_a_read_only_state_dir(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    handle = start_server(repo)
    try:
        status = _read_only(repo / ".codeplane", [*CPL, "status", str(repo), "--json"], repo)
        assert status.returncode == 0, status.stdout + status.stderr
        answer = json.loads(status.stdout.splitlines()[-1])
        assert answer["running"] is True and answer["pid"] == handle.proc.pid, answer
        down = _read_only(repo / ".codeplane", [*CPL, "down", str(repo), "--json"], repo)
        assert down.returncode == 0, down.stdout + down.stderr
        assert json.loads(down.stdout.splitlines()[-1])["stopped"] is True
        assert handle.proc.wait(timeout=30) is not None
    finally:
        handle.stop()


def test_doctor_names_read_only_storage_not_a_bug(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    handle = start_server(repo)
    try:
        doctor = _read_only(repo / ".codeplane", [*CPL, "doctor", str(repo), "--json"], repo)
    finally:
        handle.stop()
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    checks = {c["name"]: c for c in json.loads(doctor.stdout.splitlines()[-1])["checks"]}
    assert not [c for c in checks.values() if c["fix"] == "report this as a bug"], checks
    writable = checks[".codeplane writable"]
    assert not writable["ok"] and writable["detail"].startswith("5011 "), writable
    assert "read-only" in writable["detail"], writable
    assert checks["port/pid files consistent"]["ok"], checks
    # Ran to the end (it raised EROFS before); whether the probe answered in time under load is not the point.
    assert "server reachable" in checks, checks
