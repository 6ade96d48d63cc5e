"""Structural index on the Django 5.2.8 sdist (issue 4): ground truth, indexing time, query latency.

1. Ground truth (Python ``ast`` + ``symtable``, see ``tests/structural_truth.py``): every
   def/async def/class and every import found by ``ast`` appears as a fact with the same name, kind and
   start line (precision and recall ≥ 99.5 %); every PROVEN reference binds where the compiler's symbol
   table says it does (0 disagreements).
2. Cold full index (lexical + structural, what ``cpl init`` runs): ≤ 15 s, peak RSS ≤ 1 GB (2 cores).
   Baseline in the same run: ``ast.parse`` + a full ``ast.walk`` of the same Python files, one core.
3. One-file edit → facts updated and visible (``refresh_paths`` then a ``definitions`` query) ≤ 300 ms p50.
4. ``search`` definitions/references p50 ≤ 10 ms, ``symbol`` reported too; ``map_repo`` ≤ 50 ms.

    uv run python benchmarks/structural_groundtruth.py
"""

from __future__ import annotations

import ast
import random
import resource
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from codeplane.core.config import CodePlaneConfig, IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.extract import extract_file
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.index.structural.service import StructuralService, SymbolRequest
from codeplane.repo.workspace import initialize
from codeplane.server.services import build_index

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from tests.structural_truth import (  # noqa: E402
    Score,
    ast_defs,
    ast_imports,
    check_proven,
    fact_defs,
    fact_imports,
)

from _common import CACHE, dump_json, p50, pct, sdist, table  # noqa: E402

QUERIES, EDITS = 200, 20


def _work_tree() -> Path:
    source = sdist("django", "5.2.8")
    work = CACHE / "work" / "structural-django"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(source, work)
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    initialize(work)
    return work


def ground_truth(tree: Path) -> dict[str, Any]:
    defs, imports = Score(), Score()
    checked, wrong, skipped, extract_s, ast_s = 0, [], 0, 0.0, 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted(tree.rglob("*.py")):
            rel = str(path.relative_to(tree))
            text = path.read_text("utf-8", "replace")
            began = time.perf_counter()
            try:
                parsed = ast.parse(text)
            except SyntaxError:
                skipped += 1  # Django ships a few deliberately invalid files for its own tests
                continue
            for _ in ast.walk(parsed):
                pass
            ast_s += time.perf_counter() - began
            began = time.perf_counter()
            outcome = extract_file(rel, text)
            extract_s += time.perf_counter() - began
            assert outcome.facts is not None, outcome
            defs.add(rel, ast_defs(parsed), fact_defs(outcome.facts))
            imports.add(rel, ast_imports(parsed), fact_imports(outcome.facts))
            count, errors = check_proven(text, outcome.facts)
            checked += count
            wrong += errors
    return {"defs": defs, "imports": imports, "proven_checked": checked, "proven_wrong": wrong,
            "skipped": skipped, "extract_s": extract_s, "ast_s": ast_s}


def cold_build(tree: Path) -> tuple[float, int, dict[str, Any]]:
    shutil.rmtree(tree / ".codeplane" / "tantivy", ignore_errors=True)
    (tree / ".codeplane" / "index.db").unlink(missing_ok=True)
    began = time.perf_counter()
    summary = build_index(tree, CodePlaneConfig()).build()
    seconds = time.perf_counter() - began
    peak_kb = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return seconds, peak_kb, {"files": summary.counts.files}


def warm_service(tree: Path) -> tuple[IndexService, StructuralService]:
    index = IndexService(tree, RepoLayout(tree), IndexConfig(watch=False))
    index.register_indexer(StructuralIndexer())
    index.start()
    assert index.wait_ready(600)
    return index, StructuralService(index, tree, RepoLayout(tree).index_db)


def timed(fn: Any) -> float:
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def queries(structural: StructuralService) -> dict[str, list[float]]:
    with structural.reading() as q:
        rows = q.conn.execute("SELECT DISTINCT name FROM st_def d JOIN st_file f ON f.file_id = d.file_id "
                              "WHERE f.path LIKE 'django/%' AND d.kind IN ('function', 'method', 'class') "
                              "ORDER BY name").fetchall()
    names = sorted(random.Random(20250101).sample([n for (n,) in rows], QUERIES))
    out: dict[str, list[float]] = {}
    for mode in ("definitions", "references", "symbol"):
        run = [timed(lambda n=n, mode=mode: structural.search(SymbolRequest(mode, n), limit=20))  # type: ignore[misc]
               for n in names]
        out[mode] = run
    out["map_repo"] = [timed(lambda: structural.map_repo((), depth=3, limit=200)) for _ in range(20)]
    return out


