"""QA52 F2 and F4, through the real server with the official client.

F2: "… N more failing cases: get_test_run(include='cases')" led through every case, passed ones included (9 pages,
117 KB for 194 failures), and its first page re-sent the failure report. The hint now names the failing cases
after those shown (``status='failed'`` and a cursor), and a cases page lists cases, not the report again.
F4: cancel_test_run on a run that had ended answered its whole report and never said nothing was cancelled.
F9: every poll of a running run ended in 125 bytes of the same advice, the run id again.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, answer_text, cpl_env, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_FAILING = 40
_PASSING = 30
_CASES = "".join(f"def test_bad_{i:02d}():\n    raise ValueError('case {i:02d} broke')\n\n\n" for i in range(_FAILING))
_CASES += "".join(f"def test_ok_{i:02d}():\n    pass\n\n\n" for i in range(_PASSING))
_SLOW = "import time\n\n\ndef test_slow():\n    time.sleep(3)\n"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s54runs") / "repo", {"pytest.ini": "[pytest]\n",
                                                                   "tests/test_many.py": _CASES,
                                                                   "tests/test_slow.py": _SLOW})
    with running_server(repo, "--set", "tests.retry_failed=false",
                        env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as handle:
        yield handle


@pytest.fixture(scope="module")
async def finished(server: ServerHandle) -> tuple[dict[str, Any], str]:
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"wait_sec": 120})
    record = envelope(res)["result"]
    assert record["finished"] and record["failures_total"] == _FAILING, answer_text(res)
    return record, answer_text(res)


_HINT = re.compile(r"^… (\d+) more failing cases: get_test_run\((.*)\)$", re.M)


async def test_the_more_failures_hint_leads_to_the_failing_cases_after_those_shown(
        server: ServerHandle, finished: tuple[dict[str, Any], str]) -> None:
    record, text = finished
    hint = _HINT.search(text)
    assert hint is not None, text
    # The call the hint names, taken as written (keyword arguments of Python literals).
    call = ast.parse(f"f({hint[2]})", mode="eval").body
    assert isinstance(call, ast.Call), hint[2]
    args = {str(k.arg): ast.literal_eval(k.value) for k in call.keywords}
    assert args["status"] == "failed" and args["cursor"] == record["failures_cursor"], args
    shown = [c["case_id"] for c in record["failures"]]
    assert int(hint[1]) == _FAILING - len(shown) > 0
    listed: list[str] = []
    async with mcp_client(server) as client:
        while True:
            res = await client.call_tool("get_test_run", args)
            page, page_text = envelope(res)["result"], answer_text(res)
            assert not res.is_error and page["continued"], page_text
            assert {c["outcome"] for c in page["cases"]} == {"failed"}, page_text
            # Only the page's cases: not the head line, not the failure report.
            assert page_text.splitlines()[0] == f"{record['run_id']} (continued)", page_text
            assert "passed" not in page_text and "FAILED" not in page_text, page_text
            assert all(f"{c['case_id']} " in page_text for c in page["cases"]), page_text
            listed += [c["case_id"] for c in page["cases"]]
            if not page.get("next_cursor"):
                break
            args = {**args, "cursor": page["next_cursor"]}
    # Every failure once, across the summary and the listing, none of the passed cases.
    assert sorted(shown + listed) == sorted(f"tests/test_many.py::test_bad_{i:02d}" for i in range(_FAILING))


async def test_a_failing_cases_listing_names_each_failure_once_without_the_report(
        server: ServerHandle, finished: tuple[dict[str, Any], str]) -> None:
    record, _ = finished
    async with mcp_client(server) as client:
        res = await client.call_tool("get_test_run", {"run_id": record["run_id"], "include": "cases",
                                                      "status": "failed", "limit": 500})
    page, text = envelope(res)["result"], answer_text(res)
    assert [c["outcome"] for c in page["cases"]] == ["failed"] * _FAILING, text
    lines = text.splitlines()
    assert lines[0].startswith(f"{record['run_id']}: {_PASSING + 1} passed, {_FAILING} failed"), text
    # Each failure on its own line with its head, like ``pytest -rf``; no grouped report, no passed case.
    case_lines = [line for line in lines[1:] if line.startswith("failed ")]
    assert len(case_lines) == _FAILING and len(lines) == _FAILING + 1, text
    assert re.fullmatch(r"failed tests/test_many\.py::test_bad_00 [\d.]+s: ValueError: case 00 broke", case_lines[0])


async def test_cancelling_a_finished_run_says_nothing_was_cancelled(
        server: ServerHandle, finished: tuple[dict[str, Any], str]) -> None:
    record, _ = finished
    async with mcp_client(server) as client:
        res = await client.call_tool("cancel_test_run", {"run_id": record["run_id"]})
        again = await client.call_tool("get_test_run", {"run_id": record["run_id"]})
    body, text = envelope(res)["result"], answer_text(res)
    assert not res.is_error and text == (f"run {record['run_id']} already finished (failed): nothing cancelled "
                                         "(its report: get_test_run)"), text
    assert body["not_cancelled"] and body["state"] == "failed" and body["counts"]["failed"] == _FAILING, body
    # The run stays as it ended, its report unchanged.
    assert envelope(again)["result"]["state"] == "failed" and envelope(again)["result"]["fingerprint"] \
        == record["fingerprint"]


async def test_a_poll_of_a_running_run_says_the_run_id_once(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("run_test_targets", {"targets": ["tests/test_slow.py"], "wait_sec": 0})
        record, text = envelope(res)["result"], answer_text(res)
        await client.call_tool("cancel_test_run", {"run_id": record["run_id"]})
    assert not record["finished"], text
    assert text.count(record["run_id"]) == 1, text
    assert text.splitlines()[-1] == "wait: get_test_run with wait_sec=30; stop: cancel_test_run", text
