"""Go, cargo, jest and vitest results checked against what each runner's own CLI says (QA34), real runners."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing import RunSnapshot, TestingService
from tests.builders import make_repo
from tests.runner_projects import link_node_modules, require
from tests.testing_service import finish, service_for


def _outcomes(snapshot: RunSnapshot) -> dict[str, str]:
    return {r.target.target_id: r.outcome for r in snapshot.targets}


def _cases(snapshot: RunSnapshot) -> dict[str, str]:
    return {c.case_id: c.outcome for r in snapshot.targets if r.final for c in r.final.cases}


def _message(snapshot: RunSnapshot, target_id: str) -> str:
    final = next(r.final for r in snapshot.targets if r.target.target_id == target_id)
    assert final is not None
    return final.message


def test_a_throwing_before_or_after_all_hook_fails_the_file_as_the_runners_do(
        tmp_path: Path, services: list[TestingService]) -> None:
    """vitest (beforeAll throws: cases skipped) and jest (afterAll throws: cases passed) fail the file and exit 1;
    the run said "2 skipped" and "2 passed", and passed."""
    require("jest")
    require("vitest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/__tests__/hooks.test.js": ("afterAll(() => { throw new Error('cleanup failed in afterAll'); });\n"
                                        "test('h1', () => {});\ntest('h2', () => {});\n"),
        "ui/package.json": '{"name": "ui", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
        "ui/before.test.mjs": ("import {beforeAll, afterAll, test, expect} from 'vitest';\n"
                               "beforeAll(() => { throw new Error('setup failed in beforeAll'); });\n"
                               "test('b1', () => { expect(1).toBe(1); });\ntest('b2', () => {});\n"),
        "ui/after.test.mjs": ("import {afterAll, test} from 'vitest';\n"
                              "afterAll(() => { throw new Error('cleanup failed in afterAll'); });\n"
                              "test('h1', () => {});\n"),
    }, commit=False)
    link_node_modules(repo / "web")
    link_node_modules(repo / "ui")
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run(), timeout=240)
    assert run.state == "failed"
    assert _outcomes(run) == {"web/__tests__/hooks.test.js": "error", "ui/before.test.mjs": "error",
                              "ui/after.test.mjs": "error"}, _outcomes(run)
    assert "cleanup failed in afterAll" in _message(run, "web/__tests__/hooks.test.js")
    assert "setup failed in beforeAll" in _message(run, "ui/before.test.mjs")
    assert "cleanup failed in afterAll" in _message(run, "ui/after.test.mjs")
    # The cases are kept as the runner reported them.
    assert _cases(run)["web/__tests__/hooks.test.js::h1"] == "passed"
    assert _cases(run)["ui/before.test.mjs::b1"] == "skipped"


def test_a_jest_file_that_fails_to_parse_shows_its_syntax_error_not_only_babel_frames(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("jest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/__tests__/syntax.test.js": "test('broken', () => { expect(1).toBe(1) ;\n"}, commit=False)
    link_node_modules(repo / "web")
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run(), timeout=240)
    message = _message(run, "web/__tests__/syntax.test.js")
    assert _outcomes(run) == {"web/__tests__/syntax.test.js": "error"}
    assert "SyntaxError" in message and "Unexpected token" in message, message
    assert len(message) <= 2000


_OUTPUT_TESTS = (
    # Its captured output looks like a passing test and a summary: neither is a case, and its panic is the message.
    "#[test]\nfn logs_then_fails() {\n    println!(\"running sub-step\");\n    println!(\"test step_one ... ok\");\n"
    "    println!(\"test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\");\n"
    "    panic!(\"real failure\");\n}\n\n"
    # A child process's output is not captured: without a newline, it starts the line of this test's result.
    "#[test]\nfn spawns_child() {\n"
    "    std::process::Command::new(\"printf\").arg(\"child-output-no-newline\").status().unwrap();\n}\n\n"
    "#[test]\nfn zz_last() {}\n")


def test_cargo_harness_false_targets_by_exit_code_and_libtest_output_read_by_its_shapes(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``harness = false``: ``cargo test --test custom`` exits 0, CodePlane said error (no ``test result:`` line).
    A failing test's captured ``test step_one ... ok`` made a phantom case and hid its panic; a test after a child's
    unterminated output vanished."""
    require("cargo")
    repo = make_repo(tmp_path / "repo", {
        "rs/Cargo.toml": ('[package]\nname = "mini"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n\n'
                          '[[test]]\nname = "custom"\nharness = false\n\n'
                          '[[test]]\nname = "custom_fails"\nharness = false\n'),
        "rs/src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
        # A libtest flag given to it would be an argument it refuses.
        "rs/tests/custom.rs": ('fn main() {\n    assert!(std::env::args().len() == 1, "unexpected arguments");\n'
                               '    assert_eq!(mini::add(1, 1), 2);\n    println!("all good");\n}\n'),
        "rs/tests/custom_fails.rs": 'fn main() {\n    assert_eq!(mini::add(1, 1), 3, "custom check failed");\n}\n',
        "rs/tests/output.rs": _OUTPUT_TESTS}, commit=False)
    service = service_for(repo, retry_failed=False)
    services.append(service)
    run = finish(service.start_run(["rs/tests/custom.rs", "rs/tests/custom_fails.rs", "rs/tests/output.rs"]),
                 timeout=300)
    assert _outcomes(run) == {"rs/tests/custom.rs": "passed", "rs/tests/custom_fails.rs": "failed",
                              "rs/tests/output.rs": "failed"}, [(r.target.target_id, r.final) for r in run.targets]
    assert _cases(run) == {
        "rs/tests/custom.rs::(main)": "passed", "rs/tests/custom_fails.rs::(main)": "failed",
        "rs/tests/output.rs::logs_then_fails": "failed", "rs/tests/output.rs::spawns_child": "passed",
        "rs/tests/output.rs::zz_last": "passed"}, _cases(run)
    failed = {c.case_id: c for r in run.targets if r.final for c in r.final.cases if c.failing}
    assert failed["rs/tests/output.rs::logs_then_fails"].message == "real failure"
    assert "custom check failed" in failed["rs/tests/custom_fails.rs::(main)"].message
    target = next(r.target for r in run.targets if r.target.target_id == "rs/tests/custom.rs")
    assert target.cmd[-2:] == ("--test", "custom")


