"""QA41 §3: repository paths that start like an option (``-dash.py``, a ``--fix`` directory) or an argument file
(``@at/``) reach each real linter as paths, never as its options; a path CodePlane does not list is refused
before any linter starts."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codeplane.core.config import LintConfig, MutationConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.lint import LintService
from codeplane.mutation import MutationEngine
from tests.builders import git, make_repo
from tests.runner_projects import JS_DIR

FILES = {
    "pyproject.toml": "[project]\nname = 'x'\nversion = '0'\n\n[tool.ruff]\nline-length = 100\n\n"
                      "[tool.mypy]\nstrict = true\n",
    "-dash.py": "import os\n",
    "ok.py": "import json\n",
    "--fix/m.py": "import sys\n",
    "@at/a.py": "def f() -> int:\n    return 'no'\n",
}


def _service(root: Path) -> LintService:
    return LintService(root, LintConfig(), MutationEngine(root, MutationConfig()))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p: (root / p).read_bytes() for p in FILES}


def test_a_fix_named_directory_is_linted_read_only_not_fixed(tmp_path: Path) -> None:
    """``ruff check --no-fix ... --fix`` let the later ``--fix`` win: a check rewrote every file and said "ok"."""
    root = make_repo(tmp_path / "repo", FILES)
    before = _snapshot(root)
    report = _service(root).check(paths=["--fix"], tools=["ruff"])
    assert _snapshot(root) == before
    assert git(root, "status", "--porcelain").stdout == ""
    assert [(d.path, d.line, d.column, d.code) for d in report.diagnostics] == [("--fix/m.py", 1, 8, "F401")]
    assert [(r.tool, r.status) for r in report.runs] == [("ruff", "ok")]


def test_a_dash_file_and_an_at_directory_get_their_diagnostics(tmp_path: Path) -> None:
    """``-dash.py`` was "unexpected argument '-d'" (ruff) and ``@at/a.py`` an argument file to read (mypy)."""
    root = make_repo(tmp_path / "repo", FILES)
    report = _service(root).check(paths=["-dash.py", "@at"])
    assert sorted((d.path, d.line, d.code, d.tool) for d in report.diagnostics) == [
        ("-dash.py", 1, "F401", "ruff"), ("@at/a.py", 2, "return-value", "mypy")]
    assert {(r.tool, r.status) for r in report.runs} == {("ruff", "ok"), ("mypy", "ok")}


def test_fixing_a_dash_file_goes_through_the_mutation_engine(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    report = _service(root).check(paths=["-dash.py", "--fix"], tools=["ruff"], fix=True)
    assert report.fix is not None and sorted(f.path for f in report.fix.files) == ["--fix/m.py", "-dash.py"]
    assert (root / "-dash.py").read_text() == "" and (root / "--fix/m.py").read_text() == ""
    assert (root / "ok.py").read_text() == "import json\n"  # not asked for: untouched
    assert report.diagnostics == ()


@pytest.mark.parametrize("path", ["node_modules/pkg/x.py", ".venv/lib/x.py", "vendored/x.py"])
def test_a_path_codeplane_does_not_list_is_refused_before_any_linter_runs(tmp_path: Path, path: str) -> None:
    root = make_repo(tmp_path / "repo", {**FILES, ".cplignore": "vendored/\n"})
    (root / path).parent.mkdir(parents=True)
    (root / path).write_text("import os\n")
    with pytest.raises(CodePlaneError) as caught:
        _service(root).check(paths=["ok.py", path], tools=["ruff"], fix=True)
    assert caught.value.error is ErrorCode.MUTATION_SCOPE_VIOLATION and caught.value.details["path"] == path
    assert (root / path).read_text() == "import os\n" and (root / "ok.py").read_text() == "import json\n"


def _js_tool(name: str) -> None:
    if not (JS_DIR / "node_modules" / ".bin" / name).is_file() or shutil.which("node") is None:
        message = f"{name} is not installed in {JS_DIR} (.ci/run installs it with npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


JS_FILES = {
    "package.json": '{"name": "web", "private": true, "type": "module"}\n',
    "-k/a.js": "var a = 1;\n",
    "--fix/b.js": "let b = 1;\nexport { b };\nvar c = 2;\nexport { c };\n",
}


def test_eslint_lints_dash_paths_and_fixes_them_through_the_engine(tmp_path: Path) -> None:
    _js_tool("eslint")
    config = 'export default [{ rules: { "no-unused-vars": "error", "no-var": "error" } }];\n'
    root = make_repo(tmp_path / "repo", {**JS_FILES, "eslint.config.js": config})
    (root / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)
    report = _service(root).check(paths=["-k", "--fix/b.js"], tools=["eslint"])
    assert sorted((d.path, d.line, d.code) for d in report.diagnostics) == [
        ("--fix/b.js", 3, "no-var"), ("-k/a.js", 1, "no-unused-vars"), ("-k/a.js", 1, "no-var")]
    assert [(r.tool, r.status) for r in report.runs] == [("eslint", "ok")]
    fixed = _service(root).check(paths=["--fix/b.js"], tools=["eslint"], fix=True)
    assert fixed.fix is not None and [f.path for f in fixed.fix.files] == ["--fix/b.js"]
    assert (root / "--fix/b.js").read_text() == "let b = 1;\nexport { b };\nlet c = 2;\nexport { c };\n"


def test_biome_lints_dash_paths(tmp_path: Path) -> None:
    _js_tool("biome")
    root = make_repo(tmp_path / "repo", {**JS_FILES, "biome.json": "{}\n"})
    (root / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)
    before = (root / "--fix/b.js").read_bytes()
    report = _service(root).check(paths=["-k", "--fix"], tools=["biome"])
    assert {d.path for d in report.diagnostics} == {"-k/a.js", "--fix/b.js"}
    assert [(r.tool, r.status) for r in report.runs] == [("biome", "ok")]
    assert (root / "--fix/b.js").read_bytes() == before
