"""Impact selection at test-case level through the MCP tools: the changed lines come from git (or the caller),
inspect explains each case, discover and run carry the cases, write_source's delta names them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    cpl_env,
    git,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio

FILES = {
    "pytest.ini": "[pytest]\ntestpaths = tests\npythonpath = .\n",
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "tests/test_ops.py": (
        "from calc.ops import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_sub():\n    assert sub(3, 2) == 1\n"),
    "tests/test_more.py": "from calc.ops import add\n\n\ndef test_more():\n    assert add(2, 2) == 4\n",
    "NOTES.txt": "no test reads this\n",
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("impacttools") / "repo", FILES)
    env = cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    with running_server(repo, "--set", "tests.retry_failed=false", env=env) as handle:
        yield handle


async def _impact(client: Any, changed: list[str]) -> dict[str, Any]:
    impact: dict[str, Any] = (await call(client, "inspect_affected_tests", {"changed_files": changed}))["impact"]
    return impact


async def test_an_uncommitted_edit_selects_the_cases_through_git(server: ServerHandle) -> None:
    path = server.root / "calc/ops.py"
    original = path.read_text()
    path.write_text(original.replace("return a - b", "return a - b - 0"))
    try:
        async with mcp_client(server) as client:
            deadline = time.monotonic() + 20
            impact = await _impact(client, ["calc/ops.py"])
            while impact.get("changed_symbols") != ["calc.ops.sub"] and time.monotonic() < deadline:
                impact = await _impact(client, ["calc/ops.py"])  # the watcher has not reported the edit yet
            assert impact["changed_symbols"] == ["calc.ops.sub"]
            assert impact["confidence"] == "complete"
            [match] = impact["matches"]
            assert match["test_file"] == "tests/test_ops.py"
            assert match["cases"] == [{"case": "test_sub", "confidence": "high",
                                       "chain": ["tests/test_ops.py::test_sub", "calc.ops.sub (changed)"]}]
            found = await call(client, "discover_test_targets", {"affected_by": ["calc/ops.py"]})
            assert [(t["target_id"], t["cases"]) for t in found["targets"]] == [("tests/test_ops.py", ["test_sub"])]
            assert found["targets"][0]["cmd"][-1] == "tests/test_ops.py::test_sub"
            run = await call(client, "run_test_targets", {"affected_by": ["calc/ops.py"], "wait_sec": 60})
            assert run["state"] == "passed" and run["counts"]["total"] == 1
    finally:
        path.write_text(original)


async def test_explicit_lines_and_case_target_ids(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        impact = await _impact(client, ["calc/ops.py:2"])
        assert impact["changed_symbols"] == ["calc.ops.add"]
        assert {(m["test_file"], tuple(c["case"] for c in m["cases"])) for m in impact["matches"]} == {
            ("tests/test_ops.py", ("test_add",)), ("tests/test_more.py", ("test_more",))}
        # a committed file without lines and without a diff: no changed definition, module-level selection
        blunt = await _impact(client, ["calc/ops.py"])
        assert not blunt.get("changed_symbols")
        assert {m["test_file"] for m in blunt["matches"]} == {"tests/test_ops.py", "tests/test_more.py"}
        run = await call(client, "run_test_targets", {"targets": ["tests/test_ops.py::test_add"], "wait_sec": 60})
        assert run["state"] == "passed" and run["counts"]["total"] == 1
        # A path outside the repository is refused, not read as module ``x``; an empty list is a mistake too, and
        # so is a range that is none (it was taken for a file nobody has, or for no line at all).
        for changed, code in ((["../x.py"], 5001), (["/etc/x.py:3"], 5001), ([], 1003), (["calc/ops.py:x-1"], 1003),
                              (["calc/ops.py:40-20"], 1003), (["calc/ops.py:0"], 1003),
                              # a typo, and lines past the end: each selected nothing, "complete"
                              (["calc/opz.py"], 5004), (["calc/ops.py:999"], 1003)):
            refused = await call_error(client, "inspect_affected_tests", {"changed_files": changed})
            assert refused["code"] == code, (changed, refused)
        assert (await call_error(client, "run_test_targets", {"affected_by": ["../x.py"]}))["code"] == 5001
        assert (await call_error(client, "run_test_targets", {"affected_by": ["calc/opz.py"]}))["code"] == 5004
        # A selection that reaches no test runs nothing and says so: "passed: no cases" alone read as a pass.
        nothing = await call(client, "run_test_targets", {"affected_by": ["NOTES.txt"], "wait_sec": 30})
        # A non-Python file's selection is partial: its empty selection is no pass (QA31 F1).
        assert nothing["targets_total"] == 0 and nothing["message"].startswith(
            "nothing ran: the selection for NOTES.txt is partial (what it cannot follow may reach tests) and holds no "
            "test target, so nothing was tested: this is no pass. "), nothing


async def test_write_source_delta_names_the_cases(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        answer = await call(client, "write_source", {"edits": [
            {"path": "calc/ops.py", "action": "update", "old_text": "return a + b", "new_text": "return b + a"}]})
        try:
            assert answer["delta"]["tests_affected"] == ["tests/test_more.py::test_more",
                                                         "tests/test_ops.py::test_add"]
        finally:
            (server.root / "calc/ops.py").write_text(FILES["calc/ops.py"])




async def test_a_change_reaching_hundreds_of_test_files_is_paged_in_inspect_and_discover(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # 400 test files import the changed module: inspect listed them all in one 24 KB text (26 KB on Django's
    # query.py), and discover's impact block repeated every one beside each page of targets.
    body = "from calc.ops import add\n\n\ndef test_x():\n    assert add(1, 1) == 2\n"
    files = {**FILES, **{f"tests/test_module_number_{n:03}_with_a_rather_long_name.py": body for n in range(400)}}
    repo = make_repo(tmp_path_factory.mktemp("manytests") / "repo", files)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            seen: list[str] = []
            cursor: str | None = None
            while True:
                args: dict[str, Any] = {"changed_files": ["calc/ops.py"], **({"cursor": cursor} if cursor else {})}
                raw = await client.call_tool("inspect_affected_tests", args)
                text, record = answer_text(raw), (raw.structured_content or {})["result"]
                assert len(text.encode()) <= 16 * 1024
                assert record["impact"]["matches_total"] == 402
                seen += [m["test_file"] for m in record["impact"]["matches"]]
                cursor = record.get("next_cursor")
                if cursor is None:
                    break
                assert cursor in text
            assert len(seen) == len(set(seen)) == 402
            refused = await call_error(client, "inspect_affected_tests",
                                       {"changed_files": ["calc/ops.py:1"], "cursor": "eyJrIjoiYSIsIm8iOjF9"})
            assert refused["code"] == 1005
            raw = await client.call_tool("discover_test_targets", {"affected_by": ["calc/ops.py"]})
            text, record = answer_text(raw), (raw.structured_content or {})["result"]
            assert len(text.encode()) <= 16 * 1024 and record["next_cursor"]
            listed = {t["target_id"] for t in record["targets"]}
            assert {m["test_file"] for m in record["impact"]["matches"]} == listed


@pytest.mark.parametrize(("change", "lines"), [
    (lambda t: t.replace("l5\n", "L5\n"), [(5, 5)]),  # a replaced line is its new line alone (was 52-53 for 53)
    (lambda t: t.replace("l5\n", ""), [(4, 5)]),  # a removal: the lines now around where it was
    (lambda t: t.replace("l5\n", "l5\nnew\n"), [(6, 6)]),
    (lambda t: t.replace("l5\nl6\n", "A\nB\nC\n"), [(5, 7)]),
    (lambda t: t.replace("l2\n", "L2\n").replace("l5\n", "L5\n"), [(2, 2), (5, 5)]),
])
def test_changed_lines_of_a_file_given_without_lines_are_the_lines_that_differ(
        tmp_path: Path, change: Any, lines: list[tuple[int, int]]) -> None:
    from types import SimpleNamespace

    from codeplane.git import GitService
    from codeplane.server.tools.tests_changes import changes

    text = "".join(f"l{i}\n" for i in range(1, 11))
    root = make_repo(tmp_path / "r", {"a.py": text})
    (root / "a.py").write_text(change(text))
    found = changes(SimpleNamespace(git=GitService(root), root=root), ["a.py"], None)  # type: ignore[arg-type]
    assert found.ranges == {"a.py": lines}


async def test_a_moved_files_old_path_is_a_change_not_a_typo(tmp_path: Path) -> None:
    """``write_source`` moving a file names both paths in ``tests_affected_by``; passed back, the old one was
    refused 5004 ("git's HEAD has no such file that was deleted"), though HEAD has it: the move is a change."""
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            await call(client, "write_source", {"edits": [{"path": "calc/ops.py", "to": "calc/ops2.py"}]})
            found = await call(client, "inspect_affected_tests", {"changed_files": ["calc/ops.py", "calc/ops2.py"]})
            typo = await call_error(client, "inspect_affected_tests", {"changed_files": ["calc/opz.py"]})
    assert {m["test_file"] for m in found["impact"]["matches"]} == {"tests/test_ops.py", "tests/test_more.py"}
    assert typo["code"] == 5004


async def test_a_file_with_no_known_changed_line_is_said_to_be_selected_at_module_level(tmp_path: Path) -> None:
    """Reviewing a commit: ``affected_by: [calc/ops.py]`` on a clean tree ran every test importing it, and neither
    the text nor the record said why (the agent expected the changed functions' tests)."""
    repo = make_repo(tmp_path / "repo", FILES)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            whole = await call(client, "run_test_targets", {"affected_by": ["calc/ops.py"], "wait_sec": 60})
            sharp = await call(client, "run_test_targets", {"affected_by": ["calc/ops.py:2"], "wait_sec": 60})
    assert "calc/ops.py: no changed line known" in whole["message"], whole
    assert "no changed line known" not in sharp.get("message", ""), sharp


async def test_changed_since_selects_what_a_commit_changed_by_symbol(tmp_path: Path) -> None:
    """Reviewing a commit on a clean tree: ``changed_since: HEAD~1`` selects the changed function's cases (the
    file alone had every importing test run); a file deleted and one added since are changes too; a revision
    that names no commit is 8002, and a selection needs files or a revision."""
    repo = make_repo(tmp_path / "repo", FILES)
    ops = repo / "calc/ops.py"
    ops.write_text(ops.read_text().replace("return a - b", "return a - b - 0"))
    (repo / "calc/extra.py").write_text("def mul(a, b):\n    return a * b\n")
    (repo / "NOTES.txt").unlink()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "sub, mul, no notes")
    with running_server(repo, env=cpl_env({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})) as handle:
        async with mcp_client(handle) as client:
            impact = (await call(client, "inspect_affected_tests", {"changed_since": "HEAD~1"}))["impact"]
            narrowed = (await call(client, "inspect_affected_tests", {"changed_files": ["calc/ops.py"],
                                                                      "changed_since": "HEAD~1"}))["impact"]
            run = await call(client, "run_test_targets", {"changed_since": "HEAD~1", "wait_sec": 60})
            found = await call(client, "discover_test_targets", {"changed_since": "HEAD~1"})
            unknown = await call_error(client, "run_test_targets", {"changed_since": "no-such-branch"})
            neither = await call_error(client, "inspect_affected_tests", {})
            both = await call_error(client, "run_test_targets", {"changed_since": "HEAD~1",
                                                                 "targets": ["tests/test_ops.py"]})
            unchanged = await call(client, "inspect_affected_tests", {"changed_since": "HEAD"})
            unchanged_run = await call(client, "run_test_targets", {"changed_since": "HEAD", "wait_sec": 60})
    assert impact["changed_symbols"] == ["calc.extra.mul", "calc.ops.sub"], impact
    assert [(m["test_file"], [c["case"] for c in m["cases"]]) for m in impact["matches"]] == [
        ("tests/test_ops.py", ["test_sub"])], impact
    assert narrowed["changed_symbols"] == ["calc.ops.sub"], narrowed
    assert run["state"] == "passed" and run["counts"]["total"] == 1, run
    assert "no changed line known" not in run.get("message", ""), run
    assert [(t["target_id"], t["cases"]) for t in found["targets"]] == [("tests/test_ops.py", ["test_sub"])]
    assert unknown["code"] == 8002 and unknown["details"]["field"] == "changed_since", unknown
    assert neither["code"] == 1003 and both["code"] == 1003, (neither, both)
    assert not unchanged["impact"].get("matches"), unchanged
    assert unchanged["impact"]["agentic_hint"] == "no file changed, so no test was selected", unchanged
    assert unchanged_run["counts"]["total"] == 0, unchanged_run
    assert unchanged_run["message"] == "nothing ran: no file changed, so no test was selected", unchanged_run


