"""One entry per cause in a test run's text (QA 33 §8): ten test files that cannot import a module the environment
lacks, each through its own chain of imports, were ten full tracebacks ending in the same ``ModuleNotFoundError``
(13 KB before a cursor). Real pytest runs through the real testing service."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.server.tools.tests_run_models import TestRunResult, render_run
from codeplane.server.tools.tests_run_render import render_test_run
from codeplane.testing import TestingService
from tests.builders import make_repo
from tests.testing_service import finish, service_for

pytestmark = pytest.mark.usefixtures("lean_pytest")


def _importing_files() -> dict[str, str]:
    """Ten test files failing to import ``absent_dep``: half directly, half through a chain of the project's own
    modules (their tracebacks differ in every frame but the last), and one file missing another module."""
    files = {
        "pytest.ini": "[pytest]\n",
        "proj/__init__.py": "",
        "proj/base.py": "from absent_dep.sync import run\n",
        "proj/forms.py": "from proj.base import run\n",
        "proj/urls.py": "import proj.forms\n",
        "tests/test_other_cause.py": "import another_absent_dep\n\n\ndef test_x():\n    pass\n",
    }
    for n in range(10):
        imports = "import absent_dep\n" if n % 2 else ("from proj.urls import *\n" if n % 4 else "import proj.forms\n")
        files[f"tests/test_mod_{n}.py"] = f"{imports}\n\ndef test_{n}():\n    pass\n"
    return files


def test_files_failing_to_import_the_same_missing_module_are_one_entry_naming_the_others(
        tmp_path: Path, services: list[TestingService]) -> None:
    repo = make_repo(tmp_path / "repo", _importing_files())
    service = service_for(repo, retry_failed=False)
    services.append(service)
    snapshot = finish(service.start_run())
    result = TestRunResult(**render_run(snapshot))
    text = render_test_run(result)
    lines = text.splitlines()
    assert lines[0].startswith(f"{result.run_id} failed: 11 error in "), lines[0]
    # The missing module once, however many files it broke; the other cause on its own entry.
    assert text.count("No module named 'absent_dep'") == 1, text
    assert text.count("No module named 'another_absent_dep'") == 1, text
    heads = [line for line in lines if line.startswith("ERROR ")]
    assert len(heads) == 2, text
    named = [line for line in lines if line.startswith(("  same: ", "  same cause: "))]
    listed = {t for line in named for t in line.split(": ", 1)[1].split()}
    first = heads[0].split()[1].rstrip(":")
    # Every file is named once: the one whose traceback is shown, the nine others after it.
    assert listed | {first} == {f"tests/test_mod_{n}.py" for n in range(10)} and first not in listed, text
    assert any(line.startswith("  same cause: ") for line in named), text  # their import chains differ
    assert len(text.encode()) < 3_000, text
    # Every traceback shown stays within the bound (1.5 KB) with its indent.
    blocks = text.split("\nERROR ")[1:]
    for block in blocks:
        trace = "\n".join(line for line in block.splitlines()[1:] if line.startswith("    "))
        assert len(trace) <= 1_500, len(trace)
    # The record keeps every target and its own message.
    assert sum(1 for t in result.targets if "absent_dep'" in t.attempts[0].message) == 11


def test_cases_failing_on_the_same_exception_in_their_own_bodies_are_one_entry(
        tmp_path: Path, services: list[TestingService]) -> None:
    """Three tests each importing the missing module in their bodies: the same exception at a different line of
    the test file, so tracebacks that differ only by the test's own frames. A different exception stays apart."""
    body = "".join(f"def test_{n}():\n{'    x = 1' + chr(10) * (n + 1)}    import absent_dep\n\n\n" for n in range(3))
    repo = make_repo(tmp_path / "repo", {
        "pytest.ini": "[pytest]\n",
        "tests/test_body.py": body + "def test_other():\n    raise ValueError('bad value')\n",
    })
    service = service_for(repo, retry_failed=False)
    services.append(service)
    result = TestRunResult(**render_run(finish(service.start_run())))
    text = render_test_run(result)
    lines = text.splitlines()
    assert lines[0].startswith(f"{result.run_id}: 4 failed in "), lines[0]
    heads = [line for line in lines if line.startswith("FAILED ")]
    assert heads == ["FAILED tests/test_body.py::test_0: ModuleNotFoundError: No module named 'absent_dep'",
                     "FAILED tests/test_body.py::test_other: ValueError: bad value"], text
    assert "  same cause: tests/test_body.py::test_1 tests/test_body.py::test_2" in lines, text
    assert result.failures_total == 4 and len(result.failures) == 4
