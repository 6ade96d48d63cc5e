"""Issue 16: what a search page and the impact answers say once instead of on every line (pure renderers,
fed the result models the tools build)."""

from __future__ import annotations

from codeplane.mutation import Delta
from codeplane.refactor.models import ImpactRef, ImpactReport, SymbolRef
from codeplane.server.answers import tests_affected_line as affected_tests_text
from codeplane.server.tools import map_repo, search
from codeplane.server.tools.refactor_render import render_impact
from codeplane.server.tools.search import Pagination, SearchHit, SearchResult, SymbolInfo, render_search
from codeplane.server.tools.tests_models import ImpactModel
from codeplane.server.tools.tests_render import render_impact as selection_lines


def _hit(path: str, line: int, snippet: str, uid: str, name: str, **extra: object) -> SearchHit:
    symbol = SymbolInfo(name=name.rsplit(".", 1)[-1], kind="method", qualified_name=name, def_uid=uid)
    return SearchHit(path=path, line=line, column=1, end_line=line, end_column=2, snippet=snippet, symbol=symbol,
                     score=1.0, role="REFERENCE", ref_tier="ANCHORED", certainty="UNCERTAIN", **extra)


def _page(*hits: SearchHit) -> SearchResult:
    return SearchResult(mode="references", query="get", results=list(hits), pagination=Pagination(), epoch=1,
                        query_time_ms=0.1)


def test_a_definition_is_named_in_full_once_per_page_then_by_its_uid() -> None:
    text = render_search(_page(_hit("a.py", 10, "        x.get()", "u1", "pkg.a.A.get"),
                               _hit("a.py", 12, "        return B().get()", "u2", "pkg.b.B.get"),
                               _hit("c.py", 3, "    y.get(1)", "u1", "pkg.a.A.get")))
    assert text.splitlines() == ["REFERENCE ANCHORED unless marked", "a.py", "10:[method pkg.a.A.get #u1] x.get()",
                                 "12:[method pkg.b.B.get #u2] return B().get()", "c.py", "3:[#u1] y.get(1)"], text


def test_a_hit_with_context_keeps_its_lines_indentation_relative_to_one_another() -> None:
    hit = _hit("a.py", 5, "        return 1\n", "u1", "pkg.a.f", context_before=["    def f():"],
               context_after=["", "    x = 2"])
    assert render_search(_page(hit)).splitlines() == [
        "a.py", "4-def f():", "5:[method pkg.a.f #u1; REFERENCE ANCHORED]     return 1", "6-", "7-x = 2"]


def _lexical(*hits: tuple[int, int], next_cursor: str | None, total: int, truncated: bool = False) -> str:
    results = [SearchHit(path="a.py", line=line, column=column, end_line=line, end_column=column + 1,
                         snippet="a = a + a", score=1.0) for line, column in hits]
    return render_search(SearchResult(mode="lexical", query="a", results=results, epoch=1, query_time_ms=0.1,
                                      truncated=truncated,
                                      pagination=Pagination(next_cursor=next_cursor, total_estimate=total)))


def test_a_line_with_several_hits_is_shown_once_and_an_estimated_total_says_so() -> None:
    # rg prints a line once however many matches it holds; "of 40" before the last page is an estimate.
    text = _lexical((1, 1), (1, 5), (1, 9), (2, 1), next_cursor="c.4", total=40)
    assert text.splitlines() == ["4 of ~40 hits; next cursor: c.4", "a.py", "1:a = a + a", "2:a = a + a"], text
    assert _lexical((1, 1), next_cursor="c.1", total=7, truncated=True).splitlines()[0] == (
        "1 of 7+ hits (truncated); next cursor: c.1")
    assert _lexical((1, 1), (3, 1), next_cursor=None, total=2).splitlines() == ["a.py", "1:a = a + a", "3:a = a + a"]


def _impact(*refs: tuple[int, str, str]) -> str:
    symbol = SymbolRef(def_uid="u1", name="get", qualified_name="pkg.a.A.get", kind="method", path="pkg/a.py",
                       line=1, column=5)
    references = [ImpactRef(path="t.py", line=line, column=1, tier=tier, certainty=certainty,
                            snippet=f"    call{line}()") for line, tier, certainty in refs]
    return render_impact(ImpactReport(target_kind="symbol", symbol=symbol, references=references,
                                      references_total=len(references), by_tier={}, importing_files=[],
                                      affected_tests=[]))


def test_impact_says_the_tag_most_references_share_once() -> None:
    lines = _impact((3, "unresolved_receiver", "low"), (4, "proven", "high"),
                    (9, "unresolved_receiver", "low")).splitlines()
    assert lines[0].endswith(": 3 references; unresolved_receiver low unless marked"), lines
    assert lines[1:] == ["t.py", "3:call3()", "4:[proven] call4()", "9:call9()"], lines
    # A tag no two references share is said where it is.
    assert _impact((3, "proven", "high")).splitlines()[1:] == ["t.py", "3:[proven] call3()"]


