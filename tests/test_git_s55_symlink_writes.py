"""QA55 F1/F2: no git write goes through a symlink standing where the written tree has a directory.

libgit2 follows a symlinked leading directory when the checkout does not also replace the link itself (a
path-limited checkout, or an index that already lacks the link): ``git_checkout paths`` wrote ``link/real.py`` into
``pkg/real.py`` (losing its local edit without asking) or ``ext/evil.py`` into a directory outside the repository,
and restoring a recovery point did the same and then deleted the link as "created since". git replaces the link by a
real directory; so does CodePlane now. A merge abort over the same change crashed (``IsADirectoryError``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git import GitService
from tests.builders import answer_text, mcp_client, running_server
from tests.builders import git as git_cli
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio

_EDIT = "def real():\n    return 2  # precious uncommitted edit\n"


def _repo(tmp: Path, name: str = "repo") -> tuple[Path, Path]:
    """``main``: ``pkg/real.py``, ``link -> pkg`` and ``ext -> <outside>``; branch ``other`` makes ``link/`` and
    ``ext/`` real directories holding ``link/real.py`` and ``ext/evil.py``. HEAD is ``main``."""
    root, outside = tmp / name, tmp / f"{name}-outside"
    outside.mkdir(parents=True)
    (outside / "secret.py").write_text("SECRET = 1\n")
    root.mkdir()
    for args in (("init", "-q", "-b", "main"), ("config", "user.name", "T"), ("config", "user.email", "t@e")):
        git_cli(root, *args)
    (root / "pkg").mkdir()
    (root / "pkg/real.py").write_text("def real():\n    return 1\n")
    os.symlink("pkg", root / "link")
    os.symlink(str(outside), root / "ext")
    git_cli(root, "add", "-A")
    git_cli(root, "commit", "-qm", "base")
    git_cli(root, "checkout", "-q", "-b", "other")
    git_cli(root, "rm", "-q", "link", "ext")
    for path, text in (("link/real.py", "FROM_OTHER = 1\n"), ("ext/evil.py", "EVIL = 1\n")):
        (root / path).parent.mkdir()
        (root / path).write_text(text)
    git_cli(root, "add", "-A")
    git_cli(root, "commit", "-qm", "dirs")
    git_cli(root, "checkout", "-q", "main")
    return root, outside


def _twin(root: Path) -> Path:
    twin = root.with_name(root.name + "-twin")
    shutil.copytree(root, twin, symlinks=True)
    return twin


def _same_as_git(ours: Path, theirs: Path) -> None:
    for args in (("ls-files", "-s"), ("status", "--porcelain")):
        assert run_git(ours, *args) == run_git(theirs, *args), args


def _untouched(outside: Path) -> None:
    assert sorted(os.listdir(outside)) == ["secret.py"]
    assert (outside / "secret.py").read_text() == "SECRET = 1\n"


def test_restoring_a_path_below_a_symlink_replaces_the_link_and_keeps_the_links_target(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    (root / "pkg/real.py").write_text(_EDIT)
    twin = _twin(root)
    result = GitService(root).checkout("other", paths=["link/real.py"])
    run_git(twin, "checkout", "other", "--", "link/real.py")
    assert (root / "pkg/real.py").read_text() == _EDIT
    assert not (root / "link").is_symlink() and (root / "link/real.py").read_text() == "FROM_OTHER = 1\n"
    assert result.restored_paths == ["link/real.py"]
    assert result.warnings == ["link: the symlink was replaced by a directory, as git does (the files restored are "
                               "under it)"]
    _same_as_git(root, twin)
    _untouched(outside)


def test_restoring_everything_from_a_ref_writes_nothing_outside_the_repository(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    twin = _twin(root)
    GitService(root).checkout("other", paths=["."])
    run_git(twin, "checkout", "other", "--", ".")
    _untouched(outside)
    assert (root / "ext/evil.py").read_text() == "EVIL = 1\n" and not (root / "ext").is_symlink()
    _same_as_git(root, twin)


def test_restoring_from_the_index_asks_before_replacing_an_untracked_link_and_never_writes_through_it(
        tmp_path: Path) -> None:
    # The state the old path restore left behind: ``ext/evil.py`` staged, ``ext`` still a link out (untracked now).
    root, outside = _repo(tmp_path)
    run_git(root, "rm", "-q", "--cached", "ext")
    blob = run_git(root, "rev-parse", "other:ext/evil.py").decode().strip()
    run_git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},ext/evil.py")
    service = GitService(root)
    with pytest.raises(CodePlaneError) as refused:
        service.checkout(paths=["."])
    assert refused.value.code == ErrorCode.CONFIRMATION_REQUIRED.code
    assert refused.value.details["paths"] == ["ext", "ext/evil.py"]
    result = service.checkout(paths=["."], confirm=True)
    _untouched(outside)
    assert (root / "ext/evil.py").read_text() == "EVIL = 1\n"
    point = result.effect.recovery_point
    assert point is not None  # it holds the link: the one local change the restore removed
    assert run_git(root, "ls-tree", point, "ext").decode().startswith("120000 blob")


@pytest.mark.parametrize("link", ["link", "ext"])
def test_restoring_a_recovery_point_across_a_link_to_directory_change_restores_its_files(
        tmp_path: Path, link: str) -> None:
    root, outside = _repo(tmp_path)
    git_cli(root, "checkout", "-q", "other")
    with open(root / "link/real.py", "a") as f:
        f.write("EDITED = 1\n")
    with open(root / "ext/evil.py", "a") as f:
        f.write("UNCOMMITTED = 1\n")
    service = GitService(root)
    point = service.checkout("main", force=True, confirm=True).effect.recovery_point
    assert point is not None and (root / link).is_symlink()
    service.restore(point, confirm=True)
    assert run_git(root, "branch", "--show-current") == b"other\n"
    assert (root / "link/real.py").read_text() == "FROM_OTHER = 1\nEDITED = 1\n"
    assert (root / "ext/evil.py").read_text() == "EVIL = 1\nUNCOMMITTED = 1\n"
    assert (root / "pkg/real.py").read_text() == "def real():\n    return 1\n"
    assert run_git(root, "status", "--porcelain").decode() == " M ext/evil.py\n M link/real.py\n"
    _untouched(outside)


def test_a_merge_abort_puts_the_links_back_over_the_directories_the_merge_brought(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    for branch, text in (("other", "theirs\n"), ("main", "ours\n")):
        git_cli(root, "checkout", "-q", branch)
        (root / "a.txt").write_text(text)
        git_cli(root, "add", "a.txt")
        git_cli(root, "commit", "-qm", f"a on {branch}")
    twin = _twin(root)
    service = GitService(root)
    assert service.merge("other").success is False
    service.merge_abort()
    run_git(twin, "merge", "other", check=False)
    run_git(twin, "merge", "--abort")
    assert (root / "link").is_symlink() and (root / "ext").is_symlink()
    _same_as_git(root, twin)
    _untouched(outside)


async def test_git_checkout_paths_says_the_link_became_a_directory(tmp_path: Path) -> None:
    root, outside = _repo(tmp_path)
    (root / "pkg/real.py").write_text(_EDIT)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            text = answer_text(await client.call_tool("git_checkout", {"ref": "other", "paths": ["link"]}))
    lines = text.splitlines()
    assert "warning: link: the symlink was replaced by a directory, as git does (the files restored are under it)" \
        in lines, text
    assert "link deleted" in lines, text  # the effect: the link itself is gone (git status: D link)
    assert (root / "pkg/real.py").read_text() == _EDIT
    _untouched(outside)
