"""The lint subsystem on real repositories with real linters: discovery, diagnostics equal to each linter's own
JSON, fixes as one atomic mutation batch, hanging linters killed at their timeout, paging and bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from codeplane.core.config import LintConfig, MutationConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_bytes
from codeplane.lint import Diagnostic, LintService
from codeplane.lint.doctor import check_linters
from codeplane.mutation import MutationEngine
from codeplane.server.tools.lint import LintCheckResult, render_lint_check
from tests.builders import make_repo, write_files
from tests.runner_projects import JS_DIR, require

RUFF = str(Path(sys.executable).parent / "ruff")
MYPY = str(Path(sys.executable).parent / "mypy")

PY_FILES = {
    "pyproject.toml": "[project]\nname = 'pkg'\n\n[tool.ruff.lint]\nselect = ['F', 'I', 'E', 'UP']\n\n"
                      "[tool.mypy]\nstrict = true\nfiles = ['pkg']\n",
    "pkg/__init__.py": "",
    "pkg/a.py": "import sys\nimport os\nfrom typing import List\n\n\ndef f(x: int) -> List[str]:\n"
                "    return x\n\n\nprint(sys.argv)\n",
    "pkg/b.py": "import json, re\n\n\ndef g() -> int:\n    return 'no'\n\n\nvalue = json.dumps(1)\n",
    "pkg/clean.py": "def h() -> int:\n    return 1\n",
}

JS_FILES = {
    "web/package.json": '{"name": "web", "private": true, "type": "module"}\n',
    "web/eslint.config.js": 'export default [{ rules: { "no-unused-vars": "error", "prefer-const": "error", '
                            '"no-var": "warn", "eqeqeq": "error" } }];\n',
    "web/src/a.js": "var a = 1;\nlet b = 2;\nconsole.log(b == 2);\nexport function f(x) { return 1; }\n",
}

GO_FILES = {
    "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
    "svc/main.go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Printf("%d\\n", "x")\n}\n',
    "svc/pkg/p.go": "package pkg\n\nfunc F() int {\n\tx := 1\n\tx = x\n\treturn x\n}\n",
}


def _service(root: Path, **lint: object) -> LintService:
    engine = MutationEngine(root, MutationConfig())
    return LintService(root, LintConfig.model_validate(lint), engine)


def _eslint() -> str:
    candidate = JS_DIR / "node_modules" / ".bin" / "eslint"
    if not candidate.is_file() or shutil.which("node") is None:
        message = f"eslint is not installed in {JS_DIR} (.ci/run installs it with npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return str(candidate)


def _link_eslint(root: Path, project: str) -> None:
    _eslint()
    (root / project / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)


def _shape(d: Diagnostic) -> tuple[object, ...]:
    return (d.path, d.line, d.column, d.end_line, d.end_column, d.code, d.message, d.fixable)


@pytest.fixture
def py_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", PY_FILES)


# -- discovery ---------------------------------------------------------------------------------------------


def test_discovery_lists_configured_and_conventional_linters(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        **PY_FILES, **GO_FILES,
        "web/package.json": '{"name": "web"}\n', "web/eslint.config.js": "export default [];\n",
        "web/tsconfig.json": "{}\n", "web/biome.json": "{}\n", "svc/.golangci.yml": "linters: {}\n",
        "rs/Cargo.toml": "[workspace]\nmembers = ['member']\n", "rs/member/Cargo.toml": "[package]\nname='m'\n",
        "tools/mypy.ini": "[mypy]\n", "tools/x.py": "X = 1\n",
    })
    found = {(i.name, i.root): i for i in LintService(root, LintConfig()).tools()}
    assert sorted(found) == [("biome", "web"), ("clippy", "rs"), ("eslint", "web"), ("go vet", "svc"),
                             ("golangci-lint", "svc"), ("mypy", "."), ("mypy", "tools"), ("ruff", "."),
                             ("tsc", "web")]
    ruff = found[("ruff", ".")]
    assert ruff.config_file == "pyproject.toml" and ruff.found and ruff.can_fix
    assert ruff.extensions == (".py", ".pyi", ".ipynb")
    assert found[("mypy", "tools")].config_file == "tools/mypy.ini"
    assert found[("eslint", "web")].config_file == "web/eslint.config.js"
    assert found[("go vet", "svc")].config_file is None  # conventional for a Go module
    # Not installed here, and listed anyway: with how to install it, never an error.
    eslint = found[("eslint", "web")]
    assert not eslint.found and eslint.executable is None and "npm install" in (eslint.install_hint or "")
    assert found[("tsc", "web")].runnable and not found[("tsc", "web")].can_fix
    service = LintService(root, LintConfig())
    assert [(i.name, i.root) for i in service.select(["mypy@tools"])] == [("mypy", "tools")]
    assert [i.root for i in service.select(["mypy"])] == [".", "tools"]
    assert not found[("golangci-lint", "svc")].runnable  # listed; CodePlane does not read its output yet


def test_ruff_is_conventional_for_any_python_code_and_found_without_setup(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"script.py": "import os\n"})
    (ruff,) = LintService(root, LintConfig()).tools()
    assert (ruff.name, ruff.config_file, ruff.found) == ("ruff", None, True)
    report = LintService(root, LintConfig()).check()
    assert [(d.path, d.code) for d in report.diagnostics] == [("script.py", "F401")]


def test_ruff_reports_a_repository_holding_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    # Ruff fails whole (exit 2, "Failed to serialize cache data") writing its cache for such a name: checked again
    # without the cache, every file's diagnostics come back (QA s55: "ruff failed" and none at all).
    root = make_repo(tmp_path / "repo", {"script.py": "import os\n"})
    (root / "bad\udcff.py").write_bytes(b"import sys\n")
    report = LintService(root, LintConfig()).check()
    assert {r.tool: r.status for r in report.runs} == {"ruff": "ok"}, report.runs
    assert sorted(d.code for d in report.diagnostics) == ["F401", "F401"]


def test_doctor_names_a_missing_linter_and_how_to_install_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"web/package.json": '{"name": "web"}\n',
                                         "web/eslint.config.js": "export default [];\n"})
    results = check_linters(root)
    assert [(r.name, r.ok) for r in results] == [("linter eslint@web", False)]
    assert "npm install --save-dev eslint" in results[0].fix
    assert check_linters(make_repo(tmp_path / "py", {"a.py": "A = 1\n"}))[0].ok


# -- diagnostics equal the linters' own JSON -----------------------------------------------------------------


def test_ruff_diagnostics_equal_ruffs_own_json(py_repo: Path) -> None:
    raw = json.loads(subprocess.run([RUFF, "check", "--output-format", "json", "--no-fix", "."], cwd=py_repo,
                                    capture_output=True, text=True, check=False).stdout)
    expected = sorted((str(Path(r["filename"]).relative_to(py_repo)), r["location"]["row"], r["location"]["column"],
                       r["end_location"]["row"], r["end_location"]["column"], r["code"], r["message"],
                       bool(r["fix"]) and r["fix"]["applicability"] == "safe") for r in raw)
    report = _service(py_repo).check(tools=["ruff"])
    assert len(expected) >= 5
    assert sorted(_shape(d) for d in report.diagnostics) == expected
    assert [d.sort_key() for d in report.diagnostics] == sorted(d.sort_key() for d in report.diagnostics)
    assert {r.tool: r.status for r in report.runs} == {"ruff": "ok"}


def test_mypy_diagnostics_equal_mypys_own_json(py_repo: Path) -> None:
    proc = subprocess.run([MYPY, "-O", "json", "--no-error-summary"], cwd=py_repo, capture_output=True, text=True,
                          check=False)
    raw = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    # mypy's JSON columns are 0-based; diagnostics use the 1-based columns every linter prints.
    expected = sorted((r["file"], r["line"], r["column"] + 1, r["code"], r["severity"],
                       r["message"] + (f" ({r['hint']})" if r["hint"] else "")) for r in raw)
    report = _service(py_repo).check(tools=["mypy"])
    got = sorted((d.path, d.line, d.column, d.code, "note" if d.severity == "info" else d.severity, d.message)
                 for d in report.diagnostics)
    assert got == expected and len(got) >= 2


def test_diagnostics_a_linter_reports_outside_the_paths_asked_are_counted_apart(tmp_path: Path) -> None:
    # mypy checks what pkg/uses.py imports and reports pkg/a.py's errors too: the answer keeps the paths asked
    # about, and the run's line says how many it left out instead of counting them as if shown.
    root = make_repo(tmp_path / "repo", {**PY_FILES, "pkg/uses.py": "from pkg.a import f\n\nVALUE = f\n"})
    report = _service(root).check(paths=["pkg/uses.py"], tools=["mypy"])
    assert report.diagnostics == () and report.total == 0
    run = next(r for r in report.runs if r.tool == "mypy")
    assert run.status == "ok" and run.diagnostics == 0 and run.elsewhere >= 1, run
    text = render_lint_check(LintCheckResult.model_validate(report, from_attributes=True))
    assert f"mypy: no diagnostics here; {run.elsewhere} in other files, not shown" in text, text


def test_go_vet_diagnostics_equal_go_vets_own_json(tmp_path: Path) -> None:
    go = require("go")
    root = make_repo(tmp_path / "repo", GO_FILES)
    proc = subprocess.run([go, "vet", "-json", "./..."], cwd=root / "svc", capture_output=True, text=True,
                          check=False)
    expected = []
    decoder = json.JSONDecoder()
    text = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("#"))
    at = text.find("{")
    while at >= 0:
        value, end = decoder.raw_decode(text, at)
        for analyzers in value.values():
            for analyzer, items in analyzers.items():
                for item in items:
                    file, line, col = item["posn"].rsplit(":", 2)
                    expected.append((str(Path(file).relative_to(root)), int(line), int(col), analyzer,
                                     item["message"]))
        at = text.find("{", end)
    report = _service(root).check(tools=["go vet"])
    assert sorted((d.path, d.line, d.column, d.code, d.message) for d in report.diagnostics) == sorted(expected)
    assert {d.code for d in report.diagnostics} == {"printf", "assign"}


def test_eslint_diagnostics_equal_eslints_own_json(tmp_path: Path) -> None:
    eslint = _eslint()
    root = make_repo(tmp_path / "repo", JS_FILES)
    _link_eslint(root, "web")
    raw = json.loads(subprocess.run([eslint, "-f", "json", "."], cwd=root / "web", capture_output=True,
                                    text=True, check=False).stdout)
    expected = sorted((str(Path(r["filePath"]).relative_to(root)), m["line"], m["column"], m.get("endLine"),
                       m.get("endColumn"), m["ruleId"], m["message"], "fix" in m)
                      for r in raw for m in r["messages"])
    report = _service(root).check(tools=["eslint"])
    assert sorted(_shape(d) for d in report.diagnostics) == expected and len(expected) >= 4
    assert {d.severity for d in report.diagnostics if d.code == "no-var"} == {"warning"}


def test_tsc_diagnostics_equal_tscs_own_lines(tmp_path: Path) -> None:
    _eslint()  # .ci/run installs typescript with eslint
    tsc = JS_DIR / "node_modules" / ".bin" / "tsc"
    if not tsc.is_file():
        pytest.skip(f"typescript is not installed in {JS_DIR} (.ci/run installs it with npm)")
    root = make_repo(tmp_path / "repo", {
        # types: [] keeps the shared node_modules' @types (jest, node ...) out of the program.
        "ts/tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "types": []}, '
                            '"include": ["src"]}\n',
        "ts/src/a.ts": "const x: number = 'a';\nfunction f(a) {\n  return a;\n}\nexport { f, x };\n",
        "ts/src/ok.ts": "export const y: number = 1;\n"})
    _link_eslint(root, "ts")
    proc = subprocess.run([str(tsc), "--noEmit", "--pretty", "false", "-p", "."], cwd=root / "ts",
                          capture_output=True, text=True, check=False)
    expected = sorted(f"ts/{line}" for line in proc.stdout.splitlines() if line.startswith("src/"))
    report = _service(root).check(tools=["tsc"])
    got = sorted(f"{d.path}({d.line},{d.column}): {d.severity} {d.code}: {d.message}" for d in report.diagnostics)
    assert got == expected and len(got) == 2
    assert report.runs[0].status == "ok" and report.runs[0].exit_code == 2


BIOME_FILES = {
    "web/package.json": '{"name": "web"}\n',
    "web/biome.json": '{"linter": {"enabled": true, "rules": {"recommended": true}}}\n',
    # The non-ASCII text before `==` checks that byte spans become character columns.
    "web/src/a.js": "var a = 1;\nlet b = 2;\nif ('\u00e9t\u00e9' && b == 2) {\n  console.log(b);\n}\n",
    "web/src/ok.js": "export const c = 3;\n",
}


def _biome(root: Path) -> str:
    _eslint()  # .ci/run installs biome with eslint
    biome = JS_DIR / "node_modules" / ".bin" / "biome"
    if not biome.is_file():
        pytest.skip(f"biome is not installed in {JS_DIR} (.ci/run installs it with npm)")
    _link_eslint(root, "web")
    return str(biome)


def test_biome_diagnostics_equal_biomes_own_report(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", BIOME_FILES)
    biome = _biome(root)
    # Biome's rdjson report has line/column ranges; its JSON report (what CodePlane reads) has byte spans.
    raw = json.loads(subprocess.run([biome, "lint", "--reporter=rdjson", "."], cwd=root / "web", capture_output=True,
                                    text=True, check=False).stdout)
    expected = sorted((f"web/{d['location']['path']}", d["location"]["range"]["start"]["line"],
                       d["location"]["range"]["start"]["column"], d["location"]["range"]["end"]["line"],
                       d["location"]["range"]["end"]["column"], d["code"]["value"], d["message"])
                      for d in raw["diagnostics"])
    report = _service(root).check(tools=["biome"])
    assert sorted(_shape(d)[:7] for d in report.diagnostics) == expected and len(expected) >= 3
    assert {d.code: d.fixable for d in report.diagnostics}["lint/style/useConst"]


def test_fix_applies_biome_fixes_from_stdin_like_biome_write(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", BIOME_FILES)
    biome = _biome(root)
    twin = tmp_path / "twin"
    shutil.copytree(root, twin, symlinks=True)
    subprocess.run([biome, "lint", "--write", "."], cwd=twin / "web", capture_output=True, check=False)
    report = _service(root).check(fix=True)
    assert report.fix is not None and [f.path for f in report.fix.files] == ["web/src/a.js"]
    assert (root / "web/src/a.js").read_bytes() == (twin / "web/src/a.js").read_bytes()
    assert b"const b = 2;" in (root / "web/src/a.js").read_bytes()


def test_clippy_diagnostics_come_from_cargos_json(tmp_path: Path) -> None:
    cargo = require("cargo")
    if not (Path(cargo).parent / "cargo-clippy").is_file() and shutil.which("cargo-clippy") is None:
        message = "clippy is not installed (.ci/run installs rust-clippy)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    root = make_repo(tmp_path / "repo", {
        "rs/Cargo.toml": '[package]\nname = "m"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
        "rs/src/main.rs": "fn main() {\n    let x = 5;\n    if x == x {\n        println!(\"a\");\n    }\n}\n"})
    report = _service(root).check(tools=["clippy"])
    assert [(d.path, d.line, d.column, d.code, d.severity) for d in report.diagnostics] == [
        ("rs/src/main.rs", 3, 8, "clippy::eq_op", "error")]
    assert report.runs[0].status == "ok"


# -- scope, pages, bad input -----------------------------------------------------------------------------------


def test_paths_limit_the_run_to_those_files(py_repo: Path) -> None:
    report = _service(py_repo).check(paths=["pkg/b.py"])
    assert {d.path for d in report.diagnostics} == {"pkg/b.py"}
    assert {d.tool for d in report.diagnostics} == {"ruff", "mypy"}
    # A path no linter covers runs nothing: not a file of the wrong kind, not a directory without any.
    write_files(py_repo, {"notes.md": "# notes\n", "web/x.js": "var x = 1;\n"})
    nothing = _service(py_repo).check(paths=["notes.md"])
    assert nothing.runs == () and nothing.notes == ("no linter here lints notes.md",)
    assert _service(py_repo).check(paths=["web"]).runs == ()


def test_pages_follow_the_cursor_through_every_diagnostic(py_repo: Path) -> None:
    service = _service(py_repo)
    whole = service.check()
    first = service.check(limit=3)
    pages, report = list(first.diagnostics), first
    while report.next_cursor:
        report = service.page(report.next_cursor, limit=3)
        pages += report.diagnostics
    assert pages == list(whole.diagnostics) and first.total == whole.total > 3
    assert report.offset == len(pages) - len(report.diagnostics)
    with pytest.raises(CodePlaneError) as bad:
        service.page("lint_nope:3")
    assert bad.value.error is ErrorCode.INVALID_CURSOR


def test_diagnostics_beyond_the_cap_are_counted_not_kept(py_repo: Path) -> None:
    report = _service(py_repo, max_diagnostics=2).check(limit=10)
    assert report.truncated and report.total > 2 and len(report.diagnostics) == 2 and report.next_cursor is None
    # The severities and fixes count every diagnostic, as the total does ("7430 diagnostic(s): 5000 error").
    whole = _service(py_repo).check(limit=10)
    assert (report.errors, report.warnings, report.fixable) == (whole.errors, whole.warnings, whole.fixable)
    assert report.errors + report.warnings > 2


@pytest.mark.parametrize(("kwargs", "code"), [
    ({"tools": ["pylint"]}, ErrorCode.INVALID_ARGUMENTS),
    ({"paths": ["../outside.py"]}, ErrorCode.MUTATION_SCOPE_VIOLATION),
    ({"paths": ["pkg/nope.py"]}, ErrorCode.FILE_NOT_FOUND),
    ({"paths": [".git/config"]}, ErrorCode.MUTATION_SCOPE_VIOLATION),
])
def test_bad_input_is_a_typed_error(py_repo: Path, kwargs: dict[str, list[str]], code: ErrorCode) -> None:
    with pytest.raises(CodePlaneError) as caught:
        _service(py_repo).check(**kwargs)  # type: ignore[arg-type]
    assert caught.value.error is code


# -- fixes -------------------------------------------------------------------------------------------------------


def test_fix_applies_exactly_what_ruff_fix_would_as_one_batch(py_repo: Path, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(py_repo, twin)
    subprocess.run([RUFF, "check", "--fix", "."], cwd=twin, capture_output=True, check=False)
    before = {p: (py_repo / p).read_bytes() for p in ("pkg/a.py", "pkg/b.py", "pkg/clean.py")}
    report = _service(py_repo).check(tools=["ruff"], fix=True)
    assert report.fix is not None
    assert [f.path for f in report.fix.files] == ["pkg/a.py", "pkg/b.py"]
    for path in ("pkg/a.py", "pkg/b.py", "pkg/clean.py"):
        assert (py_repo / path).read_bytes() == (twin / path).read_bytes(), path
    delta = report.fix.delta
    assert delta.mutation_id == report.fix.mutation_id and delta.files_changed == 2
    for fixed in report.fix.files:
        assert fixed.old_sha256 == sha256_bytes(before[fixed.path])
        assert fixed.new_sha256 == sha256_bytes((py_repo / fixed.path).read_bytes())
    # What is left is what ruff cannot fix; nothing fixable remains.
    assert report.fixable == 0 and all(not d.fixable for d in report.diagnostics)
    assert report.total == sum(r.diagnostics for r in report.runs)


def test_fix_batch_leaves_every_file_as_it_was_when_one_changed_since_planning(py_repo: Path) -> None:
    service = _service(py_repo)
    plan = service.plan_fixes(service.select(["ruff"]), None)
    assert {f.path for f in plan.files} == {"pkg/a.py", "pkg/b.py"}
    before = {p: (py_repo / p).read_bytes() for p in ("pkg/a.py", "pkg/b.py")}
    changed = before["pkg/b.py"] + b"# edited meanwhile\n"
    (py_repo / "pkg/b.py").write_bytes(changed)
    with pytest.raises(CodePlaneError) as caught:
        service.apply_fixes(plan)
    assert caught.value.error is ErrorCode.MUTATION_PRECONDITION_FAILED
    assert (py_repo / "pkg/a.py").read_bytes() == before["pkg/a.py"]
    assert (py_repo / "pkg/b.py").read_bytes() == changed


def test_fix_applies_eslint_fixes_without_eslint_writing(tmp_path: Path) -> None:
    eslint = _eslint()
    root = make_repo(tmp_path / "repo", JS_FILES)
    _link_eslint(root, "web")
    twin = tmp_path / "twin"
    shutil.copytree(root, twin, symlinks=True)
    subprocess.run([eslint, "--fix", "."], cwd=twin / "web", capture_output=True, check=False)
    report = _service(root).check(fix=True)
    assert report.fix is not None and [f.path for f in report.fix.files] == ["web/src/a.js"]
    assert (root / "web/src/a.js").read_bytes() == (twin / "web/src/a.js").read_bytes()
    assert b"const a = 1;" in (root / "web/src/a.js").read_bytes()


def test_fix_with_nothing_to_fix_writes_nothing(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"pkg/clean.py": "def h() -> int:\n    return 1\n"})
    report = _service(root).check(fix=True)
    assert report.fix is None and report.total == 0 and report.notes == ()


def test_a_repository_without_linters_says_so(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"README.md": "# docs only\n"})
    report = _service(root).check()
    assert report.runs == () and report.notes == (
        "no linter is configured or conventional in this repository",)


# -- timeouts and missing linters ------------------------------------------------------------------------------


def test_a_hanging_linter_is_killed_at_its_timeout_with_its_process_group(py_repo: Path, tmp_path: Path) -> None:
    # The repository's own .venv/bin/ruff comes first: this one hangs, and leaves a grandchild behind.
    _service(py_repo).check(tools=["mypy"])  # a warm .mypy_cache: mypy stays well inside the short timeout
    pidfile = tmp_path / "grandchild.pid"
    fake = py_repo / ".venv" / "bin" / "ruff"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(0o755)
    service = _service(py_repo, timeout_sec=2)
    began = time.monotonic()
    report = service.check()
    took = time.monotonic() - began
    runs = {r.tool: r for r in report.runs}
    assert runs["ruff"].status == "timed_out" and "lint.timeout_sec" in (runs["ruff"].message or "")
    assert runs["mypy"].status == "ok" and {d.tool for d in report.diagnostics} == {"mypy"}
    assert took < 20
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_missing_linter_is_a_run_status_not_an_error(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {**JS_FILES, "a.py": "import os\n"})
    report = LintService(root, LintConfig()).check()
    runs = {r.tool: r for r in report.runs}
    assert runs["eslint"].status == "missing" and "npm install" in (runs["eslint"].message or "")
    assert runs["ruff"].status == "ok" and [d.code for d in report.diagnostics] == ["F401"]


def _fake(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)


def test_a_linter_that_fails_is_a_failed_run_with_its_message(py_repo: Path) -> None:
    _fake(py_repo / ".venv" / "bin" / "mypy", "import sys\nprint('mypy: error: bad config', file=sys.stderr)\n"
                                               "sys.exit(2)\n")
    report = _service(py_repo).check()
    runs = {r.tool: r for r in report.runs}
    assert runs["mypy"].status == "failed" and runs["mypy"].exit_code == 2
    assert "bad config" in (runs["mypy"].message or "")
    assert runs["ruff"].status == "ok" and {d.tool for d in report.diagnostics} == {"ruff"}


def test_an_eslint_fix_is_dropped_when_the_file_changed_while_eslint_ran(tmp_path: Path) -> None:
    # A stand-in eslint (no node needed): its dry run edits the file behind CodePlane's back.
    root = make_repo(tmp_path / "repo", {"web/package.json": '{"name": "web"}\n',
                                         "web/eslint.config.js": "export default [];\n",
                                         "web/a.js": "var a = 1;\n", "web/b.js": "var b = 2;\n"})
    _fake(root / "web" / "node_modules" / ".bin" / "eslint", """import json, os, sys
