"""lint_check's tsc agrees with the project's own build (`tsc -b`) for TypeScript project references, on sources,
and writes nothing into the work tree (QA59 F2): no TS6305 on a fresh clone, no stale "ok" after an edit to a
referenced package, a solution config checks its projects, and no .tsbuildinfo or dist/ is left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.core.config import LintConfig, MutationConfig
from codeplane.lint import LintReport, LintService
from codeplane.mutation import MutationEngine
from codeplane.server.tools.lint import LintCheckResult, render_lint_check
from tests.builders import answer_text, make_repo, mcp_client, running_server, write_files
from tests.runner_projects import JS_DIR

COMPOSITE = '{ "compilerOptions": { "composite": true, "strict": true, "types": [], "rootDir": "src", ' \
            '"outDir": "dist" }, "include": ["src"]%s }\n'
#: QA59's r2: packages a and b are composite, b references a and calls a's double(2); the root is a solution
#: config. Only node_modules is ignored, so anything a check writes shows in `git status`.
REFERENCES = {
    ".gitignore": "node_modules\n",
    "tsconfig.json": '{ "files": [], "references": [{ "path": "packages/a" }, { "path": "packages/b" }] }\n',
    "packages/a/tsconfig.json": COMPOSITE % "",
    "packages/b/tsconfig.json": COMPOSITE % ', "references": [{ "path": "../a" }]',
    "packages/a/src/index.ts": "export function double(x: number): number { return x * 2 }\n",
    "packages/b/src/index.ts": 'import { double } from "../../a/src/index"\nexport const four: number = double(2)\n',
}
STRING_DOUBLE = {"packages/a/src/index.ts": "export function double(x: string): string { return x + x }\n"}


def _tsc() -> Path:
    tsc = JS_DIR / "node_modules" / ".bin" / "tsc"
    if not tsc.is_file() or shutil.which("node") is None:
        message = f"typescript is not installed in {JS_DIR} (.ci/run installs it with npm)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return tsc


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    _tsc()
    root = make_repo(tmp_path / "repo", files)
    (root / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)
    return root


def _service(root: Path) -> LintService:
    return LintService(root, LintConfig(), MutationEngine(root, MutationConfig()))


def _untracked(root: Path) -> list[str]:
    """Everything git sees as new or changed, ignored files included (the node_modules link is expected)."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if line != "!! node_modules")


def _tsc_b(root: Path) -> tuple[int, list[str]]:
    """The project's own build: `tsc -b` at the root, its diagnostic lines."""
    proc = subprocess.run([str(_tsc()), "-b", "--pretty", "false"], cwd=root, capture_output=True, text=True,
                          check=False)
    return proc.returncode, sorted(line for line in proc.stdout.splitlines() if "): error TS" in line)


def _lines(report: LintReport) -> list[str]:
    """The diagnostics as tsc prints them (paths from the repository root)."""
    return sorted(f"{d.path}({d.line},{d.column}): {d.severity} {d.code}: {d.message}" for d in report.diagnostics)


def test_fresh_clone_with_project_references_is_clean_as_tsc_b_says_and_nothing_is_written(tmp_path: Path) -> None:
    root = _repo(tmp_path, REFERENCES)
    service = _service(root)
    # The root's solution config builds both packages, as `tsc -b` there does: their own runs would repeat it.
    assert [i.key for i in service.tools()] == ["tsc"]
    report = service.check()
    # Before: packages/b/src/index.ts TS6305 "Output file .../a/dist/index.d.ts has not been built from source".
    assert report.diagnostics == ()
    assert [(r.tool, r.root, r.status) for r in report.runs] == [("tsc", ".", "ok")]
    # Before: packages/a/tsconfig.tsbuildinfo and packages/b/tsconfig.tsbuildinfo were left in the work tree.
    assert _untracked(root) == []
    assert _tsc_b(root) == (0, [])


def test_edit_to_a_built_referenced_package_is_checked_against_its_source(tmp_path: Path) -> None:
    root = _repo(tmp_path, REFERENCES)
    assert _tsc_b(root) == (0, [])  # the user's own build: dist/ holds a's old double(x: number)
    built = {p: p.read_bytes() for p in sorted(root.glob("packages/*/dist/*")) + sorted(root.glob("**/*.tsbuildinfo"))
             if "node_modules" not in p.parts}
    write_files(root, STRING_DOUBLE)
    report = _service(root).check()
    # Before: "tsc: ok / tsc@packages/a: ok / tsc@packages/b: ok", read from the stale dist/index.d.ts.
    got = _lines(report)
    assert [d.code for d in report.diagnostics] == ["TS2322", "TS2345"]
    assert [(r.root, r.status, r.diagnostics) for r in report.runs] == [(".", "ok", 2)]
    # The build's outputs are as the user's build left them: the check emitted nothing to disk.
    assert {p: p.read_bytes() for p in built} == built
    code, expected = _tsc_b(root)
    assert code != 0 and got == expected


