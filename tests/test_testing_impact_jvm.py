"""JVM selection that must not drop a test a change breaks (QA 13): Java code sees its own package without an
import, takes a package with a wildcard (``import qa.shapes.*;``, ``import static qa.shapes.Shapes.*;``) and may
name a class by its full name inline. A test using a changed class in any of those ways is selected, and ``javac``
plus ``java`` say which tests the change really breaks."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from codeplane.index.service import IndexService
from codeplane.testing import TestingService
from codeplane.testing.impact import ImpactResult
from tests.builders import make_repo
from tests.index_helpers import selecting
from tests.runner_projects import require


def _check(condition: str) -> str:
    """A test class body: ``main`` fails when ``condition`` does not hold (no JUnit needed to run it)."""
    return f"    public static void main(String[] a) {{ if (!({condition})) throw new AssertionError(); }}\n}}\n"


MAIN = "src/main/java/qa/"
TEST = "src/test/java/qa/"
JAVA: dict[str, str] = {
    "pom.xml": "<project><modelVersion>4.0.0</modelVersion><groupId>qa</groupId><artifactId>qa</artifactId>"
               "<version>1.0</version></project>\n",
    f"{MAIN}shapes/Shape.java": "package qa.shapes;\n\npublic interface Shape {\n    int area();\n"
                                '    default String describe() { return "area=" + area(); }\n}\n',
    f"{MAIN}shapes/Square.java": "package qa.shapes;\n\npublic class Square implements Shape {\n"
                                 "    private final int s;\n    public Square(int s) { this.s = s; }\n"
                                 "    public int area() { return s * s; }\n}\n",
    f"{MAIN}shapes/Shapes.java": "package qa.shapes;\n\npublic final class Shapes {\n"
                                 "    public static final int LIMIT = 100;\n}\n",
    f"{MAIN}util/Text.java": "package qa.util;\n\npublic class Text {\n"
                             '    public static String shout(String s) { return s.toUpperCase() + "!"; }\n}\n',
    # Same package as Square: no import.
    f"{TEST}shapes/SquareTest.java": "package qa.shapes;\n\npublic class SquareTest {\n"
                                     + _check("new Square(3).area() == 9"),
    f"{TEST}util/WildTest.java": "package qa.util;\n\nimport qa.shapes.*;\n\npublic class WildTest {\n"
                                 + _check("new Square(2).area() == 4"),
    f"{TEST}util/StaticTest.java": "package qa.util;\n\nimport static qa.shapes.Shapes.*;\n\n"
                                   "public class StaticTest {\n" + _check("LIMIT == 100"),
    f"{TEST}util/FullNameTest.java": "package qa.util;\n\npublic class FullNameTest {\n"
                                     + _check("new qa.shapes.Square(1).area() == 1"),
    # Same package as Text: no import.
    f"{TEST}util/TextTest.java": "package qa.util;\n\npublic class TextTest {\n"
                                 + _check('Text.shout("a").equals("A!")'),
    f"{TEST}other/UnrelatedTest.java": "package qa.other;\n\npublic class UnrelatedTest {\n" + _check("1 + 1 == 2"),
}
TESTS = sorted(p for p in JAVA if p.startswith(TEST))

Repo = tuple[Path, IndexService, TestingService]


@pytest.fixture(scope="module")
def jvm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    repo = make_repo(tmp_path_factory.mktemp("jvm") / "repo", JAVA)
    with selecting(repo) as (index, service):
        yield repo, index, service


@contextmanager
def edited(jvm: Repo, path: str, old: str, new: str) -> Iterator[None]:
    repo, index, _ = jvm
    file = repo / path
    before = file.read_text()
    assert old in before, old
    file.write_text(before.replace(old, new, 1))
    index.refresh_paths([path])
    try:
        yield
    finally:
        file.write_text(before)
        index.refresh_paths([path])


def _selected(jvm: Repo, change: str) -> tuple[set[str], ImpactResult]:
    view = jvm[2].discover(affected_by=[change])
    assert view.impact is not None
    return {t.target_id for t in view.targets}, view.impact


def _failing(repo: Path, out: Path) -> set[str]:
    """The test files whose class fails when compiled with every source by ``javac`` and run by ``java``."""
    sources = sorted(str(p) for p in repo.rglob("*.java"))
    subprocess.run([require("javac"), "-d", str(out), *sources], check=True, capture_output=True, timeout=300)
    failed = set()
    for path in TESTS:
        name = path.removeprefix("src/test/java/").removesuffix(".java").replace("/", ".")
        if subprocess.run([require("java"), "-cp", str(out), name], capture_output=True, timeout=120,
                          check=False).returncode:
            failed.add(path)
    return failed


def test_a_changed_class_selects_its_same_package_wildcard_and_full_name_users(jvm: Repo, tmp_path: Path) -> None:
    with edited(jvm, f"{MAIN}shapes/Square.java", "return s * s;", "return s * s + 1;"):
        selected, impact = _selected(jvm, f"{MAIN}shapes/Square.java:6")
        failing = _failing(jvm[0], tmp_path / "a")
    assert failing == {f"{TEST}shapes/SquareTest.java", f"{TEST}util/WildTest.java", f"{TEST}util/FullNameTest.java"}
    assert failing <= selected, (selected, impact.hint)
    assert f"{TEST}other/UnrelatedTest.java" not in selected
    assert f"{TEST}util/TextTest.java" not in selected


def test_a_changed_constant_selects_a_static_wildcard_user_and_a_class_its_same_package_test(
        jvm: Repo, tmp_path: Path) -> None:
    with edited(jvm, f"{MAIN}shapes/Shapes.java", "LIMIT = 100", "LIMIT = 4"):
        selected, _ = _selected(jvm, f"{MAIN}shapes/Shapes.java:4")
        failing = _failing(jvm[0], tmp_path / "b")
    assert failing == {f"{TEST}util/StaticTest.java"}
    assert failing <= selected, selected
    with edited(jvm, f"{MAIN}util/Text.java", '+ "!"', '+ "?"'):
        selected, impact = _selected(jvm, f"{MAIN}util/Text.java:4")
        failing = _failing(jvm[0], tmp_path / "c")
    assert failing == {f"{TEST}util/TextTest.java"}
    assert failing <= selected, selected
    assert impact.confidence == "complete"