files = [os.path.abspath(f) for f in sys.argv[1:] if f.endswith(".js")] or [os.path.abspath("a.js"),
                                                                            os.path.abspath("b.js")]
fixing = "--fix-dry-run" in sys.argv
results = []
for path in files:
    text = open(path).read()
    entry = {"filePath": path, "messages": [] if fixing else [
        {"ruleId": "no-var", "severity": 1, "message": "Unexpected var", "line": 1, "column": 1, "fix": {}}]}
    if fixing:
        entry["output"] = text.replace("var ", "const ")
        if path.endswith("a.js"):
            open(path, "a").write("// edited meanwhile\\n")
    results.append(entry)
print(json.dumps(results))
sys.exit(1)
""")
    service = _service(root)
    plan = service.plan_fixes(service.select(["eslint"]), None)
    assert [f.path for f in plan.files] == ["web/b.js"]
    assert plan.notes == ("eslint: web/a.js: not fixed: the file changed while eslint ran",)
    service.apply_fixes(plan)
    assert (root / "web/b.js").read_text() == "const b = 2;\n"
    assert (root / "web/a.js").read_text() == "var a = 1;\n// edited meanwhile\n"


def test_a_fix_codeplane_may_not_write_is_left_with_a_note_and_the_rest_applied(py_repo: Path) -> None:
    write_files(py_repo, {".cplignore": "generated/\n", "generated/out.py": "import os\n"})
    report = _service(py_repo).check(tools=["ruff"], fix=True)
    assert report.fix is not None and [f.path for f in report.fix.files] == ["pkg/a.py", "pkg/b.py"]
    assert report.notes == ("ruff: generated/out.py: not fixed: excluded by .cplignore (or in a pruned directory); "
                            "CodePlane does not write there",)
    assert (py_repo / "generated/out.py").read_text() == "import os\n"
    assert [(d.path, d.code) for d in report.diagnostics] == [("generated/out.py", "F401")]


def test_close_kills_a_running_linter_and_refuses_new_runs(py_repo: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    fake = py_repo / ".venv" / "bin" / "ruff"
    fake.parent.mkdir(parents=True)
    fake.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}\nwait\n")
    fake.chmod(0o755)
    service = _service(py_repo, timeout_sec=120)
    reports = []
    worker = threading.Thread(target=lambda: reports.append(service.check(tools=["ruff"])))
    worker.start()
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    began = time.monotonic()
    service.close()
    worker.join(30)
    assert not worker.is_alive() and time.monotonic() - began < 10
    (run,) = reports[0].runs
    assert run.status == "failed" and run.exit_code is not None and run.exit_code < 0
    assert not _alive(int(pidfile.read_text()))
    (after,) = service.check(tools=["ruff"]).runs
    assert after.status == "failed" and after.message == "not run: the server is stopping"


def test_eslint_reads_a_projects_legacy_eslintrc(tmp_path: Path) -> None:
    # ESLint 9 reads only eslint.config.*: on qs (an .eslintrc) every run failed with "ESLint couldn't find an
    # eslint.config.(js|mjs|cjs) file". CodePlane tells it to read the legacy config the project has.
    _eslint()
    root = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web"}\n',
        "web/.eslintrc.json": '{"root": true, "parserOptions": {"ecmaVersion": 2020}, '
                              '"rules": {"no-unused-vars": "error"}}\n',
        "web/src/a.js": "var unused = 1;\n"})
    _link_eslint(root, "web")
    report = _service(root).check(tools=["eslint"])
    assert [(r.tool, r.status) for r in report.runs] == [("eslint", "ok")], report.runs
    assert [(d.path, d.line, d.code) for d in report.diagnostics] == [("web/src/a.js", 1, "no-unused-vars")]
