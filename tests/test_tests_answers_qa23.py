"""What ``run_test_targets`` answers through the real server and the official MCP client (QA23): an interrupted
file is an error, a deterministic failure is not "flaky", a flaky case keeps its first failure, XPASS is counted,
and a module ``--doctest-modules`` collects examples from is a target."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, answer_text, call, cpl_env, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    base = tmp_path_factory.mktemp("qa23")
    marker = base / "flaky-marker"
    repo = make_repo(base / "repo", {
        "pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"--doctest-modules\"\n",
        "lib/__init__.py": "",
        "lib/mathx.py": 'def double(x):\n    """\n    >>> double(3)\n    7\n    """\n    return 2 * x\n',
        "tests/test_kbd.py": ("def test_before():\n    pass\n\ndef test_kbd():\n    raise KeyboardInterrupt\n\n"
                              "def test_after():\n    pass\n"),
        "tests/test_cache.py": ("_registry = {}\n\ndef register(name):\n    if name not in _registry:\n"
                                "        _registry[name] = {'name': name}\n        return None\n"
                                "    return _registry[name]\n\n"
                                "def test_register_returns_entry():\n"
                                "    assert register('x') == {'name': 'x'}, 'registry returned nothing'\n"),
        "tests/test_flaky.py": ("from pathlib import Path\n\n"
                                f"MARKER = Path({str(marker)!r})\n\n"
                                "def test_flaky():\n    if not MARKER.exists():\n        MARKER.write_text('seen')\n"
                                "        raise AssertionError('first attempt fails')\n"),
        "tests/test_marks.py": ("import pytest\n\n@pytest.mark.xfail(reason='lenient')\n"
                                "def test_xpass():\n    pass\n"),
    })
    with running_server(repo, env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as handle:
        yield handle


async def _run(server: ServerHandle, targets: list[str]) -> tuple[dict[str, Any], str]:
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"targets": targets, "wait_sec": 120})
    assert not res.is_error, envelope(res)
    return envelope(res)["result"], answer_text(res)


async def test_keyboard_interrupt_in_a_test_is_an_error_not_a_pass(server: ServerHandle) -> None:
    result, text = await _run(server, ["tests/test_kbd.py"])
    assert result["state"] == "failed", text
    assert result["target_outcomes"] == {"error": 1}, text
    assert "interrupted by KeyboardInterrupt while running tests/test_kbd.py::test_kbd" in text, text
    assert "not run (1): test_after" in text, text


async def test_a_deterministic_failure_is_failed_with_its_message_not_flaky(server: ServerHandle) -> None:
    result, text = await _run(server, ["tests/test_cache.py"])
    assert result["state"] == "failed" and not result.get("flaky"), text
    assert "registry returned nothing" in text, text


async def test_a_flaky_case_shows_how_it_first_failed(server: ServerHandle) -> None:
    result, text = await _run(server, ["tests/test_flaky.py"])
    assert result["target_outcomes"] == {"flaky": 1}, text
    assert "FLAKY tests/test_flaky.py::test_flaky failed first: AssertionError: first attempt fails" in text, text
    (first,) = result["flaky_failures"]
    assert "first attempt fails" in first["message"] and "raise AssertionError" in first["traceback"]


async def test_xpass_is_counted_and_a_doctest_module_is_a_target(server: ServerHandle) -> None:
    result, text = await _run(server, ["tests/test_marks.py"])
    assert result["counts"] == {"xpass": 1, "total": 1}, result["counts"]
    assert "1 xpassed" in text.splitlines()[0], text
    async with mcp_client(server) as client:
        found = await call(client, "discover_test_targets", {"paths": ["lib"]})
    assert [t["target_id"] for t in found["targets"]] == ["lib/mathx.py"], found
    result, text = await _run(server, ["lib/mathx.py"])
    assert result["state"] == "failed" and "lib/mathx.py::lib.mathx.double" in text, text
