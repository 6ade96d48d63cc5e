"""``cpl doctor --fix``: the ``.codeplane/`` damage policies (ARCHITECTURE.md), applied offline.

Only while no server runs (a running server applies them itself at start and owns the files). Derived
stores that fail their integrity check are dropped (the next start rebuilds them); a damaged ledger is
quarantined by opening it as the server would, so the new chain's first row records the move; stale
port/pid files and the partial downloads of a killed artifact fetch are removed. The user's config is never
rewritten: its problem is reported, not fixed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codeplane.core.config import CodePlaneConfig, load_config
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import configure_logging
from codeplane.core.stores import drop_store, sqlite_problem
from codeplane.server.instance import clean_stale_files, lock_is_held, read_running


@dataclass(frozen=True)
class Repair:
    """One policy applied (``fixed``) or a problem left to the user (``fixed`` false)."""

    target: str
    action: str
    detail: str
    fixed: bool = True


def _left_alone(target: str, exc: CodePlaneError) -> Repair:
    return Repair(target, "not changed", f"{exc.code} {exc.message}", fixed=False)


def _derived_files(layout: RepoLayout) -> list[Path]:
    return [layout.index_db, layout.state_dir / "test_costs.db", layout.test_runs_db,
            layout.state_dir / "coverage.db", layout.state_dir / "semantic_diff.db"]


def repair(root: Path) -> list[Repair]:
    """Apply every policy; 2004 while a server runs."""
    layout = RepoLayout(root)
    if lock_is_held(layout):
        running = read_running(layout)
        raise CodePlaneError(ErrorCode.SERVER_ALREADY_RUNNING,
                             f"a server is running (pid {running.pid}); it applies these policies itself at start. "
                             "Stop it with `cpl down` to repair offline",
                             details={"pid": running.pid, "port": running.port})
    try:
        logging_config = load_config(root).logging
    except CodePlaneError:
        logging_config = CodePlaneConfig().logging
    # What a repair does goes to the log file too (and to stderr, never into --json output).
    configure_logging(logging_config, root)
    done: list[Repair] = []
    for path in _derived_files(layout):
        try:
            problem = sqlite_problem(path)
        except CodePlaneError as exc:  # it cannot be written here: no damage, nothing to drop
            done.append(_left_alone(path.name, exc))
            continue
        if problem is not None:
            drop_store(path)
            done.append(Repair(path.name, "dropped", f"{problem}; rebuilt from disk by the next `cpl up`"))
    done += _repair_tantivy(layout)
    for name in ("locks", "pycache"):
        path = layout.state_dir / name
        if path.exists() and not path.is_dir():
            drop_store(path)
            done.append(Repair(name, "dropped", "a file stood where a directory belongs; recreated on use"))
    if layout.lock_file.exists() and not layout.lock_file.is_file():
        drop_store(layout.lock_file)
        done.append(Repair(layout.lock_file.name, "dropped", "not a regular file; recreated at the next start"))
    done += _repair_ledger(layout)
    cleaned = clean_stale_files(layout)
    if cleaned:
        done.append(Repair(", ".join(cleaned), "removed", "left by a server that is gone"))
    done += _repair_artifact_cache(layout)
    try:
        load_config(root)
    except CodePlaneError as exc:
        done.append(Repair("config", "not changed", f"{exc.code} {exc.message} (your file: fix it by hand)",
                           fixed=False))
    return done


def _repair_tantivy(layout: RepoLayout) -> list[Repair]:
    from codeplane.index.doctor import check_index  # loads Tantivy: only when repairing

    if not layout.index_db.exists():
        problem = None if not layout.tantivy_dir.exists() else "no index.db to agree with"
    else:
        failed = [r for r in check_index(layout.root) if r.name == "tantivy" and not r.ok]
        problem = failed[0].detail if failed else None
    if problem is None or not layout.tantivy_dir.exists():
        return []
    drop_store(layout.tantivy_dir)
    return [Repair("tantivy/", "dropped", f"{problem}; refilled by the next `cpl up`")]


def _repair_artifact_cache(layout: RepoLayout) -> list[Repair]:
    from codeplane.index.artifact_adopt import clean_partial_downloads  # loads the fetch: only when repairing

    removed = clean_partial_downloads(layout)
    if not removed:
        return []
    return [Repair(f"artifact-cache/{', '.join(removed)}", "removed",
                   "left by an index artifact download that was killed")]


def _repair_ledger(layout: RepoLayout) -> list[Repair]:
    from codeplane.tasks.ledger import Ledger
    from codeplane.tasks.ledger_identity import ledger_problem, remembered

    try:
        problem = ledger_problem(layout.ledger_db)
    except CodePlaneError as exc:  # unwritable, not damaged: quarantining it would be the damage
        return [_left_alone("ledger.db", exc)]
    if problem is None and not layout.ledger_db.exists() and remembered(layout.state_dir) is not None:
        ledger = Ledger(layout.ledger_db)
        ledger.open()  # a new chain whose first row records the loss, as a server start would
        ledger.close()
        reason = ledger.quarantined.reason if ledger.quarantined else "ledger.db is missing"
        return [Repair("ledger.db", "new chain", f"{reason}; the new chain records it"),
                Repair("ledger.db", "missing", "`cpl doctor --ack-quarantine` once you know why", fixed=False)]
    if problem is None:
        return []
    ledger = Ledger(layout.ledger_db)
    ledger.open()  # quarantines and starts the new chain exactly as a server start would
    ledger.close()
    moved = ledger.quarantined
    detail = f"{problem}; moved to {moved.file} (sha256 {moved.sha256}); a new chain starts" if moved else problem
    return [Repair("ledger.db", "quarantined", detail),
            Repair(moved.file if moved else "ledger.db", "kept",
                   "evidence: `cpl doctor --ack-quarantine` once inspected", fixed=False)]
