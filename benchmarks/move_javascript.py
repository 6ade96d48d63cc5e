"""Symbol moves on real JavaScript and TypeScript from npm, judged by the code's own compiler or tests.

- immer 10.1.1 (TypeScript, ES modules, ``npm pack`` as in ``rename_typescript.py``): each move must leave
  ``tsc --noEmit`` with the untouched copy's errors (strict, and ``isolatedModules``, under which a re-exported
  type needs ``export type``);
- qs 6.13.0 (CommonJS, ES5 style: ``var utils = require('./utils')``, ``module.exports = { merge: merge }``): each
  move must leave qs's own tape suite (739 assertions) as it was. Its test dependencies are installed once into the
  cache with ``npm install --ignore-scripts`` (the devDependencies as published pull a git URL; the suite needs
  only the eleven packages its tests require).

Each case moves one top-level function, interface, type alias or constant to a new or an existing module on a
fresh copy (a git repo in a temp dir), through CodePlane's index and refactor service in process, and applies the
default selection. A typed refusal is a result (``refused`` with its reason: a CommonJS function that needs its
module's own helpers, which a move would have to export by assignment); a move that applies must keep the judge as
it was. ``style`` checks the lines the move added against the file's own quotes and semicolons (immer writes
``} from "../internal"`` without semicolons; qs ``require('./formats');``).

    uv run python benchmarks/move_javascript.py

Result (at 6143cda, 2 cores): immer 5 applied, tsc as before 5/5 (functions and an interface to new modules, a
type alias and ``die`` into existing ones: ``plugins.ts`` imports ``die`` through the ``internal.ts`` barrel, which
the move now follows; it answered 4007 before), 1 refused with a typed error: ``enterScope`` assigns ``scope.ts``'s
``let currentScope`` (4008: an imported binding is read-only; before, the move applied and tsc failed with TS2632).
qs 4 applied, 739/739 assertions as before 4/4, 2 refused (4009: ``maybeMap`` and ``compact`` need ``utils.js``'s
own helpers while ``utils.js`` still needs them). Every added import/require line in its file's style (9/9). Plans
take 11-77 ms.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import rename_typescript as immer
from _common import npm_package, table
from _refactor_session import commit_base, refactor_session
from codeplane.core.errors import CodePlaneError

QS, QS_VERSION = "qs", "6.13.0"
#: What qs's tests require besides qs itself (``test/*.js``), at the versions npm resolves today.
QS_TEST_DEPS = ("es-value-fixtures", "for-each", "has-override-mistake", "has-property-descriptors", "has-symbols",
                "iconv-lite", "mock-property", "object-inspect", "safer-buffer", "side-channel", "tape")


@dataclass(frozen=True)
class Case:
    project: str
    symbol: str
    from_path: str
    to_path: str
    kind: str


CASES = [
    Case("immer", "isFrozen", "src/utils/common.ts", "src/utils/frozen.ts", "function, new module"),
    Case("immer", "shallowCopy", "src/utils/common.ts", "src/utils/copy.ts", "function, new module"),
    Case("immer", "ImmerScope", "src/core/scope.ts", "src/core/scopeTypes.ts", "interface, new module"),
    Case("immer", "Objectish", "src/types/types-internal.ts", "src/types/types-external.ts",
         "type alias, existing module"),
    Case("immer", "die", "src/utils/errors.ts", "src/utils/plugins.ts", "function, existing module"),
    Case("immer", "enterScope", "src/core/scope.ts", "src/core/enter.ts", "function, new module"),
    Case("qs", "isRegExp", "lib/utils.js", "lib/regexp.js", "function, new module"),
    Case("qs", "isBuffer", "lib/utils.js", "lib/formats.js", "function, existing module"),
    Case("qs", "combine", "lib/utils.js", "lib/combine.js", "function, new module"),
    Case("qs", "maybeMap", "lib/utils.js", "lib/map.js", "function, new module"),
    Case("qs", "compact", "lib/utils.js", "lib/compact.js", "function needing its module's helper"),
    Case("qs", "isNonNullishPrimitive", "lib/stringify.js", "lib/utils.js", "function, existing module"),
]

_ADDED_IMPORT = re.compile(r"""^\+\s*(?:import|export)\b.*\bfrom\s+(['"]).*?\1(;?)\s*$|"""
                           r"""^\+\s*(?:var|const|let)\b.*\brequire\((['"]).*?\3\)[\w.]*(;?)\s*$""", re.MULTILINE)


def _fetch_qs() -> Path:
    """qs's tarball, unpacked into the cache once, with its test dependencies in ``node_modules``."""

    def install(unpacked: Path) -> None:
        published = (unpacked / "package.json").read_text(encoding="utf-8")
        (unpacked / "package.json").write_text('{"name": "qs-test-deps", "private": true}\n', encoding="utf-8")
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
                        *QS_TEST_DEPS], cwd=unpacked, check=True, capture_output=True)
        (unpacked / "package.json").write_text(published, encoding="utf-8")

    return npm_package(QS, QS_VERSION, install)


def _qs_checkout(source: Path, into: Path) -> Path:
    root = into / "repo"
    for part in ("lib", "test"):
        shutil.copytree(source / part, root / part)
    shutil.copy(source / "package.json", root / "package.json")
    (root / "node_modules").symlink_to(source / "node_modules")
    (root / ".gitignore").write_text("node_modules\n", encoding="utf-8")
    return commit_base(root)


