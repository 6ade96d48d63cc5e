"""A commit's stat is git's own, from the git service (``CommitResult.stat``), not worked out by the tool after the
commit. The service reads the commit's tree diff, where a rename is a deleted and an added path; the tool read the
effect, which calls a path deleted only when its file is gone from the disk: a rename staged with ``git rm --cached``
(the old file left on disk, untracked) answered ``2 files changed, +2 -2`` with both paths, where git commit says
``old.py => new.py``, one file. Real repositories; the tool through the real server and the official client."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codeplane.git.service import GitService
from tests.builders import answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_OLD = "".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(6))


def _rename_keeping_the_old_file(repo: Path) -> None:
    """``old.py`` renamed to ``new.py`` in the index only: ``old.py`` stays on disk, untracked."""
    git(repo, "rm", "-q", "--cached", "old.py")
    shutil.copy(repo / "old.py", repo / "new.py")
    git(repo, "add", "new.py")


def test_the_service_returns_gits_stat_of_a_commit_that_renames(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"old.py": _OLD, "keep.py": "K = 1\n"})
    _rename_keeping_the_old_file(repo)
    result = GitService(repo).commit("rename, old file kept")
    assert result.stat is not None
    assert [(f.path, f.old_path, f.status) for f in result.stat.files] == [("new.py", "old.py", "renamed")]
    assert (result.stat.stats.files_changed, result.stat.stats.insertions, result.stat.stats.deletions) == (1, 0, 0)
    # Neither the record nor the schema carry it: the record keeps the effect's paths.
    assert "stat" not in result.model_dump() and "stat" not in type(result).model_json_schema()["properties"]
    # A commit whose tree diff pairs nothing has no stat of its own: the effect's is git's.
    (repo / "keep.py").write_text("K = 2\n")
    git(repo, "add", "keep.py")
    assert GitService(repo).commit("edit").stat is None


async def test_a_rename_staged_with_the_old_file_left_on_disk_commits_as_one_renamed_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"old.py": _OLD, "keep.py": "K = 1\n"})
    _rename_keeping_the_old_file(repo)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            res = await client.call_tool("git_commit", {"message": "rename, old file kept"})
    assert not res.is_error, envelope(res)
    stat = git(repo, "show", "--stat", "--format=", "-M", "HEAD").stdout.splitlines()
    assert [line.strip() for line in stat] == ["old.py => new.py | 0",
                                               "1 file changed, 0 insertions(+), 0 deletions(-)"]
    assert answer_text(res).splitlines()[1:] == ["1 file changed", "R old.py -> new.py"]
    record = envelope(res)["result"]
    assert "stat" not in record  # the record keeps the effect, both paths as the tree diff has them
    assert sorted(p["path"] for p in record["effect"]["paths"]) == ["new.py", "old.py"]