def test_changed_since_takes_an_added_file_whole_and_refuses_more_files_than_a_selection_takes(
        tmp_path: Path) -> None:
    from types import SimpleNamespace

    from codeplane.core.errors import CodePlaneError
    from codeplane.git import GitService
    from codeplane.server.tools import tests_changes

    root = make_repo(tmp_path / "r", {"a.py": "x = 1\n"})
    (root / "new.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "new")
    services = SimpleNamespace(git=GitService(root), root=root)
    found = tests_changes.changes(services, None, "HEAD~1")  # type: ignore[arg-type]
    assert (found.items, found.ranges) == (["new.py"], {"new.py": [(1, 6)]})
    for i in range(tests_changes.MAX_CHANGED_FILES + 1):
        (root / f"m{i}.txt").write_text(f"{i}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "many")
    with pytest.raises(CodePlaneError) as raised:
        tests_changes.changes(services, None, "HEAD~1")  # type: ignore[arg-type]
    assert raised.value.code == 1003 and raised.value.details["field"] == "changed_since"


async def test_an_impact_lists_a_bounded_number_of_changed_modules_and_says_how_many(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    # Every page of an 1,800-file change repeated ~150 KB of changed modules, symbols and fallbacks beside its
    # page of test files: each list is cut at 50, with its total.
    files = {f"calc/m{n:02}.py": f"def f():\n    return {n}\n" for n in range(60)}
    files.update({f"tests/test_m{n:02}.py": f"from calc.m{n:02} import f\n\n\ndef test_f():\n    assert f() == {n}\n"
                  for n in range(60)})
    repo = make_repo(tmp_path_factory.mktemp("manymodules") / "repo", {"calc/__init__.py": "", **files})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            changed = [f"calc/m{n:02}.py" for n in range(60)]
            seen: list[str] = []
            cursor: str | None = None
            while True:
                args: dict[str, Any] = {"changed_files": changed, "limit": 25, **({"cursor": cursor} if cursor else {})}
                raw = await client.call_tool("inspect_affected_tests", args)
                text, impact = answer_text(raw), (raw.structured_content or {})["result"]["impact"]
                assert impact["changed_modules_total"] == 60 and len(impact["changed_modules"]) == 50, impact
                assert "more)" in text.splitlines()[0], text.splitlines()[0]
                seen += [m["test_file"] for m in impact["matches"]]
                cursor = (raw.structured_content or {})["result"].get("next_cursor")
                if cursor is None:
                    break
            assert sorted(seen) == [f"tests/test_m{n:02}.py" for n in range(60)]
