"""QA35 F7: a ``git_submodule update`` that clones and checks out a submodule is progress, not a no-op: its effect
names the submodule path and the answer carries no ``no_op``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import envelope, make_repo, mcp_client, running_server
from tests.git_oracle import run_git

pytestmark = pytest.mark.anyio

_FILE_OK = {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "protocol.file.allow", "GIT_CONFIG_VALUE_0": "always"}


async def test_update_that_clones_a_submodule_reports_it_changed(tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "subsrc", {"s.txt": "s1\n"})
    sup = make_repo(tmp_path / "sup", {"top.txt": "top\n"})
    run_git(sup, "submodule", "add", "-q", str(sub), "libs/sub", env=_FILE_OK)
    run_git(sup, "commit", "-qm", "add sub")
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(sup), str(clone))
    assert not any((clone / "libs/sub").iterdir())
    with running_server(clone, "--profile", "full", env=_FILE_OK) as server:
        async with mcp_client(server) as client:
            body = envelope(await client.call_tool("git_submodule", {"action": "update"}))
            again = envelope(await client.call_tool("git_submodule", {"action": "update"}))
    assert (clone / "libs/sub/s.txt").read_text() == "s1\n", body
    assert not body["meta"].get("no_op"), body["meta"]
    assert [p["path"] for p in body["result"]["effect"]["paths"]] == ["libs/sub"], body["result"]["effect"]
    assert again["meta"].get("no_op"), again["meta"]  # nothing left to do the second time
