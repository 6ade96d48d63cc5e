"""Symbol moves on real code, judged by the code's own tests (issue 20): CodePlane over MCP vs rope.

Projects: click 8.3.1, attrs 25.4.0, requests 2.32.5 (pinned sdists in ``benchmarks/.cache``). Each case moves
one module-level function, class or constant to another module (existing or new) on a fresh checkout:

- ``codeplane``: ``refactor_move(symbol, to_path[, keep_reexport])`` then ``refactor_apply`` (default
  selection) over MCP against the real server (``cpl up``);
- ``rope``: ``rope.refactor.move.create_move(...).get_changes(dest)`` (MoveGlobal), the mature library
  baseline, on its own checkout (rope needs the destination module to exist: an empty one is created).

Each result is scored by (1) the project's test suite (every test that passed before must still pass),
(2) whether the definition now lives in the destination and not in the old module, and (3) references to
the old location left in code — ``from old import name`` (relative ones resolved) and ``old.name`` through
an import of the old module — counted by an independent ``ast`` pass (a deliberate re-export in the old
module itself is not counted), plus ``"old.name"`` strings (``mock.patch`` targets) left.

    uv run python benchmarks/move_real_code.py [--projects click,attrs] [--limit N]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

from mcp import Client

from _common import p50, sdist, table
from rename_real_code import (
    CACHE,
    baseline_failures,
    checkout,
    ensure_venv,
    git,
    start_server,
    suite_passes,
)

PROJECTS = {"click": "8.3.1", "attrs": "25.4.0", "requests": "2.32.5"}
WORK = CACHE / "move-work"


@dataclass(frozen=True)
class Case:
    symbol: str
    dest: str
    kind: str
    keep_reexport: bool = False

    @property
    def old_module(self) -> str:
        return self.symbol.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.symbol.rpartition(".")[2]


CASES: dict[str, list[Case]] = {
    "click": [
        Case("click.utils.make_default_short_help", "src/click/formatting.py", "function"),
        Case("click.utils.KeepOpenFile", "src/click/_compat.py", "class"),
        Case("click.utils.PacifyFlushWrapper", "src/click/_compat.py", "class"),
        Case("click.exceptions.NoArgsIsHelpError", "src/click/core.py", "class"),
        Case("click.shell_completion._SOURCE_BASH", "src/click/_completion_sources.py", "constant"),
        Case("click.parser._split_opt", "src/click/_utils.py", "function"),
    ],
    "attrs": [
        Case("attr.converters.to_bool", "src/attr/_to_bool.py", "function"),
        Case("attr.filters._split_what", "src/attr/_compat.py", "function"),
        Case("attr.exceptions.NotCallableError", "src/attr/validators.py", "class"),
        Case("attr.setters.NO_OP", "src/attr/_make.py", "constant"),
        Case("attr._compat.PYPY", "src/attr/_config.py", "constant"),
        Case("attr.exceptions.PythonTooOldError", "src/attr/_compat.py", "class", keep_reexport=True),
    ],
    "requests": [
        Case("requests.utils.guess_json_utf", "src/requests/_encoding.py", "function"),
        Case("requests.utils.DEFAULT_PORTS", "src/requests/_internal_utils.py", "constant"),
        Case("requests.structures.LookupDict", "src/requests/status_codes.py", "class"),
        Case("requests.hooks.default_hooks", "src/requests/_internal_utils.py", "function"),
        Case("requests.cookies.MockRequest", "src/requests/_mock_request.py", "class"),
        Case("requests.utils.get_auth_from_url", "src/requests/auth.py", "function"),
    ],
}


# -- the oracle -----------------------------------------------------------------------------------------
def module_of(root: Path, path: Path) -> str:
    rel = path.relative_to(root / "src") if (root / "src") in path.parents else path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(root: Path, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module_of(root, path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


@dataclass
class Score:
    moved: bool = False
    remaining: int = 0
    strings: int = 0
    where: list[str] = field(default_factory=list)


def judge(root: Path, case: Case) -> Score:
    """Old-location references left in code, and whether the definition moved (``ast`` only)."""
    score = Score()
    old_file = _module_file(root, case.old_module)
    dest_file = root / case.dest
    score.moved = _defines(dest_file, case.name) and not _defines(old_file, case.name)
    dotted = f"{case.old_module}.{case.name}"
    for path in sorted(root.rglob("*.py")):
        if ".codeplane" in path.parts or ".git" in path.parts or ".ropeproject" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if case.name not in text:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            score.remaining += 1
            score.where.append(f"{path.relative_to(root)}: syntax error")
            continue
        aliases: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = _absolute(root, path, node)
                for alias in node.names:
                    if module == case.old_module and alias.name == case.name and path != old_file:
                        score.remaining += 1
                        score.where.append(f"{path.relative_to(root)}:{node.lineno}")
                    if f"{module}.{alias.name}" == case.old_module:
                        aliases.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == case.old_module:
                        aliases.add(alias.asname or alias.name)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value == dotted:
                score.strings += 1
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == case.name:
                receiver = ast.unparse(node.value)
                if receiver == case.old_module or receiver in aliases:
                    score.remaining += 1
                    score.where.append(f"{path.relative_to(root)}:{node.lineno}")
    return score


def _module_file(root: Path, module: str) -> Path:
    rel = Path("src", *module.split("."))
    return root / rel.with_suffix(".py") if (root / rel.with_suffix(".py")).exists() else root / rel / "__init__.py"


def _defines(path: Path, name: str) -> bool:
    if not path.exists():
        return False
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return True
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return True
    return False


async def call(client: Client, tool: str, args: dict[str, object]) -> dict[str, object]:
    """A tool's structured result (the text block is the model's rendering); RuntimeError on a tool error."""
    result = await client.call_tool(tool, args)
    body = result.structured_content
    assert isinstance(body, dict), result
    if result.is_error:
        raise RuntimeError(f"{tool}: {body.get('error')}")
    out: dict[str, object] = body["result"]
    return out


# -- the tools ---------------------------------------------------------------------------------------------
@dataclass
class Row:
    tool: str
    project: str
    case: Case
    #: ``None`` when the tool refused the move (nothing was written).
    passed: bool | None
    score: Score
    ms: float
    preview_ms: float = 0.0
    apply_ms: float = 0.0
    files: int = 0
    note: str = ""


async def codeplane_move(client: Client, case: Case) -> tuple[float, float, int, str]:
    began = time.perf_counter()
    args: dict[str, object] = {"symbol": case.symbol, "to_path": case.dest}
    if case.keep_reexport:
        args["keep_reexport"] = True
    try:
        preview = await call(client, "refactor_move", args)
    except RuntimeError as exc:
        return (time.perf_counter() - began) * 1000, 0.0, 0, f"refused: {str(exc)[:80]}"
    previewed = time.perf_counter()
    applied = await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
    done = time.perf_counter()
    files = applied.get("files") or []
    assert isinstance(files, list)
    warnings = preview.get("warnings") or []
    note = f"{len(warnings)} warning(s)" if isinstance(warnings, list) and warnings else ""
    return (previewed - began) * 1000, (done - previewed) * 1000, len(files), note


def rope_move(root: Path, case: Case) -> float:
    import re

    from rope.base.project import Project
    from rope.refactor.move import create_move

    old_file = _module_file(root, case.old_module)
    text = old_file.read_text(encoding="utf-8")
    match = re.search(r"^(?:def|class)\s+(" + re.escape(case.name) + r")\b", text, flags=re.MULTILINE) or \
        re.search(r"^(" + re.escape(case.name) + r")\s*[:=]", text, flags=re.MULTILINE)
    assert match is not None, case
    dest = root / case.dest
    if not dest.exists():
        dest.write_text("")
    began = time.perf_counter()
    project = Project(str(root), ropefolder=None)
    try:
        resource = project.get_resource(str(old_file.relative_to(root)))
        mover = create_move(project, resource, match.start(1))
        changes = mover.get_changes(project.get_resource(case.dest))
        project.do(changes)
    finally:
        project.close()
    return (time.perf_counter() - began) * 1000


def clean(root: Path) -> None:
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfd", "-e", ".codeplane")


# -- run -----------------------------------------------------------------------------------------------
async def run_project(name: str, version: str, python: Path, limit: int | None, rows: list[Row]) -> None:
    pristine = sdist(name, version)
    ours = checkout(pristine, WORK / name / "codeplane")
    rope_root = checkout(pristine, WORK / name / "rope")
    failing = baseline_failures(python, rope_root)
    print(f"[{name}] baseline: {len(failing)} failing tests deselected", flush=True)
    proc, port = start_server(ours)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            for case in CASES[name][:limit]:
                # New modules a previous case created are untracked: remove them before git's reset, whose
                # reconcile then tells the index.
                git(ours, "clean", "-qfd", "-e", ".codeplane")
                await call(client, "git_reset", {"mode": "hard", "confirm": True})
                preview_ms, apply_ms, files, note = await codeplane_move(client, case)
                s = judge(ours, case)
                passed: bool | None = suite_passes(python, ours, failing) if not note.startswith("refused") else None
                rows.append(Row("codeplane", name, case, passed, s, preview_ms + apply_ms, preview_ms, apply_ms,
                                files, note))
                clean(rope_root)
                rope_passed: bool | None
                try:
                    ms = rope_move(rope_root, case)
                    s = judge(rope_root, case)
                    rope_passed = suite_passes(python, rope_root, failing)
                    note = ""
                except Exception as exc:  # noqa: BLE001 - a rope failure is a result, not a crash
                    ms, s, rope_passed, note = 0.0, Score(), None, f"rope error: {type(exc).__name__}: {str(exc)[:60]}"
                rows.append(Row("rope", name, case, rope_passed, s, ms, note=note))
                for row in rows[-2:]:
                    print(f"  {row.tool:10} {case.symbol:42} pass={row.passed!s:5} moved={row.score.moved!s:5} "
                          f"remaining={row.score.remaining:2} strings={row.score.strings} {row.ms:7.0f} ms "
                          f"{row.note} {' '.join(row.score.where[:3])}", flush=True)
            git(ours, "clean", "-qfd", "-e", ".codeplane")
            await call(client, "git_reset", {"mode": "hard", "confirm": True})
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def summary(rows: list[Row]) -> None:
    out: list[list[object]] = []
    for tool in ("codeplane", "rope"):
        mine = [r for r in rows if r.tool == tool]
        if not mine:
            continue
        applied = [r for r in mine if r.passed is not None]
        passed = sum(bool(r.passed) for r in applied)
        out.append([tool, len(mine), len(applied), f"{passed}/{len(applied)}", sum(r.score.moved for r in mine),
                    sum(r.passed is None for r in mine), sum(r.score.remaining for r in applied),
                    sum(r.score.strings for r in applied), p50([r.ms for r in mine])])
    table("Symbol moves on real code (click 8.3.1, attrs 25.4.0, requests 2.32.5)",
          ["tool", "moves", "applied", "test suite passes (applied)", "definition moved",
           "refused (cycle reported)", "old-location refs left in code", "old-location strings left", "p50 ms"], out)
    detail: list[list[object]] = [
        [r.project, r.case.symbol, r.case.kind, r.case.dest + (" (keep_reexport)" if r.case.keep_reexport else ""),
         r.tool, "refused" if r.passed is None else "yes" if r.passed else "NO", "yes" if r.score.moved else "no",
         r.score.remaining, r.score.strings, f"{r.ms:.0f}", r.note] for r in rows]
    table("Per move", ["project", "symbol", "kind", "destination", "tool", "tests pass", "moved", "refs left",
                       "strings left", "ms", "note"], detail)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", default=",".join(PROJECTS))
    parser.add_argument("--limit", type=int, default=None, help="cases per project")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    python = ensure_venv()
    rows: list[Row] = []
    for name in args.projects.split(","):
        asyncio.run(run_project(name, PROJECTS[name], python, args.limit, rows))
    summary(rows)


if __name__ == "__main__":
    main()