def edits(tree: Path, index: IndexService, structural: StructuralService) -> list[float]:
    target = "django/utils/text.py"
    out = []
    for n in range(EDITS):
        name = f"fresh_function_{n}"
        with (tree / target).open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef {name}():\n    return {n}\n")
        began = time.perf_counter()
        index.refresh_paths([target])
        page = structural.search(SymbolRequest("definitions", name), limit=5)
        out.append((time.perf_counter() - began) * 1000)
        assert page.hits and page.hits[0].path == target, name
    return out


def main() -> None:
    tree = _work_tree()
    truth = ground_truth(tree)
    cold_s, peak_kb, info = cold_build(tree)
    index, structural = warm_service(tree)
    try:
        latency = queries(structural)
        edit_ms = edits(tree, index, structural)
        status = structural.status()
    finally:
        index.stop()
    d, i = truth["defs"], truth["imports"]
    table("Ground truth: Django 5.2.8 Python files vs ast/symtable", ["measure", "value", "target", "ok"], [
        ["defs expected (ast)", d.expected, "-", "-"],
        ["defs precision", d.precision, "≥ 0.995", d.precision >= 0.995],
        ["defs recall", d.recall, "≥ 0.995", d.recall >= 0.995],
        ["imports expected (ast)", i.expected, "-", "-"],
        ["imports precision", i.precision, "≥ 0.995", i.precision >= 0.995],
        ["imports recall", i.recall, "≥ 0.995", i.recall >= 0.995],
        ["PROVEN refs checked", truth["proven_checked"], "-", "-"],
        ["PROVEN refs wrong", len(truth["proven_wrong"]), "0", not truth["proven_wrong"]],
        ["files skipped (ast SyntaxError)", truth["skipped"], "-", "-"],
    ])
    table(f"Indexing ({info['files']} files)", ["measure", "value", "target", "ok"], [
        ["cold full index, lexical + structural (s)", cold_s, "≤ 15", cold_s <= 15],
        ["peak RSS (MB)", peak_kb / 1024, "≤ 1024", peak_kb / 1024 <= 1024],
        ["structural extraction, 1 core, Python files (s)", truth["extract_s"], "-", "-"],
        ["baseline: ast.parse + ast.walk, same files (s)", truth["ast_s"], "baseline", "-"],
        ["extraction / ast ratio", truth["extract_s"] / max(truth["ast_s"], 1e-9), "-", "-"],
        ["one-file edit → visible p50 (ms)", p50(edit_ms), "≤ 300", p50(edit_ms) <= 300],
    ])
    table("Queries (in-process service, warm)", ["query", "p50 ms", "p95 ms", "target", "ok"], [
        ["search definitions", p50(latency["definitions"]), pct(latency["definitions"], 0.95), "≤ 10",
         p50(latency["definitions"]) <= 10],
        ["search references", p50(latency["references"]), pct(latency["references"], 0.95), "≤ 10",
         p50(latency["references"]) <= 10],
        ["search symbol", p50(latency["symbol"]), pct(latency["symbol"], 0.95), "-", "-"],
        ["map_repo (all sections)", p50(latency["map_repo"]), pct(latency["map_repo"], 0.95), "≤ 50",
         p50(latency["map_repo"]) <= 50],
    ])
    if truth["proven_wrong"]:
        print("\nFirst PROVEN disagreements:\n" + "\n".join(truth["proven_wrong"][:20]))
    if d.misses or d.extras or i.misses or i.extras:
        print("\nFirst def/import differences:", d.misses[:5], d.extras[:5], i.misses[:5], i.extras[:5])
    dump_json("structural_groundtruth", {
        "defs": [d.expected, d.precision, d.recall], "imports": [i.expected, i.precision, i.recall],
        "proven_checked": truth["proven_checked"], "proven_wrong": len(truth["proven_wrong"]),
        "cold_s": cold_s, "peak_mb": peak_kb / 1024, "edit_ms": edit_ms, "latency_ms": latency,
        "status": {k: status.get(k) for k in ("files", "defs", "refs", "imports", "skipped", "contexts")},
    })


if __name__ == "__main__":
    main()
