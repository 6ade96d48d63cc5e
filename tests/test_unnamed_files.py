"""A file whose name is not valid UTF-8 cannot be a path in a JSON answer; the index says it left it out.

Before, such a file was missing from ``list_files`` and ``search`` with no word anywhere (``rg`` searches it).
Now every full walk, in-process or in the walking child, hands its names back, shown with ``\\xNN`` escapes as
git's tools show them, and ``describe``, ``/status`` and ``cpl status`` name them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.core.layout import RepoLayout
from codeplane.index.walk_apart import delta_apart
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import walk_universe
from tests.builders import answer_text, cpl_json, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


def _repo(root: Path) -> Path:
    repo = make_repo(root, {"ok.py": "def fine():\n    return 1\n"})
    with open(os.path.join(os.fsencode(repo), b"bad\xff.py"), "wb") as handle:
        handle.write(b"def hidden():\n    return 2\n")
    os.mkdir(os.path.join(os.fsencode(repo), b"dir\xfe"))
    with open(os.path.join(os.fsencode(repo), b"dir\xfe", b"inner.py"), "wb") as handle:
        handle.write(b"X = 1\n")
    return repo


def test_the_walk_hands_back_what_it_left_out(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    unnamed: list[str] = []
    walked = [e.path for e in walk_universe(repo, IgnoreRules.load(repo), unnamed)]
    assert "ok.py" in walked and not any("inner.py" in p for p in walked)
    assert sorted(unnamed) == ["bad\\xff.py", "dir\\xfe"]


async def test_describe_status_and_the_walking_child_name_the_files_left_out(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            described = answer_text(await client.call_tool("describe", {}))
        status = cpl_json("status", cwd=repo)
    assert "2 names not valid UTF-8 left out: bad\\xff.py, dir\\xfe" in described, described
    assert (status["index"]["unnamed_files"], status["index"]["unnamed_examples"]) == (
        2, ["bad\\xff.py", "dir\\xfe"]), status["index"]
    delta = delta_apart(repo, IgnoreRules.load(repo), RepoLayout(repo).index_db, 0)
    assert delta is not None and delta.unnamed == ("bad\\xff.py", "dir\\xfe")
