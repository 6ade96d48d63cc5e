"""The git CLI as the oracle for differential tests: parsers of its machine-readable outputs.

Paths are decoded the way CodePlane shows them (UTF-8, other bytes as ``\\xNN``), so answers compare
directly with GitService results.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

from codeplane.git.diffs import DiffReport
from codeplane.git.status import StatusReport
from tests.builders import GIT_ENV, make_repo, write_files


def run_git(root: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> bytes:
    full = {**os.environ, **GIT_ENV, **(env or {})}
    proc = subprocess.run(["git", *args], cwd=root, env=full, capture_output=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {args} failed: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def commit_all(root: Path, message: str, files: dict[str, str]) -> None:
    """Write ``files`` and commit everything with the git CLI."""
    write_files(root, files)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", message)


def shown(raw: bytes) -> str:
    return raw.decode("utf-8", errors="backslashreplace")


_XY = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "typechange", "C": "copied"}


def porcelain_v2(root: Path, *paths: str) -> dict[str, set[tuple[str, ...]]]:
    """``git status --porcelain=v2 -z --untracked-files=all`` as sets comparable with StatusReport."""
    out = run_git(root, "status", "--porcelain=v2", "-z", "--untracked-files=all", "--", *paths)
    fields = out.split(b"\0")
    staged: set[tuple[str, ...]] = set()
    modified: set[tuple[str, ...]] = set()
    untracked: set[tuple[str, ...]] = set()
    conflicts: set[tuple[str, ...]] = set()
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if not rec:
            continue
        kind = rec[:1]
        if kind == b"?":
            untracked.add((shown(rec[2:]),))
        elif kind == b"1":
            parts = rec.split(b" ", 8)
            xy, path = parts[1].decode(), shown(parts[8])
            if xy[0] != ".":
                staged.add((path, _XY[xy[0]], ""))
            if xy[1] != ".":
                modified.add((path, _XY[xy[1]]))
        elif kind == b"2":
            parts = rec.split(b" ", 9)
            xy, path = parts[1].decode(), shown(parts[9])
            orig = shown(fields[i])
            i += 1
            if xy[0] != ".":
                staged.add((path, _XY[xy[0]], orig if xy[0] in "RC" else ""))
            if xy[1] != ".":
                modified.add((path, _XY[xy[1]]))
        elif kind == b"u":
            parts = rec.split(b" ", 10)
            oids = [p.decode() for p in parts[7:10]]
            conflicts.add((shown(parts[10]), *(o if set(o) != {"0"} else "" for o in oids)))
    return {"staged": staged, "modified": modified, "untracked": untracked, "conflicts": conflicts}


def status_sets(report: StatusReport) -> dict[str, set[tuple[str, ...]]]:
    """The same sets from a GitService StatusReport."""
    r = report
    return {
        "staged": {(e.path, e.status, e.old_path or "") for e in r.staged},
        "modified": {(e.path, e.status) for e in r.modified},
        "untracked": {(p,) for p in r.untracked},
        "conflicts": {(c.path, c.ancestor_oid or "", c.ours_oid or "", c.theirs_oid or "")
                      for c in r.conflicts},
    }


def numstat(root: Path, *args: str) -> dict[str, tuple[int | None, int | None, str]]:
    """``git diff --numstat -z -M <args>``: path → (insertions, deletions, old path) (None, None) for binary."""
    out = run_git(root, "diff", "--numstat", "-z", "-M", *args)
    fields = out.split(b"\0")
    result: dict[str, tuple[int | None, int | None, str]] = {}
    i = 0
    while i < len(fields):
        rec = fields[i]
        i += 1
        if not rec:
            continue
        ins, dels, path = rec.split(b"\t", 2)
        old = ""
        if not path:  # rename: old and new follow as separate fields
            old, path = shown(fields[i]), fields[i + 1]
            i += 2
        result[shown(path)] = (None if ins == b"-" else int(ins), None if dels == b"-" else int(dels), old)
    return result


def diff_numstat(report: DiffReport) -> dict[str, tuple[int | None, int | None, str]]:
    return {f.path: ((None, None, f.old_path or "") if f.binary else
                     (f.insertions, f.deletions, f.old_path or ""))
            for f in report.files}


def unified_hunks(root: Path, *args: str) -> dict[str, list[str]]:
    """Hunk headers and body lines per file from ``git diff -M <args>`` (text files only)."""
    out = run_git(root, "-c", "core.quotepath=false", "diff", "-M", "--no-color", "--no-ext-diff", *args)
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    old_name = ""
    for raw in out.split(b"\n"):
        if raw.startswith(b"diff --git "):
            current = None
        elif raw.startswith(b"--- ") and current is None:
            old_name = shown(raw[4:]).removeprefix("a/")
        elif raw.startswith(b"+++ ") and current is None:
            name = shown(raw[4:])
            current = files.setdefault(old_name if name == "/dev/null" else name.removeprefix("b/"), [])
        elif current is not None and raw.startswith(b"@@"):
            current.append(shown(raw).split(" @@", 1)[0] + " @@")
        elif current is not None and raw[:1] in (b"+", b"-", b" "):
            current.append(shown(raw))
    return files


def report_hunks(report: DiffReport) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in report.files:
        if f.binary or not f.hunks:
            continue
        lines = out.setdefault(f.path, [])
        for h in f.hunks:
            lines.append(h.header.split(" @@", 1)[0] + " @@")
            lines.extend(ln.origin + ln.content for ln in h.lines)
    return out


LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%B%x1e"


def log_records(root: Path, *args: str) -> list[dict[str, object]]:
    out = run_git(root, "log", f"--format={LOG_FORMAT}", *args).decode()
    records: list[dict[str, object]] = []
    for raw in out.split("\x1e"):
        chunk = raw.lstrip("\n")
        if not chunk:
            continue
        oid, parents, an, ae, ai, ci, body = chunk.split("\x1f")
        records.append({"oid": oid, "parents": parents.split(), "author": (an, ae, ai), "committer_time": ci,
                        "message": body})
    return records


def blame_lines(root: Path, path: str, rev: str = "HEAD") -> list[str]:
    """The commit of each final line, from ``git blame --porcelain``."""
    out = run_git(root, "blame", "--porcelain", rev, "--", path).decode("utf-8", errors="replace")
    lines: dict[int, str] = {}
    for row in out.split("\n"):
        parts = row.split(" ")
        if len(parts) >= 3 and len(parts[0]) == 40 and all(c in "0123456789abcdef" for c in parts[0]):
            lines[int(parts[2])] = parts[0]
    return [lines[i] for i in sorted(lines)]


def worktree_snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every tracked or untracked-not-ignored file: raw path → (content or link target, mode bits)."""
    out = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    snap: dict[str, tuple[bytes, int]] = {}
    for raw in sorted(set(out.split(b"\0")) - {b""}):
        full = os.path.join(os.fsencode(root), raw)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode):
            snap[shown(raw)] = (os.readlink(full), 0o120000)
        elif stat.S_ISREG(info.st_mode):
            with open(full, "rb") as handle:
                snap[shown(raw)] = (handle.read(), 0o100755 if info.st_mode & stat.S_IXUSR else 0o100644)
    return snap


