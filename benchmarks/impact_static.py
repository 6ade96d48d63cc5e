"""Static-graph impact selection only, over the faults ``impact_recall.py`` recorded: an A/B loop in seconds.

``impact_recall.py --reuse-failing`` still records coverage and runs selected cases on faulty trees (a hang in
requests costs minutes); this diagnostic applies each fault the last run recorded with failing cases (the same
16 per project, in the same order), asks ``ImpactIndex.affected`` as the benchmark does, reverts, and prints the
static figures with the benchmark's formulas: file precision, case precision strict / errors expanded, and the
failing cases not selected. A file that errored or timed out whole (``file::(error)``) counts as caught when some
of its cases are selected (the benchmark runs them to confirm). It edits the same checkouts: never run it while
``impact_recall.py`` runs. Run: ``uv run python benchmarks/impact_static.py [--explain] [click attrs ...]``.
"""

from __future__ import annotations

import json
import sys
import time

import impact_recall as bench
from codeplane.core.artifacts import ArtifactStore
from codeplane.testing import TestingService


def project(name: str, *, explain: bool) -> tuple[int, int, int, int, int, int]:
    """(failing files selected, files selected, strict hits, expanded hits, cases selected, missed) of ``name``."""
    root = bench.checkout(name)
    cached = json.loads((bench.WORK / f"{name}-failing.json").read_text(encoding="utf-8"))
    known: dict[str, list[str]] = cached["faults"]
    every = set(cached["every"])
    layout, config, index, impact = bench.start_index(root)
    tests = TestingService(root, config.tests, layout, ArtifactStore(layout.artifacts_dir, 1), impact=impact)
    test_files = [t.path for t in tests.discovery().targets if t.path]

    def read(rel: str) -> list[str]:
        try:
            return (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []

    totals = [0, 0, 0, 0, 0, 0]
    done = 0
    try:
        for fault in bench.interleave(bench.candidates(root)):
            if done >= 16:
                break
            broken = set(known.get(bench._fault_key(fault), []))
            if not broken:
                continue
            done += 1
            original = bench.apply(root, fault)
            try:
                index.refresh_paths([fault.path])
                began = time.perf_counter()
                result = impact.affected([fault.path], test_files, ranges={fault.path: [fault.changed]},
                                         read_lines=read)
                ms = (time.perf_counter() - began) * 1000
            finally:
                (root / fault.path).write_text(original, encoding="utf-8")
                index.refresh_paths([fault.path])
            files = {m.test_file for m in result.matches}
            nodes = {n for m in result.matches for n in m.node_ids}
            cases = sum(1 for c in every | broken if bench.covered(c, nodes))
            failing_files = {b.split("::", 1)[0] for b in broken}
            missed = sorted(b for b in broken if not bench.covered(b, nodes) and not (
                "::(" in b and any(n.startswith(b.split("::", 1)[0] + "::") for n in nodes)))
            row = (len(failing_files & files), len(files), len(broken) - len(missed),
                   bench.expanded(broken, every) - len(missed), cases, len(missed))
            totals = [t + r for t, r in zip(totals, row, strict=True)]
            print(f"  {fault.kind:<8} {fault.path}:{fault.name}: {len(broken)} failing in {len(failing_files)} "
                  f"file(s); selected {cases} case(s) in {len(files)} file(s), {len(result.fallbacks)} fallback(s), "
                  f"{ms:.0f} ms" + (f"  MISSED {missed[:3]}" if missed else ""), flush=True)
            if explain:
                bench.explain_selection(result, failing_files)
    finally:
        tests.close()
        index.stop()
    return totals[0], totals[1], totals[2], totals[3], totals[4], totals[5]


def main() -> None:
    explain = "--explain" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or list(bench.PROJECTS)
    unrecorded = [n for n in names if not (bench.WORK / f"{n}-failing.json").is_file()]
    if unrecorded:  # ``impact_recall.py`` records a project's failing cases; without them there is nothing to score
        print(f"skipped (no faults recorded; run impact_recall.py first): {', '.join(unrecorded)}")
        names = [n for n in names if n not in unrecorded]
    rows = {name: project(name, explain=explain) for name in names}
    print(f"\n| {'project':<8} | {'file precision':>14} | {'case precision strict / errors expanded':>39} | missed |")
    print(f"|{'-' * 10}|{'-' * 16}|{'-' * 41}|{'-' * 8}|")
    every = tuple(sum(r[i] for r in rows.values()) for i in range(6))
    for name, (file_hits, file_sel, strict, loose, cases, missed) in [*rows.items(), ("all", every)]:
        ratios = f"{min(strict, cases) / max(cases, 1):.1%} / {min(loose, cases) / max(cases, 1):.1%}"
        print(f"| {name:<8} | {file_hits / max(file_sel, 1):>13.1%} | {ratios:>39} | {missed:>6} |")


if __name__ == "__main__":
    main()
