"""The repository version (spec §5.2) that decides when a full reconcile runs: HEAD, the index, submodule HEADs."""

from __future__ import annotations

from pathlib import Path

from codeplane.repo.version import read_repo_version
from tests.builders import git, make_repo


def test_a_submodules_head_is_part_of_the_version_and_its_move_changes_it(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib", {"lib.py": "one = 1\n"})
    first = git(lib, "rev-parse", "HEAD").stdout.strip()
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(repo, "commit", "-qm", "add lib")
    before = read_repo_version(repo)
    assert before.submodules == (("vendor/lib", first),)
    (repo / "vendor" / "lib" / "lib.py").write_text("two = 2\n")
    git(repo / "vendor" / "lib", "commit", "-qam", "two")
    after = read_repo_version(repo)
    assert after.submodules[0][1] not in (None, first) and after != before


def test_without_gitmodules_there_are_no_submodules_to_read(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    version = read_repo_version(repo)
    assert version.submodules == () and version.head == git(repo, "rev-parse", "HEAD").stdout.strip()