def full_state(root: Path) -> dict[str, object]:
    """Working tree, index (``ls-files -s``), HEAD and the branch HEAD names: what a restore must bring back."""
    head = run_git(root, "rev-parse", "--verify", "-q", "HEAD", check=False).decode().strip()
    branch = run_git(root, "symbolic-ref", "-q", "HEAD", check=False).decode().strip()
    return {"files": worktree_snapshot(root), "index": run_git(root, "ls-files", "-s", "-z"), "head": head,
            "branch": branch}


def picks_stopped_on_b(root: Path, *picks: str) -> Path:
    """A repository at ``root``: main with ``M``; ``src`` with A (adds a.txt), B (conflicts with M on f.txt) and C
    (adds c.txt); then ``git cherry-pick <picks>`` run on main by the git CLI (stopped on B when it is among them)."""
    make_repo(root, {"f.txt": "l1\nl2\n"})
    run_git(root, "checkout", "-q", "-b", "src")
    commit_all(root, "A", {"a.txt": "a\n"})
    commit_all(root, "B", {"f.txt": "l1\nsrc\n"})
    commit_all(root, "C", {"c.txt": "c\n"})
    run_git(root, "checkout", "-q", "main")
    commit_all(root, "M", {"f.txt": "l1\nmain\n"})
    run_git(root, "cherry-pick", *picks, check=False)
    return root
