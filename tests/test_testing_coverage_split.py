"""Coverage evidence on a test class the graph selects whole (issue 22): the real server, the official MCP client, a
real git repository and a real coverage run. A class case recorded whole is decided test by test, as a whole file
is; once the test file changed since the recording (its tests may not be the recorded ones) the class stays whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, call, cpl_env, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
    "calc/__init__.py": "",
    "calc/shapes.py": ("class Square:\n"
                       "    def __init__(self, side):\n"
                       "        self.side = side\n"
                       "\n"
                       "    def area(self):\n"
                       "        return self.side * self.side\n"             # 6: Square.area's body
                       "\n\n"
                       "class Circle:\n"
                       "    def __init__(self, r):\n"
                       "        self.r = r\n"
                       "\n"
                       "    def area(self):\n"
                       "        return 3 * self.r * self.r\n"),
    # ``_area`` (decorated, no test) reaches Square.area by name: the graph selects the whole class.
    "tests/test_cls.py": ("from calc.shapes import Circle, Square\n\n\n"
                          "class TestShapes:\n"
                          "    @staticmethod\n"
                          "    def _area(shape):\n"
                          "        return shape.area()\n\n"
                          "    def test_square(self):\n        assert self._area(Square(2)) == 4\n\n"
                          "    def test_circle(self):\n        assert self._area(Circle(1)) == 3\n\n"
                          "    def test_other(self):\n        assert True\n"),
}
ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("split") / "repo", FILES)
    with running_server(repo, "--set", "tests.retry_failed=false", env=cpl_env(ENV)) as handle:
        yield handle


async def _cases(client: Any, changed: str) -> dict[str, str]:
    impact = (await call(client, "inspect_affected_tests", {"changed_files": [changed]}))["impact"]
    return {f"{m['test_file']}::{c['case']}": c.get("source", "graph") for m in impact["matches"]
            for c in m["cases"]}


async def test_a_class_recorded_whole_is_decided_test_by_test(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        assert await _cases(client, "calc/shapes.py:6") == {"tests/test_cls.py::TestShapes": "graph",
                                                            "tests/test_cls.py::TestShapes::test_square": "graph",
                                                            "tests/test_cls.py::TestShapes::test_circle": "graph"}
        run = await call(client, "run_test_targets", {"coverage": True, "wait_sec": 120})
        assert run["state"] == "passed", run
        assert await _cases(client, "calc/shapes.py:6") == {"tests/test_cls.py::TestShapes::test_square": "coverage"}

        # A test added to the class since the recording: no evidence can vouch for the class's tests now.
        await call(client, "write_source", {"edits": [{
            "path": "tests/test_cls.py", "action": "update", "old_text": "    def test_other(self):\n",
            "new_text": "    def test_new(self):\n        assert self._area(Square(1)) == 1\n\n"
                        "    def test_other(self):\n"}]})
        assert "tests/test_cls.py::TestShapes" in await _cases(client, "calc/shapes.py:6")
