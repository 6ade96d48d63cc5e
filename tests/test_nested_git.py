"""A repository holding other repositories: a submodule (its ``.git`` is a file) and a nested clone.

Git owns every path with a ``.git`` component, at any depth: it refuses to track one, and a submodule's
``.git`` file only points to its git directory. Before, the universe walk pruned ``.git`` directories but
listed and indexed a submodule's ``.git`` file, and the write guard refused ``.git/`` only at the root, so a
write to ``nested/.git/hooks/pre-commit`` or a read of ``nested/.git/config`` went through.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.paths import resolve_in_repo
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import walk_paths, walk_universe
from tests.builders import ServerHandle, call, call_error, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


def _super_repo(base: Path) -> Path:
    library = make_repo(base / "library", {"lib.py": "def library_fn():\n    return 2\n"})
    repo = make_repo(base / "repo", {"app.py": "def app_fn():\n    return 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/library")
    git(repo, "commit", "-q", "-m", "add the library")
    make_repo(repo / "nested", {"n.py": "N = 1\n"})  # a clone inside the work tree, not a submodule
    return repo


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(_super_repo(tmp_path_factory.mktemp("nested"))) as handle:
        yield handle


def test_the_walk_leaves_out_a_gitlink_file_at_any_depth(tmp_path: Path) -> None:
    repo = _super_repo(tmp_path)
    assert (repo / "vendor/library/.git").is_file()
    rules = IgnoreRules.load(repo)
    walked = [e.path for e in walk_universe(repo, rules)]
    assert "vendor/library/lib.py" in walked and "nested/n.py" in walked
    assert not [p for p in walked if ".git" in p.split("/")], walked
    assert sorted(walk_paths(repo, ["vendor/library/.git", "vendor/library/lib.py"], rules)) == [
        "vendor/library/lib.py"]


@pytest.mark.parametrize("path", ["vendor/library/.git", "nested/.git/config", "nested/.git/hooks/pre-commit",
                                  "sub/.GIT/config", ".git/config"])
def test_a_git_component_at_any_depth_is_refused(tmp_path: Path, path: str) -> None:
    with pytest.raises(Exception) as caught:
        resolve_in_repo(tmp_path, path)
    assert getattr(caught.value, "code", None) == 5001 and "managed by git" in str(caught.value)


def test_nested_paths_named_like_git_but_not_git_are_allowed(tmp_path: Path) -> None:
    for path in ("docs/.github/x.yml", "a/.gitignore", "b/git/config", "c/.gitx"):
        assert resolve_in_repo(tmp_path, path).rel == path


async def test_the_server_lists_and_searches_the_submodule_but_not_its_git_file(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        listed = await call(client, "list_files", {})
        paths = [e["path"] for e in listed["entries"]]
        assert "vendor/library/lib.py" in paths and "vendor/library/.git" not in paths, paths
        hits = await call(client, "search", {"query": "gitdir", "syntax": "identifier"})
        assert not hits.get("results"), hits
        found = await call(client, "search", {"query": "library_fn", "syntax": "identifier"})
        assert [h["path"] for h in found["results"]] == ["vendor/library/lib.py"]


async def test_reads_and_writes_into_a_nested_git_directory_are_refused(server: ServerHandle) -> None:
    hook = server.root / "nested/.git/hooks/pre-commit"
    gitlink = (server.root / "vendor/library/.git").read_bytes()
    async with mcp_client(server) as client:
        err = await call_error(client, "read_source", {"targets": [{"path": "nested/.git/config"}]})
        assert err["code"] == 5001 and "managed by git" in err["message"], err
        err = await call_error(client, "write_source", {"edits": [
            {"path": "nested/.git/hooks/pre-commit", "action": "create", "content": "#!/bin/sh\nexit 0\n"}]})
        assert err["code"] == 5001, err
        err = await call_error(client, "write_source", {"edits": [
            {"path": "vendor/library/.git", "action": "update", "old_text": "gitdir", "new_text": "x"}]})
        assert err["code"] == 5001, err
    assert not hook.exists()
    assert (server.root / "vendor/library/.git").read_bytes() == gitlink
