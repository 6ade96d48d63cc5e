"""Report parsers on captured runner outputs (tests/fixtures/test_reports), and command templates.

pytest, go, libtest, jest and vitest fixtures were captured from the real tools; Surefire, Gradle, TRX,
RSpec and ExUnit ones follow those tools' documented formats (their toolchains are not installed in CI).
"""

from __future__ import annotations

from pathlib import Path

from codeplane.testing.reports.exunit import parse_exunit
from codeplane.testing.reports.gojson import GoJsonStream
from codeplane.testing.reports.jestjson import parse_jest_json
from codeplane.testing.reports.junit import parse_junit
from codeplane.testing.reports.libtest import LibtestStream
from codeplane.testing.reports.rspecjson import parse_rspec_json
from codeplane.testing.reports.trx import parse_trx
from codeplane.testing.runners import RUNNERS, Project, Toolchain
from codeplane.testing.runners.base import CoverageSetup
from codeplane.testing.runners.jvm import JunitFilesParser, class_name
from tests.builders import make_repo

FIXTURES = Path(__file__).parent / "fixtures" / "test_reports"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_pytest_junit_keeps_outcomes_and_failure_text() -> None:
    cases = {c.name: c for c in parse_junit(_read("pytest_junit_xunit1.xml"))}
    assert {n: c.outcome for n, c in cases.items()} == {
        "test_ok": "passed", "test_fail": "failed", "test_skip": "skipped", "test_xf": "xfail"}
    assert cases["test_fail"].group == "tests/test_a.py"
    assert cases["test_fail"].exception_type == "AssertionError"
    assert "assert 1 == 2" in cases["test_fail"].traceback


def test_go_json_stream_gives_cases_subtests_and_package_state() -> None:
    stream = GoJsonStream()
    for line in _read("go_test.jsonl").splitlines():
        stream.feed(line)
    assert stream.finished() == {"example.com/goproj/calc", "example.com/goproj/util"}
    cases = {c.name: c for c in stream.cases("example.com/goproj/calc")}
    assert cases["TestAdd"].outcome == "passed"
    assert cases["TestAddFails/sub"].outcome == "failed"
    assert "expected 3, got 2" in cases["TestAddFails/sub"].message
    assert cases["TestSkipped"].outcome == "skipped"
    assert stream.packages["example.com/goproj/calc"].outcome == "fail"
    assert stream.packages["example.com/goproj/util"].outcome == "pass"


def test_libtest_output_gives_panic_message_without_thread_id() -> None:
    stream = LibtestStream()
    for line in _read("libtest.txt").splitlines():
        stream.feed(line)
    cases = {c.name: c for c in stream.cases("lib")}
    assert {n: c.outcome for n, c in cases.items()} == {
        "tests::adds": "passed", "tests::ignored": "skipped", "tests::fails": "failed"}
    assert cases["tests::fails"].message == "assertion `left == right` failed: math is hard"
    assert "(601)" not in cases["tests::fails"].traceback
    assert stream.summaries == [("FAILED", 0.14)]


def test_jest_and_vitest_json_share_one_parser() -> None:
    for name in ("jest.json", "vitest.json"):
        cases, durations = parse_jest_json(_read(name))
        outcomes = {c.name: c.outcome for c in cases}
        assert outcomes == {"sum > adds": "passed", "sum > fails": "failed", "sum > skipped": "skipped"}, name
        failed = next(c for c in cases if c.outcome == "failed")
        assert "Object.is equality" in failed.message and "\x1b[" not in failed.traceback
        assert all(path.endswith((".test.js", ".test.mjs")) for path in durations)


def test_surefire_and_gradle_junit_reports() -> None:
    cases = {c.name: c for c in parse_junit(_read("surefire_TEST-com.example.CalculatorTest.xml"))}
    assert {n.split("::")[-1]: c.outcome for n, c in cases.items()} == {
        "addsNumbers": "passed", "dividesByZero": "failed", "parsesInput": "error", "notYet": "skipped"}
    failed = cases["com.example.CalculatorTest::dividesByZero"]
    assert failed.exception_type == "org.opentest4j.AssertionFailedError"
    assert failed.group == "com.example.CalculatorTest"
    gradle = parse_junit(_read("gradle_TEST-com.example.StringsTest.xml"))
    assert [c.outcome for c in gradle] == ["passed", "failed"]


def test_trx_rspec_and_exunit_reports() -> None:
    trx = {c.name: c for c in parse_trx(_read("dotnet.trx"))}
    assert {n: c.outcome for n, c in trx.items()} == {
        "Calc.Tests.MathTests.Adds": "passed", "Calc.Tests.MathTests.Divides": "failed",
        "Calc.Tests.MathTests.Later": "skipped"}
    assert trx["Calc.Tests.MathTests.Divides"].group == "Calc.Tests.MathTests"
    assert "line 18" in trx["Calc.Tests.MathTests.Divides"].traceback
    assert abs(trx["Calc.Tests.MathTests.Divides"].duration_s - 0.012) < 1e-9
    rspec = parse_rspec_json(_read("rspec.json"))
    assert [(c.group, c.outcome) for c in rspec] == [
        ("spec/models/user_spec.rb", "passed"), ("spec/models/user_spec.rb", "failed"),
        ("spec/lib/parser_spec.rb", "skipped")]
    assert rspec[1].exception_type == "RSpec::Expectations::ExpectationNotMetError"
    exunit = parse_exunit(_read("exunit.txt"))
    assert (exunit.total, exunit.failed, exunit.passed) == (4, 1, 3)
    assert exunit.failures[0].group == "test/my_app_test.exs"
    assert exunit.failures[0].name == "test adds numbers (MyAppTest)"


