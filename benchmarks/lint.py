"""lint_check on real code: what CodePlane adds to a ruff run, and whether `fix` equals `ruff check --fix`.

For click 8.3.1 and Django 5.2.8 (pinned sdists, each made a git repository with a `ruff.toml` selecting
F, E, W, I, UP, B, so there is plenty to find and fix):

- **check**: `ruff check --output-format json` run directly (the baseline, same run) against
  `LintService.check(tools=["ruff"])` (discovery, the same ruff process, parsing, sorting, first page);
- **fix**: `ruff check --fix` on one copy against `LintService.check(fix=True)` on another (fixes planned
  from ruff on stdin, applied as one mutation batch, then checked again), and whether every file ends up
  byte-identical.

Run: `uv run python benchmarks/lint.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import p50, sdist, table, timed
from codeplane.core.config import LintConfig, MutationConfig
from codeplane.lint import LintService
from codeplane.mutation import MutationEngine

RUFF = str(Path(sys.executable).parent / "ruff")
CORPORA = [("click", "8.3.1"), ("django", "5.2.8")]
RUFF_TOML = 'line-length = 120\n[lint]\nselect = ["F", "E", "W", "I", "UP", "B"]\n'


def _repo(source: Path, into: Path) -> Path:
    shutil.copytree(source, into)
    (into / "ruff.toml").write_text(RUFF_TOML)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sdist"]):
        subprocess.run(["git", *args], cwd=into, check=True, env={**env, "PATH": "/usr/bin:/bin"})
    return into


def _service(root: Path) -> LintService:
    # Batch limits raised so one fix covers the whole tree, as `ruff check --fix` does.
    engine = MutationEngine(root, MutationConfig(max_batch_files=10_000, max_batch_edits=10_000))
    return LintService(root, LintConfig(max_diagnostics=100_000), engine)


def _files(root: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]  # .git (git may be packing it), caches
        for name in names:
            if name.endswith(".py"):
                path = Path(directory) / name
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    check_rows: list[list[object]] = []
    fix_rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, version in CORPORA:
            source = sdist(name, version)
            root = _repo(source, Path(tmp) / f"{name}-check")
            py_files = len(_files(root))
            service = _service(root)
            direct = timed(lambda r=root: subprocess.run([RUFF, "check", "--output-format", "json", "--no-fix", "."],
                                                         cwd=r, capture_output=True, check=False), args.repeat)
            report = service.check(tools=["ruff"])
            ours = timed(lambda s=service: s.check(tools=["ruff"]), args.repeat)
            check_rows.append([f"{name} {version}", py_files, report.total, p50(direct), p50(ours),
                               p50(ours) - p50(direct)])

            twin = _repo(source, Path(tmp) / f"{name}-twin")
            fixed = _repo(source, Path(tmp) / f"{name}-fix")
            ruff_fix = timed(lambda t=twin: subprocess.run([RUFF, "check", "--fix", "--no-cache", "."], cwd=t,
                                                           capture_output=True, check=False), 1)
            began = time.perf_counter()
            result = _service(fixed).check(fix=True, tools=["ruff"])
            ours_fix = [(time.perf_counter() - began) * 1000.0]
            files = len(result.fix.files) if result.fix else 0
            want, got = _files(twin), _files(fixed)
            same = sum(want[p] == got.get(p) for p in want)
            fix_rows.append([f"{name} {version}", files, f"{same}/{len(want)}", ruff_fix[0], ours_fix[0],
                             result.total, len(result.notes)])
    table("check: ruff alone vs lint_check(tools=[ruff]) (ms, p50)",
          ["corpus", ".py files", "diagnostics", "ruff --output-format json", "LintService.check", "overhead"],
          check_rows)
    table("fix: ruff check --fix vs lint_check(fix=true) (ms, one run each)",
          ["corpus", "files fixed", "files identical to ruff --fix", "ruff --fix", "LintService.check(fix)",
           "left after fix", "notes"], fix_rows)


if __name__ == "__main__":
    main()
