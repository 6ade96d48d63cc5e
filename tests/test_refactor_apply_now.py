"""``refactor_rename``/``refactor_move`` with ``apply: true``: one call when nothing needs a judgment, the
preview (not applied, with the reason) otherwise. The real server and the official MCP client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.hashing import sha256_bytes
from tests.builders import ServerHandle, answer_text, call, call_error, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "app/__init__.py": "",
    "app/clock.py": "def tick():\n    return 1\n",
    "app/timer.py": "from app.clock import tick\n\n\ndef run():\n    return tick()\n",
    "app/models.py": ("class User:\n    def save(self):\n        return 'user'\n\n\n"
                      "class Order:\n    def save(self):\n        return 'order'\n"),
    "app/service.py": ("from app.models import Order, User\n\n\n"
                       "def store(u: User, o: Order, x):\n    return u.save(), o.save(), x.save()\n"),
    "app/one.py": "def twin():\n    return 1\n",
    "app/two.py": "def twin():\n    return 2\n",
    "web/util.ts": "export const pad = (s: string) => s.padStart(2);\n",
    "web/main.ts": "import { pad } from './util';\nconsole.log(pad('1'));\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("apply_now") / "repo", FILES)
    with running_server(repo) as handle:
        yield handle


def _tree(root: Path) -> dict[str, bytes]:
    return {p: (root / p).read_bytes() for p in FILES if (root / p).exists()}


async def _ledger(client: Any) -> tuple[int, dict[str, Any]]:
    """The task's mutation count and its last operation (none yet: ``{}``)."""
    task = await call(client, "get_task", {"operations": 1})
    return task["task"]["counters"].get("mutation_count", 0), (task.get("operations") or [{}])[-1]


async def test_a_rename_whose_every_edit_is_certain_is_applied_in_the_same_call(server: ServerHandle) -> None:
    root = server.root
    async with mcp_client(server) as client:
        before, _ = await _ledger(client)
        res = await client.call_tool("refactor_rename", {"symbol": "app.clock.tick", "new_name": "advance",
                                                         "apply": True})
        assert not res.is_error, answer_text(res)
        record, text = envelope(res)["result"], answer_text(res)
        applied = record["applied"]
        assert applied["applied_edits"] == 3 and "not_applied" not in record
        assert {f["path"] for f in applied["files"]} == {"app/clock.py", "app/timer.py"}
        assert "edits" not in record and "affected_files" not in record, "the preview's edits are written"
        # The apply's answer, as refactor_apply gives it (the symbol and new name are the call's own
        # arguments, not said again); every new hash as its accepted 12-digit prefix.
        assert text.startswith(f"applied 3 edits [{record['refactor_id']} c1]\n"), text
        assert "app.clock.tick" not in text and "advance" not in text, text
        for f in applied["files"]:
            assert f["sha256"] == sha256_bytes((root / f["path"]).read_bytes())
            assert f"\n{f['path']} {f['sha256'][:12]}" in text
        count, last = await _ledger(client)
        assert count == before + 1 and last["op_type"] == "refactor_rename" and last["kind"] == "mutation"
        assert last["mutation_fingerprint"] and last["changed_paths"] == ["app/clock.py", "app/timer.py"], last
        again = await call_error(client, "refactor_apply", {"refactor_id": record["refactor_id"]})
        assert again["code"] == 4004 and again["details"]["state"] == "applied"
    timer = (root / "app/timer.py").read_text()
    assert timer == "from app.clock import advance\n\n\ndef run():\n    return advance()\n"
    assert (root / "app/clock.py").read_text().startswith("def advance():")


