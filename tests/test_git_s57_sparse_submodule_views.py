"""QA61 minor items. A merge in a sparse checkout that changes a file outside the cone listed it "deleted" (sha256
"") in its effect, though it was never on disk and only its index entry changed (git shows nothing for it). A
submodule holding only untracked files got ``Subproject commit …-dirty`` in ``git_diff``, where ``git diff`` prints
nothing (and no ``-dirty`` when the submodule is at another commit)."""

from __future__ import annotations

from pathlib import Path

from codeplane.git import GitService
from tests.builders import git, make_repo, write_files
from tests.git_oracle import run_git


def test_a_merge_outside_the_sparse_cone_lists_only_the_files_on_disk(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"in/a.txt": "a\n", "out/b.txt": "b\n"})
    git(repo, "checkout", "-qb", "other")
    write_files(repo, {"in/a.txt": "a2\n", "out/b.txt": "b2\n"})
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    git(repo, "sparse-checkout", "set", "in")
    assert not (repo / "out").exists()
    merged = GitService(repo).merge("other")
    assert [p.path for p in merged.effect.paths] == ["in/a.txt"], merged.effect
    assert merged.effect.paths_total == 1 and (merged.effect.insertions, merged.effect.deletions) == (1, 1)
    assert not (repo / "out").exists() and run_git(repo, "status", "--porcelain").decode() == ""
    assert run_git(repo, "show", ":out/b.txt").decode() == "b2\n"


def test_a_submodule_with_only_untracked_files_diffs_as_git_diff_does(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin", {"s.txt": "s\n"})
    top = make_repo(tmp_path / "top", {"a.txt": "a\n"})
    run_git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), "sub")
    git(top, "commit", "-qm", "sub")
    write_files(top / "sub", {"untracked.txt": "u\n"})
    service = GitService(top)
    assert run_git(top, "diff").decode() == "" and run_git(top, "diff", "HEAD").decode() == ""
    assert service.diff().files == [] and service.diff(base="HEAD").files == []

    old = run_git(top / "sub", "rev-parse", "HEAD").decode().strip()
    write_files(top / "sub", {"s.txt": "s2\n"})
    git(top / "sub", "commit", "-qam", "s2")
    new = run_git(top / "sub", "rev-parse", "HEAD").decode().strip()
    assert run_git(top, "diff").decode().splitlines()[-2:] == [f"-Subproject commit {old}",
                                                               f"+Subproject commit {new}"]
    for report in (service.diff(), service.diff(base="HEAD")):
        [sub] = report.files
        assert [(ln.origin, ln.content) for ln in sub.hunks[0].lines] == [
            ("-", f"Subproject commit {old}"), ("+", f"Subproject commit {new}")], report
    write_files(top / "sub", {"s.txt": "s3\n"})  # a tracked file changed: git says -dirty, and so does this
    [sub] = service.diff().files
    assert sub.hunks[0].lines[-1].content == f"Subproject commit {new}-dirty"
