"""``semantic_diff`` repeats and pages: a repeated query on an unchanged state reuses its report, a page looks up
the tests of its own changes only, and only the files test selection reads get their lines diffed. Real git
repositories, the real index and the real testing service; counters make the reuse observable."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from codeplane.analysis import SemanticDiffService
from codeplane.analysis import service as service_module
from codeplane.analysis.blobstore import BlobFactsStore
from codeplane.analysis.facts import file_defs
from codeplane.analysis.impact import SHARP_FILES
from codeplane.analysis.sides import GitSides, changed_files
from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig, IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.testing import ImpactIndex, TestingService
from codeplane.testing.discovery import indexed_paths
from tests.builders import make_repo

MODULES = 6


def _files() -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {"pkg/__init__.py": "", ".gitignore": ".codeplane/\n",
                                     "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = ['tests']\n"}
    for n in range(MODULES):
        files[f"pkg/m{n}.py"] = f"def f{n}(a):\n    return a\n"
        files[f"tests/test_m{n}.py"] = f"from pkg.m{n} import f{n}\n\n\ndef test_f{n}():\n    assert f{n}(1) == 1\n"
    return files


class Counting:
    """The real testing service's ``tests_for``, counting its calls."""

    def __init__(self, testing: TestingService) -> None:
        self.testing = testing
        self.calls: list[list[str]] = []

    def __call__(self, paths: Sequence[str], ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                 ) -> list[str]:
        self.calls.append(list(paths))
        return self.testing.tests_for(paths, ranges)


@pytest.fixture
def indexed(tmp_path: Path) -> Iterator[tuple[Path, IndexService, Counting]]:
    root = make_repo(tmp_path / "repo", _files())
    for n in range(MODULES):
        (root / f"pkg/m{n}.py").write_text(f"def f{n}(a):\n    return a + {n}\n")
    layout = RepoLayout(root)
    index = IndexService(root, layout, IndexConfig(watch=False))
    index.register_indexer(StructuralIndexer())
    index.start()
    assert index.wait_ready(60), index.status()
    testing = TestingService(root, CodePlaneConfig().tests, layout, ArtifactStore(layout.artifacts_dir, 24),
                             impact=ImpactIndex(index.read_connection),
                             files_version=lambda: index.epoch if index.ready else None,
                             files_source=lambda: indexed_paths(index.read_connection))
    try:
        yield root, index, Counting(testing)
    finally:
        index.stop()


def test_a_repeated_query_reuses_its_report_and_an_edit_is_never_served_stale(
        indexed: tuple[Path, IndexService, Counting]) -> None:
    root, index, tests_for = indexed
    service = SemanticDiffService(root, index, tests_for=tests_for)
    first = service.diff(limit=100)
    assert service.reports_built == 1 and len(first.changes) == MODULES
    calls = len(tests_for.calls)
    again = service.diff(limit=100)
    # Nothing compared, parsed or looked up again: the same report (a repeat took as long as the first call).
    assert service.reports_built == 1 and len(tests_for.calls) == calls and again.report is first.report
    # An edit the index has not seen yet (no watcher here: same epoch) still changes the key: the file is hashed.
    (root / "pkg/m0.py").write_text("def f0(a, b):\n    return a\n")
    edited = service.diff(limit=100)
    assert service.reports_built == 2
    f0 = next(c for c in edited.changes if c.qualified_name == "f0")
    assert f0.change == "signature_changed", f0
    # Another query (a different scope) is a different report.
    service.diff(paths=["pkg/m1.py"], limit=100)
    assert service.reports_built == 3


def test_a_page_looks_up_the_tests_of_its_own_changes_only(indexed: tuple[Path, IndexService, Counting]) -> None:
    root, index, tests_for = indexed
    service = SemanticDiffService(root, index, tests_for=tests_for)
    page = service.diff(limit=1)
    report = page.report
    assert report.page_tests is not None and report.page_tests.looked_up == 1
    # One walk for the union (the hint's count), one for the page's file: not one per changed file.
    assert tests_for.calls == [[f"pkg/m{n}.py" for n in range(MODULES)], ["pkg/m0.py"]]
    assert page.changes[0].impact is not None and page.changes[0].impact.affected_test_files == ("tests/test_m0.py",)
    assert report.affected_tests == tuple(f"tests/test_m{n}.py" for n in range(MODULES))
    assert f"re-run {MODULES} affected test targets" in page.agentic_hint
    assert page.next_cursor is not None
    second = service.diff(cursor=page.next_cursor, limit=1)
    assert report.page_tests.looked_up == 2 and second.changes[0].qualified_name == "f1"
    # The pages shown filled in their changes' tests: the same query still answers the same cursor.
    assert service.diff(limit=1).next_cursor == page.next_cursor
    assert second.changes[0].impact is not None and second.changes[0].impact.affected_test_files == (
        "tests/test_m1.py",)
    # Each change's list is what looking its file up alone gives (as when every file was looked up up front).
    for n in range(MODULES):
        assert sorted({t.split("::")[0] for t in tests_for.testing.tests_for([f"pkg/m{n}.py"])}) == [
            f"tests/test_m{n}.py"]


