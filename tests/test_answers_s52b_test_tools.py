"""QA 46 "Minor and cosmetic", test tools, through the real server and the official MCP client: a skipped file
says pytest's reason, the not-installed warning gives its advice once, discovery's and impact's cursors are short
``seal.offset`` like the other tools' (a made-up one still 1005), and Go targets do not say "go go"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, answer_text, cpl_env, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_USES = "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"

FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    # Two packages of the repository that an installed copy shadows (attrs ships ``attr`` and ``attrs``).
    "src/shade_a/__init__.py": "VALUE = 'repo'\n",
    "src/shade_b/__init__.py": "VALUE = 'repo'\n",
    "tests/__init__.py": "",
    "tests/test_shaded.py": "import shade_a\nimport shade_b\n\n\ndef test_value():\n    assert shade_a.VALUE\n",
    "tests/test_3rd_party.py": ("import pytest\n\ncloudpickle = pytest.importorskip('no_such_cloudpickle')\n\n\n"
                                "def test_roundtrip():\n    assert cloudpickle\n"),
    "tests/test_gpu.py": ("import pytest\n\npytestmark = pytest.mark.skip(reason='needs a GPU')\n\n\n"
                          "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"),
    **{f"tests/test_uses_{n}.py": _USES for n in range(4)},
    "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
    "svc/calc/calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {}\n',
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    base = tmp_path_factory.mktemp("s52b")
    site = base / "site"
    for name in ("shade_a", "shade_b"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("VALUE = 'installed'\n")
    repo = make_repo(base / "repo", FILES)
    with running_server(repo, "--set", "tests.retry_failed=false",
                        env=cpl_env({"PYTHONPATH": str(site), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as handle:
        yield handle


async def _run(server: ServerHandle, targets: list[str]) -> tuple[dict[str, Any], str]:
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"targets": targets, "wait_sec": 120})
    return envelope(res)["result"], answer_text(res)


async def test_a_file_skipped_at_import_says_pytests_reason(server: ServerHandle) -> None:
    record, text = await _run(server, ["tests/test_3rd_party.py"])
    assert record["finished"] and record["target_outcomes"] == {"skipped": 1}, record
    assert "SKIPPED tests/test_3rd_party.py: could not import 'no_such_cloudpickle'" in text, text
    assert ": skipped" not in text, text


async def test_a_file_whose_every_case_is_skipped_for_one_reason_says_it(server: ServerHandle) -> None:
    record, text = await _run(server, ["tests/test_gpu.py"])
    assert record["target_outcomes"] == {"skipped": 1}, record
    assert "SKIPPED tests/test_gpu.py: needs a GPU" in text.splitlines(), text


async def test_tests_that_ran_installed_copies_are_told_to_install_the_project_once(server: ServerHandle) -> None:
    _, text = await _run(server, ["tests/test_shaded.py"])
    assert "the tests imported shade_a from " in text and "shade_b from " in text, text
    assert "not the repository's shade_a and shade_b: they ran those copies" in text, text
    assert text.count("install the project into the test environment") == 1, text


_SHORT_CURSOR = re.compile(r"^[0-9a-f]{10}\.\d+$")


async def test_discovery_and_impact_cursors_are_short_and_a_made_up_one_is_1005(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        seen: list[str] = []
        cursor: str | None = None
        while True:
            args: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
            res = await client.call_tool("discover_test_targets", args)
            record, text = envelope(res)["result"], answer_text(res)
            seen += [t["target_id"] for t in record["targets"]]
            cursor = record.get("next_cursor")
            if cursor is None:
                break
            assert _SHORT_CURSOR.match(cursor) and cursor in text, (cursor, text)
        assert len(seen) == len(set(seen)) == record["total"] >= 7, seen

        res = await client.call_tool("inspect_affected_tests", {"changed_files": ["calc/ops.py"], "limit": 1})
        record, text = envelope(res)["result"], answer_text(res)
        cursor = record["next_cursor"]
        assert _SHORT_CURSOR.match(cursor) and cursor in text, (cursor, text)
        res = await client.call_tool("inspect_affected_tests", {"changed_files": ["calc/ops.py"], "limit": 1,
                                                                "cursor": cursor})
        assert not res.is_error and envelope(res)["result"]["impact"]["matches"], answer_text(res)
        for bad in ("eyJrIjoiYSIsIm8iOjF9", cursor.rpartition(".")[0] + ".2", "0123456789.1", "x.y"):
            refused = await client.call_tool("inspect_affected_tests", {"changed_files": ["calc/ops.py"],
                                                                        "limit": 1, "cursor": bad})
            assert refused.is_error and envelope(refused)["error"]["code"] == 1005, answer_text(refused)


async def test_go_targets_name_their_runner_once(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("discover_test_targets", {"paths": ["svc"]})
    text = answer_text(res)
    assert envelope(res)["result"]["targets"], text
    assert "go go" not in text and re.search(r"^go unit \(cwd svc\)", text, re.M), text