async def test_an_uncertain_edit_leaves_the_preview_pending_with_the_reason(server: ServerHandle) -> None:
    root = server.root
    before = _tree(root)
    async with mcp_client(server) as client:
        res = await client.call_tool("refactor_rename", {"symbol": "app.models.User.save", "new_name": "persist",
                                                         "apply": True})
        record, text = envelope(res)["result"], answer_text(res)
        assert "applied" not in record and record["counts"]["low"] >= 1
        assert record["not_applied"].startswith(f"{record['counts']['medium']} medium, " if record["counts"]["medium"]
                                                else f"{record['counts']['low']} low")
        assert text.endswith(f"\nnot applied: {record['not_applied']}"), text
        assert text.startswith("rename method app.models.User.save"), "the preview, as without apply"
        assert _tree(root) == before, "nothing written"
        applied = await call(client, "refactor_apply", {"refactor_id": record["refactor_id"]})
        assert applied["applied_edits"] == record["matches"], "the plan stayed pending for refactor_apply"
    assert "u.persist(), o.save(), x.save()" in (root / "app/service.py").read_text()


async def test_an_ambiguous_target_is_not_applied(server: ServerHandle) -> None:
    before = _tree(server.root)
    async with mcp_client(server) as client:
        result = await client.call_tool("refactor_rename", {"symbol": "twin", "new_name": "pair", "apply": True})
        record, text = envelope(result)["result"], answer_text(result)
        assert record["status"] == "needs_decision" and "applied" not in record
        # Each candidate a line the next call can act on (its id and where it is), not the record as JSON.
        for candidate in record["candidates"]:
            sym = candidate["symbol"]
            assert f"  {candidate['candidate_id']} {sym['kind']} {sym['qualified_name']} #{sym['def_uid']} " \
                   f"{sym['path']}:{sym['line']}" in text, text
        assert not text.startswith("{") and record["refactor_id"] in text, text
        assert record["not_applied"] == f"{len(record['candidates'])} definitions match: choose a candidate_id"
        await call(client, "refactor_cancel", {"refactor_id": record["refactor_id"]})
    assert _tree(server.root) == before


async def test_a_certain_file_move_is_applied_in_the_same_call(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        record = await call(client, "refactor_move", {"from_path": "web/util.ts", "to_path": "web/lib/util.ts",
                                                      "apply": True})
    assert record["applied"]["moves"] == [{"from_path": "web/util.ts", "to_path": "web/lib/util.ts"}]
    assert (server.root / "web/main.ts").read_text().startswith("import { pad } from './lib/util';\n")
    assert (server.root / "web/lib/util.ts").is_file() and not (server.root / "web/util.ts").exists()


async def test_without_apply_nothing_changes_and_bad_input_is_typed(server: ServerHandle) -> None:
    before = _tree(server.root)
    async with mcp_client(server) as client:
        preview = await call(client, "refactor_rename", {"symbol": "app.one.twin", "new_name": "single"})
        assert "applied" not in preview and "not_applied" not in preview
        await call(client, "refactor_cancel", {"refactor_id": preview["refactor_id"]})
        bad = await call_error(client, "refactor_rename", {"symbol": "app.one.twin", "new_name": "x", "apply": "maybe"})
        assert bad["code"] == 1003
        invalid = await call_error(client, "refactor_rename", {"symbol": "app.one.twin", "new_name": "not valid",
                                                               "apply": True})
        assert invalid["code"] == 4006
        missing = await call_error(client, "refactor_rename", {"symbol": "app.nothing.here", "new_name": "y",
                                                               "apply": True})
        assert missing["code"] == 3007
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert _tree(server.root) == before
    annotations = tools["refactor_rename"].annotations
    assert annotations is not None and annotations.read_only_hint is False, "it may write: clients must know"


async def test_the_read_only_profile_does_not_serve_a_rename_that_may_write(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "def f():\n    return 1\n"})
    with running_server(repo, "--profile", "read_only") as handle:
        async with mcp_client(handle) as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            refused = await call_error(client, "refactor_rename", {"symbol": "a.f", "new_name": "g", "apply": True})
    assert "refactor_rename" not in listed and refused["code"] == 1006
    assert (repo / "a.py").read_text() == "def f():\n    return 1\n"