def test_only_the_files_test_selection_reads_get_their_lines_diffed(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    count = SHARP_FILES + 5
    files: dict[str, str | bytes] = {f"m{n:02}.py": f"def f{n}():\n    return {n}\n" for n in range(count)}
    root = make_repo(tmp_path / "r", files)
    for n in range(count):
        (root / f"m{n:02}.py").write_text(f"def f{n}():\n    return {n + 1}\n")
    diffed: list[int] = []
    real = service_module.changed_spans

    def counted(old: Sequence[str], new: Sequence[str]) -> tuple[tuple[int, int], ...]:
        diffed.append(1)
        return real(old, new)

    monkeypatch.setattr(service_module, "changed_spans", counted)
    def no_tests(paths: Sequence[str], ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> list[str]:
        return []

    page = SemanticDiffService(root, tests_for=no_tests).diff(limit=100)
    assert len(page.changes) == count
    assert len(diffed) == SHARP_FILES  # was one per changed file


def test_a_batch_of_blob_facts_is_kept_across_restarts(tmp_path: Path) -> None:
    store = BlobFactsStore(tmp_path / "facts.db")
    defs = [(f"m{n}.py", f"{n:040x}", file_defs(f"m{n}.py", f"def f{n}():\n    pass\n".encode())) for n in range(3)]
    store.put_many(defs)
    store.close()
    reopened = BlobFactsStore(tmp_path / "facts.db")
    assert [reopened.get(path, blob) for path, blob, _ in defs] == [d for _, _, d in defs]


SOURCE = ("import os\n\n\ndef f(a):\n    return a\n\n\nclass C:\n    def m(self):\n        return 1\n")


@pytest.mark.parametrize(("edited", "kept", "expected"), [
    # A header, a comment between definitions, a trailer, blank lines: settled without extracting either version.
    ("# header\n" + SOURCE, True, []),
    (SOURCE.replace("\n\nclass C:", "\n# between\n\nclass C:"), True, []),
    (SOURCE + "# trailer\n\n", True, []),
    (SOURCE.replace("import os\n\n", "import os\n\n\n\n"), True, []),
    # Inside a definition: extracted, and reported as before.
    (SOURCE.replace("    return a\n", "    # why\n    return a\n"), False, [("f", "body_changed", ("comments_only",))]),
    (SOURCE.replace("        return 1\n", "        return 1\n        # trailing\n"), False, None),
    (SOURCE.replace("    return a\n", "    return a + 1\n"), False, [("f", "body_changed", ("minor_change",))]),
    # A comment-shaped line that is code: a string's content.
    (SOURCE.replace("import os\n", 'X = """\n# not a comment\n"""\n'), False, None),
])
def test_a_change_outside_every_statement_is_settled_without_extracting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str, kept: bool,
        expected: list[tuple[str, str, tuple[str, ...]]] | None) -> None:
    root = make_repo(tmp_path / "r", {"m.py": SOURCE, "lib.c": "int g(void) {\n  return 0;\n}\n"})
    (root / "m.py").write_text(edited)
    (root / "lib.c").write_text("/*\n * License\n */\nint g(void) {\n  return 0;\n}\n")
    service = SemanticDiffService(root)
    got = service.diff(limit=100)
    assert service.kept == (2 if kept else 1)  # the C license header is kept too
    assert service.parsed == (0 if kept else 2)
    # The same answer as extracting both versions of every file.
    monkeypatch.setattr(service_module, "structure_kept", lambda *_: False)
    full = SemanticDiffService(root).diff(limit=100)
    assert got.report.changes == full.report.changes and got.report.files == full.report.files
    if expected is not None:
        assert [(c.qualified_name, c.change, c.delta_tags) for c in got.changes] == expected


def test_a_report_read_from_a_file_edited_after_listing_is_not_kept(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(tmp_path / "r", {"m.py": "def f():\n    return 1\n"})
    (root / "m.py").write_text("def f():\n    return 2\n")
    real = changed_files

    def listed_before_an_edit(*args: object, **kwargs: object) -> GitSides:
        sides = real(*args, **kwargs)  # type: ignore[arg-type]
        # As if the file was edited between the listing and the read: the id listed is not what is read.
        pairs = tuple(replace(p, new_id="0" * 40) for p in sides.pairs)
        return replace(sides, pairs=pairs)

    monkeypatch.setattr(service_module, "changed_files", listed_before_an_edit)
    service = SemanticDiffService(root)
    service.diff(limit=10)
    service.diff(limit=10)
    assert service.reports_built == 2  # the state the key names was not the one compared: nothing kept