def test_an_impact_explains_a_few_module_level_fallbacks_and_counts_the_rest() -> None:
    fallbacks = [f"tests/t{i}.py: module-level code uses pkg.f (line 3; tests/t{i}.py:3 → pkg.f (changed))"
                 for i in range(5)]
    impact = ImpactModel(confidence="complete", changed_modules=["pkg"], unresolved_files=[], matches=[],
                         matches_total=0, high=0, low=0, null_literal_imports=0, source_dirs=[], fallbacks=fallbacks)
    lines = selection_lines(impact)
    assert [line for line in lines if line.startswith("module level: ")] == [
        f"module level: {f}" for f in fallbacks[:3]], lines
    assert "… 2 more module-level fallbacks" in lines, lines


def test_an_empty_map_section_says_none_instead_of_a_dangling_label() -> None:
    # "imports (0): " and "tests: 0 files in ." read as a cut-off answer.
    def deps(count: int) -> map_repo.DependenciesSection:
        return map_repo.DependenciesSection(external_modules=[], import_count=count, truncated=False)

    no_tests = map_repo.TestLayoutSection(test_files=[], test_count=0, test_dirs=[])
    empty = map_repo.MapRepoResult(epoch=1, dependencies=deps(0), test_layout=no_tests)
    assert map_repo.render_map(empty).splitlines()[-2:] == ["imports: none", "tests: none found"]
    internal = map_repo.MapRepoResult(epoch=1, dependencies=deps(4))
    assert map_repo.render_map(internal).splitlines()[-1] == "imports (4): no external module"


def test_an_entry_point_found_twice_is_listed_once_with_what_declares_it() -> None:
    # flask's ``main`` is both ``[project.scripts] flask`` and a module-level ``main``: the text said it twice.
    entries = [map_repo.EntryPointEntry(path="src/flask/cli.py", kind="function", name="flask",
                                        qualified_name="flask.cli.main", evidence="declared_script"),
               map_repo.EntryPointEntry(path="src/flask/__main__.py", kind="file", name="__main__.py",
                                        evidence="conventional_file"),
               map_repo.EntryPointEntry(path="src/flask/cli.py", kind="function", name="main",
                                        qualified_name="flask.cli.main", evidence="main_function")]
    # qs's lib/index.js is package.json's "main" and an index.js: one file, said once.
    entries += [map_repo.EntryPointEntry(path="lib/index.js", kind="file", name="main", evidence="declared_script"),
                map_repo.EntryPointEntry(path="lib/index.js", kind="file", name="index.js",
                                         evidence="conventional_file")]
    # immer's package.json "main" is the build's dist/cjs/index.js: no file of the repository.
    entries.append(map_repo.EntryPointEntry(path="dist/cjs/index.js", kind="file", name="main",
                                            evidence="declared_script", indexed=False))
    text = map_repo.render_map(map_repo.MapRepoResult(epoch=1, entry_points=entries))
    assert text.splitlines()[-1] == ("entry points: src/flask/cli.py function flask.cli.main (script flask, main); "
                                     "src/flask/__main__.py file; lib/index.js file (script main); "
                                     "dist/cjs/index.js file (script main, not indexed)"), text


def test_a_hit_without_its_text_gives_its_column() -> None:
    # With include_snippets false the text is gone; "225:" said only the line. The column says where it starts.
    hits = [search.SearchHit(path="tests/test_blueprints.py", line=225, column=5, end_line=225, end_column=13,
                             score=1.0),
            search.SearchHit(path="tests/test_blueprints.py", line=230, column=9, end_line=230, end_column=17,
                             score=1.0, snippet="    def get_x(self):\n")]
    result = search.SearchResult(mode="lexical", query="def get_", results=hits, epoch=1, query_time_ms=1.0,
                                 pagination=search.Pagination(total_estimate=2))
    assert search.render_search(result).splitlines()[-2:] == ["225:5", "230:def get_x(self):"]


def test_overlapping_context_windows_print_in_line_order_and_apart_ones_are_separated() -> None:
    # Hits on lines 8, 9 and 20 with two lines of context (QA s55: 10- came before 9:, and no `--` like rg -C).
    text = {n: f"line {n}" for n in range(1, 30)}
    hits = [SearchHit(path="a.py", line=n, column=1, end_line=n, end_column=2, snippet=text[n], score=1.0,
                      context_before=[text[n - 2], text[n - 1]], context_after=[text[n + 1], text[n + 2]])
            for n in (8, 9, 20)]
    rendered = render_search(SearchResult(mode="lexical", query="line", results=hits, epoch=1, query_time_ms=0.1,
                                          pagination=Pagination()))
    assert rendered.splitlines() == ["a.py", "6-line 6", "7-line 7", "8:line 8", "9:line 9", "10-line 10",
                                     "11-line 11", "--", "18-line 18", "19-line 19", "20:line 20", "21-line 21",
                                     "22-line 22"], rendered


def test_a_writes_affected_test_ids_are_quoted_like_every_path() -> None:
    delta = Delta(mutation_id="m1", files_changed=1, insertions=1, deletions=1, files=(), repo_fingerprint="f",
                  tests_affected=("tests/test_evil\nM x.py::test_bad", "tests/test_ok.py::test_ok"))
    assert affected_tests_text(delta) == ('tests affected: "tests/test_evil\\nM x.py::test_bad" '
                                         'tests/test_ok.py::test_ok')