_GO_BAD = (
    'package bad\n\nimport (\n\t"fmt"\n\t"testing"\n)\n\n'
    "func TestTable(t *testing.T) {\n"
    '\tfor _, name := range []string{"ok", "wrong", "also/slash"} {\n\t\tname := name\n'
    '\t\tt.Run(name, func(t *testing.T) {\n\t\t\tif name != "ok" {\n\t\t\t\tt.Fatal("bad " + name)\n'
    "\t\t\t}\n\t\t})\n\t}\n}\n\n"
    "func ExampleDiv() {\n\tfmt.Println(3)\n\t// Output: 4\n}\n\n"
    "func ExampleNoOutput() {\n\tfmt.Println(1)\n}\n")


_GO_FILES = {
    "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
    "svc/bad/bad_test.go": _GO_BAD,
    "svc/bad/panic_test.go": ('package bad\n\nimport "testing"\n\n'
                              "func TestZPanic(t *testing.T) { var m map[string]int; m[\"x\"] = 1 }\n\n"
                              "func TestZAfterPanic(t *testing.T) {}\n"),
    # Built only with a tag: not in the binary, so never counted as missing.
    "svc/bad/tagged_test.go": '//go:build slow\n\npackage bad\n\nimport "testing"\n\nfunc TestSlow(t *testing.T) {}\n',
}


def test_a_go_retry_of_a_subtest_reruns_it_alone(tmp_path: Path, services: list[TestingService]) -> None:
    """Retrying ``bad::TestTable/wrong`` ran ``TestTable`` whole and reported its sibling ``also/slash`` as failed."""
    require("go")
    repo = make_repo(tmp_path / "repo", _GO_FILES)
    service = service_for(repo)
    services.append(service)
    one = finish(service.start_run(["svc/bad::TestTable/wrong"]), timeout=240)
    assert _cases(one) == {"svc/bad::TestTable": "failed", "svc/bad::TestTable/wrong": "failed"}, _cases(one)
    (record,) = one.targets
    assert [a.result.outcome for a in record.attempts] == ["failed", "failed"]
    assert all(len(a.result.cases) == 2 for a in record.attempts)


