"""QA52 F8: write answers said one thing twice. A dry run printed every line of a deleted file and a bare move's
``rename from/to`` under its ``R`` line; git_commit named the new commit twice (``[main <id>]`` and ``HEAD
<old>..<id>``); a stash push said the stash three ways; refactor_apply of a file move gave the moved file two
lines. And (a side observation) refactor_impact of a file named only the first of two names imported on one line.
Through the real server with the official client; the records keep everything."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {"pkg/__init__.py": "", "pkg/util.py": "def helper(x):\n    return x * 2\n",
         "pkg/app.py": "from pkg.util import helper\n\n\ndef main():\n    return helper(1)\n",
         "pkg/big.py": "".join(f"X{i} = {i}\n" for i in range(30)), "pkg/old.py": "Y = 1\n",
         "pkg/compat.py": "PY_A = True\nPY_B = False\n", "pkg/use.py": "from pkg.compat import PY_A, PY_B\n"}


async def test_write_and_git_answers_say_each_thing_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo, "--profile", "full") as server:
        async with mcp_client(server) as client:
            dry = await client.call_tool("write_source", {"dry_run": True, "edits": [
                {"path": "pkg/big.py", "action": "delete"}, {"path": "pkg/old.py", "to": "pkg/new.py"},
                {"path": "pkg/util.py", "old_text": "x * 2", "new_text": "x * 3"}]})
            text, record = answer_text(dry), envelope(dry)["result"]
            lines = text.splitlines()
            assert lines[1].startswith("D pkg/big.py now ") and lines[2].startswith("R pkg/old.py -> pkg/new.py now ")
            # The deleted file's lines and the rename lines are the record's; the update's diff is shown.
            assert "X0 = 0" not in text and "rename" not in text and "/dev/null" not in text, text
            assert lines[4:] == ["--- a/pkg/util.py", "+++ b/pkg/util.py", "@@ -1,2 +1,2 @@", " def helper(x):",
                                 "-    return x * 2", "+    return x * 3"], text
            assert "-X29 = 29" in record["delta"]["diff"] and "rename from pkg/old.py" in record["delta"]["diff"]

            (repo / "pkg" / "util.py").write_text("def helper(x):\n    return x * 3\n")
            await client.call_tool("git_stage", {"paths": ["pkg/util.py"]})
            committed = await client.call_tool("git_commit", {"message": "triple"})
            text, record = answer_text(committed), envelope(committed)["result"]
            assert text.splitlines()[0] == f"[main {record['oid'][:12]}] triple", text
            assert text.count(record["oid"][:12]) == 1 and "HEAD" not in text, text

            (repo / "pkg" / "app.py").write_text("X = 2\n")
            pushed = await client.call_tool("git_stash", {"action": "push", "message": "wip"})
            text = answer_text(pushed)
            assert text.splitlines()[0].startswith("stash@{0} ") and text.splitlines()[0].endswith("On main: wip")
            assert "refs/stash" not in text and "stash list" not in text, text

            impact = answer_text(await client.call_tool("refactor_impact", {"target": "pkg/compat.py"}))
            assert "1:24,30:PY_A, PY_B" in impact.splitlines(), impact

            move = await client.call_tool("refactor_move", {"from_path": "pkg/old.py", "to_path": "pkg/older.py"})
            applied = await client.call_tool("refactor_apply", {"refactor_id": envelope(move)["result"]["refactor_id"]})
            text, record = answer_text(applied), envelope(applied)["result"]
    moved = [line for line in text.splitlines() if "pkg/older.py" in line]
    assert moved == [f"R pkg/old.py -> pkg/older.py {record['files'][0]['sha256'][:12]}"], text
