"""Renames across a real C++ project's headers and sources, judged by its own build and its own test suite.

Source: Ninja 1.11's C++ sources, vendored as ``ninja-upstream/`` in the pinned ``ninja`` 1.11.1.4 sdist from PyPI
(``_common.sdist``, cached under ``benchmarks/.cache``; never committed): classes declared in headers with their
methods defined apart in ``.cc`` files, free functions declared in ``util.h`` (one of them defined once per
platform under ``#if``), used from many files and from ``*_test.cc``.

Each case renames one class, method or function on a fresh copy through CodePlane's index and refactor service in
process, applies the default selection (high + medium), regenerates ``build.ninja`` (``configure.py``), builds
``ninja`` and ``ninja_test`` with a Ninja built once from the untouched copy, and runs ``ninja_test``: it must
build and its 405 tests must pass, as they do untouched. "No silent misses" is checked from outside
(``_rename_listing.py``) as in the other rename benchmarks.

    uv run python benchmarks/rename_ninja.py [--limit N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import require, sdist
from _refactor_session import git
from _rename_judged import Build, Case, report, run_case

CASES: list[Case] = [
    ("BuildLog", "BuildRecord", "class"),
    ("Plan", "BuildPlan", "class"),
    ("LinePrinter", "StatusLine", "class"),
    ("Edge.outputs_ready", "ready_outputs", "method"),
    ("Edge.is_phony", "phony", "method"),
    ("Node.set_dirty", "mark_dirty", "method"),
    ("ElideMiddle", "ElideCenter", "function"),
    ("SpellcheckString", "SuggestSpelling", "function"),
    ("GetLoadAverage", "LoadAverage", "function"),
]


def _checkout(source: Path, into: Path) -> Path:
    root = into / "repo"
    shutil.copytree(source, root)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def _builder(ninja: Path) -> Build:
    def build_and_test(root: Path) -> tuple[bool, str]:
        """(builds, the test suite's verdict or the first compiler error)."""
        steps = [[sys.executable, "configure.py"], [str(ninja), "-j2", "ninja", "ninja_test"]]
        for step in steps:
            done = subprocess.run(step, cwd=root, capture_output=True, text=True, check=False)
            if done.returncode:
                text = done.stdout + done.stderr
                return False, next((line for line in text.splitlines() if "error" in line), "failed").strip()
        ran = subprocess.run(["./ninja_test"], cwd=root, capture_output=True, text=True, timeout=600, check=False)
        lines = [line for line in ran.stdout.splitlines() if line.strip()]
        counted = next((line.split("]", 1)[0] + "]" for line in reversed(lines) if line.startswith("[")), "")
        return True, f"{counted} {lines[-1] if lines else ''} (exit {ran.returncode})".strip()
    return build_and_test


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    require("g++")
    source = sdist("ninja", "1.11.1.4") / "ninja-upstream"
    cases = CASES[:args.limit] if args.limit else CASES
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory(prefix="cpl-rename-ninja-") as tmp:
        scratch = Path(tmp)
        pristine = _checkout(source, Path(tempfile.mkdtemp(dir=scratch)))
        boot = subprocess.run([sys.executable, "configure.py", "--bootstrap"], cwd=pristine, capture_output=True,
                              text=True, check=False)
        if boot.returncode:
            raise SystemExit(f"the untouched copy does not bootstrap: {boot.stderr[-400:]}")
        ninja = scratch / "ninja"
        shutil.copy(pristine / "ninja", ninja)
        build = _builder(ninja)
        built, baseline = build(pristine)
        if not built:
            raise SystemExit(f"the untouched copy does not build: {baseline}")
        rows.append(["(baseline, no rename)", "", "", "", "", "", "yes", baseline, "", "", ""])
        for case in cases:
            rows.append(run_case(_checkout(source, Path(tempfile.mkdtemp(dir=scratch))), case, build, baseline))
            print(" | ".join(str(c) for c in rows[-1]), flush=True)
    report("Renames across Ninja 1.11's C++ headers and sources (ninja 1.11.1.4 sdist; its build and its ninja_test "
           "suite judge each)", "ninja", cases, rows)


if __name__ == "__main__":
    main()
