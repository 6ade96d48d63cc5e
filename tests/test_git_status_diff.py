"""git_status and git_diff against the git CLI on real repositories (porcelain v2, --numstat, hunks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.git.diffs import DiffLimits
from codeplane.server.tools.git_render import render_diff
from tests.builders import make_repo, write_files
from tests.git_oracle import diff_numstat, numstat, porcelain_v2, report_hunks, run_git, status_sets, unified_hunks

NON_UTF8 = os.fsdecode(b"caf\xe9.txt")


def _lines(n: int, tag: str = "") -> str:
    return "".join(f"line {i}{tag}\n" for i in range(1, n + 1))


@pytest.fixture
def busy(tmp_path: Path) -> Path:
    """A repository with every kind of change at once (committed base, then edits)."""
    root = make_repo(tmp_path / "busy", {
        "a.txt": _lines(40), "b.txt": _lines(30), "gone.txt": "bye\n", "moved.txt": _lines(50, " m"),
        "moved2.txt": _lines(50, " n"), "img.bin": b"\x00\x01\x02" * 100, "run.sh": "echo hi\n",
        "keep/x.txt": "x\n", ".gitignore": "*.log\n",
    })
    (root / NON_UTF8).write_bytes(b"accent\n")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "non-utf8 name")
    write_files(root, {
        "a.txt": _lines(40).replace("line 7\n", "line seven\n") + "tail\n",  # unstaged modify
        "img.bin": b"\x00\x09\x02" * 120,  # binary modify
        "new/deep/file.txt": "untracked\n", "debug.log": "ignored\n",
        "b.txt": _lines(30).replace("line 3\n", ""),
    })
    run_git(root, "add", "b.txt")  # staged modify
    (root / "b.txt").write_text(_lines(30).replace("line 3\n", "").replace("line 9\n", "nine\n"))  # and unstaged
    run_git(root, "rm", "-q", "gone.txt")  # staged delete
    run_git(root, "mv", "moved.txt", "renamed.txt")  # staged rename
    run_git(root, "mv", "moved2.txt", "renamed2.txt")
    (root / "renamed2.txt").write_text(_lines(50, " n") + "more\n")  # rename + unstaged modify
    write_files(root, {"added.txt": "brand new\n"})
    run_git(root, "add", "added.txt")  # staged add
    os.chmod(root / "run.sh", 0o755)  # mode change
    (root / "keep/x.txt").unlink()  # unstaged delete
    (root / NON_UTF8).write_bytes(b"accent changed\n")
    (root / os.fsdecode(b"n\xe9w.txt")).write_bytes(b"fresh\n")
    return root


def test_status_matches_porcelain_v2_for_every_kind_of_change(busy: Path) -> None:
    report = GitService(busy).status()
    assert status_sets(report) == porcelain_v2(busy)
    assert report.branch == "main" and not report.detached and report.state == "none" and not report.is_clean
    assert report.head_commit == run_git(busy, "rev-parse", "HEAD").decode().strip()
    assert "caf\\xe9.txt" in {e.path for e in report.modified}


def test_status_scoped_to_paths_and_limited(busy: Path) -> None:
    git = GitService(busy)
    assert status_sets(git.status(["new/", "a.txt"])) == porcelain_v2(busy, "new/", "a.txt")
    cut = git.status(limit=1)
    assert cut.truncated and len(cut.staged) == 1 and cut.staged_total == len(porcelain_v2(busy)["staged"])
    # The text names what was cut by count (it said "(lists cut at limit)": untracked_total was only in the record).
    from codeplane.server.tools.git_render import render_status

    last = render_status(cut).splitlines()[-1]
    assert f"{cut.staged_total - 1:,} more staged" in last and "narrow with paths" in last, last
    assert f"{cut.untracked_total - 1:,} more untracked" in last, last


def test_status_of_empty_repository_and_detached_head(tmp_path: Path) -> None:
    empty = make_repo(tmp_path / "empty")
    write_files(empty, {"x.txt": "x\n"})
    report = GitService(empty).status()
    assert report.head_commit is None and report.branch == "main" and report.untracked == ["x.txt"]
    assert status_sets(report) == porcelain_v2(empty)
    repo = make_repo(tmp_path / "det", {"a.txt": "1\n"})
    write_files(repo, {"a.txt": "2\n"})
    run_git(repo, "commit", "-qam", "two")
    run_git(repo, "checkout", "-q", "HEAD~1")
    report = GitService(repo).status()
    assert report.detached and report.branch is None and report.is_clean


def test_status_reports_merge_conflicts_with_stage_oids(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "c", {"f.txt": "base\n", "both.txt": "x\n"})
    run_git(root, "checkout", "-q", "-b", "side")
    write_files(root, {"f.txt": "side\n", "added.txt": "side add\n"})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "side")
    run_git(root, "checkout", "-q", "main")
    write_files(root, {"f.txt": "main\n", "added.txt": "main add\n"})
    run_git(root, "add", "-A")
    run_git(root, "commit", "-qm", "main")
    run_git(root, "merge", "side", check=False)
    report = GitService(root).status()
    assert report.state == "merge"
    assert status_sets(report) == porcelain_v2(root)
    added = next(c for c in report.conflicts if c.path == "added.txt")
    assert added.ancestor_oid is None and added.ours_oid and added.theirs_oid


def test_status_with_a_modified_submodule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")
    lib = make_repo(tmp_path / "lib", {"lib.txt": "v1\n"})
    root = make_repo(tmp_path / "super", {"main.txt": "m\n"})
    run_git(root, "submodule", "add", "-q", str(lib), "vendor/lib")
    run_git(root, "commit", "-qm", "add submodule")
    assert status_sets(GitService(root).status()) == porcelain_v2(root)
    write_files(root / "vendor/lib", {"lib.txt": "v2\n"})
    run_git(root / "vendor/lib", "commit", "-qam", "v2")
    report = GitService(root).status()
    assert status_sets(report) == porcelain_v2(root)
    assert [e.path for e in report.modified] == ["vendor/lib"]


@pytest.mark.parametrize("args", [(), ("--cached",), ("HEAD",)], ids=["unstaged", "staged", "head-vs-worktree"])
def test_diff_numstat_and_hunks_match_git(busy: Path, args: tuple[str, ...]) -> None:
    git = GitService(busy)
    report = git.diff(staged=args == ("--cached",), base="HEAD" if args == ("HEAD",) else None)
    assert diff_numstat(report) == numstat(busy, *args)
    assert report_hunks(report) == {k: v for k, v in unified_hunks(busy, *args).items() if k in report_hunks(report)}
    assert report.stats.files_changed == len(report.files)
    assert report.stats.insertions == sum(v[0] or 0 for v in numstat(busy, *args).values())


def test_diff_between_commits_detects_renames_and_binary(busy: Path) -> None:
    run_git(busy, "add", "-A")
    run_git(busy, "commit", "-qm", "everything")
    report = GitService(busy).diff(base="HEAD~1", target="HEAD")
    assert diff_numstat(report) == numstat(busy, "HEAD~1", "HEAD")
    renamed = {f.path: f for f in report.files if f.status == "renamed"}
    assert renamed["renamed.txt"].old_path == "moved.txt"
    assert next(f for f in report.files if f.path == "img.bin").binary
    assert report_hunks(report) == {k: v for k, v in unified_hunks(busy, "HEAD~1", "HEAD").items()
                                    if k in report_hunks(report)}


def test_diff_is_bounded_with_a_truncation_marker(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "big", {f"f{i}.txt": _lines(100) for i in range(5)})
    write_files(root, {f"f{i}.txt": _lines(100, " changed") for i in range(5)})
    git = GitService(root)
    full = git.diff()
    assert not full.truncated and full.stats.insertions == 500
    cut = git.diff(limits=DiffLimits(max_files=2, max_lines=50))
    assert cut.truncated and cut.truncation and "3 more files" in cut.truncation and "more lines" in cut.truncation
    assert len(cut.files) == 2 and cut.files_omitted == 3
    assert sum(len(h.lines) for f in cut.files for h in f.hunks) == 50
    assert cut.stats == full.stats  # stats always cover the whole diff
    stats_only = git.diff(paths=["f1.txt"], limits=DiffLimits(include_hunks=False))
    assert [f.path for f in stats_only.files] == ["f1.txt"] and stats_only.files[0].hunks == []


def test_diff_refuses_unknown_refs_and_option_like_arguments(busy: Path) -> None:
    git = GitService(busy)
    with pytest.raises(CodePlaneError) as missing:
        git.diff(base="no-such-branch")
    assert missing.value.code == 8002
    with pytest.raises(CodePlaneError) as option:
        git.diff(base="--output=/tmp/x")
    assert option.value.code == 1003
    with pytest.raises(CodePlaneError) as escape:
        git.diff(paths=["../outside"])
    assert escape.value.code == 5001


@pytest.mark.parametrize(("before", "after"), [("x = 1\ny = 2", "x = 1\ny = 2\n"), ("a\nb\n", "a\nb\nc"),
                                                ("a\nb", "a\nc")])
def test_a_last_line_without_a_newline_is_marked_as_git_marks_it(tmp_path: Path, before: str, after: str) -> None:
    """The ``\\ No newline at end of file`` markers were dropped: adding a final newline showed ``-y = 2`` /
    ``+y = 2``, a change that changes nothing. The line says so, and the text has git's marker after it."""
    from codeplane.server.tools.git_render import render_diff

    root = make_repo(tmp_path / "r", {"a.txt": before})
    write_files(root, {"a.txt": after})
    report = GitService(root).diff()
    cli = [ln for ln in run_git(root, "diff").decode().splitlines()
           if ln[:1] in "+- \\" and ln[:3] not in ("+++", "---")]
    ours = [ln for ln in render_diff(report).splitlines() if ln[:1] in "+- \\" and not ln.startswith("--- ")]
    assert ours == cli
    marked = [(ln.origin, ln.content) for h in report.files[0].hunks for ln in h.lines if ln.no_newline]
    assert marked and all(ln.startswith("\\") for ln in cli if ln[:1] == "\\")


def test_hunks_cut_by_max_lines_are_counted_on_one_line_not_listed(tmp_path: Path) -> None:
    """``git_diff max_lines=50`` printed every hunk past the cut with its header and a ``… N lines omitted`` stub:
    83 of them, 7.8 KB, for nothing the agent could read."""
    body = "".join(f"line {i}\n" for i in range(200))
    root = make_repo(tmp_path / "r", {"a.txt": body})
    write_files(root, {"a.txt": body.replace("0\n", "0 changed\n")})  # 20 hunks, ten lines apart
    cut = GitService(root).diff(limits=DiffLimits(max_lines=8))
    text = render_diff(cut)
    shown = [h for h in cut.files[0].hunks if h.lines]
    # A stub for the hunk cut midway, one line for the hunks past the cut.
    assert text.count("lines omitted") == 2 and len(cut.files[0].hunks) > len(shown) + 2, text
    assert f"… {len(cut.files[0].hunks) - len(shown)} more hunks," in text, text
