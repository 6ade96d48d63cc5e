"""The `.codeplane/` damage matrix (issue 24): damage one store or the config, then run the real `cpl`.

Each case starts from a repository a real server has used (index built, a write recorded in the ledger,
test stores created), stops it, damages one thing, and records what happens: `cpl doctor` before,
whether `cpl up` serves, what `/status` warns, whether search still answers exactly what the files hold,
what evidence is kept, and `cpl doctor` after. `tests/test_damage.py` asserts the documented policy
(ARCHITECTURE.md, "`.codeplane/` damage policies") on these outcomes; rerun the whole matrix with

    uv run python -m tests.damage_matrix            # every case, a markdown table
    uv run python -m tests.damage_matrix ledger     # cases whose name contains "ledger"
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.builders import ServerHandle, call, cpl, cpl_env, make_repo, mcp_client, start_server

MARKER = "damage_marker_token"
FILES = {
    "src/app.py": f"def {MARKER}():\n    return 1\n",
    "src/util.py": f"from app import {MARKER}\n\nVALUE = {MARKER}()\n",
    "docs/notes.md": f"The {MARKER} is documented here.\n",
    "tests/test_app.py": "def test_ok():\n    assert True\n",
}
#: Where MARKER occurs, as (path, line): what `rg -w` finds, so what search must answer.
EXPECTED_HITS = sorted((path, n) for path, text in FILES.items()
                       for n, line in enumerate(text.splitlines(), 1) if MARKER in line)


def _garble(path: Path, at: float = 0.5) -> None:
    """Overwrite 4 KiB in the middle of the file (a torn or bit-rotted page)."""
    data = bytearray(path.read_bytes())
    start = min(int(len(data) * at) // 4096 * 4096, max(len(data) - 4096, 0))
    data[start:start + 4096] = b"\x5a" * min(4096, len(data) - start)
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2 + 100])


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 40)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _dir_instead(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    path.mkdir()
    (path / "junk").write_text("x")


def _file_instead(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    path.write_text("not a directory\n")


def _delete(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()


def _stale_instance_files(path: Path) -> None:
    path.write_text("garbage")
    (path.parent / "port").write_text("x")


@dataclass(frozen=True)
class Case:
    name: str
    #: Path under ``.codeplane/``.
    target: str
    damage: Callable[[Path], None]
    #: ``derived``, ``evidence``, ``config`` or ``state``.
    kind: str


def _config(text: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_text(text)
    return write


CASES = [
    Case("index.db garbled page", "index.db", _garble, "derived"),
    Case("index.db truncated", "index.db", _truncate, "derived"),
    Case("index.db deleted", "index.db", _delete, "derived"),
    Case("index.db is a directory", "index.db", _dir_instead, "derived"),
    Case("tantivy/meta.json garbled", "tantivy/meta.json", _garbage, "derived"),
    Case("tantivy/ deleted", "tantivy", _delete, "derived"),
    Case("tantivy/ is a file", "tantivy", _file_instead, "derived"),
    Case("test_runs.db garbage", "test_runs.db", _garbage, "derived"),
    Case("test_runs.db truncated", "test_runs.db", _truncate, "derived"),
    Case("test_runs.db deleted", "test_runs.db", _delete, "derived"),
    Case("test_costs.db garbage", "test_costs.db", _garbage, "derived"),
    Case("test_costs.db is a directory", "test_costs.db", _dir_instead, "derived"),
    Case("locks/ is a file", "locks", _file_instead, "derived"),
    Case("pycache/ is a file", "pycache", _file_instead, "derived"),
    Case("server.pid and port garbage", "server.pid", _stale_instance_files, "state"),
    Case("ledger.db garbled page", "ledger.db", _garble, "evidence"),
    Case("ledger.db truncated", "ledger.db", _truncate, "evidence"),
    Case("ledger.db emptied (0 bytes)", "ledger.db", _empty, "evidence"),
    Case("ledger.db garbage", "ledger.db", _garbage, "evidence"),
    Case("ledger.db deleted", "ledger.db", _delete, "evidence"),
    Case("config.yaml YAML syntax error", "config.yaml", _config("server:\n  port: [unclosed\n"), "config"),
    Case("config.yaml unknown top-level key", "config.yaml", _config("port: 8000\n"), "config"),
    Case("config.yaml invalid value", "config.yaml", _config("logging:\n  level: loud\n"), "config"),
    Case("config.yaml deleted", "config.yaml", _delete, "state"),
]


@dataclass
class Outcome:
    case: Case
    doctor_before: int = -1
    failed_checks_before: list[str] = field(default_factory=list)
    up_ok: bool = False
    up_exit: int | None = None
    up_error: str = ""
    traceback: bool = False
    warnings: list[str] = field(default_factory=list)
    search_exact: bool | None = None
    write_ok: bool | None = None
    evidence: list[str] = field(default_factory=list)
    evidence_sha_ok: bool | None = None
    first_row: str | None = None
    doctor_after: int = -1
    failed_checks_after: list[str] = field(default_factory=list)
    doctor_after_ack: int | None = None
    status_ok: bool | None = None
    clear_ok: bool | None = None

    def row(self) -> list[str]:
        if self.case.kind == "config":
            serves = f"refused, exit {self.up_exit}" + (" + TRACEBACK" if self.traceback else ", no traceback")
        else:
            serves = "serves" if self.up_ok else f"FAILED: {self.up_error[:60]}"
        checks = ", ".join(sorted(set(self.failed_checks_before))) or "-"
        after = str(self.doctor_after) + (f" (after ack: {self.doctor_after_ack})" if self.doctor_after_ack is not None
                                          else "")
        extra = []
        if self.search_exact is not None:
            extra.append("search exact" if self.search_exact else "SEARCH WRONG")
        if self.write_ok is not None:
            extra.append("write ok" if self.write_ok else "WRITE FAILED")
        if self.evidence:
            verdict = {True: " (sha256 matches)", False: " (SHA256 MISMATCH)", None: ""}[self.evidence_sha_ok]
            extra.append(f"kept {', '.join(self.evidence)}{verdict}")
        if self.first_row:
            extra.append(f"new chain op 1 = {self.first_row}")
        if self.status_ok is not None:
            extra.append(f"status {'ok' if self.status_ok else 'FAILED'}, clear {'ok' if self.clear_ok else 'FAILED'}")
        warn = "; ".join(w[:70] for w in self.warnings[:2]) or "-"
        return [self.case.name, f"{self.doctor_before} ({checks})", serves, warn, ", ".join(extra) or "-", after]


def prepare(root: Path, template: Path | None = None) -> Path:
    """A repository a real server has indexed, written through (ledger rows) and run tests in; a copy of
    ``template`` (one ``prepare`` made) when given: every case starts from the same used state, and the suite
    pays for one init and one server per worker instead of one per case."""
    if template is not None:
        shutil.copytree(template, root / "repo", symlinks=True)
        return root / "repo"
    repo = make_repo(root / "repo", FILES)
    env = _env(root)
    assert cpl("init", "--json", cwd=repo, env=env).returncode == 0
    server = start_server(repo, env=env)
    try:
        asyncio.run(_use(server))
    finally:
        server.stop()
    return repo


def _env(root: Path) -> dict[str, str]:
    return cpl_env(home=root / "xdg")


async def _use(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await call(client, "search", {"query": MARKER, "syntax": "identifier"})
        await call(client, "write_source", {"edits": [{"path": "scratch.txt", "action": "create",
                                                       "content": "hello\n"}]})


async def _check_serving(server: ServerHandle) -> tuple[bool, bool]:
    async with mcp_client(server) as client:
        result = await call(client, "search", {"query": MARKER, "syntax": "identifier", "limit": 50})
        hits = sorted((h["path"], h["line"]) for h in result["results"])
        name = f"after_{int(time.time() * 1000)}.txt"
        await call(client, "write_source", {"edits": [{"path": name, "action": "create", "content": "x\n"}]})
        return hits == EXPECTED_HITS, (server.root / name).read_text() == "x\n"


def _doctor(repo: Path, env: dict[str, str], *args: str) -> tuple[int, list[str]]:
    proc = cpl("doctor", "--json", *args, cwd=repo, env=env)
    body = json.loads(proc.stdout.strip().splitlines()[-1])
    return proc.returncode, [c["name"] for c in body["checks"] if not c["ok"]]


def run_case(case: Case, root: Path, template: Path | None = None) -> Outcome:
    repo = prepare(root, template)
    env = _env(root)
    state = repo / ".codeplane"
    target = state / case.target
    case.damage(target)
    damaged = hashlib.sha256(target.read_bytes()).hexdigest() if target.is_file() else None
    out = Outcome(case)
    out.doctor_before, out.failed_checks_before = _doctor(repo, env)
    if case.kind == "config":
        up = cpl("up", "--port", "0", cwd=repo, env=env)
        out.up_exit, out.up_error = up.returncode, up.stderr.strip()
        out.traceback = "Traceback" in up.stderr + up.stdout
        out.warnings = [line for line in up.stderr.splitlines() if line.strip()][:1]
        out.status_ok = cpl("status", "--json", cwd=repo, env=env).returncode == 0
        out.doctor_after, out.failed_checks_after = _doctor(repo, env)
        out.clear_ok = cpl("clear", "--force", "--json", cwd=repo, env=env).returncode == 0
        return out
    try:
        server = start_server(repo, env=env)
    except RuntimeError as exc:
        out.up_error = str(exc)
        return out
    try:
        server.wait_serving()
        out.up_ok = True
        status = server.get("/status").json()
        out.warnings = [*(status.get("storage") or {}).get("warnings", []),
                        *(status.get("index") or {}).get("warnings", [])]
        out.search_exact, out.write_ok = asyncio.run(_check_serving(server))
    finally:
        server.stop()
    if case.kind == "evidence":
        kept = sorted(state.glob("ledger.corrupt-*.db"))
        out.evidence = [p.name for p in [*kept, *sorted(state.glob("ledger.missing-*.json"))]]
        if kept:
            out.evidence_sha_ok = hashlib.sha256(kept[0].read_bytes()).hexdigest() == damaged
        conn = sqlite3.connect(state / "ledger.db")
        row = conn.execute("SELECT op_type, detail FROM operations ORDER BY op_id LIMIT 1").fetchone()
        conn.close()
        if row is not None:
            detail = json.loads(row[1] or "{}").get("quarantine", {})
            out.first_row = f"{row[0]}" + (f" sha256 {str(detail['sha256'])[:12]}" if detail.get("sha256") else "")
    out.doctor_after, out.failed_checks_after = _doctor(repo, env)
    if case.kind == "evidence":
        out.doctor_after_ack, _ = _doctor(repo, env, "--ack-quarantine")
    return out


def table(outcomes: list[Outcome]) -> str:
    header = ["case", "doctor before (failing)", "cpl up", "warning in /status (or error)", "after",
              "doctor after"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "/") for cell in o.row()) + " |" for o in outcomes]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    chosen = [c for c in CASES if not argv or any(a in c.name for a in argv)]
    outcomes = []
    for case in chosen:
        with tempfile.TemporaryDirectory(prefix="cpl-damage-") as tmp:
            started = time.perf_counter()
            outcomes.append(run_case(case, Path(tmp)))
            print(f"{case.name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print(table(outcomes))


if __name__ == "__main__":
    main(sys.argv[1:])
