"""QA33 #3: ``git_checkout paths`` names only the paths it changed (as ``git checkout -- .`` writes no other), each
with its new sha256 on one line, and says "nothing to restore" when none differed; the record lists the same."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import answer_text, make_repo, mcp_client, running_server, write_files
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio

_FILES = {f"docs/p{n}.md": f"page {n}\n" for n in range(30)} | {"src/a.py": "a = 1\n", "src/b.py": "b = 1\n",
                                                                "run.sh": "echo hi\n"}


def test_restore_returns_only_the_paths_whose_content_or_mode_differed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", _FILES)
    write_files(root, {"src/a.py": "a = 2\n"})
    (root / "docs/p3.md").unlink()
    os.chmod(root / "run.sh", 0o755)
    untouched = (root / "src/b.py").stat().st_mtime_ns
    result = GitService(root).checkout(paths=["."], confirm=True)
    assert result.restored_paths == ["docs/p3.md", "run.sh", "src/a.py"]
    assert (root / "src/b.py").stat().st_mtime_ns == untouched
    assert run_git(root, "status", "--porcelain").decode() == ""
    assert GitService(root).checkout(paths=["."], confirm=True).restored_paths == []


def test_restore_from_a_commit_resets_a_staged_change_the_working_tree_already_undid(tmp_path: Path) -> None:
    # As git checkout HEAD -- a.py: the index entry is HEAD's again; the path differed (in the index), so it is named.
    root = make_repo(tmp_path / "repo", _FILES)
    write_files(root, {"src/a.py": "a = 2\n"})
    run_git(root, "add", "src/a.py")
    write_files(root, {"src/a.py": "a = 1\n"})
    assert GitService(root).checkout("HEAD", paths=["src"], confirm=True).restored_paths == ["src/a.py"]
    assert run_git(root, "status", "--porcelain").decode() == ""


async def test_the_answer_lists_the_changed_file_with_its_sha_or_nothing_to_restore(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", _FILES)
    write_files(root, {"src/a.py": "a = 2\n"})
    with running_server(root) as server:
        async with mcp_client(server) as client:
            result = await client.call_tool("git_checkout", {"paths": ["."], "confirm": True})
            text = answer_text(result)
            record = (result.structured_content or {})["result"]
            again = answer_text(await client.call_tool("git_checkout", {"paths": ["src"], "confirm": True}))
            switched = answer_text(await client.call_tool("git_checkout", {"ref": "main"}))
    lines = text.splitlines()
    assert [line for line in lines if "restored" in line or "a.py" in line] == [
        f"restored src/a.py {_sha(root / 'src/a.py')}"], text
    assert "docs/" not in text and "more" not in text and len(text) < 200, text
    assert record["restored_paths"] == ["src/a.py"]
    assert "nothing to restore" in again.splitlines() and "restored" not in again.replace("nothing to restore", "")
    assert "nothing to restore" not in switched


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
