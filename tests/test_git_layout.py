"""Submodules and worktrees against the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import run_git


@pytest.fixture
def allow_file_submodules(monkeypatch: pytest.MonkeyPatch) -> None:
    """git ≥ 2.38 refuses file:// submodules by default; the tests use local repositories."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")


def _git_submodule_status(root: Path) -> dict[str, tuple[str, str]]:
    out = run_git(root, "submodule", "status").decode().splitlines()
    return {line[1:].split()[1]: (line[0], line[1:].split()[0]) for line in out}


@pytest.mark.usefixtures("allow_file_submodules")
def test_submodule_add_status_update_and_remove(tmp_path: Path) -> None:
    lib = make_repo(tmp_path / "lib", {"lib.txt": "v1\n"})
    root = make_repo(tmp_path / "super", {"main.txt": "m\n"})
    git = GitService(root)
    with pytest.raises(CodePlaneError) as option_like:  # git's helper would read it as options (QA47 #6)
        git.submodule_change("add", paths=["-sm"], url=str(lib))
    assert option_like.value.code == 1003 and option_like.value.details["field"] == "path"
    assert not (root / ".git" / "modules").exists()
    added = git.submodule_change("add", paths=["vendor/lib"], url=str(lib))
    assert [s.path for s in added.submodules] == ["vendor/lib"] and added.submodules[0].state == "added"
    git.commit("add lib")
    [info] = git.submodules()
    flag, oid = _git_submodule_status(root)["vendor/lib"]
    assert flag == " " and info.head_oid == oid == info.workdir_oid and info.state == "clean"
    write_files(lib, {"lib.txt": "v2\n"})
    run_git(lib, "commit", "-qam", "v2")
    run_git(root / "vendor/lib", "pull", "-q")
    [moved] = git.submodules()
    assert _git_submodule_status(root)["vendor/lib"][0] == "+" and moved.state == "modified"
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(root), str(clone))
    cloned = GitService(clone)
    assert cloned.submodules()[0].state == "uninitialized"
    assert _git_submodule_status(clone)["vendor/lib"][0] == "-"
    updated = cloned.submodule_change("update")
    assert updated.submodules[0].state == "clean" and (clone / "vendor/lib/lib.txt").read_text() == "v1\n"
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.submodule_change("remove", paths=["vendor/lib"])
    assert unconfirmed.value.code == 5009
    git.submodule_change("remove", paths=["vendor/lib"], confirm=True)
    assert [s.state for s in git.submodules()] == ["deleted"] and not (root / "vendor/lib/lib.txt").exists()
    git.commit("drop lib")
    assert git.submodules() == []
    with pytest.raises(CodePlaneError) as unknown:
        git.submodule_change("update", paths=["main.txt"])
    assert unknown.value.code == 8002


def test_worktree_add_list_lock_and_remove(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    run_git(root, "branch", "existing")
    git = GitService(root)
    made = git.worktree_change("add", name="hotfix")
    assert made.worktree and made.worktree.branch == "hotfix"
    wt_path = Path(made.worktree.path)
    assert wt_path.resolve() == (root / ".codeplane/worktrees/hotfix").resolve()
    assert (wt_path / "a.txt").read_text() == "a\n"
    git.worktree_change("add", name="other", ref="existing", path="wt/other")
    listed = git.worktrees()
    porcelain = run_git(root, "worktree", "list", "--porcelain").decode()
    expected = [block.split("\n")[0].removeprefix("worktree ") for block in porcelain.strip().split("\n\n")]
    assert [str(Path(w.path).resolve()) for w in listed] == [str(Path(p).resolve()) for p in expected]
    assert listed[0].is_main and {w.branch for w in listed} == {"main", "hotfix", "existing"}
    git.worktree_change("lock", name="hotfix", reason="busy")
    assert next(w for w in git.worktrees() if w.name == "hotfix").locked
    git.worktree_change("unlock", name="hotfix")
    write_files(wt_path, {"a.txt": "dirty\n"})
    with pytest.raises(CodePlaneError) as dirty:
        git.worktree_change("remove", name="hotfix")
    assert dirty.value.code == 8001
    with pytest.raises(CodePlaneError) as unconfirmed:
        git.worktree_change("remove", name="hotfix", force=True)
    assert unconfirmed.value.code == 5009
    removed = git.worktree_change("remove", name="hotfix", force=True, confirm=True)
    assert [w.name for w in git.worktrees()] == [None, "other"]
    # The 5009 promised a recovery point (there was none): the worktree's dirty file is in it.
    point = removed.effect.recovery_point
    assert point and run_git(root, "show", f"{point}:a.txt").decode() == "dirty\n"
    with pytest.raises(CodePlaneError) as outside:
        git.worktree_change("add", name="escape", path="../elsewhere")
    assert outside.value.code == 5001
