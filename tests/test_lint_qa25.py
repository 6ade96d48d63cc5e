"""QA25: linter runs that failed reported as clean, Biome 2.6's report shape, ruff's ``unsafe-fixes``, duplicate
diagnostics, failed runs' messages, notebooks and mypy's ``exclude`` (real linters in real repositories)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codeplane.core.config import LintConfig, MutationConfig
from codeplane.lint import LintService
from codeplane.lint.checks import MESSAGE_CHARS, excerpt
from codeplane.lint.formats import PathMap, parse_biome
from codeplane.mutation import MutationEngine
from codeplane.server.tools.lint import LintCheckResult, render_lint_check
from tests.builders import make_repo, write_files
from tests.runner_projects import JS_DIR, require

RUFF = str(Path(sys.executable).parent / "ruff")


def _service(root: Path) -> LintService:
    return LintService(root, LintConfig(), MutationEngine(root, MutationConfig()))


def _js_tool(root: Path, project: str, tool: str) -> str:
    candidate = JS_DIR / "node_modules" / ".bin" / tool
    if not candidate.is_file() or shutil.which("node") is None:
        message = f"{tool} is not installed in {JS_DIR} (.ci/run installs it with npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    (root / project / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)
    return str(candidate)


def _clippy() -> str:
    cargo = require("cargo")
    if not (Path(cargo).parent / "cargo-clippy").is_file() and shutil.which("cargo-clippy") is None:
        message = "clippy is not installed (.ci/run installs rust-clippy)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return cargo


# -- F2: a linter that failed to run is `failed`, not a clean `ok` ------------------------------------------------


def test_go_vet_exit_1_on_a_broken_go_mod_is_a_failed_run_with_gos_error(tmp_path: Path) -> None:
    require("go")
    root = make_repo(tmp_path / "repo", {
        "svc/go.mod": "module example.com/qa2\n\ngo 1.19\n\nrequire (\n  example.com/nothere v1.0.0\n",
        "svc/main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%d\\n", "x")\n}\n'})
    report = _service(root).check(tools=["go vet"])
    (run,) = report.runs
    assert (run.status, run.exit_code) == ("failed", 1)
    assert run.message is not None and "go.mod" in run.message and "unterminated block" in run.message


def test_go_vet_findings_stay_ok(tmp_path: Path) -> None:
    require("go")
    root = make_repo(tmp_path / "repo", {
        "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
        "svc/main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%d\\n", "x")\n}\n'})
    report = _service(root).check(tools=["go vet"])
    assert report.runs[0].status == "ok" and [d.code for d in report.diagnostics] == ["printf"]


def test_clippy_exit_101_on_a_broken_cargo_toml_is_failed_but_a_deny_lint_is_a_finding(tmp_path: Path) -> None:
    _clippy()
    main = "fn main() {\n    let x = 5;\n    if x == x {\n        println!(\"a\");\n    }\n}\n"
    manifest = '[package]\nname = "m"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    root = make_repo(tmp_path / "repo", {"rs/Cargo.toml": manifest + 'serde = { version = "1"\n',
                                         "rs/src/main.rs": main})
    (run,) = _service(root).check(tools=["clippy"]).runs
    assert (run.status, run.exit_code) == ("failed", 101)
    assert run.message is not None and "Cargo.toml" in run.message and "unclosed inline table" in run.message
    write_files(root, {"rs/Cargo.toml": manifest})
    report = _service(root).check(tools=["clippy"])
    assert (report.runs[0].status, report.runs[0].exit_code) == ("ok", 101)
    assert [d.code for d in report.diagnostics] == ["clippy::eq_op"]


BIOME_FILES = {
    "web/package.json": '{"name": "web"}\n',
    "web/biome.json": '{"formatter": {"enabled": true, "bogusKey": 1}, "linter": {"enabled": true}}\n',
    "web/src/a.js": "var a = 1;\nlet b = 2;\nconsole.log(b == 2);\n",
}


def test_biome_exit_1_on_a_configuration_error_is_a_failed_run_with_its_stderr(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", BIOME_FILES)
    _js_tool(root, "web", "biome")
    report = _service(root).check(tools=["biome"])
    (run,) = report.runs
    assert (run.status, run.exit_code) == ("failed", 1) and report.diagnostics == ()
    assert run.message is not None and "bogusKey" in run.message
    # With the key removed, biome's findings (exit 1 with an error among them) are an ok run again.
    write_files(root, {"web/biome.json": '{"linter": {"enabled": true}}\n'})
    report = _service(root).check(tools=["biome"])
    assert report.runs[0].status == "ok" and "lint/suspicious/noDoubleEquals" in {d.code for d in report.diagnostics}


# -- F1: Biome 2.6's JSON records (message, location.start/end) ----------------------------------------------------

#: What `biome lint --reporter=json .` (Biome 2.6.9) printed in `web/` for src/a.js = "var a = 1;\nlet b = 2;\n
#: if ('été' && b == 2) {\n  console.log(b);\n}\n" and `"recommended": true` in biome.json.
BIOME_26_REPORT = (
    '{"summary":{"changed":0,"unchanged":2,"matches":0,"duration":4114818,"errors":1,"warnings":2,"infos":1,'
    '"skipped":0,"suggestedFixesSkipped":0,"diagnosticsNotPrinted":0,"scannerDuration":3764107},"diagnostics":['
    '{"severity":"info","message":"The use of the recommended field has been deprecated, and will removed in the '
    'next major version of Biome. Use preset instead.","category":"deserialize","location":{"path":"biome.json",'
    '"start":{"line":1,"column":12},"end":{"line":1,"column":61}},"advices":[]},'
    '{"severity":"warning","message":"This variable a is unused.","category":"lint/correctness/noUnusedVariables",'
    '"location":{"path":"src/a.js","start":{"line":1,"column":5},"end":{"line":1,"column":6}},"advices":[]},'
    '{"severity":"warning","message":"This let declares a variable that is only assigned once.",'
    '"category":"lint/style/useConst","location":{"path":"src/a.js","start":{"line":2,"column":1},'
    '"end":{"line":2,"column":4}},"advices":[{"start":{"line":2,"column":5},"end":{"line":2,"column":6},'
    '"text":"Safe fix: Use const instead."}]},'
    '{"severity":"error","message":"Using == may be unsafe if you are relying on type coercion.",'
    '"category":"lint/suspicious/noDoubleEquals","location":{"path":"src/a.js","start":{"line":3,"column":16},'
    '"end":{"line":3,"column":18}},"advices":[]}],"command":"lint"}')


def test_biome_2_6_records_are_read(tmp_path: Path) -> None:
    found = parse_biome(BIOME_26_REPORT, PathMap(tmp_path, tmp_path / "web"))
    assert [(d.path, d.line, d.column, d.end_line, d.end_column, d.code, d.severity, d.fixable) for d in found] == [
        ("web/biome.json", 1, 12, 1, 61, "deserialize", "info", False),
        ("web/src/a.js", 1, 5, 1, 6, "lint/correctness/noUnusedVariables", "warning", False),
        ("web/src/a.js", 2, 1, 2, 4, "lint/style/useConst", "warning", True),
        ("web/src/a.js", 3, 16, 3, 18, "lint/suspicious/noDoubleEquals", "error", False)]
    assert found[3].message == "Using == may be unsafe if you are relying on type coercion."


def test_biome_records_of_an_unknown_shape_fail_the_run_instead_of_reading_as_clean(tmp_path: Path) -> None:
    report = json.loads(BIOME_26_REPORT)
    for record in report["diagnostics"]:
        record["location"] = {"path": record["location"]["path"], "range": [1, 2]}
    with pytest.raises(ValueError, match="record shape"):
        parse_biome(json.dumps(report), PathMap(tmp_path, tmp_path / "web"))
    with pytest.raises(ValueError, match="no JSON report"):
        parse_biome("", PathMap(tmp_path, tmp_path / "web"))


# -- F3: ruff's `unsafe-fixes = true` ------------------------------------------------------------------------------

UNSAFE_BODY = 'def g():\n    """Doc."""\n    return dict([(1, 2)])\n'


def _ruff_fix_twin(root: Path, twin: Path) -> None:
    shutil.copytree(root, twin, ignore=shutil.ignore_patterns(".git"))
    subprocess.run([RUFF, "check", "--fix", "."], cwd=twin, capture_output=True, check=False)


@pytest.mark.parametrize("config", [
    "[tool.ruff]\nunsafe-fixes = true\n[tool.ruff.lint]\nextend-select = ['C4']\n",
    # The setting comes through `extend` too.
    "[tool.ruff]\nextend = 'base.toml'\n[tool.ruff.lint]\nextend-select = ['C4']\n",
])
def test_unsafe_fixes_the_config_enables_are_fixable_and_fixed_like_ruff_check_fix(tmp_path: Path,
                                                                                   config: str) -> None:
    root = make_repo(tmp_path / "repo", {"pyproject.toml": config, "base.toml": "unsafe-fixes = true\n",
                                         "unsafe.py": UNSAFE_BODY, "mixed.py": UNSAFE_BODY + "import os\n"})
    _ruff_fix_twin(root, tmp_path / "twin")
    service = _service(root)
    report = service.check(tools=["ruff"])
    assert {(d.path, d.code): d.fixable for d in report.diagnostics} == {
        ("mixed.py", "C406"): True, ("mixed.py", "F401"): True, ("unsafe.py", "C406"): True}
    text = render_lint_check(LintCheckResult.model_validate(report.model_dump()))
    assert "unsafe.py:3:12: C406 Unnecessary list literal (rewrite as a dict literal) [*]" in text
    fixed = service.check(tools=["ruff"], fix=True, paths=["mixed.py", "unsafe.py"])
    assert fixed.fix is not None and [f.path for f in fixed.fix.files] == ["mixed.py", "unsafe.py"]
    for name in ("mixed.py", "unsafe.py"):
        assert (root / name).read_bytes() == (tmp_path / "twin" / name).read_bytes()
    assert b"{1: 2}" in (root / "unsafe.py").read_bytes()


def test_unsafe_fixes_stay_unfixable_without_the_setting(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"pyproject.toml": "[tool.ruff.lint]\nextend-select = ['C4']\n",
                                         "sub/ruff.toml": "unsafe-fixes = true\n[lint]\nextend-select = ['C4']\n",
                                         "unsafe.py": UNSAFE_BODY, "sub/nested.py": UNSAFE_BODY})
    report = _service(root).check(tools=["ruff"])
    assert {(d.path, d.code): d.fixable for d in report.diagnostics} == {
        ("unsafe.py", "C406"): False, ("sub/nested.py", "C406"): True}


# -- F5: identical diagnostics are all counted ---------------------------------------------------------------------


def test_identical_diagnostics_of_one_run_are_kept_and_counted_like_ruff(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"ruff.toml": '[lint]\nextend-select = ["TID252"]\n',
                                         "pkg/__init__.py": "a = 1\nb = 2\n", "pkg/sub/__init__.py": "",
                                         "pkg/sub/m.py": "from .. import a, b\n\nprint(a, b)\n"})
    ruff = json.loads(subprocess.run([RUFF, "check", "--no-fix", "--output-format", "json", "."], cwd=root,
                                     capture_output=True, text=True, check=False).stdout)
    assert len(ruff) == 2
    report = _service(root).check(tools=["ruff"])
    assert report.total == report.runs[0].diagnostics == len(report.diagnostics) == report.errors == 2


# -- F6: a failed run's message keeps the cause ----------------------------------------------------------------------


def test_a_failed_runs_message_keeps_the_start_of_stderr_where_eslint_names_the_cause(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "type": "module"}\n',
        "web/eslint.config.js": 'export default [{ rules: { "no-such-rule": "error" } }];\n',
        "web/src/a.js": "var a = 1;\n"})
    _js_tool(root, "web", "eslint")
    (run,) = _service(root).check(tools=["eslint"]).runs
    assert run.status == "failed" and run.message is not None
    assert 'Could not find "no-such-rule"' in run.message and len(run.message) <= MESSAGE_CHARS + 3
    assert excerpt("cause " + "x" * 2000 + " end").startswith("cause ")
    assert excerpt("cause " + "x" * 2000 + " end").endswith(" end")


# -- F4: notebooks --------------------------------------------------------------------------------------------------


def _notebook(*cells: tuple[str, str]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True),
                                  **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                                 for kind, source in cells],
                       "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1) + "\n"


def test_notebook_diagnostics_name_their_cell_and_a_named_notebook_is_linted(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        "pyproject.toml": "[tool.ruff.lint]\nextend-select = ['I']\n",
        "nb.ipynb": _notebook(("code", "import sys\nprint(sys.argv)\n"), ("markdown", "# notes\n"),
                              ("code", "x = 1\nimport os\n")),
        "ok.py": "x = 1\n"})
    concise = subprocess.run([RUFF, "check", "--no-fix", "--output-format", "concise", "nb.ipynb"], cwd=root,
                             capture_output=True, text=True, check=False).stdout
    expected = sorted(line for line in concise.splitlines() if line.startswith("nb.ipynb:"))
    assert "nb.ipynb:cell 3:2:8: F401 [*] `os` imported but unused" in expected
    for paths in (None, ["nb.ipynb"], ["nb.ipynb", "ok.py"]):
        report = _service(root).check(tools=["ruff"], paths=paths)
        assert report.notes == () and report.total == len(expected)
        assert [(d.cell, d.line, d.column, d.code) for d in report.diagnostics] == [(1, 1, 1, "I001"),
                                                                                   (3, 2, 8, "F401")]
        text = render_lint_check(LintCheckResult.model_validate(report.model_dump()))
        lines = sorted(f"{line.removesuffix(' [*]').split(': ', 1)[0]}" for line in text.splitlines()
                       if line.startswith("nb.ipynb:"))
        assert lines == sorted(line.split(": ", 1)[0] for line in expected)
        assert "nb.ipynb:cell 3:2:8: F401 `os` imported but unused [*]" in text


# -- F7: mypy's `exclude` holds for paths named in the call ---------------------------------------------------------


@pytest.mark.parametrize("exclude", ['["^gen/"]', "'^gen/'"])
def test_paths_mypys_exclude_covers_are_not_checked_when_named(tmp_path: Path, exclude: str) -> None:
    root = make_repo(tmp_path / "repo", {
        "pyproject.toml": f"[tool.mypy]\nexclude = {exclude}\n\n[tool.ruff]\nextend-exclude = ['gen']\n",
        "gen/g.py": 'x: int = "s"\n', "src/a.py": 'y: int = "s"\n'})
    service = _service(root)
    for paths in (["gen/g.py"], ["gen"]):
        report = service.check(tools=["mypy"], paths=paths)
        assert report.diagnostics == () and report.runs == () and report.notes
    both = service.check(tools=["mypy"], paths=["gen", "src/a.py"])
    assert [(d.path, d.code) for d in both.diagnostics] == [("src/a.py", "assignment")]
    assert both.runs[0].status == "ok"
    everything = service.check(tools=["mypy"])
    assert [d.path for d in everything.diagnostics] == ["src/a.py"]


def test_mypy_ini_exclude_is_applied_to_named_paths(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"mypy.ini": "[mypy]\nexclude = (?x)(\n    ^gen/\n  )\n",
                                         "gen/deep/g.py": 'x: int = "s"\n', "a.py": 'y: int = "s"\n'})
    report = _service(root).check(tools=["mypy"], paths=["gen/deep/g.py", "a.py"])
    assert [d.path for d in report.diagnostics] == ["a.py"]
