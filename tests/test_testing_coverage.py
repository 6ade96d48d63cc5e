"""Coverage evidence end to end (issue 22): the real server, the official MCP client, a real git repository with a
real pytest project. A coverage run records which definitions each test ran; later selections keep the tests
that ran a changed function, leave out those the graph reaches but that never ran it, and fall back to the
graph where the evidence is stale; a damaged ``coverage.db`` is dropped and recorded again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.stores import sqlite_problem
from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    cpl_env,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio

OPS = ("def scale(x):\n"                                  # 1
       "    return x * 10\n"                              # 2
       "\n\n"
       "def total(items, scaled=False):\n"                # 5
       "    if scaled:\n"                                 # 6
       "        return sum(scale(i) for i in items)\n"    # 7
       "    return sum(items)\n"                          # 8
       "\n\n"
       "def clamp(x):\n"                                  # 11
       "    if x < 0:\n"                                  # 12
       "        return 0\n"                               # 13
       "    return x\n")                                  # 14
SHAPES = ("class Square:\n"                               # 1
          "    def __init__(self, side):\n"               # 2
          "        self.side = side\n"                    # 3
          "\n"                                            # 4
          "    def area(self):\n"                         # 5
          "        return self.side * self.side\n"        # 6
          "\n\n"
          "class Circle:\n"                               # 9
          "    def __init__(self, r):\n"                  # 10
          "        self.r = r\n"                          # 11
          "\n"                                            # 12
          "    def area(self):\n"                         # 13
          "        return 3 * self.r * self.r\n"          # 14
          "\n\n"
          "SIDES = 4\n")                                  # 17
FILES = {
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
    "calc/__init__.py": "",
    "calc/ops.py": OPS,
    "calc/shapes.py": SHAPES,
    # test_second finds compute's result cached by test_first: run alone, it would run compute itself.
    "calc/cache.py": ("_CACHE = {}\n\n\ndef compute(x):\n    return x * 2\n\n\n"
                      "def cached(x):\n    if x not in _CACHE:\n        _CACHE[x] = compute(x)\n"
                      "    return _CACHE[x]\n"),
    "tests/test_cache.py": ("from calc.cache import cached\n\n\ndef test_first():\n    assert cached(1) == 2\n\n\n"
                            "def test_second():\n    assert cached(1) == 2\n"),
    # packaging's _get_musl_version: probe() is cached, so test_b finds probe's result made by test_a and never
    # runs Reader.kind; the graph reaches probe through ``open_reader(path).kind``, a use by name (low).
    "calc/elf.py": "class Reader:\n    def __init__(self, path):\n        self.path = path\n\n"
                   "    @property\n    def kind(self):\n        return 'elf'\n",
    "calc/probe.py": ("import functools\n\nfrom calc.elf import Reader\n\n\n@functools.lru_cache\n"
                      "def probe(path):\n    return open_reader(path).kind\n\n\n"
                      "def open_reader(path):\n    return Reader(path)\n\n\ndef tags():\n    return [probe('x')]\n"),
    "tests/test_probe.py": ("from calc.probe import tags\n\n\ndef test_a():\n    assert tags() == ['elf']\n\n\n"
                            "def test_b():\n    assert tags() == ['elf']\n"),
    # make() runs when calc.late is first imported, which create() does inside test_one; test_two finds it
    # imported already, so its evidence shows only create() (a first import runs module code once a process).
    "calc/base.py": "def make():\n    return 1\n",
    "calc/late.py": "from calc.base import make\n\nVALUE = make()\n",
    "calc/factory.py": "def create():\n    from calc import late\n    return late.VALUE\n",
    "tests/test_factory.py": ("from calc.factory import create\n\n\ndef test_one():\n    assert create() == 1\n\n\n"
                              "def test_two():\n    assert create() == 1\n"),
    # Code ran in the process it starts, unseen: its evidence cannot show that it did not run Square.area.
    "tests/test_spawn.py": ("import subprocess\nimport sys\n\nimport pytest\n\nfrom calc.shapes import Circle\n\n\n"
                            "@pytest.mark.parametrize('shape', [Circle(2)])\ndef test_spawned(shape):\n"
                            "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
                            "    assert shape.area() == 12\n"),
    "tests/test_total.py": ("from calc.ops import clamp, total\n\n\n"
                            "def test_plain():\n    assert total([1, 2]) == 3\n\n\n"
                            "def test_scaled():\n    assert total([1], scaled=True) == 10\n\n\n"
                            "def test_clamp():\n    assert clamp(5) == 5\n"),
    # The graph cannot tell which area() a shape parameter calls, so it selects test_circle for a change to
    # Square.area too; the evidence shows test_circle never ran it.
    "tests/test_shapes.py": ("import pytest\n\nfrom calc.shapes import Circle, Square\n\n\n"
                             "@pytest.mark.parametrize('shape', [Circle(1)])\n"
                             "def test_circle(shape):\n    assert shape.area() == 3\n\n\n"
                             "def test_square():\n    assert Square(2).area() == 4\n"),
}
ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("coverage") / "repo", FILES)
    with running_server(repo, "--set", "tests.retry_failed=false", env=cpl_env(ENV)) as handle:
        yield handle


async def _impact(client: Any, changed: list[str]) -> dict[str, Any]:
    impact: dict[str, Any] = (await call(client, "inspect_affected_tests", {"changed_files": changed}))["impact"]
    return impact


def _cases(impact: dict[str, Any]) -> dict[str, str]:
    """``file::case`` → where its selection came from (``graph`` or ``coverage``)."""
    return {f"{m['test_file']}::{c['case']}": c.get("source", "graph") for m in impact["matches"] for c in m["cases"]}


async def _edit(client: Any, path: str, old: str, new: str) -> dict[str, Any]:
    answer: dict[str, Any] = await call(client, "write_source", {"edits": [
        {"path": path, "action": "update", "old_text": old, "new_text": new}]})
    return answer


async def _record(client: Any) -> dict[str, Any]:
    run: dict[str, Any] = await call(client, "run_test_targets", {"coverage": True, "wait_sec": 120})
    assert run["state"] == "passed", run
    return run


async def test_evidence_drops_a_test_the_graph_reaches_but_that_never_ran_the_change(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        before = await _impact(client, ["calc/shapes.py:6"])
        assert "coverage" not in before, "no evidence recorded yet: the graph alone"
        assert _cases(before) == {"tests/test_shapes.py::test_circle": "graph",
                                  "tests/test_shapes.py::test_square": "graph",
                                  "tests/test_spawn.py::test_spawned": "graph"}
        res = await client.call_tool("run_test_targets", {"coverage": True, "wait_sec": 120})
        run = res.structured_content["result"]
        assert run["state"] == "passed" and run["coverage"]["tests"] == 12 and run["coverage"]["files"] >= 5
        assert "coverage: evidence of 12 test(s) stored (1 untrusted)" in answer_text(res)

        after = await _impact(client, ["calc/shapes.py:6"])
        assert _cases(after) == {"tests/test_shapes.py::test_square": "coverage",
                                 "tests/test_spawn.py::test_spawned": "graph"}
        coverage = after["coverage"]
        assert coverage["narrowed"] and coverage["dropped"] == ["tests/test_shapes.py::test_circle"]
        assert coverage["confirmed"] == 1 and coverage["stale_tests"] == 1 and "stale" not in coverage
        [square] = after["matches"][0]["cases"]
        assert square["chain"] == ["tests/test_shapes.py::test_square",
                                   f"calc.shapes.Square.area (changed; ran in coverage run {run['run_id']})"]

        # write_source's delta carries the sharpened selection, and so do discover and run.
        delta = (await _edit(client, "calc/shapes.py", "return self.side * self.side", "return self.side ** 2"))
        try:
            assert delta["delta"]["tests_affected"] == ["tests/test_shapes.py::test_square",
                                                        "tests/test_spawn.py::test_spawned"]
            found = await call(client, "discover_test_targets", {"affected_by": ["calc/shapes.py:6"]})
            assert [(t["target_id"], t["cases"]) for t in found["targets"]] == [
                ("tests/test_shapes.py", ["test_square"]), ("tests/test_spawn.py", ["test_spawned"])]
            # A coverage run of the change reports how much of the changed code ran (§11.9.5).
            res = await client.call_tool("run_test_targets", {"affected_by": ["calc/shapes.py:6"], "coverage": True,
                                                              "wait_sec": 120})
            sharp = res.structured_content["result"]
            assert sharp["state"] == "passed" and sharp["counts"]["total"] == 2
            assert sharp["coverage"]["changed"] == [{"path": "calc/shapes.py", "name": "calc.shapes.Square.area",
                                                     "ran": True, "lines": 1, "lines_run": 1}]
            assert sharp["coverage"]["changed_run"] == 1 and sharp["coverage"]["lines_run"] == 1
            assert "changed code: 1/1 definition(s) ran, 1/1 changed line(s)" in answer_text(res)
        finally:
            await _edit(client, "calc/shapes.py", "return self.side ** 2", "return self.side * self.side")

        # Changed lines the run did not reach are named.
        res = await client.call_tool("run_test_targets", {"affected_by": ["calc/ops.py:12-14"], "coverage": True,
                                                          "wait_sec": 120})
        report = res.structured_content["result"]["coverage"]
        assert report["changed"] == [{"path": "calc/ops.py", "name": "calc.ops.clamp", "ran": True, "lines": 3,
                                      "lines_run": 2, "missed": [13]}]
        assert "calc.ops.clamp: 2/3 lines, not run: 13" in answer_text(res)


async def test_stale_evidence_is_reported_and_the_graph_decides(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await _record(client)
        # A function test_circle ran changed since the recording: its evidence no longer vouches for it.
        await _edit(client, "calc/shapes.py", "return 3 * self.r * self.r", "return 3 * self.r ** 2")
        try:
            impact = await _impact(client, ["calc/shapes.py:6"])
            assert _cases(impact) == {"tests/test_shapes.py::test_circle": "graph",
                                      "tests/test_shapes.py::test_square": "coverage",
                                      "tests/test_spawn.py::test_spawned": "graph"}
            assert impact["coverage"]["stale_tests"] == 2 and "dropped" not in impact["coverage"]
        finally:
            await _edit(client, "calc/shapes.py", "return 3 * self.r ** 2", "return 3 * self.r * self.r")
        # Code that runs at import changed since: every test of that recording falls back to the graph.
        await _edit(client, "calc/shapes.py", "SIDES = 4", "SIDES = 5")
        try:
            impact = await _impact(client, ["calc/shapes.py:6"])
            assert _cases(impact) == {"tests/test_shapes.py::test_circle": "graph",
                                      "tests/test_shapes.py::test_square": "coverage",
                                      "tests/test_spawn.py::test_spawned": "graph"}
            assert impact["coverage"]["stale"] == [
                "calc/shapes.py: code that runs at import changed since it was recorded"]
            # A module-level change itself: evidence never leaves anything out.
            blunt = await _impact(client, ["calc/shapes.py:17"])
            assert not blunt["coverage"]["narrowed"]
            assert blunt["coverage"]["note"].startswith("calc/shapes.py:17: runs at import")
        finally:
            await _edit(client, "calc/shapes.py", "SIDES = 5", "SIDES = 4")
        # Recorded again: fresh, and test_circle is left out again.
        await _record(client)
        impact = await _impact(client, ["calc/shapes.py:6"])
        assert impact["coverage"]["dropped"] == ["tests/test_shapes.py::test_circle"]


async def test_a_test_after_changed_code_ran_in_its_process_stays_selected(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await _record(client)
        impact = await _impact(client, ["calc/cache.py:5"])
        assert _cases(impact) == {"tests/test_cache.py::test_first": "coverage",
                                  "tests/test_cache.py::test_second": "graph"}
        assert impact["coverage"]["after_change"] == 1 and "dropped" not in impact["coverage"]


async def test_a_test_after_a_cache_on_a_guessed_path_filled_in_its_process_stays_selected(
        server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await _record(client)
        impact = await _impact(client, ["calc/elf.py:7"])
        assert _cases(impact) == {"tests/test_probe.py::test_a": "coverage", "tests/test_probe.py::test_b": "graph"}
        assert "dropped" not in impact["coverage"], impact["coverage"]


async def test_a_test_importing_again_what_ran_the_change_at_import_stays_selected(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await _record(client)
        impact = await _impact(client, ["calc/base.py:2"])
        assert "tests/test_factory.py" in {m["test_file"] for m in impact["matches"]}
        assert not [d for d in impact["coverage"].get("dropped", []) if d.startswith("tests/test_factory.py")]


async def test_a_new_test_without_evidence_stays_selected(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        await _record(client)
        await call(client, "write_source", {"edits": [{
            "path": "tests/test_new.py", "action": "create",
            "content": "from calc.shapes import Square\n\n\ndef test_new():\n    assert Square(1).area() == 1\n"}]})
        try:
            impact = await _impact(client, ["calc/shapes.py:6"])
            assert _cases(impact)["tests/test_new.py::test_new"] == "graph"
            assert impact["coverage"]["unrecorded"] == 1
        finally:
            await call(client, "write_source", {"edits": [{"path": "tests/test_new.py", "action": "delete"}]})


async def test_bad_inputs_get_typed_errors(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        err = await call_error(client, "run_test_targets", {"coverage": "maybe"})
        assert err["error"] == "INVALID_ARGUMENTS"
        err = await call_error(client, "run_test_targets", {"coverage": True, "targets": ["tests/test_nope.py"]})
        assert err["error"] == "TEST_TARGET_NOT_FOUND"
        err = await call_error(client, "run_test_targets", {"coverage": True, "targets": ["tests/test_shapes.py"],
                                                            "affected_by": ["calc/shapes.py:6"]})
        assert err["error"] == "INVALID_ARGUMENTS"


async def test_a_damaged_coverage_db_is_dropped_reported_and_recorded_again(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo, "--set", "tests.retry_failed=false", env=cpl_env(ENV)) as first:
        async with mcp_client(first) as client:
            await _record(client)
    database = repo / ".codeplane" / "coverage.db"
    assert database.stat().st_size > 0 and sqlite_problem(database) is None, "healthy as written"
    database.write_bytes(b"not a database " * 400)
    with running_server(repo, "--set", "tests.retry_failed=false", env=cpl_env(ENV)) as second:
        second.wait_serving()
        warnings = second.get("/status").json()["storage"]["warnings"]
        assert any(w.startswith("coverage.db rebuilt:") for w in warnings), warnings
        async with mcp_client(second) as client:
            assert "coverage" not in await _impact(client, ["calc/shapes.py:6"]), "nothing recorded: the graph alone"
            await _record(client)
            assert (await _impact(client, ["calc/shapes.py:6"]))["coverage"]["dropped"] == [
                "tests/test_shapes.py::test_circle"]