def test_command_templates_of_runners_without_a_local_toolchain(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pom.xml": "<project/>\n", "src/test/java/com/example/CalculatorTest.java": "class CalculatorTest {}\n",
        "spec/models/user_spec.rb": "", "test/my_app_test.exs": "", "Calc.Tests/Calc.Tests.csproj":
            '<Project><ItemGroup><PackageReference Include="Microsoft.NET.Test.Sdk" /></ItemGroup></Project>\n',
    }, commit=False)
    work = tmp_path / "work"
    work.mkdir()
    files = ["src/test/java/com/example/CalculatorTest.java"]
    maven = RUNNERS["maven"]
    project = Project("maven", ".", "marker:pom.xml")
    (target,) = maven.targets(project, repo, files, ("mvn",))
    assert target.selector == "com.example.CalculatorTest" == class_name(files[0])
    inv = maven.invocation(project, repo, Toolchain(("mvn",)), [target], work)
    assert inv.argv == ("mvn", "-B", "-Dtest=com.example.CalculatorTest", "-Dsurefire.failIfNoSpecifiedTests=false",
                        "test")
    report = repo / "target/surefire-reports/TEST-com.example.CalculatorTest.xml"
    assert inv.report_files == (report,)
    report.parent.mkdir(parents=True)
    report.write_text(_read("surefire_TEST-com.example.CalculatorTest.xml"), encoding="utf-8")
    (result,) = JunitFilesParser(inv, [target]).finish(1, "", "", killed=False)
    assert result.outcome == "failed" and len(result.cases) == 4
    gradle = RUNNERS["gradle"].invocation(Project("gradle", ".", "m"), repo, Toolchain(("gradle",)), [target], work)
    assert gradle.argv == ("gradle", "test", "--console=plain", "--tests", "com.example.CalculatorTest")
    rspec = RUNNERS["rspec"]
    (spec,) = rspec.targets(Project("rspec", ".", "m"), repo, ["spec/models/user_spec.rb"], ("rspec",))
    inv = rspec.invocation(Project("rspec", ".", "m"), repo, Toolchain(("rspec",)), [spec], work)
    assert inv.argv[:5] == ("rspec", "--format", "json", "--out", str(work / "rspec.json"))
    assert inv.argv[-1] == "spec/models/user_spec.rb"
    mix = RUNNERS["mix"]
    (exs,) = mix.targets(Project("mix", ".", "m"), repo, ["test/my_app_test.exs"], ("mix", "test"))
    assert mix.invocation(Project("mix", ".", "m"), repo, Toolchain(("mix", "test")), [exs], work).argv == (
        "mix", "test", "--no-color", "test/my_app_test.exs")
    dotnet = RUNNERS["dotnet"]
    (proj,) = dotnet.targets(Project("dotnet", "Calc.Tests", "m"), repo, ["Calc.Tests/Calc.Tests.csproj"],
                             ("dotnet", "test"))
    inv = dotnet.invocation(Project("dotnet", "Calc.Tests", "m"), repo, Toolchain(("dotnet", "test")), [proj], work)
    assert inv.argv[:3] == ("dotnet", "test", "Calc.Tests.csproj")
    assert inv.argv[-1] == f"trx;LogFileName={work / 'results.trx'}"


def test_libtest_pre_1_73_panic_format() -> None:
    stream = LibtestStream()
    for line in ("test tests::fails ... FAILED", "", "failures:", "", "---- tests::fails stdout ----",
                 "thread 'tests::fails' panicked at 'assertion failed: x == 3', src/lib.rs:9:18",
                 "", "failures:", "    tests::fails", "",
                 "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"):
        stream.feed(line)
    (case,) = stream.cases("lib")
    assert case.outcome == "failed" and case.message == "assertion failed: x == 3"


def test_pytest_invocation_loads_the_event_plugin_and_the_coverage_recorder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"tests/test_a.py": "def test_a():\n    pass\n"}, commit=False)
    runner = RUNNERS["pytest"]
    project = Project("pytest", ".", "default")
    (target,) = runner.targets(project, repo, ["tests/test_a.py"], ("pytest",))
    work = tmp_path / "work"
    plain = runner.invocation(project, repo, Toolchain(("pytest",)), [target], work)
    assert "codeplane_pytest_coverage" not in plain.argv and "CODEPLANE_COVERAGE_OUT" not in plain.env
    setup = CoverageSetup(work / "coverage", repo, work / "lines.json")
    inv = runner.invocation(project, repo, Toolchain(("pytest",)), [target], work, coverage=setup)
    assert inv.argv[:3] == ("pytest", "-p", "codeplane_pytest_events")
    assert inv.argv[inv.argv.index("codeplane_pytest_coverage") - 1] == "-p", "no coverage.py needed in the repo"
    assert not any(a.startswith("--cov") for a in inv.argv)
    assert inv.env["CODEPLANE_COVERAGE_OUT"] == str(work / "coverage")
    assert inv.env["CODEPLANE_COVERAGE_ROOT"] == str(repo)
    assert inv.env["CODEPLANE_COVERAGE_LINES"] == str(work / "lines.json")
    assert inv.argv[-1] == "tests/test_a.py"
    assert inv.env["PYTHONPATH"].split(":")[0].endswith("_pytest_plugin")
    assert inv.report_files == (), "CodePlane's own command needs no JUnit fallback"
    assert not any(a.startswith("--junitxml") for a in inv.argv)
    wrapped = runner.invocation(project, repo, Toolchain(("tox", "--"), configured=True), [target], work)
    assert wrapped.report_files == (work / "junit.xml",) and f"--junitxml={work / 'junit.xml'}" in wrapped.argv
    # No re-run in the same interpreter (it passed on state the first attempt left): the plugin has none to turn on.
    assert not any("RERUN" in key for key in inv.env)
