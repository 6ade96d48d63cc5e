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
from _refactor_session import commit_base
from _rename_judged import Case, run_all

CASES: list[Case] = [
    ("BuildLog", "BuildRecord", "class"),
    ("Plan", "BuildPlan", "class"),
    ("LinePrinter", "StatusLine", "class"),
    ("Edge.outputs_ready", "ready_outputs", "method"),
    ("Edge.is_phony", "phony", "method"),
    ("Node.set_dirty", "mark_dirty", "method"),
    ("Node.in_edge", "producing_edge", "method"),
    ("Node.in_edge_", "producing_edge_", "field"),
    ("State.LookupNode", "FindNode", "method"),
    ("BuildLog.LookupByOutput", "FindByOutput", "method"),
    ("DepsLog.GetDeps", "DepsFor", "method"),
    ("Node.dirty", "is_dirty", "method"),
    ("Node.mtime", "modified_time", "method"),
    ("Edge.rule", "build_rule", "method"),
    ("ElideMiddle", "ElideCenter", "function"),
    ("SpellcheckString", "SuggestSpelling", "function"),
    ("GetLoadAverage", "LoadAverage", "function"),
]


def _checkout(source: Path, into: Path) -> Path:
    root = into / "repo"
    shutil.copytree(source, root)
    return commit_base(root)


class _Builder:
    """Builds a working copy with a Ninja bootstrapped once, from the first copy it builds (the untouched one)."""

    def __init__(self, scratch: Path) -> None:
        self.ninja = scratch / "ninja-bin"

    def __call__(self, root: Path) -> tuple[bool, str]:
        """(builds, the test suite's verdict or the first compiler error)."""
        if not self.ninja.exists():
            boot = subprocess.run([sys.executable, "configure.py", "--bootstrap"], cwd=root, capture_output=True,
                                  text=True, check=False)
            if boot.returncode:
                return False, f"bootstrap: {boot.stderr[-300:]}"
            shutil.copy(root / "ninja", self.ninja)
        steps = [[sys.executable, "configure.py"], [str(self.ninja), "-j2", "ninja", "ninja_test"]]
        for step in steps:
            done = subprocess.run(step, cwd=root, capture_output=True, text=True, check=False)
            if done.returncode:
                text = done.stdout + done.stderr
                return False, next((line for line in text.splitlines() if "error" in line), "failed").strip()
        ran = subprocess.run(["./ninja_test"], cwd=root, capture_output=True, text=True, timeout=600, check=False)
        lines = [line for line in ran.stdout.splitlines() if line.strip()]
        counted = next((line.split("]", 1)[0] + "]" for line in reversed(lines) if line.startswith("[")), "")
        return True, f"{counted} {lines[-1] if lines else ''} (exit {ran.returncode})".strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    require("g++")
    source = sdist("ninja", "1.11.1.4") / "ninja-upstream"
    cases = CASES[:args.limit] if args.limit else CASES
    with tempfile.TemporaryDirectory(prefix="cpl-ninja-bin-") as binaries:
        run_all("Renames across Ninja 1.11's C++ headers and sources (ninja 1.11.1.4 sdist; its build and its "
                "ninja_test suite judge each)", "ninja", cases, lambda into: _checkout(source, into),
                _Builder(Path(binaries)))


if __name__ == "__main__":
    main()
