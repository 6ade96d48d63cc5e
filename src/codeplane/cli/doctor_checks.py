"""The foundation's ``cpl doctor`` checks. Other subsystems add theirs in ``doctor_cmd.registered_checks``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2

from codeplane.cli.probe import probe
from codeplane.cli.repo_context import check_runners
from codeplane.core.config import load_config
from codeplane.core.doctor import CheckResult, unwritable_check
from codeplane.core.errors import CodePlaneError
from codeplane.core.layout import RepoLayout
from codeplane.core.procs import pid_alive
from codeplane.core.storage import probe_write, storage_error
from codeplane.core.stores import sqlite_problem
from codeplane.server.instance import lock_is_held, read_running


def check_git(root: Path) -> list[CheckResult]:
    try:
        repo = pygit2.Repository(str(root))
        head = "unborn HEAD" if repo.head_is_unborn else str(repo.head.target)[:12]
    except (pygit2.GitError, KeyError) as exc:
        return [CheckResult("git repository readable", False, str(exc), "check .git permissions / run git fsck")]
    return [CheckResult("git repository readable", True, f"{root} ({head})")]


def check_state_dir(root: Path) -> list[CheckResult]:
    problem = RepoLayout(root).state_dir_problem()
    if problem is not None:
        return [CheckResult(".codeplane is a directory", False, problem.message,
                            "move or delete what is at .codeplane (CodePlane never does: it is not its own)")]
    return [CheckResult(".codeplane is a directory", True, "yes, or not created yet")]


def check_state_writable(root: Path) -> list[CheckResult]:
    """Whether ``.codeplane/`` takes writes: a read-only remount (``errors=remount-ro``) or lost permissions is
    named as such (5011/5012), once, rather than as the odd failures of each store it stops."""
    state_dir = RepoLayout(root).state_dir
    if not state_dir.is_dir():
        return []
    problem = probe_write(state_dir)
    mapped = storage_error(problem, doing="writing to .codeplane/", path=state_dir) if problem else None
    if problem is None or mapped is None:
        return [CheckResult(".codeplane writable", problem is None, "yes" if problem is None else str(problem),
                            "" if problem is None else "check the file system holding .codeplane/")]
    return [CheckResult(".codeplane writable", False, f"{mapped.code} {mapped.message}",
                        "remount it read-write or fix its permissions; meanwhile `cpl status` and `cpl down` work "
                        "and the server refuses writes")]


def check_config(root: Path) -> list[CheckResult]:
    try:
        config = load_config(root)
        check_runners(root, config)
    except CodePlaneError as exc:
        return [CheckResult("config parses and validates", False, f"{exc.code} {exc.message}",
                            "fix the named key at the named line (README: Configuration); "
                            "`cpl status`, `cpl clear` and `cpl doctor` work meanwhile")]
    port = config.server.port
    return [CheckResult("config parses and validates", True,
                        f"server.port={port}" if port else "server.port not set (the port `cpl init` chose is used)")]


def check_instance_files(root: Path) -> list[CheckResult]:
    layout = RepoLayout(root)
    files = read_running(layout)
    held = lock_is_held(layout)
    if held:
        ok = files.pid is not None and pid_alive(files.pid) and files.port is not None
        detail = f"pid {files.pid}, port {files.port}"
        return [CheckResult("port/pid files consistent", ok, detail,
                            "" if ok else "server is starting or wedged; `cpl down --force` then `cpl up`")]
    stale = [p.name for p in (layout.port_file, layout.pid_file) if p.exists()]
    if stale:
        return [CheckResult("port/pid files consistent", False, f"stale {', '.join(stale)} without a server",
                            "run `cpl down` to clean them (or `cpl up`, which cleans them)")]
    return [CheckResult("port/pid files consistent", True, "no server running, no stale files")]


def check_server(root: Path) -> list[CheckResult]:
    layout = RepoLayout(root)
    result = probe(layout)
    if not result.running:
        return [CheckResult("server reachable", True, "not running (start it with `cpl up`)")]
    if not result.answering:
        return [CheckResult("server reachable", False, result.error or f"no answer on port {result.port}",
                            "`cpl down --force` then `cpl up`")]
    if not result.repo_matches:
        return [CheckResult("server reachable", False, f"port {result.port} answers for another repository",
                            "`cpl down --force` then `cpl up` (port files point at the wrong server)")]
    return [CheckResult("server reachable", True, f"answering on port {result.port} for {root}")]


def check_derived_stores(root: Path) -> list[CheckResult]:
    """``PRAGMA quick_check`` of the derived stores (``index.db`` and ``ledger.db`` have their own checks)."""
    layout = RepoLayout(root)
    results = []
    for path in (layout.state_dir / "test_costs.db", layout.test_runs_db, layout.state_dir / "coverage.db",
                 layout.state_dir / "semantic_diff.db"):
        if not path.exists():
            continue
        try:
            problem = sqlite_problem(path, read_only=True)
        except CodePlaneError as exc:
            results.append(unwritable_check(path.name, exc))
            continue
        results.append(CheckResult(path.name, problem is None, problem or "integrity check ok",
                                   "" if problem is None else
                                   "derived data: `cpl doctor --fix` (or the next `cpl up`) drops it, starts it empty"))
    for directory in (layout.state_dir / "locks", layout.pycache_dir):
        if directory.exists() and not directory.is_dir():
            results.append(CheckResult(f"{directory.name}/", False, "a file stands where a directory belongs",
                                       "derived data: `cpl doctor --fix` removes it (or the next write/test run)"))
    return results


def check_executables(root: Path) -> list[CheckResult]:
    git = shutil.which("git")
    return [CheckResult("git on PATH", git is not None, git or "not found",
                        "" if git else "install git (apt-get install git)")]


FOUNDATION_CHECKS = [check_git, check_state_dir, check_state_writable, check_config, check_instance_files, check_server,
                     check_derived_stores, check_executables]
