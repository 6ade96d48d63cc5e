"""QA46 F1: ``git_status`` listed every file of an untracked directory (300 generated files: 10 KB of text, 1,500:
three calls and still cut) where ``git status`` prints ``? build_out/``. Untracked files are now folded as git's
default ``-unormal`` folds them, checked against the git CLI on many layouts and pathspecs; ``untracked: "all"``
lists every file as ``-uall``, and the folded ``dir/`` entry is a path ``git_stage`` takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.git import GitService
from tests.builders import answer_text, call, call_error, git, make_repo, mcp_client, running_server, write_files

_TRACKED = {"t/a.py": "a\n", "t/deep/b.py": "b\n", "gone/old.py": "o\n", ".gitignore": "*.log\n", "top.py": "x\n"}
_SPECS = ["", "u", "u/v", "u/v/w/y.py", "u/*", "*.py", "t", "t/sub", "mix/b.py", "gone", "s", "n*", "u/v/w/"]


def _layout(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", _TRACKED)
    write_files(repo, {
        "u/v/w/y.py": "y\n", "u/z.txt": "z\n",           # nested untracked directories: one `u/`
        "t/sub/x.py": "x\n", "t/new.py": "n\n",          # an untracked directory inside a tracked one
        "t/deep/more/c.py": "c\n",
        "ig/a.log": "i\n",                               # only ignored files: git shows nothing
        "mix/a.log": "i\n", "mix/b.py": "b\n",           # ignored and untracked: `mix/`
        "gone/new.py": "g\n",                            # every tracked file deleted, the index still names it
        "s/staged.py": "s\n", "s/loose.py": "l\n",       # a staged new file makes `s` tracked
        "name with space/f.py": "f\n",
    })
    (repo / "gone/old.py").unlink()
    (repo / "e/f").mkdir(parents=True)                   # empty directories: git shows nothing
    git(repo, "add", "s/staged.py")
    return repo


def _git_untracked(repo: Path, spec: str, mode: str) -> list[str]:
    out = git(repo, "-c", "core.quotepath=false", "status", "--porcelain=v2", "-z", f"--untracked-files={mode}",
              *(["--", spec] if spec else [])).stdout
    return sorted(rec[2:] for rec in out.split("\0") if rec.startswith("? "))


@pytest.mark.parametrize("spec", _SPECS)
def test_untracked_directories_fold_as_git_status_does(tmp_path: Path, spec: str) -> None:
    repo = _layout(tmp_path)
    service = GitService(repo)
    specs = [spec] if spec else []
    normal = service.status(specs, untracked="normal")
    assert normal.untracked == _git_untracked(repo, spec, "normal")
    assert normal.untracked_total == len(normal.untracked)
    assert service.status(specs, untracked="all").untracked == _git_untracked(repo, spec, "all")


def test_folding_follows_git_after_libgit2_answers(tmp_path: Path) -> None:
    """A ``.gitattributes`` makes the fast scan step aside for libgit2; the folding must not depend on it."""
    repo = _layout(tmp_path)
    write_files(repo, {".gitattributes": "*.bin binary\n"})
    git(repo, "add", ".gitattributes")
    assert GitService(repo).status(untracked="normal").untracked == _git_untracked(repo, "", "normal")


@pytest.mark.anyio
async def test_a_generated_directory_is_one_line_and_staging_it_stages_its_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": "x = 1\n"})
    write_files(repo, {f"build_out/generated_file_{i}.py": f"x={i}\n" for i in range(300)})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            folded = await client.call_tool("git_status", {})
            every = await call(client, "git_status", {"untracked": "all", "limit": 10_000})
            staged = await call(client, "git_stage", {"paths": ["build_out/"]})
            after = await call(client, "git_status", {})
    text = answer_text(folded)
    assert "?? build_out/" in text and "generated_file" not in text and len(text.encode()) < 200, text
    assert len(every["untracked"]) + every.get("untracked_total", 0) >= 300
    assert staged.get("changed_total", len(staged["changed"])) == 300
    assert "untracked" not in after
    assert len(git(repo, "diff", "--cached", "--name-only").stdout.split()) == 300


@pytest.mark.anyio
async def test_bad_untracked_mode_is_a_typed_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "a\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            err = await call_error(client, "git_status", {"untracked": "no"})
    assert err["code"] == 1003 and "untracked" in str(err), err
