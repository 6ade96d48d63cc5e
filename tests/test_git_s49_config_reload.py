"""QA35 F4: ``core.autocrlf`` switched on while the service runs is seen by the next status and diff: the cached
read handle is re-opened when the repository's config file changes, so a clean touched file is not "modified"."""

from __future__ import annotations

import os
import time
from pathlib import Path

from codeplane.git import GitService
from tests.builders import make_repo
from tests.git_oracle import run_git


def test_autocrlf_turned_on_while_running_leaves_a_clean_touched_file_clean(tmp_path: Path) -> None:
    seed = make_repo(tmp_path / "seed", {"t.txt": "a\nb\n", ".gitattributes": "*.dat eol=crlf\n"})
    root = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(seed), str(root))
    git = GitService(root)
    assert git.status().is_clean  # the read handle is open from here on
    run_git(root, "config", "core.autocrlf", "true")
    (root / "t.txt").unlink()
    run_git(root, "checkout", "--", "t.txt")
    assert (root / "t.txt").read_bytes() == b"a\r\nb\r\n"
    later = time.time() + 5
    os.utime(root / "t.txt", (later, later))  # stat data no longer matches the index: content must be compared
    assert run_git(root, "diff", "--stat").decode() == ""
    report = git.status()
    assert report.is_clean, report
    assert not git.diff().files
