"""``write_source``'s text names the affected tests when there are a few, and says how many when there are more:
"none" and "many" read alike when the line was left out."""

from __future__ import annotations

from codeplane.mutation import Delta
from codeplane.server.answers import tests_affected_line as affected_line


def _delta(tests: list[str]) -> Delta:
    return Delta.build(mutation_id="mut_x", files_changed=0, insertions=0, deletions=0, files=(),
                       repo_fingerprint_before=None, repo_fingerprint="rf", symbols=[], tests=tests,
                       tests_by=["a.py:1"], diff=None, diff_truncated=False, warnings=(), short_diff="")


def test_a_few_affected_tests_are_named_and_more_are_counted() -> None:
    assert affected_line(_delta([])) is None
    assert affected_line(_delta(["t/test_a.py::test_1", "t/test_b.py::test_2"])) == \
        "tests affected: t/test_a.py::test_1 t/test_b.py::test_2"
    assert affected_line(_delta([f"t/test_a.py::test_{i}" for i in range(5)])) == \
        "tests affected: 5 in 1 file"
    many = [f"t/test_{i % 3}.py::test_{i}" for i in range(41)]
    assert affected_line(_delta(many)) == "tests affected: 41 in 3 files"
    assert affected_line(_delta([f"t/test_{i}.py" for i in range(20)])) == "tests affected: 20 files"
