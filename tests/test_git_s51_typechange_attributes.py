"""QA41 #7: a work-tree ``git_diff`` of a file replaced by a symlink (or back) showed ``+0 -0`` and no hunk whenever
the repository had a ``.gitattributes``: the diff then comes from libgit2's work-tree walk, whose new side is not
in the object store. The new side is now read from the work tree (the link's target, the file's bytes), so the
diff shows the old content against it, as ``git diff`` does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.git import GitService
from codeplane.git.diffs import DiffReport
from tests.builders import git, make_repo


def _lines(report: DiffReport) -> list[str]:
    return [f"{line.origin}{line.content}" for f in report.files for h in f.hunks for line in h.lines]


def _git_lines(repo: Path, *args: str) -> list[str]:
    out = git(repo, "diff", *args).stdout.splitlines()
    return [ln for ln in out if ln[:1] in "+- " and not ln.startswith(("+++", "---"))]


@pytest.mark.parametrize("attributes", [True, False])
def test_a_file_replaced_by_a_symlink_shows_its_old_content_against_the_target(tmp_path: Path,
                                                                              attributes: bool) -> None:
    files = {"a.py": "a = 1\n", "b.py": "b = 2\n", "l.txt": "plain\n"}
    repo = make_repo(tmp_path / "repo", {**files, **({".gitattributes": "*.md text\n"} if attributes else {})})
    os.symlink("b.py", repo / "c.py")
    git(repo, "add", "c.py")
    git(repo, "commit", "-qm", "link")
    (repo / "a.py").unlink()
    os.symlink("b.py", repo / "a.py")  # file -> symlink
    (repo / "c.py").unlink()
    (repo / "c.py").write_text("now a file\n")  # symlink -> file
    service = GitService(repo)
    for base in (None, "HEAD"):
        report = service.diff(base=base, paths=["a.py", "c.py"])
        by_path = {f.path: f for f in report.files}
        assert by_path["a.py"].status == "typechange" and by_path["c.py"].status == "typechange"
        assert (by_path["a.py"].insertions, by_path["a.py"].deletions) == (1, 1)
        assert (by_path["c.py"].insertions, by_path["c.py"].deletions) == (1, 1)
        assert _lines(report) == ["-a = 1", "+b.py", "-b.py", "+now a file"]
        assert _git_lines(repo, *([base] if base else []), "--", "a.py", "c.py") == [
            "-a = 1", "+b.py", "-b.py", "+now a file"]
