"""A case asked for by a name its file does not hold (QA 33 §8): the answer listed the file's first 20 cases, none
of the class asked for, and counted "+10 more" of 51. Real pytest runs through the real testing service."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")


def _funcs_file() -> str:
    """51 cases, the ``TestEvolve`` class's four after 40 others (as attrs' ``tests/test_funcs.py``)."""
    parts = []
    for cls, names in (("TestAsDict", [f"test_shallow_{n}" for n in range(20)]),
                       ("TestAsTuple", [f"test_recurse_{n}" for n in range(20)]),
                       ("TestEvolve", ["test_empty", "test_change", "test_unknown", "test_validator_failure"]),
                       ("TestHas", [f"test_positive_{n}" for n in range(7)])):
        parts.append(f"class {cls}:\n" + "".join(f"    def {n}(self):\n        pass\n\n" for n in names))
    return "\n\n".join(parts)


def test_an_unknown_case_lists_the_cases_of_its_class_first_and_counts_the_rest(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", "tests/test_funcs.py": _funcs_file()})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    record = finish(service.start_run(["tests/test_funcs.py::TestEvolve::nope"]))
    (result,) = [r.final for r in record.targets if r.final]
    assert result.outcome == "error", result
    names = ", ".join(f"TestEvolve::{n}" for n in ("test_empty", "test_change", "test_unknown",
                                                    "test_validator_failure"))
    # Every case of the class asked for (ties in the file's order after the most alike), then the 47 others counted.
    head, _, listed = result.message.partition("; it holds ")
    assert head == "no test case TestEvolve::nope in tests/test_funcs.py", result.message
    shown, _, more = listed.partition(" (+")
    assert sorted(shown.split(", ")) == sorted(names.split(", ")) and more == "47 more)", result.message


def test_a_misspelt_case_lists_the_alike_names_first(tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", {"pytest.ini": "[pytest]\n", "tests/test_funcs.py": _funcs_file()})
    service = service_for(repo, retry_failed=False)
    services.append(service)
    record = finish(service.start_run(["tests/test_funcs.py::TestEvolv::test_chnge"]))
    (result,) = [r.final for r in record.targets if r.final]
    assert result.message.startswith("no test case TestEvolv::test_chnge in tests/test_funcs.py; it holds "
                                     "TestEvolve::test_change"), result.message
    assert result.message.endswith(" more)") and "TestAsDict" not in result.message, result.message