def test_go_tests_after_a_panic_are_reported_as_never_ran(tmp_path: Path, services: list[TestingService]) -> None:
    """After ``TestZPanic`` panicked, ``TestZAfterPanic`` and the examples vanished from the answer."""
    require("go")
    repo = make_repo(tmp_path / "repo", _GO_FILES)
    service = service_for(repo)
    services.append(service)
    whole = finish(service.start_run(["svc/bad"]), timeout=240)
    cases = _cases(whole)
    assert cases["svc/bad::TestZPanic"] == "failed"
    for name in ("TestZAfterPanic", "ExampleDiv"):
        assert cases[f"svc/bad::{name}"] == "error", cases
    assert "svc/bad::ExampleNoOutput" not in cases and "svc/bad::TestSlow" not in cases
    final = whole.targets[0].final
    assert final is not None
    stopped = next(c for c in final.cases if c.case_id == "svc/bad::TestZAfterPanic")
    assert stopped.message.startswith("never ran")


def test_jest_and_vitest_targets_follow_the_projects_own_test_file_patterns(
        tmp_path: Path, services: list[TestingService]) -> None:
    """``testMatch``/``testPathIgnorePatterns`` and ``test.include``/``exclude`` were not read: a configured file was
    never a target, and an excluded one was, whose run leaked an internal report path."""
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        "web/jest.config.js": ("module.exports = { testMatch: ['**/__tests__/**/*.test.js', '**/checks/**/*.js'],\n"
                               "  testPathIgnorePatterns: ['/node_modules/', 'only\\\\.test\\\\.js'] };\n"),
        "web/__tests__/math.test.js": "test('a', () => {});\n",
        "web/__tests__/only.test.js": "test('b', () => {});\n",
        "web/checks/mathcheck.js": "test('c', () => {});\n",
        "web/src/sum.test.js": "test('d', () => {});\n",
        "ui/package.json": '{"name": "ui", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
        "ui/vitest.config.ts": (
            "import { defineConfig, configDefaults } from 'vitest/config';\n"
            "export default defineConfig({ resolve: { alias: { '@': '/src' } },\n"
            "  test: { include: ['test/**/*.test.ts', 'checks/**/*.check.ts'],\n"
            "          exclude: [...configDefaults.exclude, 'test/shape.test.ts'],\n"
            "          coverage: { include: ['src/**'] } } });\n"),
        "ui/test/math.test.ts": "import {test} from 'vitest';\ntest('m', () => {});\n",
        "ui/test/shape.test.ts": "import {test} from 'vitest';\ntest('s', () => {});\n",
        "ui/checks/area.check.ts": "import {test} from 'vitest';\ntest('a', () => {});\n",
        "ui/other.spec.ts": "import {test} from 'vitest';\ntest('o', () => {});\n",
    })
    service = service_for(repo)
    services.append(service)
    found = sorted(t.target_id for t in service.discover().targets)
    assert found == ["ui/checks/area.check.ts", "ui/test/math.test.ts", "web/__tests__/math.test.js",
                     "web/checks/mathcheck.js"], found


def test_a_jest_config_read_no_further_keeps_the_defaults_and_a_file_jest_skips_errors_without_internal_paths(
        tmp_path: Path, services: list[TestingService]) -> None:
    require("jest")
    repo = make_repo(tmp_path / "repo", {
        "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
        # testMatch from a variable: not read, so jest's defaults decide the targets.
        "web/jest.config.js": "const mine = ['**/checks/*.js'];\nmodule.exports = { testMatch: mine };\n",
        "web/__tests__/a.test.js": "test('a', () => {});\n"}, commit=False)
    link_node_modules(repo / "web")
    service = service_for(repo, retry_failed=False)
    services.append(service)
    assert [t.target_id for t in service.discover().targets] == ["web/__tests__/a.test.js"]
    run = finish(service.start_run(), timeout=240)
    message = _message(run, "web/__tests__/a.test.js")
    assert _outcomes(run) == {"web/__tests__/a.test.js": "error"}
    assert "No tests found" in message and ".codeplane" not in message, message
