"""Renames on a real TypeScript package from the npm registry, judged by ``tsc --noEmit`` (issue 20).

Source: immer 10.1.1 (``npm pack immer@10.1.1`` into ``benchmarks/.cache``; npm checks the tarball's
integrity). Its tarball ships ``src/`` (15 modules across ``core/``, ``utils/``, ``plugins/``, ``types/``, all
re-exported through the ``src/internal.ts`` barrel and imported from it) and no dependencies, but not its tests
(``__tests__`` is outside the package's ``files``): no npm TypeScript package we tried (zod, superstruct,
neverthrow, fast-equals, ts-pattern, true-myth, io-ts, valita, ...) ships tests in its tarball. So the judge is
the compiler alone: each rename must leave ``tsc --noEmit`` (strict, the typescript that ``.ci/run`` installs
into ``$CODEPLANE_TEST_JS_DIR``) with the untouched copy's errors (none: the copy gets a ``tsconfig.json`` and a
``bench-env.d.ts`` declaring the ``process.env.NODE_ENV`` that immer's sources read, since the package has no
``@types/node``). Type checking catches every reference left to a renamed function, type, method or field,
since immer's sources are strict and barely use ``any`` where these names are read.

Each case renames one function, type, interface, method, field or constant used across modules on a fresh copy
(a git repo in a temp dir), through CodePlane's index and refactor service in process (as
``rename_go_rust.py``), and applies the default selection: ``high`` and ``medium`` code edits; ``low``
candidates (a same-named member on a value the index cannot type) and doc edits are listed, not applied, and
counted. "No silent misses" is checked from outside (``_rename_listing.py``): ``unlisted`` counts occurrences
of the old name on lines where the plan lists fewer edits, ``left`` those still there after apply that the plan
did not list as left.

Result (at 6c869c5+, 2 cores, load ~9): 17 renames, all planned and applied; all 17 leave ``tsc --noEmit`` at the
baseline's 0 errors; 236/251 applied edits high, 13 low candidates not applied (comments, strings, the
same-named ``export const createDraft`` in ``src/immer.ts``), 299 occurrences, 0 unlisted, 0 left. The
``medium`` edits are members reached through a typed interface field (``scope.immer_.autoFreeze_``, reason
``anchored``), the module-level ``const immer = new Immer()`` (``immer.createDraft``, reason
``assigned_receiver``) and object-literal keys typed by the syntax (``function createScope(): ImmerScope {
return {unfinalizedDrafts_: 0, ...} }``, a same-file union alias of the family ``const state: ProxyState =
{...}``, a declared class field ``this[DRAFT_STATE] = {...}``; reason ``typed_object_key``); they are needed
(applying only ``high`` leaves ``tsc`` errors).

    uv run python benchmarks/rename_typescript.py [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import _rename_listing as listing
from _common import npm_package, table
from _refactor_session import commit_base, refactor_session
from codeplane.core.errors import CodePlaneError

PACKAGE, VERSION = "immer", "10.1.1"
JS_DIR = Path(os.environ.get("CODEPLANE_TEST_JS_DIR", str(Path.home() / ".cache" / "codeplane" / "js-runners")))
TSC = JS_DIR / "node_modules" / ".bin" / "tsc"
TSCONFIG = {"compilerOptions": {"target": "ES2019", "lib": ["ES2019"], "module": "ESNext",
                                "moduleResolution": "node", "strict": True, "noEmit": True, "skipLibCheck": True,
                                "types": []},
            "include": ["src", "bench-env.d.ts"]}
#: immer reads ``process.env.NODE_ENV`` for its dev checks; the package has no ``@types/node``.
ENV_DTS = "declare const process: {env: {NODE_ENV?: string}}\n"


@dataclass(frozen=True)
class Case:
    symbol: str
    new_name: str
    kind: str
    #: The definition's file, to pick the candidate when a qualified name is not unique.
    path: str


CASES = [
    Case("src/core/proxy.createProxyProxy", "createProxyDraft", "function", "src/core/proxy.ts"),
    Case("src/utils/errors.die", "fail", "function", "src/utils/errors.ts"),
    Case("src/utils/plugins.getPlugin", "pluginFor", "function", "src/utils/plugins.ts"),
    Case("src/utils/common.isDraftable", "canDraft", "function (public)", "src/utils/common.ts"),
    Case("src/core/scope.enterScope", "openScope", "function", "src/core/scope.ts"),
    Case("src/core/scope.ImmerScope", "DraftScope", "interface", "src/core/scope.ts"),
    Case("src/types/types-internal.ImmerState", "DraftState", "type alias", "src/types/types-internal.ts"),
    Case("src/types/types-external.Patch", "PatchOp", "interface (public)", "src/types/types-external.ts"),
    Case("src/types/types-external.Draft", "Mutable", "type alias (public)", "src/types/types-external.ts"),
    Case("src/core/immerClass.Immer", "ImmerCore", "class", "src/core/immerClass.ts"),
    Case("src/core/immerClass.Immer.createDraft", "startDraft", "method", "src/core/immerClass.ts"),
    Case("src/core/immerClass.Immer.finishDraft", "endDraft", "method", "src/core/immerClass.ts"),
    Case("src/core/immerClass.Immer.autoFreeze_", "freeze_", "field", "src/core/immerClass.ts"),
    Case("src/core/immerClass.Immer.useStrictShallowCopy_", "strictCopy_", "field", "src/core/immerClass.ts"),
    Case("src/core/scope.ImmerScope.unfinalizedDrafts_", "pendingDrafts_", "interface field",
         "src/core/scope.ts"),
    Case("src/types/types-internal.ImmerBaseState.isManual_", "manual_", "interface field",
         "src/types/types-internal.ts"),
    Case("src/utils/env.DRAFT_STATE", "STATE_KEY", "constant", "src/utils/env.ts"),
]


def fetch() -> Path:
    """The pinned tarball, unpacked beside the sdists."""
    return npm_package(PACKAGE, VERSION)


def _checkout(source: Path, into: Path) -> Path:
    """The package's sources (not its built ``dist/``) plus a tsconfig, as a git repo."""
    root = into / "repo"
    shutil.copytree(source / "src", root / "src")
    shutil.copy(source / "package.json", root / "package.json")
    (root / "tsconfig.json").write_text(json.dumps(TSCONFIG, indent=1) + "\n", encoding="utf-8")
    (root / "bench-env.d.ts").write_text(ENV_DTS, encoding="utf-8")
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return commit_base(root)