def _qs_check(root: Path) -> str:
    """tape's summary of qs's suite: ``pass N fail M``."""
    done = subprocess.run(["node", "node_modules/tape/bin/tape", "test/**/*.js"], cwd=root, capture_output=True,
                          text=True, check=False, timeout=600)
    passed = re.search(r"^# pass\s+(\d+)", done.stdout, re.MULTILINE)
    failed = re.search(r"^# fail\s+(\d+)", done.stdout, re.MULTILINE)
    if passed is None:
        return f"crashed: {(done.stderr or done.stdout).strip().splitlines()[-1][:100] if done.stderr else '?'}"
    return f"pass {passed.group(1)} fail {failed.group(1) if failed else 0}"


def _style_ok(root: Path) -> str:
    """Whether every import/require line the move added matches its file's other such lines."""
    diff = subprocess.run(["git", "diff", "-U0", "--no-color"], cwd=root, capture_output=True, text=True,
                          check=True).stdout
    bad = 0
    for section in re.split(r"^diff --git ", diff, flags=re.MULTILINE)[1:]:
        path = section.split(" b/", 1)[1].split("\n", 1)[0]
        added = [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in _ADDED_IMPORT.finditer(section)]
        if not added or not (root / path).is_file():
            continue
        text = (root / path).read_text(encoding="utf-8")
        own = [(m.group(1) or m.group(3), m.group(2) or m.group(4))
               for m in _ADDED_IMPORT.finditer("\n".join("+" + line for line in text.splitlines()))]
        usual = max(set(own), key=own.count)
        bad += sum(1 for style in added if style != usual)
    return "ok" if bad == 0 else f"{bad} off"


def run_case(case: Case, scratch: Path, baselines: dict[str, object], sources: dict[str, Path]) -> list[object]:
    work = Path(tempfile.mkdtemp(dir=scratch))
    root = immer._checkout(sources["immer"], work) if case.project == "immer" else _qs_checkout(sources["qs"], work)
    judge = immer._check if case.project == "immer" else _qs_check
    with refactor_session(root) as session:
        began, cpu = time.perf_counter(), time.process_time()
        try:
            preview = session.service.move_symbol(case.symbol, case.to_path, from_path=case.from_path)
        except CodePlaneError as exc:  # a typed refusal is a result of the benchmark, not its crash
            reason = str(exc.details.get("reason", exc.error.name))
            return [case.project, case.symbol, case.kind, "refused", "", "", "", f"{exc.code} {reason}", ""]
        plan_ms, cpu_ms = (time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000
        session.service.apply(preview.refactor_id)
    judged = judge(root)
    moved = case.symbol in (root / case.to_path).read_text(encoding="utf-8")
    same = judged == baselines[case.project]
    if isinstance(judged, list):  # tsc: the errors the baseline does not have
        base = baselines[case.project]
        judged = [e for e in judged if not isinstance(base, list) or e not in base]
    if not same:
        print(f"  {case.project} {case.symbol}: {judged}", flush=True)
    counts = dict(preview.counts)
    return [case.project, case.symbol, case.kind, "applied" if moved else "not moved",
            counts.get("high", 0), counts.get("medium", 0), f"{plan_ms:.0f}/{cpu_ms:.0f}",
            "same" if same else str(judged)[:80], _style_ok(root)]


def main() -> None:
    if not immer.TSC.exists():
        raise SystemExit(f"no tsc at {immer.TSC}: run .ci/run once, or `npm install typescript` in {immer.JS_DIR}")
    immer.TSCONFIG["compilerOptions"]["isolatedModules"] = True  # type: ignore[index]
    sources = {"immer": immer.fetch(), "qs": _fetch_qs()}
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="cpl-move-js-") as tmp:
        scratch = Path(tmp)
        baselines: dict[str, object] = {
            "immer": immer._check(immer._checkout(sources["immer"], Path(tempfile.mkdtemp(dir=scratch)))),
            "qs": _qs_check(_qs_checkout(sources["qs"], Path(tempfile.mkdtemp(dir=scratch))))}
        for project, judged in baselines.items():
            shown = f"{len(judged)} tsc errors" if isinstance(judged, list) else judged
            rows.append([project, "(baseline, no move)", "", "", "", "", "", shown, ""])
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
        for case in CASES:
            rows.append(run_case(case, scratch, baselines, sources))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    table(f"Symbol moves in immer {immer.VERSION} (TypeScript, tsc) and qs {QS_VERSION} (CommonJS, its tape suite)",
          ["project", "symbol", "kind", "outcome", "high", "medium", "plan ms wall/cpu", "judge vs baseline",
           "style"], rows)
    for project in ("immer", "qs"):
        done = [r for r in rows if r[0] == project and r[3] in ("applied", "not moved")]
        refused = [r for r in rows if r[0] == project and r[3] == "refused"]
        print(f"{project}: {len(done)} applied, {len(refused)} refused; judge as before "
              f"{sum(1 for r in done if r[7] == 'same')}/{len(done)}; style ok "
              f"{sum(1 for r in done if r[8] == 'ok')}/{len(done)}")


if __name__ == "__main__":
    main()
