"""A renamed Python function or method (QA 13, F2 checked on Python): its old name's users now raise NameError or
AttributeError, and nothing links them to the new name — no import shows a module's own callers, and ``C().m()``
is a use by name of a name no definition has any more. The tests reaching those users are selected, as pytest's
own run says they fail."""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

from tests.builders import make_repo
from tests.index_helpers import selecting

FILES = {
    "pytest.ini": "[pytest]\n",
    "pkg/__init__.py": "",
    "pkg/m.py": "def f():\n    return 1\n\n\ndef g():\n    return f() + len('x')\n\n\ndef h():\n    return 3\n",
    "pkg/k.py": "class C:\n    def m(self):\n        return 1\n\n    def n(self):\n        return self.m() + 1\n\n"
                "    def o(self):\n        return 3\n",
    "tests/test_a.py": "from pkg import m\n\n\ndef test_g():\n    assert m.g() == 2\n\n\ndef test_h():\n"
                       "    assert m.h() == 3\n",
    "tests/test_k.py": "from pkg.k import C\n\n\ndef test_m():\n    assert C().m() == 1\n\n\ndef test_n():\n"
                       "    assert C().n() == 2\n\n\ndef test_o():\n    assert C().o() == 3\n",
}


def _rename(tmp_path: Path, path: str, old: str, new: str) -> tuple[dict[str, tuple[str, ...]], set[str]]:
    """The selection for the rename (changed lines as against HEAD, the index refreshed after the edit, as on a
    running server) and the tests pytest fails after it."""
    repo = make_repo(tmp_path / "repo", FILES)
    with selecting(repo) as (index, service):
        source = repo / path
        before = source.read_text()
        source.write_text(before.replace(old, new))
        index.refresh_paths([path])
        lines = [f"{j1 + 1}-{max(j1 + 1, j2)}" for tag, _, _, j1, j2 in difflib.SequenceMatcher(
            None, before.splitlines(), source.read_text().splitlines()).get_opcodes() if tag != "equal"]
        view = service.discover(affected_by=[f"{path}:{','.join(lines)}"])
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", "tests"], cwd=repo,
                         capture_output=True, text=True, timeout=120, check=False)
    failed = {line.split()[1] for line in run.stdout.splitlines() if line.startswith("FAILED ")}
    return {t.target_id: t.cases for t in view.targets}, failed


def test_a_renamed_function_selects_the_tests_reaching_its_callers_in_its_module(tmp_path: Path) -> None:
    selected, failed = _rename(tmp_path, "pkg/m.py", "def f():", "def f2():")
    assert failed == {"tests/test_a.py::test_g"}
    assert selected == {"tests/test_a.py": ("test_g",)}, selected


def test_a_renamed_method_selects_the_tests_calling_it_by_its_old_name(tmp_path: Path) -> None:
    # ``self.m()`` in ``n`` (test_n) and ``C().m()`` in a test (test_m): uses by name of a name gone.
    selected, failed = _rename(tmp_path, "pkg/k.py", "def m(self):", "def m2(self):")
    assert failed == {"tests/test_k.py::test_m", "tests/test_k.py::test_n"}
    assert set(selected.get("tests/test_k.py", ())) >= {"test_m", "test_n"}, selected
