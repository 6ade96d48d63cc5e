"""Restoring a recovery point removes the files made since, not the ignored files beside them.

With libgit2's ``REMOVE_UNTRACKED`` a directory created after the point went whole: ``venvlike/new.py`` (made
since, rightly removed) and the ignored ``venvlike/lib/mod.pyc`` with it, which no recovery point held."""

from __future__ import annotations

from pathlib import Path

from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import run_git


def test_a_restore_keeps_ignored_files_in_directories_made_since_the_point(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {".gitignore": "*.log\n", "m.py": "m\n"})
    (root / ".git" / "info" / "exclude").write_text("*.pyc\n")
    write_files(root, {"m.py": "changed\n", "old/u.txt": "untracked before the point\n"})
    git = GitService(root)
    point = git.checkout(paths=["m.py"], confirm=True).effect.recovery_point
    assert point
    write_files(root, {"venvlike/lib/mod.pyc": "bytecode\n", "venvlike/new.py": "src\n", "g/k.log": "log\n",
                       "g/h/made.txt": "made\n", "nested/x.txt": "x\n"})
    make_repo(root / "nested" / "repo", {"n.txt": "n\n"})
    restored = git.restore(point, confirm=True)
    assert restored.restored and restored.restored.name == point
    assert (root / "m.py").read_text() == "changed\n" and (root / "old/u.txt").exists()
    assert not (root / "venvlike/new.py").exists() and not (root / "g/h").exists()
    assert not (root / "nested/x.txt").exists()
    assert (root / "venvlike/lib/mod.pyc").read_text() == "bytecode\n" and (root / "g/k.log").read_text() == "log\n"
    assert (root / "nested/repo/n.txt").read_text() == "n\n"  # a repository of its own is never removed
    status = run_git(root, "status", "--porcelain", "--untracked-files=all").decode().splitlines()
    assert status == [" M m.py", "?? nested/repo/", "?? old/u.txt"]
    # The restore is undone by its own point: the files made since come back.
    undo = restored.effect.recovery_point
    assert undo
    git.restore(undo, confirm=True)
    assert (root / "venvlike/new.py").read_text() == "src\n" and (root / "g/h/made.txt").read_text() == "made\n"
