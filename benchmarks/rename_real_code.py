"""Renames on real code, judged by the code's own tests (issue 9): CodePlane over MCP vs rope.

Projects: click 8.3.1, attrs 25.4.0, requests 2.32.5 (pinned sdists, downloaded once into
``benchmarks/.cache``). For each target (functions, classes, methods, including same-named twins) the
rename runs three ways on a fresh checkout of the sdist:

- ``codeplane high+medium``: ``refactor_rename`` then ``refactor_apply`` (the default selection) over MCP
  against the real server (``cpl up``);
- ``codeplane high``: the same with ``min_certainty="high"``;
- ``rope``: ``rope.refactor.rename.Rename`` (``in_hierarchy`` for methods), the mature library baseline.

Each result is scored by (1) the project's test suite (every test that passed before must still pass),
(2) remaining references to the old name that denote the target, and (3) edits of occurrences bound to
something else — both judged by an independent ``ast`` oracle (``_rename_oracle.py``). A second section
measures preview/apply latency of a rename touching 50 files (targets: ≤ 300 ms / ≤ 200 ms).

Test-suite dependencies are installed into ``benchmarks/.cache/rename-venv`` (never into the project).

    uv run python benchmarks/rename_real_code.py [--projects click,attrs] [--limit N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from mcp import Client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, download_sdist, p50, project_venv, table
from _rename_oracle import Oracle, Score, score

CPL = [sys.executable, "-m", "codeplane.cli"]
PROJECTS = {"click": "8.3.1", "attrs": "25.4.0", "requests": "2.32.5"}
VENV = CACHE / "rename-venv"
WORK = CACHE / "rename-work"
TEST_DEPS = ["pytest<9", "pytest-xdist", "hypothesis", "urllib3", "idna", "charset_normalizer", "certifi",
             "trustme", "pytest-mock"]
GIT_ENV = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x", "GIT_CONFIG_NOSYSTEM": "1"}

#: (qualified symbol, new name). Twins: a same-named definition exists elsewhere in the project.
TARGETS: dict[str, list[tuple[str, str]]] = {
    "click": [
        ("click.utils.echo", "emit"),
        ("click.utils.make_str", "make_text"),
        ("click.formatting.wrap_text", "wrap_paragraphs"),
        ("click._compat.term_len", "display_width"),
        ("click.core.Context.lookup_default", "lookup_default_value"),  # overloads
        ("click.core.Context.fail", "fail_usage"),  # twin: ParamType.fail
        ("click.types.ParamType.fail", "fail_conversion"),  # twin: Context.fail
        ("click.core.Command.get_usage", "usage_text"),  # twin: Context.get_usage
        ("click.core.Group.list_commands", "command_names"),  # twin: CommandCollection.list_commands
        ("click.parser._Option.process", "handle"),  # twin: _Argument.process
        ("click.core.Parameter.get_error_hint", "error_hint"),  # overrides in Option/Argument
        ("click.formatting.HelpFormatter", "HelpWriter"),
        ("click.exceptions.NoSuchOption", "UnknownOption"),
        ("click.utils.LazyFile", "DeferredFile"),
    ],
    "attrs": [
        ("attr._make.evolve", "evolve_instance"),  # twin: Attribute.evolve
        ("attr._make.Attribute.evolve", "replace"),  # twin: evolve()
        ("attr._funcs.asdict", "to_dict"),  # twin: _next_gen.asdict
        ("attr._make.fields", "get_fields"),
        ("attr._make.make_class", "build_class"),
        ("attr.validators.optional", "optional_validator"),  # twin: converters.optional
        ("attr.converters.optional", "optional_converter"),  # twin: validators.optional
        ("attr.exceptions.NotAnAttrsClassError", "NotAttrsClassError"),
        ("attr._make._ClassBuilder", "_Builder"),
        ("attr.setters.pipe", "chain"),  # twin: _make.pipe
    ],
    "requests": [
        ("requests.utils.get_encoding_from_headers", "encoding_from_headers"),
        ("requests.structures.CaseInsensitiveDict", "CIDict"),
        ("requests.structures.LookupDict.get", "lookup"),  # twins: many get()
        ("requests.models.PreparedRequest.copy", "clone"),  # twins: other copy()
        ("requests.models.Request.prepare", "build"),  # twin: PreparedRequest.prepare
        ("requests.sessions.Session.send", "dispatch"),  # twin: adapters send()
        ("requests.adapters.BaseAdapter.send", "transmit"),  # override in HTTPAdapter
        ("requests.cookies.cookiejar_from_dict", "jar_from_dict"),
        ("requests.utils.requote_uri", "requote_url"),
        ("requests.hooks.dispatch_hook", "run_hooks"),
    ],
}

PLUGIN = '''import pytest
from hypothesis import HealthCheck, settings

@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    settings.register_profile("bench", settings(max_examples=5, deadline=None, database=None,
                                                suppress_health_check=list(HealthCheck)))
    settings.load_profile("bench")
'''


# -- set-up ---------------------------------------------------------------------------------------------
def ensure_sdist(name: str, version: str) -> Path:
    target = CACHE / f"{name}-{version}"
    if target.is_dir():
        return target
    downloads = CACHE / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    archive = download_sdist(name, version, downloads)
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    return target


def ensure_venv() -> Path:
    python = project_venv(VENV, TEST_DEPS)
    plugins = CACHE / "rename-plugins"
    plugins.mkdir(exist_ok=True)
    (plugins / "fast_hypothesis.py").write_text(PLUGIN)
    return python


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def checkout(pristine: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(pristine, dest)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "pristine")
    return dest


def reset(root: Path) -> None:
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-qfd", "-e", ".codeplane")


# -- tests ----------------------------------------------------------------------------------------------
#: pytest-xdist workers per project (click's terminal/pager tests are flaky in parallel: run it serially).
WORKERS = {"click": 0, "attrs": 0, "requests": 4}


def pytest_cmd(python: Path, root: Path, extra: list[str]) -> list[str]:
    workers = WORKERS.get(root.parent.name, 0)
    parallel = ["-n", str(workers)] if workers else ["-p", "no:xdist"]
    return [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "fast_hypothesis", *parallel,
            "-o", "addopts=", *extra, "tests"]


def run_suite(python: Path, root: Path, extra: list[str]) -> subprocess.CompletedProcess[str]:
    # A fresh TMPDIR per run: some suites cache files under the temp dir by name (requests extracts
    # ``/tmp/test_utils.py`` once), which would make a later run compare against a stale copy.
    with tempfile.TemporaryDirectory(prefix="rename-bench-") as tmp:
        env = {**os.environ, "PYTHONPATH": f"src{os.pathsep}{CACHE / 'rename-plugins'}",
               "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": tmp}
        return subprocess.run(pytest_cmd(python, root, extra), check=False, cwd=root, env=env, capture_output=True,
                              text=True, timeout=1800)


def baseline_failures(python: Path, root: Path) -> list[str]:
    proc = run_suite(python, root, ["-rfE"])
    failing = []
    for line in proc.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            failing.append(line.split(" ", 2)[1])
    return sorted(set(failing))


def suite_passes(python: Path, root: Path, failing: list[str]) -> bool:
    deselect = [arg for test in failing for arg in ("--deselect", test)]
    proc = run_suite(python, root, ["-x", *deselect])
    return proc.returncode in (0, 5)


# -- the tools --------------------------------------------------------------------------------------------
@dataclass
class Row:
    tool: str
    project: str
    symbol: str
    passed: bool
    score: Score
    ms: float
    files: int = 0
    preview_ms: float = 0.0
    apply_ms: float = 0.0
    note: str = ""


async def call(client: Client, tool: str, args: dict[str, object]) -> dict[str, object]:
    result = await client.call_tool(tool, args)
    body = result.structured_content or {}
    if result.is_error:
        raise RuntimeError(f"{tool}: {body['error']}")
    out: dict[str, object] = body["result"]
    return out


async def codeplane_rename(client: Client, symbol: str, new: str, minimum: str) -> tuple[float, float, int, str]:
    began = time.perf_counter()
    preview = await call(client, "refactor_rename", {"symbol": symbol, "new_name": new})
    previewed = time.perf_counter()
    args: dict[str, object] = {"refactor_id": preview["refactor_id"], "min_certainty": minimum}
    collisions = preview.get("collisions") or []
    note = f"{len(collisions)} collision(s) reported; " if isinstance(collisions, list) and collisions else ""
    if preview["status"] == "needs_decision":
        candidates = preview["candidates"]
        assert isinstance(candidates, list)
        chosen = [c for c in candidates if c["symbol"]["qualified_name"] == symbol]
        args["candidate_id"] = (chosen or candidates)[-1]["candidate_id"]
        note += f"decision among {len(candidates)}"
    try:
        applied = await call(client, "refactor_apply", args)
    except RuntimeError as exc:
        # A reported collision refuses the apply (4007): the code stays as it was, and the row says why.
        kinds = sorted({str(c.get("kind")) for c in collisions if isinstance(c, dict)})
        return (previewed - began) * 1000, 0.0, 0, f"refused: {', '.join(kinds) or str(exc)[:60]}"
    done = time.perf_counter()
    files = applied["files"]
    assert isinstance(files, list)
    return (previewed - began) * 1000, (done - previewed) * 1000, len(files), note


def rope_rename(root: Path, oracle: Oracle, symbol: str, new: str) -> float:
    from rope.base.project import Project
    from rope.refactor.rename import Rename

    loc = oracle.locate(symbol)
    text = (root / loc.rel).read_text(encoding="utf-8")
    import re

    pattern = r"(?:def|class)\s+(" + re.escape(loc.name) + r")\b"
    if loc.classes:
        klass = re.search(r"class\s+" + re.escape(loc.classes[-1]) + r"\b", text)
        start = klass.end() if klass else 0
    else:
        start = 0
    matches = list(re.finditer(pattern, text[start:], flags=re.MULTILINE))
    if not matches:  # a module variable
        matches = list(re.finditer(r"^(" + re.escape(loc.name) + r")\s*[:=]", text, flags=re.MULTILINE))
    offset = start + matches[0].start(1)
    began = time.perf_counter()
    project = Project(str(root), ropefolder=None)
    try:
        resource = project.get_resource(loc.rel)
        changes = Rename(project, resource, offset).get_changes(new, in_hierarchy=bool(loc.classes), docs=False)
        project.do(changes)
    finally:
        project.close()
    return (time.perf_counter() - began) * 1000


def start_server(root: Path) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([*CPL, "up", str(root), "--port", "0", "--json", "--set", "tasks.max_mutations=100000",
                             "--set", "index.watch=false"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("cpl up exited")
        if line.startswith("{") and json.loads(line).get("event") == "ready":
            return proc, int(json.loads(line)["port"])


# -- run -----------------------------------------------------------------------------------------------
@dataclass
class Totals:
    rows: list[Row] = field(default_factory=list)


async def run_project(name: str, version: str, python: Path, limit: int | None, totals: Totals) -> None:
    pristine = ensure_sdist(name, version)
    ours = checkout(pristine, WORK / name / "codeplane")
    rope_root = checkout(pristine, WORK / name / "rope")
    failing = baseline_failures(python, rope_root)
    print(f"[{name}] baseline: {len(failing)} failing tests deselected", flush=True)
    oracle = Oracle(pristine)
    proc, port = start_server(ours)
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            for symbol, new in TARGETS[name][:limit]:
                verdicts = oracle.classify(symbol)
                old = symbol.rsplit(".", 1)[1]
                results: dict[str, tuple[Score, bool]] = {}
                for minimum in ("medium", "high"):
                    await call(client, "git_reset", {"mode": "hard", "confirm": True})
                    preview_ms, apply_ms, files, note = await codeplane_rename(client, symbol, new, minimum)
                    s = score(pristine, ours, verdicts, old, new)
                    key = json.dumps(s.__dict__, sort_keys=True)
                    passed = results[key][1] if key in results else suite_passes(python, ours, failing)
                    results[key] = (s, passed)
                    label = "codeplane high+medium" if minimum == "medium" else "codeplane high"
                    totals.rows.append(Row(label, name, symbol, passed, s, preview_ms + apply_ms, files, preview_ms,
                                           apply_ms, note))
                await call(client, "git_reset", {"mode": "hard", "confirm": True})
                reset(rope_root)
                try:
                    ms = rope_rename(rope_root, oracle, symbol, new)
                    s = score(pristine, rope_root, verdicts, old, new)
                    passed = suite_passes(python, rope_root, failing)
                    note = ""
                except Exception as exc:  # noqa: BLE001 - a rope failure is a result, not a crash
                    ms, s, passed, note = 0.0, Score(target=sum(v == "target" for v in verdicts.values())), False, \
                        f"rope error: {type(exc).__name__}"
                totals.rows.append(Row("rope", name, symbol, passed, s, ms, note=note))
                for row in totals.rows[-3:]:
                    print(f"  {row.tool:22} {symbol:45} pass={row.passed!s:5} remaining={row.score.remaining:3} "
                          f"wrong={row.score.wrong:3} unknown={row.score.unknown_renamed:3} {row.ms:7.0f} ms "
                          f"{row.note}", flush=True)
            await call(client, "git_reset", {"mode": "hard", "confirm": True})
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def summary(totals: Totals) -> None:
    rows = []
    for tool in ("codeplane high+medium", "codeplane high", "rope"):
        mine = [r for r in totals.rows if r.tool == tool]
        if not mine:
            continue
        passed = sum(r.passed for r in mine)
        refused = sum(r.note.startswith("refused") for r in mine)
        rows.append([tool, len(mine), f"{100.0 * passed / len(mine):.1f}%", refused,
                     sum(r.score.remaining for r in mine),
                     sum(r.score.target for r in mine), sum(r.score.wrong for r in mine),
                     sum(r.score.unknown_renamed for r in mine), sum(r.score.string_edits for r in mine),
                     p50([r.ms for r in mine])])
    table("Renames on real code (click 8.3.1, attrs 25.4.0, requests 2.32.5)",
          ["tool", "targets", "test suite passes", "refused (collision reported)", "remaining refs", "target refs",
           "wrong-binding edits",
           "renamed unknown-receiver refs", "string edits", "p50 ms"], rows)
    detail = []
    for r in totals.rows:
        detail.append([r.project, r.symbol, r.tool, "yes" if r.passed else "NO", r.score.remaining, r.score.wrong,
                       r.score.unknown_renamed, f"{r.ms:.0f}", r.note])
    table("Per target", ["project", "symbol", "tool", "tests pass", "remaining", "wrong", "unknown renamed", "ms",
                         "note"], detail)


async def latency(repeats: int = 10) -> None:
    """Preview/apply of a rename touching 50 files (issue 9 targets: preview ≤ 300 ms, apply ≤ 200 ms)."""
    root = WORK / "synthetic50"
    if root.exists():
        shutil.rmtree(root)
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "core.py").write_text("def target_fn(x):\n    return x\n")
    for i in range(49):
        body = "".join(f"def f{k}(x):\n    return target_fn(x) + {k}\n\n\n" for k in range(10))
        (root / "pkg" / f"user{i:02}.py").write_text(f"from pkg.core import target_fn\n\n\n{body}")
    for i in range(200):
        (root / "pkg" / f"other{i:03}.py").write_text("def g(x):\n    return x\n" * 5)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "init")
    proc, port = start_server(root)
    previews: list[float] = []
    applies: list[float] = []
    files = 0
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            for _ in range(repeats + 2):
                await call(client, "git_reset", {"mode": "hard", "confirm": True})
                preview_ms, apply_ms, files, _ = await codeplane_rename(client, "pkg.core.target_fn", "renamed_fn",
                                                                        "medium")
                previews.append(preview_ms)
                applies.append(apply_ms)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    previews, applies = previews[2:], applies[2:]
    engine, refresh = in_process_apply(root, repeats)
    table(f"Rename touching {files} files (250-file repo, 500 edits), MCP round trips, {repeats} runs",
          ["step", "p50 ms", "max ms", "target ms", "ratio to target"],
          [["preview (refactor_rename)", p50(previews), max(previews), 300.0, p50(previews) / 300.0],
           ["apply (refactor_apply)", p50(applies), max(applies), 200.0, p50(applies) / 200.0],
           ["  apply in process, without the index refresh", p50(engine), max(engine), 200.0, p50(engine) / 200.0],
           ["  of which: index refresh of the 50 files (after_write)", p50(refresh), max(refresh), "-", "-"]])


def in_process_apply(root: Path, repeats: int) -> tuple[list[float], list[float]]:
    """The same apply through the server's services in process, split into engine work and index refresh."""
    from codeplane.core.config import load_config
    from codeplane.server.services import build_services

    services = build_services(root, load_config(root, overrides=["index.watch=false"]), "bench")
    services.index.start()
    services.index.wait_ready(120)
    refresh_ms: list[float] = []
    refresh = services.index.refresh_paths

    def timed_refresh(paths: object) -> int:
        began = time.perf_counter()
        epoch = refresh(paths)  # type: ignore[arg-type]
        refresh_ms.append((time.perf_counter() - began) * 1000)
        return epoch

    services.mutation.after_write = timed_refresh
    engine_ms: list[float] = []
    try:
        for _ in range(repeats + 2):
            reset(root)
            services.index.reconcile()
            preview = services.refactor.rename("pkg.core.target_fn", "renamed_fn")
            began = time.perf_counter()
            services.refactor.apply(preview.refactor_id)
            engine_ms.append((time.perf_counter() - began) * 1000 - refresh_ms[-1])
    finally:
        services.index.stop()
        services.mutation.close()
    return engine_ms[2:], refresh_ms[2:]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", default=",".join(PROJECTS))
    parser.add_argument("--limit", type=int, default=None, help="targets per project")
    parser.add_argument("--skip-real", action="store_true")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    asyncio.run(latency())
    if args.skip_real:
        return
    python = ensure_venv()
    totals = Totals()
    for name in args.projects.split(","):
        asyncio.run(run_project(name, PROJECTS[name], python, args.limit, totals))
    summary(totals)


if __name__ == "__main__":
    main()
