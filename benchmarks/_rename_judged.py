"""One rename judged by a compiler: plan it on a fresh working copy, check from outside that no occurrence of the
old name went unlisted (``_rename_listing.py``), apply the default selection (high + medium), then build and run
the program and compare its output with the untouched copy's. Shared by ``rename_c.py`` and ``rename_cpp.py``."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import _rename_listing as listing
from _common import table
from _refactor_session import refactor_session
from codeplane.core.errors import CodePlaneError

#: (qualified name or name, new name, kind)
Case = tuple[str, str, str]
#: Builds and runs a working copy: (builds, the program's output or the first compiler error).
Build = Callable[[Path], tuple[bool, str]]
COLUMNS = ["symbol", "kind", "high", "medium", "low (not applied)", "plan ms wall/cpu", "builds", "output",
           "occurrences", "unlisted", "left"]


def run_case(root: Path, case: Case, build: Build, baseline: str) -> list[object]:
    symbol, new_name, kind = case
    with refactor_session(root) as session:
        service = session.service
        began, cpu = time.perf_counter(), time.process_time()
        try:
            preview = service.rename(symbol, new_name)
        except CodePlaneError as exc:  # (an older CodePlane, run as a baseline: no definition of that name)
            return [symbol, kind, f"error {exc.error.name}", "", "", "", "", "no", "", "", ""]
        plan_ms, cpu_ms = (time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000
        if preview.status == "needs_decision":
            return [symbol, kind, "needs a decision", "", "", "", "", "no", "", "", ""]
        counts = dict(preview.counts)  # the preview's edit list is bounded; its counts are complete
        old = symbol.rsplit(".", 1)[-1]
        found, missing, kept = listing.unlisted(service, preview.refactor_id, None, root, old,
                                                kept_in_plan=[*preview.coverage.kept, *preview.coverage.set_aside]
                                                if preview.coverage else ())
        service.apply(preview.refactor_id)
        left = listing.left(root, old, kept)
        if missing or left:
            print(f"  {symbol}: unlisted {' '.join(missing[:6])}; left {' '.join(left[:6])}", flush=True)
    built, output = build(root)
    return [symbol, kind, counts["high"], counts["medium"], counts["low"], f"{plan_ms:.0f}/{cpu_ms:.0f}",
            "yes" if built else f"no: {output[:90]}", ("same" if output == baseline else f"differs: {output}")
            if built else "-", found, len(missing), len(left)]


def run_all(title: str, label: str, cases: Sequence[Case], checkout: Callable[[Path], Path], build: Build) -> None:
    """Build the untouched copy (its output is the baseline), then each case on a fresh ``checkout`` (a working
    copy made in the directory given), and print the table."""
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix=f"cpl-rename-{label}-") as tmp:
        scratch = Path(tmp)
        built, baseline = build(checkout(Path(tempfile.mkdtemp(dir=scratch))))
        if not built:
            raise SystemExit(f"the untouched copy does not build: {baseline}")
        rows.append(["(baseline, no rename)", "", "", "", "", "", "yes", baseline, "", "", ""])
        for case in cases:
            rows.append(run_case(checkout(Path(tempfile.mkdtemp(dir=scratch))), case, build, baseline))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    report(title, label, cases, rows)


def report(title: str, label: str, cases: Sequence[Case], rows: list[list[object]]) -> None:
    """The table (``rows[0]`` is the untouched copy's) and a one-line summary."""
    table(title, COLUMNS, rows)
    done = [r for r in rows[1:] if isinstance(r[2], int)]

    def total(column: int) -> int:
        return sum(int(str(r[column])) for r in done)

    print(f"{label}: {len(cases)} renames, {len(done)} planned; high share {total(2)}/{total(2) + total(3)}; low "
          f"candidates not applied {total(4)}; builds {sum(1 for r in done if r[6] == 'yes')}/{len(cases)}; same "
          f"output {sum(1 for r in done if r[7] == 'same')}/{len(cases)}; occurrences {total(8)}, unlisted "
          f"{total(9)}, left after apply {total(10)}")
