"""Issue 16: the write delta is lean — each value once, lists bounded with their totals, and the exact selection
that reruns the affected tests — and a refusal names the edit only when the batch has several. Engine-level, on a
real git repository (the tests subsystem stands behind ``tests_for``; ``test_write_delta_links.py`` runs it for
real through the server)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.hashing import sha256_bytes
from codeplane.mutation import MutationEngine, ReplaceText, UpdateSpan
from codeplane.mutation.delta import LISTED
from codeplane.server.answers import lean_dump
from tests.builders import make_repo

PY = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"src/a.py": PY, "src/b.py": PY})


def _engine(repo: Path, tests: Sequence[str], symbols: int = 1, asked: list[list[str]] | None = None,
            ) -> MutationEngine:
    def tests_for(paths: Sequence[str]) -> list[str]:
        if asked is not None:
            asked.append(list(paths))
        return list(tests)

    def symbols_for(path: str, ranges: list[tuple[int, int]], /, *, sha256: str | None = None) -> list[str]:
        return [f"{path}:function:f{i:02d}" for i in range(symbols)]

    return MutationEngine(repo, MutationConfig(), tests_for=tests_for, symbols_for=symbols_for)


def test_an_ordinary_update_says_each_value_once(repo: Path) -> None:
    delta = _engine(repo, ["tests/test_a.py::test_a"]).apply(
        [ReplaceText(path="src/a.py", old_text="return 1", new_text="return 10")])
    record = lean_dump(delta)
    # LF and UTF-8 are the defaults; the new hash once (the next edit's precondition); no empty list or flag.
    assert record["files"] == [{"path": "src/a.py", "action": "updated", "old_sha256": sha256_bytes(PY.encode()),
                                "file_sha256": sha256_bytes((repo / "src/a.py").read_bytes()),
                                "insertions": 1, "deletions": 1,
                                "edit_ranges": [{"old_start": 2, "old_end": 2, "new_start": 2, "new_end": 2}]}]
    assert record["tests_affected"] == ["tests/test_a.py::test_a"]
    assert not {"tests_affected_total", "tests_affected_by", "tests_affected_files", "symbols_changed_total",
                "lists_truncated", "summary"} & record.keys()


def test_a_few_tests_are_listed_by_id(repo: Path) -> None:
    few = [f"tests/test_a.py::test_{i}" for i in range(LISTED)]
    delta = _engine(repo, few).apply([ReplaceText(path="src/a.py", old_text="return 1", new_text="return 10")])
    assert delta.tests_affected == tuple(few)
    assert (delta.tests_affected_total, delta.tests_affected_files, delta.tests_affected_by) == (0, 0, ())


def test_many_tests_are_named_by_file_with_the_count_and_the_selection_that_reruns_them(repo: Path) -> None:
    # 12 files, 2 cases each, and one whole-file target: 25 tests in 13 files.
    many = sorted([f"tests/test_{k:02d}.py::test_{c}" for k in range(12) for c in "xy"] + ["tests/test_zz.py"])
    asked: list[list[str]] = []
    delta = _engine(repo, many, asked=asked).apply([
        UpdateSpan(path="src/a.py", start_line=2, end_line=2, new_content="    return 10"),
        ReplaceText(path="src/b.py", old_text="return 2", new_text="return 20\n    # two lines now")])
    assert delta.tests_affected == tuple(f"tests/test_{k:02d}.py" for k in range(LISTED))
    assert delta.tests_affected_total == 25 and delta.tests_affected_files == 13
    # Exactly what the tests subsystem was asked: run_test_targets(affected_by=...) selects the same tests.
    assert asked == [list(delta.tests_affected_by)]
    assert delta.tests_affected_by == ("src/a.py:2-2", "src/b.py:6-7")


def test_many_symbols_are_bounded_in_the_answer_and_whole_in_the_ledger(repo: Path) -> None:
    delta = _engine(repo, [], symbols=LISTED + 15).apply(
        [ReplaceText(path="src/a.py", old_text="return 1", new_text="return 10")])
    assert len(delta.symbols_changed) == LISTED and delta.symbols_changed_total == LISTED + 15
    assert delta.symbols_changed == tuple(sorted(delta.symbols_changed))
    assert len(delta.mutation_report().symbols_changed) == LISTED + 15, "the mutation fingerprint sees them all"


def test_the_edit_index_is_named_only_in_a_batch_of_several(repo: Path) -> None:
    engine = MutationEngine(repo, MutationConfig())
    stale = "0" * 64
    with pytest.raises(CodePlaneError) as one:
        engine.apply([ReplaceText(path="src/a.py", old_text="return 1", new_text="x", expected_file_sha256=stale)])
    with pytest.raises(CodePlaneError) as two:
        engine.apply([ReplaceText(path="src/b.py", old_text="return 1", new_text="x"),
                      ReplaceText(path="src/a.py", old_text="return 1", new_text="x", expected_file_sha256=stale)])
    for err in (one.value, two.value):
        assert err.code == 5002 and err.message == "src/a.py changed since it was read; now:"
        assert err.details["actual_file_sha256"] == sha256_bytes(PY.encode())
        assert err.details["current"] == [{"line": 2, "text": "    return 1"}]
        assert "expected_file_sha256" not in err.details, "the caller's own value is not sent back"
    assert "edit_index" not in one.value.details
    assert two.value.details["edit_index"] == 1
    with pytest.raises(CodePlaneError) as missing:
        engine.apply([ReplaceText(path="src/a.py", old_text="return 99", new_text="x")])
    assert missing.value.message == "src/a.py: old_text was not found; most like it:"
    assert "edit_index" not in missing.value.details and "candidates" not in missing.value.details


def test_span_and_text_refusals_show_the_lines_now_and_not_the_callers_own_values(repo: Path) -> None:
    engine = MutationEngine(repo, MutationConfig())
    now = sha256_bytes(PY.encode())

    def refused(edit: UpdateSpan | ReplaceText) -> CodePlaneError:
        with pytest.raises(CodePlaneError) as info:
            engine.apply([edit])
        assert info.value.code == 5002 and info.value.details["actual_file_sha256"] == now
        assert not {"edit_index", "start_line", "end_line", "expected_file_sha256"} & info.value.details.keys()
        return info.value

    past = refused(UpdateSpan(path="src/a.py", start_line=40, end_line=41, new_content="x"))
    assert past.message == "src/a.py: lines 40-41 are past its end; last lines:"
    assert past.details["line_count"] == 6 and [c["line"] for c in past.details["current"]] == [3, 4, 5, 6]
    drifted = refused(UpdateSpan(path="src/a.py", start_line=2, end_line=2, new_content="x",
                                 expected_content="    return 3"))
    assert drifted.message == "src/a.py: expected_content was not found near the span; now:"
    assert "candidates" not in drifted.details and {"line": 2, "text": "    return 1"} in drifted.details["current"]
    twice = refused(ReplaceText(path="src/a.py", old_text="return", new_text="yield"))
    assert twice.message == "src/a.py: old_text occurs 2 times; add context or set replace_all"
    assert twice.details["reason"] == "old_text is not unique" and twice.details["candidates"] == [2, 6]