def test_solution_config_alone_checks_every_referenced_project(tmp_path: Path) -> None:
    root = _repo(tmp_path, {**REFERENCES, **STRING_DOUBLE})
    report = _service(root).check(tools=["tsc"])
    # Before: `tsc -p .` on the root's `"files": []` config checked no file and answered "tsc: ok".
    assert [(r.root, r.status, r.diagnostics) for r in report.runs] == [(".", "ok", 2)]
    assert [(d.path, d.line, d.code) for d in report.diagnostics] == [
        ("packages/b/src/index.ts", 2, "TS2322"), ("packages/b/src/index.ts", 2, "TS2345")]
    text = render_lint_check(LintCheckResult.model_validate(report, from_attributes=True))
    assert "packages/b/src/index.ts:2:14: TS2322" in text and text.endswith("\ntsc: 2 diagnostics"), text
    assert _untracked(root) == []


def test_packages_without_a_solution_config_above_them_keep_their_own_runs(tmp_path: Path) -> None:
    files = {k: v for k, v in REFERENCES.items() if k != "tsconfig.json"}
    root = _repo(tmp_path, {**files, **STRING_DOUBLE})
    service = _service(root)
    # b builds a (its reference) but is not above it: a path in packages/a is a's run's to check.
    assert [i.key for i in service.tools()] == ["tsc@packages/a", "tsc@packages/b"]
    report = service.check(paths=["packages"])
    assert [(r.root, r.status, r.diagnostics) for r in report.runs] == [
        ("packages/a", "ok", 0), ("packages/b", "ok", 2)]
    assert [d.code for d in report.diagnostics] == ["TS2322", "TS2345"]
    assert _untracked(root) == []


def test_incremental_project_is_checked_without_writing_its_build_info(tmp_path: Path) -> None:
    root = _repo(tmp_path, {
        ".gitignore": "node_modules\n",
        "tsconfig.json": '{"compilerOptions": {"incremental": true, "strict": true, "types": []}, '
                         '"include": ["src"]}\n',
        "src/a.ts": "export const x: number = 'a'\n"})
    proc = subprocess.run([str(_tsc()), "--noEmit", "--pretty", "false", "-p", ".",
                           "--tsBuildInfoFile", str(tmp_path / "elsewhere.tsbuildinfo")],
                          cwd=root, capture_output=True, text=True, check=False)
    report = _service(root).check(tools=["tsc"])
    assert _lines(report) == sorted(proc.stdout.splitlines()) and len(report.diagnostics) == 1
    # Before: tsc --noEmit wrote tsconfig.tsbuildinfo next to tsconfig.json.
    assert _untracked(root) == []


def test_a_tsc_that_is_not_the_typescript_package_is_a_failed_run_not_ok(tmp_path: Path) -> None:
    _tsc()
    root = make_repo(tmp_path / "repo", {".gitignore": "node_modules\n", **REFERENCES})
    fake = root / "node_modules" / ".bin" / "tsc"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\nexit 0\n")  # prints nothing, exits 0: the old check read that as "ok"
    fake.chmod(0o755)
    report = _service(root).check(tools=["tsc"])
    [run] = report.runs
    assert run.status == "failed" and run.exit_code == 70
    assert run.message is not None and "cannot load the TypeScript package" in run.message


def test_a_pnpm_shim_tsc_checks_through_the_projects_typescript(tmp_path: Path) -> None:
    tsc = _tsc()
    root = make_repo(tmp_path / "repo", {".gitignore": "node_modules\n", **REFERENCES, **STRING_DOUBLE})
    modules = root / "node_modules"
    (modules / ".bin").mkdir(parents=True)
    (modules / "typescript").symlink_to(tsc.resolve().parent.parent, target_is_directory=True)
    shim = modules / ".bin" / "tsc"  # pnpm's .bin entries are shell scripts, not links into the package
    shim.write_text('#!/bin/sh\nexec node "$(dirname "$0")/../typescript/bin/tsc" "$@"\n')
    shim.chmod(0o755)
    report = _service(root).check(tools=["tsc"])
    assert [(r.root, r.status, r.diagnostics) for r in report.runs] == [(".", "ok", 2)]


@pytest.mark.anyio
async def test_lint_check_through_mcp_reports_the_referenced_package_edit_of_a_fresh_clone(tmp_path: Path) -> None:
    root = _repo(tmp_path, REFERENCES)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            clean = answer_text(await client.call_tool("lint_check", {}))
            # Before: "packages/b/src/index.ts:1:24: TS6305 Output file ... has not been built from source file".
            assert clean == "tsc: ok", clean
            write_files(root, STRING_DOUBLE)
            text = answer_text(await client.call_tool("lint_check", {"paths": ["packages/b"]}))
    assert [line.split(" ", 2)[:2] for line in text.splitlines()[:2]] == [
        ["packages/b/src/index.ts:2:14:", "TS2322"], ["packages/b/src/index.ts:2:36:", "TS2345"]], text
    assert text.endswith("\ntsc: 2 diagnostics"), text
    # The server's own .codeplane/ and .cplignore aside, only the edit: no dist/, no .tsbuildinfo.
    assert [line for line in _untracked(root) if not line.startswith(("!! .codeplane", "!! .cplignore"))] == [
        " M packages/a/src/index.ts"]
