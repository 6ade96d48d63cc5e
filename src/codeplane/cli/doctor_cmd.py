"""``cpl doctor``: run every registered check; non-zero exit if any fails."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from codeplane.cli.doctor_checks import FOUNDATION_CHECKS
from codeplane.cli.output import CONFIG_ERRORS, cli_errors, console, emit, styled
from codeplane.cli.repair import Repair, repair
from codeplane.core.doctor import Check, CheckResult
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.storage import storage_error
from codeplane.repo.workspace import find_repo_root


def registered_checks() -> list[Check]:
    """Every check, in the order shown. Subsystems add theirs here (imported lazily: only ``cpl doctor``
    pays for loading every subsystem)."""
    from codeplane.git.doctor import check_git_tools
    from codeplane.index.doctor import check_index
    from codeplane.lint.doctor import check_linters
    from codeplane.mutation.doctor import check_journal
    from codeplane.repo.doctor import check_watch_capacity
    from codeplane.server.instance import lock_is_held
    from codeplane.tasks.inspection import check_ledger
    from codeplane.testing.doctor import check_test_runners

    def journal(root: Path) -> list[CheckResult]:
        return check_journal(root, server_running=lock_is_held(RepoLayout(root)))

    return [*FOUNDATION_CHECKS, check_index, check_watch_capacity, check_ledger, check_test_runners, check_linters,
            journal, check_git_tools]


_STORAGE_ERRORS = frozenset({ErrorCode.STORAGE_FULL, ErrorCode.STORAGE_READ_ONLY, ErrorCode.STORAGE_PERMISSION_DENIED})


def run_checks(root: Path) -> list[CheckResult]:
    results: list[CheckResult] = []
    for check in registered_checks():
        name = getattr(check, "__name__", "check")
        try:
            results += check(root)
        except CodePlaneError as exc:
            if exc.error in CONFIG_ERRORS:
                results.append(CheckResult(name, False, "not checked: the config does not load",
                                           "fix the config first"))
            elif exc.error in _STORAGE_ERRORS:
                results.append(_storage_failure(name, exc))
            else:
                raise
        except Exception as exc:  # noqa: BLE001 - a broken check is itself a failed check
            mapped = storage_error(exc, doing="the check")
            results.append(_storage_failure(name, mapped) if mapped is not None else
                           CheckResult(name, False, f"{type(exc).__name__}: {exc}", "report this as a bug"))
    return results


def _storage_failure(name: str, error: CodePlaneError) -> CheckResult:
    # A read-only, full or forbidden .codeplane/ is the machine's state, not a bug in the check: QA saw a raw
    # "OSError: [Errno 30] Read-only file system" with "report this as a bug" on a remounted-ro disk.
    return CheckResult(name, False, f"{error.code} {error.message}",
                       "the file system named refuses (no bug in CodePlane); fix it as the detail says")


def doctor(
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    logs: Annotated[bool, typer.Option(
        "--logs", help="Append the last 200 log lines, and write one .tar.gz for a bug report (checks, status, "
                       "recent traces, logs) under .codeplane/reports/.")] = False,
    fix: Annotated[bool, typer.Option(
        "--fix", help="Apply the .codeplane/ damage policies offline (drop damaged derived stores, quarantine a "
                      "damaged ledger, remove stale files), then check again.")] = False,
    ack_quarantine: Annotated[bool, typer.Option(
        "--ack-quarantine", help="Acknowledge every quarantined ledger (the files are kept).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Check the repository, config, stores, server and tools; exit 1 if any check fails."""
    repairs: list[Repair] = []
    acknowledged: list[str] = []
    with cli_errors(as_json):
        root = find_repo_root(path or Path.cwd())
        if fix:
            RepoLayout(root).require_state_dir_place()
            repairs = repair(root)
        if ack_quarantine:
            from codeplane.tasks.quarantine import acknowledge, quarantined

            acknowledged = [p.name for p, _ in quarantined(RepoLayout(root).state_dir)]
            for name in acknowledged:
                acknowledge(RepoLayout(root).state_dir / name)
    results = run_checks(root)
    log_lines: list[str] = []
    if logs:
        log_file = RepoLayout(root).log_file
        if log_file.is_file():
            log_lines = log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-200:]
    bundle: Path | None = None
    if logs:
        from codeplane.cli.bug_report import write_bundle

        bundle = write_bundle(root, results)
    ok = all(r.ok for r in results)

    def render() -> None:
        if fix:
            console.print(f"Repairs: {len([r for r in repairs if r.fixed])} applied, "
                          f"{len([r for r in repairs if not r.fixed])} left to you" if repairs else
                          "Repairs: nothing to repair.")
            for done in repairs:
                console.print(styled("  ", ("fixed", "green") if done.fixed else ("left", "yellow"),
                                     f"  {done.target}: {done.action} - {done.detail}"))
        for name in acknowledged:
            console.print(f"Acknowledged quarantined ledger {name} (kept on disk).")
        table = Table(show_header=True, header_style="bold")
        for column in ("", "check", "detail", "fix"):
            table.add_column(column)
        for r in results:
            # A passing check with something to say (a store the next start rebuilds, a git operation in progress)
            # is a warning: the exit code stays 0.
            mark = ("FAIL", "red") if not r.ok else ("warn", "yellow") if r.fix else ("ok", "green")
            table.add_row(styled(mark), r.name, r.detail, r.fix)
        console.print(table)
        for line in log_lines:
            console.print(line)
        if bundle is not None:
            console.print(f"Bug report bundle: {bundle}")

    payload: dict[str, object] = {"ok": ok, "checks": [r.__dict__ for r in results], "logs": log_lines}
    if bundle is not None:
        payload["bundle"] = str(bundle)
    if fix:
        payload["repairs"] = [r.__dict__ for r in repairs]
    if ack_quarantine:
        payload["acknowledged"] = acknowledged
    emit(payload, as_json, render)
    if not ok:
        raise typer.Exit(1)
