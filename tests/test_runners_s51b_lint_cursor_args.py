"""QA42 §5: a ``lint_check`` cursor passed with other ``paths`` answered the old paths' page as if it were theirs.
A cursor passed with ``paths``/``tools`` other than its run's is refused with 1005, as every paged tool does;
passed alone, or with the same arguments (however spelled), it pages on."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.config import LintConfig, MutationConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.lint import LintService
from codeplane.mutation import MutationEngine
from tests.builders import make_repo

FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F', 'I']\n",
    "pkg/__init__.py": "",
    "pkg/a.py": "import sys\nimport os\nimport re\n",
    "pkg/b.py": "import json\nimport csv\nimport re\n",
}


def test_a_lint_cursor_passed_with_other_paths_or_tools_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    service = LintService(repo, LintConfig(), MutationEngine(repo, MutationConfig()))
    first = service.check(paths=["pkg/a.py"], tools=["ruff"], limit=1)
    assert first.next_cursor and {d.path for d in first.diagnostics} == {"pkg/a.py"}
    cursor = first.next_cursor
    for other in ({"paths": ["pkg/b.py"]}, {"paths": ["pkg"]}, {"tools": ["mypy"]}):
        with pytest.raises(CodePlaneError) as refused:
            service.page(cursor, 1, **other)
        assert refused.value.error is ErrorCode.INVALID_CURSOR, other
        assert "was issued for other" in refused.value.message
    with pytest.raises(CodePlaneError) as missing:
        service.page(cursor, 1, paths=["pkg/nope.py"])
    assert missing.value.error is ErrorCode.FILE_NOT_FOUND
    # The run's own arguments, however spelled, or none: the next page of pkg/a.py.
    same = [service.page(cursor, 1, **args) for args in ({}, {"paths": ["./pkg/a.py", "pkg/a.py"]},
                                                          {"paths": ["pkg/a.py"], "tools": ["ruff", "ruff"]})]
    assert all(p == same[0] for p in same) and {d.path for d in same[0].diagnostics} == {"pkg/a.py"}
    assert same[0].offset == 1
    # A whole-repository run's cursor takes "." as its own paths.
    whole = service.check(limit=1)
    assert whole.next_cursor
    assert service.page(whole.next_cursor, 1, paths=["."]).offset == 1
