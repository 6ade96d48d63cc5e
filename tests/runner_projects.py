"""Fixture projects for the tests subsystem: small real projects for pytest, go, cargo, jest and vitest.

No network: the Go module and the crate have no dependencies; jest/vitest come from the npm cache dir that
``.ci/run`` fills (``CODEPLANE_TEST_JS_DIR``, default ``~/.cache/codeplane/js-runners``) and are linked in as
the project's ``node_modules``. A missing toolchain skips its tests on a developer machine; under CI
(``CI=true``) it fails them, so CI can never pass by skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

JS_DIR = Path(os.environ.get("CODEPLANE_TEST_JS_DIR", str(Path.home() / ".cache" / "codeplane" / "js-runners")))


def require(tool: str) -> str:
    """The tool's path; skip (developer machine) or fail (CI) when it is not installed."""
    found = shutil.which(tool)
    if tool == "cargo" and found is None and (Path.home() / ".cargo/bin/cargo").is_file():
        found = str(Path.home() / ".cargo/bin/cargo")
    if tool in ("jest", "vitest"):
        candidate = JS_DIR / "node_modules" / ".bin" / tool
        found = str(candidate) if candidate.is_file() and shutil.which("node") else None
    if found is None:
        message = f"{tool} is not installed (.ci/run installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def link_node_modules(project: Path) -> None:
    require("jest")
    (project / "node_modules").symlink_to(JS_DIR / "node_modules", target_is_directory=True)


PYTEST_PROJECT: dict[str, str] = {
    "pytest.ini": "[pytest]\n",
    "tests/test_math.py": (
        "import pytest\n\n"
        "def test_adds():\n    assert 1 + 1 == 2\n\n"
        "def test_fails():\n    assert 1 + 1 == 3, 'math is hard'\n\n"
        "@pytest.mark.skip(reason='later')\ndef test_skipped():\n    pass\n\n"
        "@pytest.mark.xfail(reason='known')\ndef test_known_bug():\n    assert False\n\n"
        "class TestGroup:\n    def test_in_class(self):\n        assert True\n"
    ),
    "tests/test_ok.py": "def test_one():\n    pass\n\ndef test_two():\n    pass\n",
    "tests/test_broken.py": "import no_such_module_here\n\ndef test_never():\n    pass\n",
    "tests/helpers.py": "VALUE = 1\n",
}

GO_PROJECT: dict[str, str] = {
    "svc/go.mod": "module example.com/svc\n\ngo 1.19\n",
    "svc/calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "svc/calc/calc_test.go": (
        'package calc\n\nimport "testing"\n\n'
        "func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n\n"
        "func TestAddFails(t *testing.T) {\n\tif Add(1, 1) != 3 {\n"
        "\t\tt.Errorf(\"expected 3, got %d\", Add(1, 1))\n\t}\n}\n\n"
        'func TestSkipped(t *testing.T) { t.Skip("not now") }\n'
    ),
    "svc/util/util_test.go": 'package util\n\nimport "testing"\n\nfunc TestOK(t *testing.T) {}\n',
    "svc/broken/broken_test.go": 'package broken\n\nimport "testing"\n\nfunc TestX(t *testing.T) { undefined() }\n',
}

CARGO_PROJECT: dict[str, str] = {
    "rs/Cargo.toml": '[package]\nname = "rs-fixture"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
    "rs/src/lib.rs": (
        "/// Adds, as the example (which fails: doc-tests run too) says.\n///\n/// ```\n"
        "/// assert_eq!(rs_fixture::add(2, 2), 5);\n/// ```\n"
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n"
        "#[cfg(test)]\nmod tests {\n    use super::*;\n"
        "    #[test]\n    fn adds() { assert_eq!(add(1, 2), 3); }\n"
        '    #[test]\n    fn fails() { assert_eq!(add(1, 1), 3, "math is hard"); }\n'
        "    #[test]\n    #[ignore]\n    fn ignored() {}\n}\n"
    ),
    "rs/tests/integration.rs": "#[test]\nfn works() { assert_eq!(rs_fixture::add(2, 2), 4); }\n",
}

_JS_TEST = (
    "describe('sum', () => {\n"
    "  test('adds', () => { expect(1 + 2).toBe(3); });\n"
    "  test('fails', () => { expect(1 + 1).toBe(3); });\n"
    "  test.skip('skipped', () => {});\n"
    "});\n"
)

JEST_PROJECT: dict[str, str] = {
    "web/package.json": '{"name": "web", "private": true, "devDependencies": {"jest": "29"}}\n',
    "web/src/sum.test.js": _JS_TEST,
    "web/src/__tests__/ok.js": "test('ok', () => { expect(true).toBe(true); });\n",
    "web/src/syntax.test.js": "test('never', () => {\n",
}

VITEST_PROJECT: dict[str, str] = {
    "ui/package.json": '{"name": "ui", "private": true, "type": "module", "devDependencies": {"vitest": "3"}}\n',
    "ui/vitest.config.mjs": "export default {test: {include: ['**/*.test.mjs']}};\n",
    "ui/sum.test.mjs": "import {describe, test, expect} from 'vitest';\n" + _JS_TEST,
}


def cargo_lib_tests_pass(root: Path, target: Path) -> None:
    """``cargo test --lib`` of the crate at ``root`` passes (offline, its build in ``target``)."""
    cargo = require("cargo")
    env = {**os.environ, "CARGO_TARGET_DIR": str(target), "CARGO_NET_OFFLINE": "true"}
    tested = subprocess.run([cargo, "test", "--offline", "--quiet", "--lib"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr



def javac_run(root: Path, main: str = "com.acme.Main") -> str:
    """Compile every ``.java`` file under ``root`` with javac and run ``main``: its standard output (skips the test
    where javac is not installed; a compile error fails it with javac's message)."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("javac is not installed")
    sources = sorted(str(p.relative_to(root)) for p in root.rglob("*.java"))
    built = subprocess.run(["javac", "-d", "out", *sources], cwd=root, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr
    return subprocess.run(["java", "-cp", "out", main], cwd=root, capture_output=True, text=True,
                          check=True).stdout
