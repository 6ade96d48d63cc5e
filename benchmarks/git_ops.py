"""GitService speed on a real tree with history (issue 6 targets).

Builds (once, cached) a repository from the Django 5.2.8 sdist with a few hundred commits: the files
arrive in 300 commits of growing size, then 60 commits edit existing files. Then, in one run, with a
few modified and untracked files in the work tree:

- ``git_status`` (GitService.status) vs ``git status --porcelain`` (target ≤ 1.2×, medians, interleaved);
- ``git_log`` first page of 50 and a cursor page (target ≤ 20 ms);
- ``git_diff`` of a 20-file change with hunks (target ≤ 50 ms): 20 edited files in the work tree, the same
  20 staged, and 20 files changed between two commits. The work-tree case needs one ``lstat`` per tracked
  file; the table shows that floor measured from Python.

    uv run python benchmarks/git_ops.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from codeplane.git import GitService

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, p50, pct, sdist, table, timed

ADD_COMMITS, EDIT_COMMITS, ROUNDS = 300, 60, 25
ENV = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, env=ENV, check=True, capture_output=True, text=True).stdout


def build_repo() -> Path:
    source = sdist("django", "5.2.8")
    root = CACHE / "git_ops_repo"
    marker = root / ".git" / "codeplane-bench-complete"
    if marker.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    files = sorted(p.relative_to(source) for p in source.rglob("*") if p.is_file())
    # Commit sizes grow so early history is small and the last commits carry whole packages, as in real repos.
    chunk = max(1, len(files) // ADD_COMMITS)
    for i in range(ADD_COMMITS):
        batch = files[i * chunk:(i + 1) * chunk] if i < ADD_COMMITS - 1 else files[i * chunk:]
        for rel in batch:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, root / rel)
        git(root, "add", "-A")
        git(root, "commit", "-q", "--allow-empty", "-m", f"add batch {i}")
    py = [f for f in files if f.suffix == ".py"]
    for i in range(EDIT_COMMITS):
        for rel in py[i * 7:(i * 7) + 5]:
            with (root / rel).open("a", encoding="utf-8") as handle:
                handle.write(f"\n# edit {i}\n")
        git(root, "commit", "-q", "-am", f"edit round {i}")
    marker.write_text("ok\n")
    return root


def dirty(root: Path) -> list[Path]:
    """20 modified tracked files plus a few untracked ones; returns the modified files."""
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-fdq")
    py = sorted(p for p in (root / "django" / "db").rglob("*.py"))[:20]
    for path in py:
        text = path.read_text(encoding="utf-8").splitlines(keepends=True)
        mid = len(text) // 2
        text[mid:mid] = ["# benchmark change\n", "value = 1\n"]
        text[:1] = ["# touched header\n"]
        path.write_text("".join(text), encoding="utf-8")
    for i in range(5):
        (root / f"untracked_{i}.txt").write_text("new\n")
    return py


def _cli(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, check=True)


def _lstat_floor(root: Path) -> None:
    """One lstat per tracked file from Python: the least any stat-based scan of this tree costs here."""
    base = os.fsencode(root) + b"/"
    for rel in TRACKED:
        os.lstat(base + rel)


TRACKED: list[bytes] = []


def main() -> None:
    root = build_repo()
    changed = dirty(root)
    service = GitService(root)
    commits = int(git(root, "rev-list", "--count", "HEAD"))
    TRACKED[:] = [os.fsencode(p) for p in git(root, "ls-files", "-z").split("\0") if p]
    for _ in range(3):  # warm caches (and let git refresh the index once, as a user's shell would)
        git(root, "status", "--porcelain")
        service.status()
        service.diff()
    # Each round runs every measurement once, so load on the machine hits all of them alike.
    names = ["status", "git status", "git status -uall", "log1", "log2", "diff", "git diff", "lstat floor",
             "staged", "git diff --cached", "commits", "git diff commits"]
    times: dict[str, list[float]] = {n: [] for n in names}
    cursor = service.log(limit=50).pagination.next_cursor
    # Each edit round touches 5 files, so HEAD~4..HEAD is a 20-file change between two commits.
    for _ in range(ROUNDS):
        times["status"] += timed(service.status, 1)
        times["git status"] += timed(lambda: _cli(root, "status", "--porcelain"), 1)
        times["git status -uall"] += timed(lambda: _cli(root, "status", "--porcelain", "-uall"), 1)
        times["log1"] += timed(lambda: service.log(limit=50), 1)
        times["log2"] += timed(lambda: service.log(limit=50, cursor=cursor), 1)
        times["diff"] += timed(service.diff, 1)
        times["git diff"] += timed(lambda: _cli(root, "diff"), 1)
        times["lstat floor"] += timed(lambda: _lstat_floor(root), 1)
        times["commits"] += timed(lambda: service.diff(base="HEAD~4", target="HEAD"), 1)
        times["git diff commits"] += timed(lambda: _cli(root, "diff", "HEAD~4", "HEAD"), 1)
    status = service.status()
    assert status.modified_total == len(changed) and status.untracked_total == 5, status
    assert len(service.diff().files) == 20 and len(service.diff(base="HEAD~4", target="HEAD").files) == 20
    _cli(root, "add", "-u")
    for _ in range(ROUNDS):
        times["staged"] += timed(lambda: service.diff(staged=True), 1)
        times["git diff --cached"] += timed(lambda: _cli(root, "diff", "--cached"), 1)
    assert len(service.diff(staged=True).files) == 20
    m = {n: p50(v) for n, v in times.items()}
    print(f"repository: {len(TRACKED)} tracked files, {commits} commits (Django 5.2.8 sdist); {ROUNDS} rounds; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    table("GitService vs git CLI (ms, medians)", ["operation", "p50", "p90", "baseline", "baseline p50", "ratio",
                                                 "target"], [
        ["git_status", m["status"], pct(times["status"], 0.9), "git status --porcelain", m["git status"],
         f"{m['status'] / m['git status']:.2f}x", "≤ 1.2x"],
        ["git_status", m["status"], pct(times["status"], 0.9), "git status --porcelain -uall",
         m["git status -uall"], f"{m['status'] / m['git status -uall']:.2f}x", "(same listing as ours)"],
        ["git_log page 1 (50)", m["log1"], pct(times["log1"], 0.9), "-", "-", "-", "≤ 20 ms"],
        ["git_log page 2 (cursor)", m["log2"], pct(times["log2"], 0.9), "-", "-", "-", "≤ 20 ms"],
        ["git_diff 20 files, worktree", m["diff"] + 0.0, pct(times["diff"], 0.9), "git diff", m["git diff"],
         f"{m['diff'] / m['git diff']:.2f}x", "≤ 50 ms"],
        ["  (lstat of every tracked file)", m["lstat floor"], pct(times["lstat floor"], 0.9), "-", "-", "-",
         "floor of a stat scan"],
        ["git_diff 20 files, staged", m["staged"], pct(times["staged"], 0.9), "git diff --cached",
         m["git diff --cached"], f"{m['staged'] / m['git diff --cached']:.2f}x", "≤ 50 ms"],
        ["git_diff 20 files, 2 commits", m["commits"], pct(times["commits"], 0.9), "git diff A B",
         m["git diff commits"], f"{m['commits'] / m['git diff commits']:.2f}x", "≤ 50 ms"],
    ])
    git(root, "reset", "-q", "--hard")
    git(root, "clean", "-fdq")


if __name__ == "__main__":
    main()