def _check(root: Path) -> list[str]:
    """``tsc --noEmit``'s error lines, positions stripped (a rename changes columns, not which errors)."""
    done = subprocess.run([str(TSC), "--noEmit", "-p", "."], cwd=root, capture_output=True, text=True, check=False)
    errors = [line for line in done.stdout.splitlines() if ": error TS" in line]
    if done.returncode and not errors:
        errors = [f"tsc failed: {(done.stderr or done.stdout).strip()[:120]}"]
    return sorted(re.sub(r"\(\d+,\d+\)", "", line) for line in errors)


def run_case(case: Case, source: Path, scratch: Path, baseline: list[str]) -> list[object]:
    work = Path(tempfile.mkdtemp(dir=scratch))
    root = _checkout(source, work)
    with refactor_session(root) as session:
        service = session.service
        began, cpu = time.perf_counter(), time.process_time()
        try:
            preview = service.rename(case.symbol, case.new_name)
        except CodePlaneError as exc:  # a typed refusal is a result of the benchmark, not its crash
            return [case.symbol, case.kind, "refused", "", "", "", "", exc.error.name, "", "", ""]
        candidate = None
        counts = dict(preview.counts)  # the preview's edit list is bounded; its counts are complete
        if preview.status == "needs_decision":
            chosen = [c for c in preview.candidates if c.symbol.path == case.path]
            if len(chosen) != 1:
                return [case.symbol, case.kind, "ambiguous", "", "", "", "", "no", "", "", ""]
            candidate = chosen[0].candidate_id
            counts = dict(chosen[0].counts)
        plan_ms, cpu_ms = (time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000
        applied = counts["high"] + counts["medium"]
        old = case.symbol.rsplit(".", 1)[-1]
        found, missing, kept = listing.unlisted(service, preview.refactor_id, candidate, root, old,
                                        kept_in_plan=[*preview.coverage.kept, *preview.coverage.set_aside]
                                        if preview.coverage else ())
        service.apply(preview.refactor_id, candidate_id=candidate)
        left = listing.left(root, old, kept)
        if missing or left:
            print(f"  {case.symbol}: unlisted {' '.join(missing[:6])}; left {' '.join(left[:6])}", flush=True)
        errors = _check(root)
        new = [e for e in errors if e not in baseline]
        if new:
            print(f"  {case.symbol}: {len(new)} new tsc errors, first: {new[0][:160]}", flush=True)
        share = f"{counts['high'] / applied:.0%}" if applied else "-"
        return [case.symbol, case.kind, counts["high"], counts["medium"], counts["low"], share,
                f"{plan_ms:.0f}/{cpu_ms:.0f}", "same" if errors == baseline else f"{len(new)} new errors",
                found, len(missing), len(left)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    if not TSC.exists():
        raise SystemExit(f"no tsc at {TSC}: run .ci/run once, or `npm install typescript` in {JS_DIR}")
    source = fetch()
    cases = CASES[:args.limit] if args.limit else CASES
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="cpl-rename-ts-") as tmp:
        scratch = Path(tmp)
        baseline = _check(_checkout(source, Path(tempfile.mkdtemp(dir=scratch))))
        rows.append(["(baseline, no rename)", "", "", "", "", "", "", f"{len(baseline)} errors", "", "", ""])
        print(" | ".join(str(c) for c in rows[-1]), flush=True)
        for case in cases:
            rows.append(run_case(case, source, scratch, baseline))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    table(f"Renames in {PACKAGE} {VERSION}'s TypeScript sources (npm), judged by tsc --noEmit (no tests ship)",
          ["symbol", "kind", "high", "medium", "low (not applied)", "high share", "plan ms wall/cpu",
           "tsc vs baseline", "occurrences", "unlisted", "left"], rows)
    done = [r for r in rows[1:] if isinstance(r[2], int)]

    def total(column: int) -> int:
        return sum(int(str(r[column] or 0)) for r in done)

    high = total(2)
    print(f"{len(done)}/{len(rows) - 1} renames planned; high share {high}/{high + total(3)}; low candidates "
          f"not applied {total(4)}; tsc as before {sum(1 for r in done if r[7] == 'same')}/{len(done)}; "
          f"occurrences {total(8)}, unlisted {total(9)}, left after apply {total(10)}")


if __name__ == "__main__":
    main()
