"""Refactor tools end to end: the real server, the official MCP client, one repository per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import ServerHandle, answer_text, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "app/__init__.py": "",
    "app/models.py": (
        "class User:\n"
        "    def save(self):\n"
        "        return 'user'\n"
        "\n"
        "\n"
        "class Order:\n"
        "    def save(self):\n"
        "        return 'order'\n"
    ),
    "app/service.py": (
        "from app.models import Order, User\n"
        "\n"
        "\n"
        "def store(u: User, o: Order):\n"
        "    # save both\n"
        "    return u.save(), o.save(), User().save()\n"
    ),
    "app/clock.py": "def tick():\n    return 1\n",
    "app/timer.py": "from app.clock import tick\n\n\ndef run():\n    return tick()\n",
    "tests/test_timer.py": "from app.timer import run\n\n\ndef test_run():\n    assert run() == 1\n",
    "web/util.ts": "export const pad = (s: string) => s.padStart(2);\n",
    "web/main.ts": "import { pad } from './util';\nconsole.log(pad('1'));\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("refactor") / "repo", FILES)
    with running_server(repo) as handle:
        yield handle


async def test_refactor_tools_are_listed_with_kinds_and_annotations(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    names = {"refactor_rename", "refactor_move", "refactor_impact", "refactor_inspect", "refactor_apply",
             "refactor_cancel"}
    assert names <= set(tools)
    apply = tools["refactor_apply"].annotations
    assert apply is not None and apply.read_only_hint is False and apply.destructive_hint is True
    rename = tools["refactor_rename"].annotations
    assert rename is not None and rename.read_only_hint is False, "apply: true writes"


async def test_rename_preview_inspect_apply_over_mcp(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        preview = await call(client, "refactor_rename", {"symbol": "app.models.User.save", "new_name": "persist"})
        assert preview["status"] == "ready" and preview["verification_required"] is True
        assert preview["counts"]["high"] == 2 and preview["counts"]["medium"] == 1
        assert {f["path"] for f in preview["affected_files"]} >= {"app/models.py", "app/service.py"}
        assert all(len(f["sha256"]) == 64 for f in preview["affected_files"])
        page = await call(client, "refactor_inspect", {"refactor_id": preview["refactor_id"], "certainty": ["low"],
                                                    "kind": ["code"]})
        assert {i["edit"]["reason"] for i in page["items"]} == {"other_binding"}
        assert page["items"][0]["context"]
        applied = await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
        assert applied["applied_edits"] == 3 and applied["delta"]["files_changed"] == 2
        again = await call_error(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
        assert again["code"] == 4004 and again["details"]["state"] == "applied"
    service = (server.root / "app/service.py").read_text()
    assert service.endswith("return u.persist(), o.save(), User().persist()\n")
    assert "def save(self):\n        return 'order'" in (server.root / "app/models.py").read_text()


async def test_a_symbol_with_a_path_and_no_line_is_that_name_defined_in_that_file(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        # (another test of this module renames User.save: only Order.save is certain to be there)
        one = await call(client, "refactor_rename", {"symbol": "Order.save", "path": "app/models.py",
                                                     "new_name": "keep"})
        assert one["status"] == "ready" and one["symbol"]["qualified_name"] == "app.models.Order.save"
        elsewhere = await call_error(client, "refactor_rename", {"symbol": "tick", "path": "app/timer.py",
                                                                 "new_name": "tock"})
        assert elsewhere["code"] == 3007 and [s["path"] for s in elsewhere["details"]["suggestions"]] == [
            "app/clock.py"]
        impact = await call(client, "refactor_impact", {"target": "tick", "path": "app/clock.py"})
        assert impact["symbol"]["qualified_name"] == "app.clock.tick"
        await call(client, "refactor_cancel", {"refactor_id": one["refactor_id"]})


async def test_apply_refuses_when_a_file_changed_since_the_preview(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        preview = await call(client, "refactor_rename", {"symbol": "app.clock.tick", "new_name": "advance"})
        timer = server.root / "app/timer.py"
        timer.write_text(timer.read_text() + "# edited meanwhile\n")
        before = (server.root / "app/clock.py").read_bytes()
        err = await call_error(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
        assert err["code"] == 5002
        assert [c["path"] for c in err["details"]["changed"]] == ["app/timer.py"]
        assert (server.root / "app/clock.py").read_bytes() == before
        cancelled = await call(client, "refactor_cancel", {"refactor_id": preview["refactor_id"]})
        assert cancelled["cancelled"] is True
        unknown = await call_error(client, "refactor_inspect", {"refactor_id": "rf_unknown"})
        assert unknown["code"] == 4004
        bad = await call_error(client, "refactor_rename", {"symbol": "app.clock.tick", "new_name": "not valid"})
        assert bad["code"] == 4006


async def test_move_and_impact_over_mcp(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        impact = await call(client, "refactor_impact", {"target": "web/util.ts"})
        assert impact["target_kind"] == "file" and impact["importing_files"] == ["web/main.ts"]
        preview = await call(client, "refactor_move", {"from_path": "web/util.ts", "to_path": "web/lib/util.ts"})
        assert preview["operation"] == "move" and preview["counts"]["high"] == 1
        await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
    assert (server.root / "web/main.ts").read_text().startswith("import { pad } from './lib/util';\n")
    assert (server.root / "web/lib/util.ts").is_file()


async def test_impact_names_the_affected_tests(server: ServerHandle) -> None:
    # Testing reads the index inside the facts' own read (one snapshot), for a symbol and for a file.
    async with mcp_client(server) as client:
        for target in ("app.clock.tick", "app/clock.py"):
            impact = await call(client, "refactor_impact", {"target": target})
            assert impact["affected_tests"] == ["tests/test_timer.py"], impact
            assert not impact.get("affected_tests_note"), impact


def test_repo_path_is_real(server: ServerHandle) -> None:
    assert isinstance(server.root, Path) and (server.root / ".git").is_dir()


async def test_plans_and_impacts_over_more_files_than_they_list_count_them_all(tmp_path: Path) -> None:
    # affected_files stops at 500 by path; the text said "in 500 files" for Django's QuerySet.filter (thousands).
    users = {f"pkg/use_{n:03}.py": "from pkg.core import target\n\nVALUE = target()\n" for n in range(502)}
    repo = make_repo(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/core.py": "def target():\n    return 1\n",
                                         **users})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            res = await client.call_tool("refactor_rename", {"symbol": "pkg.core.target", "new_name": "aim"})
            impact = await client.call_tool("refactor_impact", {"target": "pkg.core.target", "limit": 5})
    preview = res.structured_content["result"]
    assert len(preview["affected_files"]) == 100 and preview["affected_files_total"] == 503
    assert " 1005 edits in 503 files [" in answer_text(res)
    # refactor_impact listed every importer, in the record and in the text (Django's gettext_lazy: 96 of them).
    report = impact.structured_content["result"]
    assert len(report["importing_files"]) == 100 and report["importing_files_total"] == 502
    assert "imported by (502): pkg/use_000.py " in answer_text(impact)
    assert "(+482 more; 100 in the record)" in answer_text(impact) and len(answer_text(impact)) < 4000


async def test_columns_are_counted_from_1_as_search_hits_count_them(tmp_path: Path) -> None:
    """``refactor_rename``'s column was 0-based while search hits are 1-based: a column taken from a hit landed one
    character right, past a one-letter name (nothing found), and a preview's edit columns were one less than the
    hits'. A hit's position goes in as it is (argument or ``path:line:col``) and edits come out as hits are."""
    repo = make_repo(tmp_path / "repo", {"calc.py": "def f(x, y):\n    return x + y\n\n\nprint(f(1, 2))\n",
                                         "other.py": "from calc import f\n\n\ndef g():\n    return f(1, 1)\n"})
    with running_server(repo, "--profile", "full") as handle:
        async with mcp_client(handle) as client:
            hits = await call(client, "search", {"query": "y", "syntax": "identifier"})
            first = hits["results"][0]
            assert (first["line"], first["column"]) == (1, 10)
            by_arg = await call(client, "refactor_rename", {"path": "calc.py", "line": 1, "column": first["column"],
                                                            "new_name": "why"})
            by_position = await call(client, "refactor_rename", {"symbol": "calc.py:1:10", "new_name": "why"})
            impact = await call(client, "refactor_impact", {"target": "calc.py:1:5"})  # ``f``
            clash = await call(client, "refactor_rename", {"symbol": "calc.f", "new_name": "g"})
            refused = await call_error(client, "refactor_apply", {"refactor_id": clash["refactor_id"]})
            # A position where nothing is defined is named as the caller gave it, not one column less.
            nowhere = await call_error(client, "refactor_rename", {"path": "calc.py", "line": 2, "column": 5,
                                                                   "new_name": "z"})
            nowhere_too = await call_error(client, "refactor_impact", {"target": "calc.py:2:5"})
    for err in (nowhere, nowhere_too):
        assert err["code"] == 3007 and "'calc.py:2:5'" in err["message"] and err["details"]["symbol"] == \
            "calc.py:2:5", err
    for preview in (by_arg, by_position):
        assert preview["status"] == "ready", preview
        assert {(e["line"], e["column"], e["end_column"]) for e in preview["edits"]} == {(1, 10, 11), (2, 16, 17)}
    assert (5, 7) in {(r["line"], r["column"]) for r in impact["references"]}, impact
    # A collision's position, in the preview and in apply's 4007 alike, counted as a hit's.
    assert refused["code"] == 4007 and clash["collisions"], clash
    assert [(c["path"], c["line"], c["column"]) for c in refused["details"]["collisions"]] == [
        (c["path"], c["line"], c["column"]) for c in clash["collisions"]]
    assert ("other.py", 1, 18) in {(c["path"], c["line"], c["column"]) for c in clash["collisions"]}, clash
