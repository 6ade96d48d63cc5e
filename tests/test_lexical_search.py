"""Lexical search is exact: a differential test against ``rg`` on a generated corpus, plus the syntaxes."""

from __future__ import annotations

import dataclasses
import os
import random
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.index.cursors import STREAM_WEIGHT
from codeplane.index.lexical import RUN_PIECE, RUN_STEP, Fragment, RankedCandidates, indexed_text
from codeplane.index.query import MAX_QUERY_CHARS, compile_query
from codeplane.index.scan import count_at_most, find_matches
from codeplane.index.search import LexicalScope, lexical_stream
from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from codeplane.repo.textcache import RACY_SEC, TextCache
from tests.builders import make_repo
from tests.index_helpers import all_hits, hit_lines, running_index

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed; .ci/run installs it")

VOCABULARY = ["foo", "foo_bar", "foobar", "Foo", "FOO", "_foo", "foo1", "bar_foo", "fooBar", "x", "é_foo",
              "fooé", "get_or_create", "getOrCreate", "QuerySet", "queryset", "self", "a" * 60, "_", "__init__"]
PUNCTUATION = [" ", " ", " ", ".", "(", ")", ", ", " = ", "->", "::", "\t", "-", "'", '"', "[", "]", "{", "}"]


def _line(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(0, 9)):
        parts.append(rng.choice(VOCABULARY))
        parts.append(rng.choice(PUNCTUATION))
    return "".join(parts)


def _corpus(rng: random.Random) -> dict[str, str | bytes]:
    files: dict[str, str | bytes] = {}
    for n in range(60):
        lines = [_line(rng) for _ in range(rng.randint(0, 40))]
        ending = "\r\n" if n % 7 == 0 else "\n"
        text = ending.join(lines) + (ending if n % 3 else "")
        ext = ["py", "js", "txt", "md"][n % 4]
        files[f"d{n % 5}/sub{n % 3}/f{n}.{ext}"] = text
    files["bin/blob.dat"] = b"foo\x00foo_bar\x00"
    return files


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, IndexService]]:
    repo = make_repo(tmp_path_factory.mktemp("corpus") / "repo", _corpus(random.Random(1234)))
    with running_index(repo) as index:
        yield repo, index


def _rg_lines(repo: Path, *args: str) -> set[tuple[str, int]]:
    assert RG is not None
    proc = subprocess.run([RG, "--no-ignore", "--hidden", "-n", "--no-heading", "--no-messages",
                           "-g", "!.git", "-g", "!.codeplane", "-g", "!.cplignore", *args, "."],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    found = set()
    for row in proc.stdout.splitlines():
        path, line, _ = row.split(":", 2)
        found.add((path.removeprefix("./"), int(line)))
    return found


@needs_rg
@pytest.mark.parametrize("word", sorted(set(VOCABULARY)))
def test_identifier_search_finds_exactly_what_rg_w_finds(corpus_index: tuple[Path, IndexService], word: str) -> None:
    repo, index = corpus_index
    expected = _rg_lines(repo, "-w", "-F", "--", word)
    assert hit_lines(index, word, "identifier") == expected
    expected_ci = _rg_lines(repo, "-w", "-F", "-i", "--", word)
    assert hit_lines(index, word, "identifier", case_sensitive=False) == expected_ci


@needs_rg
@pytest.mark.parametrize("phrase", ["foo(", "_bar foo", "oo_ba", "a" * 30, "-> self", ")::", "    ", "\t"])
def test_phrase_search_matches_rg_fixed_strings(corpus_index: tuple[Path, IndexService], phrase: str) -> None:
    repo, index = corpus_index
    assert hit_lines(index, phrase, "phrase") == _rg_lines(repo, "-F", "--", phrase)


@needs_rg
@pytest.mark.parametrize("pattern", [r"foo_\w+", r"get_or_\w+\(", r"[Ff]oo[0-9]", r"(foo|bar)\.x", r"\(\s*\)",
                                     r"^\s*self\b", r"Query[Ss]et\s*="])
def test_regex_search_matches_rg(corpus_index: tuple[Path, IndexService], pattern: str) -> None:
    repo, index = corpus_index
    assert hit_lines(index, pattern, "regex") == _rg_lines(repo, "-e", pattern)


def test_every_hit_is_a_real_occurrence_at_its_position(corpus_index: tuple[Path, IndexService]) -> None:
    repo, index = corpus_index
    for hit in all_hits(index, "foo_bar", "identifier"):
        line = (repo / hit.path).read_bytes().decode().split("\n")[hit.line - 1]
        assert line[hit.column - 1:hit.end_column - 1] == "foo_bar"
        assert hit.snippet == line.rstrip("\r")


def test_text_syntax_needs_every_term_on_one_line_case_insensitively(tmp_path: Path) -> None:
    text = "Cache timeout here\ncache only\ntimeout only\nTIMEOUT of the CACHE\n"
    repo = make_repo(tmp_path / "repo", {"a.py": text})
    with running_index(repo) as index:
        hits = all_hits(index, "cache timeout", "text")
        assert [(h.line, h.column) for h in hits] == [(1, 1), (4, 1)]
        assert hit_lines(index, "cache timeout", "text", case_sensitive=True) == set()


@pytest.mark.parametrize("syntax", ["text", "phrase", "identifier"])
def test_a_case_insensitive_literal_found_in_lowered_text_is_exactly_what_the_regex_engine_finds(syntax: str) -> None:
    # The fast path (``str.find`` in the lowered text) must agree with ``IGNORECASE`` on the characters where case
    # folding crosses into ASCII: dotless i and long s fold to i and s, the dotted capital I lowercases to two
    # characters, the Kelvin sign to k.
    rng = random.Random(29)
    alphabet = ["s", "S", "\u017f", "i", "I", "\u0131", "\u0130", "k", "K", "\u212a", "\u00e9", "\u00df", "_", " ",
                "\n", "x"]
    for needle in ("sik", "is", "k", "s_k", "ks x"):
        query = compile_query(needle, syntax, case_sensitive=False)  # type: ignore[arg-type]
        assert query.folded, needle
        by_regex = dataclasses.replace(query, folded=())
        for _ in range(400):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            assert find_matches(text, query)[1] == find_matches(text, by_regex)[1], (needle, text)
            assert count_at_most(text, query, 99) == count_at_most(text, by_regex, 99)


def test_scope_paths_and_languages_and_context_lines(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "one\nneedle\ntwo\n", "docs/a.md": "needle\n",
                                         "tests/test_a.py": "needle\n"})
    with running_index(repo) as index:
        assert hit_lines(index, "needle", scope=LexicalScope(paths=("src/",))) == {("src/a.py", 2)}
        assert hit_lines(index, "needle", scope=LexicalScope(languages=("markdown",))) == {("docs/a.md", 1)}
        assert hit_lines(index, "needle", scope=LexicalScope(paths=("*.py",))) == {("src/a.py", 2),
                                                                                  ("tests/test_a.py", 1)}
        (hit,) = all_hits(index, "needle", scope=LexicalScope(paths=("src/",)), context_lines=2)
        assert hit.context_before == ("one",) and hit.context_after == ("two",)


#: Where Python's ``re`` (the scan) and a naive tokenizer disagree: a word end before a combining accent, a circled
#: letter, an undertie or a zero-width joiner; letters ``re`` matches to ASCII ones ignoring case (long s, dotless
#: i, dotted capital I, Kelvin sign); digits ``re`` counts as word characters (superscripts, Roman numerals).
UNICODE_LINES = ["x fıle y", "ſome text", "İmport this", "\u212aelvin scale", "fooⓐ = 1", "foo\u0301 = 2",
                 "foo\u203fbar = 3", "foo\u200dbar = 4", "x² + y", "Ⅻ_foo", "café_foo", "plain foo file some import",
                 "EACH\u0345 = 5", "x=MAX_LEN\u0301", "é(EACH)é", "é_EACH"]
UNICODE_QUERIES = [("file", "text"), ("some", "text"), ("import", "text"), ("kelvin", "text"), ("foo", "identifier"),
                   ("bar", "identifier"), ("x", "identifier"), ("foo", "text"), ("_foo", "phrase"),
                   ("FILE", "identifier"), (r"(?i)some\b", "regex"), ("EACH", "identifier"),
                   ("MAX_LEN", "identifier"), ("(EACH)", "phrase"), ("_EACH", "phrase")]


@pytest.mark.parametrize(("query", "syntax"), UNICODE_QUERIES)
def test_the_index_keeps_every_file_the_scan_would_match_around_unicode_letters(
        tmp_path: Path, query: str, syntax: str) -> None:
    """The index only narrows the files to scan; a file it drops is a hit lost. Each line sits in a file of its
    own, so a line the scan matches must come back: the brute force is the scan over every file."""
    files = {f"f{n}.txt": line + "\n" for n, line in enumerate(UNICODE_LINES)}
    repo = make_repo(tmp_path / "repo", dict(files))
    compiled = compile_query(query, syntax, False if query == "FILE" else None)  # type: ignore[arg-type]
    expected = {(path, m.line) for path, text in files.items() for m in find_matches(text, compiled)[1]}
    with running_index(repo) as index:
        found = hit_lines(index, query, syntax, case_sensitive=False if query == "FILE" else None)
    assert found == expected
    assert expected  # each query matches something, or the comparison says nothing


def test_every_letter_the_scan_matches_to_an_ascii_one_ignoring_case_is_indexed_as_that_letter() -> None:
    """The indexed text keeps ASCII and makes every other character a token end, but a case-insensitive ``sum``
    matches ``ſum`` in the scan: each such letter (all of Unicode is tried) must reach the index as the ASCII one."""
    ascii_word = re.compile(r"[a-z0-9_]", re.IGNORECASE)
    crossing = [chr(cp) for cp in range(0x80, 0x110000) if ascii_word.fullmatch(chr(cp))]
    assert crossing  # the four there are today
    for char in crossing:
        mapped = indexed_text(char)
        assert mapped != "?" and re.fullmatch(re.escape(mapped), char, re.IGNORECASE), hex(ord(char))
    assert indexed_text("ſum_İt é") == "sum0it ?"


def test_a_case_sensitive_token_narrows_by_its_case(tmp_path: Path) -> None:
    # ``EACH`` in 8 of Django's files, ``each`` in 2,300: every one of those was read to find the 8 (35 ms; 1.2 s on
    # the 133k-file corpus). The case-kept terms narrow to the files spelling it so, ``_``-separated parts and all.
    files = {f"d/f{n:02}.py": "for each in items: model = AUTH_USER_MODEL  # Each MAX length\n" for n in range(40)}
    files.update({"a.py": "EACH = 1\n", "b.py": "MAX_LENGTH = 2\n", "c.txt": "naïve MAX_LENGTH é\n",
                  "z.py": "MODEL = 3\n"})
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        lexical = index._pipeline.lexical

        def candidates(query: str, case_sensitive: bool | None = None) -> int:
            return lexical.ranked(compile_query(query, "identifier", case_sensitive).fragments).count

        assert candidates("EACH") == 1
        assert candidates("MODEL") == 1  # not the files holding only ``AUTH_USER_MODEL`` (and ``model``)
        assert candidates("MAX_LENGTH") == 2  # a non-ASCII file is tokenised too
        assert candidates("each") == 40
        assert candidates("EACH", case_sensitive=False) == 41  # case-insensitive: the lowercase terms only
        assert hit_lines(index, "EACH", "identifier") == {("a.py", 1)}


def test_regex_without_a_literal_scans_every_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 12345\n", "b.py": "y = 1\n"})
    with running_index(repo) as index:
        assert hit_lines(index, r"\d{5}", "regex") == {("a.py", 1)}


def test_text_inside_a_token_longer_than_tantivy_keeps_is_found_as_rg_finds_it(tmp_path: Path) -> None:
    """Tantivy drops a token over 65,530 bytes: a minified bundle's ``"aaaa…"`` (100k letters) was in no term, so
    ``aaaa`` in any syntax answered "no hits" where ``rg`` finds it. The run is indexed as overlapping pieces: a
    fragment inside it, at its start, at its end or across a piece's edge is in one of them."""
    assert RUN_PIECE - RUN_STEP >= MAX_QUERY_CHARS  # the overlap holds any fragment whole
    run = "q" * 40_000 + "Xy_z" + "q" * 60_000 + "tail"
    long = f"s = '{run}'  # needle_long\n"
    repo = make_repo(tmp_path / "repo", {"min.js": long, "other.py": "nothing here\n"})
    edge = run[32_760:32_780]  # across the first piece's end
    with running_index(repo) as index:
        for query, syntax in (("qqqq", "text"), ("qXy_zq", "text"), ("qqqtail", "text"), (edge, "text"),
                              ("'qqq", "phrase"), (r"Xy_z(q{3})", "regex"), ("needle_long", "identifier")):
            assert hit_lines(index, query, syntax) == {("min.js", 1)}, (query, syntax)
        assert hit_lines(index, "qqqq", "text", case_sensitive=True) == {("min.js", 1)}
        assert hit_lines(index, "qqqq", "identifier") == set()  # not the whole token: the scan rejects it


def test_invalid_queries_are_3006() -> None:
    # ``def f\(\n`` needs a line break, which a per-line match (rg's, without -U) never sees: refused, not
    # answered "no hits"; a newline only in an alternative still compiles.
    for text, syntax in (("", "text"), ("   ", "text"), ("", "phrase"), ("(unclosed", "regex"), ("a*", "regex"),
                         (r"def f\(\n\s+x", "regex"), ("a\nb", "regex"), ("a\nb", "phrase")):
        with pytest.raises(CodePlaneError) as caught:
            compile_query(text, syntax)  # type: ignore[arg-type]
        assert caught.value.code == 3006


    assert compile_query(r"a(\n|b)", "regex").patterns


def test_a_page_stopping_inside_a_file_counts_that_file_to_its_end(tmp_path: Path) -> None:
    # One file with 5,000 hits: a page of 100 stops in it; the estimate said "101" (what the page had seen).
    repo = make_repo(tmp_path / "repo", {"many.txt": "".join(f"tok {n}\n" for n in range(5000)),
                                         "few.txt": "tok\n" * 3})
    with running_index(repo) as index:
        page = index.search_lexical(LexicalRequest("tok", "identifier"), limit=100)
        assert page.next_cursor and page.total == 5003, page.total


def test_pagination_is_a_snapshot_each_hit_exactly_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"f{n:02}.py": "word\n" * 7 for n in range(30)})
    with running_index(repo) as index:
        request = LexicalRequest("word", "identifier")
        page = index.search_lexical(request, limit=40)
        seen = list(page.hits)
        assert page.total == 210 and page.next_cursor
        (repo / "f00.py").write_text("nothing\n")  # a change between pages does not shift the snapshot
        index.refresh_paths(["f00.py"])
        while page.next_cursor:
            page = index.search_lexical(request, limit=40, cursor=page.next_cursor)
            seen += page.hits
        keys = [(h.path, h.line, h.column) for h in seen]
        assert len(keys) == 210 and len(set(keys)) == 210
        with pytest.raises(CodePlaneError) as caught:
            index.search_lexical(LexicalRequest("other", "identifier"), limit=40, cursor=page.next_cursor or "x")
        assert caught.value.code == 1005


def test_a_page_scans_only_the_files_it_reaches_and_the_chain_stays_exact(tmp_path: Path) -> None:
    # 40 files with 50 hits each: page 1 of 20 reads one file; paging to the end yields every hit once, in order.
    repo = make_repo(tmp_path / "repo", {f"f{n:02}.py": "word = word\n" * 25 for n in range(40)})
    with running_index(repo) as index:
        query = compile_query("word", "identifier")
        with index._pipeline.store.read() as conn:
            stream = lexical_stream(conn, index._texts, index._pipeline.lexical, query, LexicalScope())
        stream.fill(21)
        assert stream.files_scanned == 1 and not stream.exhausted
        assert stream.total == 2000  # estimated from sampled candidates (all alike here)
        request = LexicalRequest("word", "identifier")
        page = index.search_lexical(request, limit=20)
        (repo / "f39.py").write_text("word\n")  # not reached yet: read as it is when the chain gets there
        index.refresh_paths(["f39.py"])
        seen = list(page.hits)
        while page.next_cursor:
            page = index.search_lexical(request, limit=20, cursor=page.next_cursor)
            seen += page.hits
        keys = [(h.path, h.line, h.column) for h in seen]
        assert len(keys) == len(set(keys)) == 39 * 50 + 1
        assert keys == sorted(keys)  # equal scores: path, line, column order
        assert page.total == 39 * 50 + 1  # exact once the stream has ended


def test_ranked_candidates_release_ties_in_path_order_across_batches(tmp_path: Path) -> None:
    files = {f"d/f{n:03}.py": "tok\n" for n in range(150)}  # equal scores straddle the 64-document first batch
    files.update({f"z{n}.py": "tok tok tok tok\n" for n in range(3)})
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        ranked = index._pipeline.lexical.ranked([Fragment("tok", False, False)])
        order = list(ranked)
        assert ranked.count == 153 and len(order) == 153 and len({p for p, _ in order}) == 153
        assert order == sorted(order, key=lambda item: (-item[1], item[0]))


@pytest.mark.parametrize("pool", [100, 4096])
def test_an_open_fragment_ranks_the_same_from_one_search_and_a_sample_between_batches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool: int) -> None:
    # An open fragment fetches the sample pool at once (100 < 153 documents: later batches still search again).
    monkeypatch.setattr(RankedCandidates, "SAMPLE_POOL", pool)
    files = {f"d/f{n:03}.py": "xtoky\n" for n in range(150)}
    files.update({f"z{n}.py": "tok tok tok tok\n" for n in range(3)})
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        lexical = index._pipeline.lexical
        closed = list(lexical.ranked([Fragment("tok", False, False)]))
        assert len(closed) == 3
        ranked = lexical.ranked([Fragment("tok", True, True)])
        walk = iter(ranked)
        order = [next(walk) for _ in range(5)]
        sample = ranked.spread(8, 5)  # between batches, as a page's total estimate does
        order += list(walk)
        assert ranked.count == 153 and len(order) == 153 and len({p for p, _ in order}) == 153
        assert order == sorted(order, key=lambda item: (-item[1], item[0]))
        assert len(sample) == 8 and set(sample) <= {p for p, _ in order}


def test_a_text_query_narrows_by_each_term_and_ranks_files_holding_the_whole_tokens_first(tmp_path: Path) -> None:
    # ``def save`` as text: a candidate holds a token containing ``def`` and one containing ``save`` (not just the
    # longest term's), and the file saying ``def`` and ``save`` outright ranks before a path-order neighbour that
    # only holds them inside longer tokens (path order alone scanned 332 of Django's files for ``class Meta``).
    files = {f"s{n:02}.py": "autosave = 1\n" for n in range(30)}
    files.update({"a.py": "undefined_savepoint = 1\n", "z.py": "def save(self):\n    pass\n"})
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        lexical = index._pipeline.lexical
        lexical.warm_terms()
        ranked = lexical.ranked([Fragment("def", True, True), Fragment("save", True, True)])
        assert ranked.count == 2
        assert [path for path, _ in ranked] == ["z.py", "a.py"]
        page = index.search_lexical(LexicalRequest(query="def save", syntax="text"), limit=1)
        assert [(h.path, h.line) for h in page.hits] == [("z.py", 1)] and page.next_cursor is not None


def test_a_pages_total_estimate_draws_its_sample_from_all_unscanned_candidates(tmp_path: Path) -> None:
    # Three dense files rank first; 200 files hold one hit each (350 in all). A sample spread over the ranking
    # right after the first file took in the other dense ones and estimated 1,460; a uniform draw stays within 2x.
    files = {f"dense{n}.py": "tok\n" * 50 for n in range(3)}
    files.update({f"sparse/f{n:03}.py": "tok\nother words here\n" for n in range(200)})
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        request = LexicalRequest(query="tok", syntax="identifier")
        first = index.search_lexical(request, limit=20)
        again = index.search_lexical(request, limit=20)
        assert first.next_cursor is not None and 175 <= first.total <= 700, first.total
        assert again.total == first.total  # the draw is deterministic
        ranked = index._pipeline.lexical.ranked([Fragment("tok", False, False)])
        best = [path for path, _ in ranked][:2]
        sample = ranked.spread(8, 2)
        assert len(sample) == 8 == len(set(sample)) and not set(sample) & set(best)
        assert sample == ranked.spread(8, 2)


def test_a_scoped_search_waits_only_for_pending_changes_in_its_scope(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.py": "needle\n", "docs/a.md": "needle\n"})
    # While the writer is busy (its lock held here), marked paths stay pending.
    with running_index(repo, freshness_wait_ms=300) as index, index._pipeline.lock:
        (repo / "docs" / "a.md").write_text("needle needle\n")
        index._pending.mark(["docs/a.md"])
        assert hit_lines(index, "needle", scope=LexicalScope(paths=("src/",))) == {("src/a.py", 1)}
        assert hit_lines(index, "needle", scope=LexicalScope(languages=("python",))) == {("src/a.py", 1)}
        with pytest.raises(CodePlaneError) as caught:
            hit_lines(index, "needle", scope=LexicalScope(paths=("docs/",)))
        assert caught.value.code == 3005
        index._pending.mark(["docs"])  # a directory may hold files in any scope
        with pytest.raises(CodePlaneError):
            hit_lines(index, "needle", scope=LexicalScope(paths=("src/",)))


def test_a_long_chain_keeps_a_window_and_an_old_cursor_answers_1005(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("codeplane.index.search.STREAM_WINDOW", 50)
    repo = make_repo(tmp_path / "repo", {f"f{n:02}.py": "word\n" * 30 for n in range(10)})
    with running_index(repo) as index:
        request = LexicalRequest("word", "identifier")
        page = index.search_lexical(request, limit=20)
        first_cursor = page.next_cursor
        assert first_cursor is not None
        seen = list(page.hits)
        again = index.search_lexical(request, limit=20, cursor=first_cursor)  # a retried cursor answers the same
        assert again.hits == index.search_lexical(request, limit=20, cursor=first_cursor).hits
        while page.next_cursor:
            page = index.search_lexical(request, limit=20, cursor=page.next_cursor)
            seen += page.hits
        assert len({(h.path, h.line) for h in seen}) == len(seen) == 300 and page.total == 300
        with pytest.raises(CodePlaneError) as caught:
            index.search_lexical(request, limit=20, cursor=first_cursor)
        assert caught.value.code == 1005


@pytest.mark.parametrize("glob", ["../", "../other/*.py", "src/../../x", "//server/share"])
def test_a_scope_glob_that_reaches_outside_the_repository_is_refused(tmp_path: Path, glob: str) -> None:
    """``scope.paths: ["../"]`` answered "no hits", as if the search had looked there and found nothing."""
    repo = make_repo(tmp_path / "repo", {"a.py": "needle = 1\n"})
    with running_index(repo) as index, pytest.raises(CodePlaneError) as refused:
        hit_lines(index, "needle", "identifier", scope=LexicalScope(paths=(glob,)))
    assert refused.value.code == 1003 and refused.value.details["glob"] == glob


def test_a_catastrophic_regex_is_refused_in_bounded_time_and_other_calls_go_on(tmp_path: Path) -> None:
    """``(a+)+$`` over a line of 43 a's then ``!``: Python's ``re`` held the GIL for the whole match, and the
    server froze (health, other searches, SIGTERM) until SIGKILL. The ``regex`` engine matches that one at once;
    ``(a|aa)+$`` still backtracks: the match has a per-line budget (3006 naming the cause) and releases the GIL,
    so another thread's search answers meanwhile."""
    import threading
    import time

    from codeplane.core.errors import CodePlaneError

    repo = make_repo(tmp_path / "repo", {"r.txt": "a" * 43 + "!\n", "n.py": "needle = 1\n"})
    with running_index(repo) as index:
        assert not all_hits(index, "(a+)+$", syntax="regex")  # (no match: the line ends with "!")
        others: list[float] = []

        def search_meanwhile() -> None:
            time.sleep(0.2)
            began = time.monotonic()
            assert hit_lines(index, "needle") == {("n.py", 1)}
            others.append(time.monotonic() - began)

        meanwhile = threading.Thread(target=search_meanwhile)
        meanwhile.start()
        began = time.monotonic()
        with pytest.raises(CodePlaneError) as caught:
            all_hits(index, "(a|aa)+$", syntax="regex")
        took = time.monotonic() - began
        meanwhile.join(timeout=30)
    assert caught.value.code == 3006 and "backtrack" in caught.value.message, caught.value
    assert took < 10, took
    assert others and others[0] < 1.0, others  # answered while the bad pattern was still matching


def test_a_text_querys_first_page_is_the_same_before_and_after_the_term_index_is_read(tmp_path: Path) -> None:
    # Same repository, same query, same bytes: the first open-fragment query after a start used to narrow by a
    # regex on its longest term (300 candidates here) while the term index was read on a thread, and the next one
    # by every term (100): the same first page said 2 different totals.
    files = {f"meta{n:03}.py": "class Meta:\n    pass\nclass Meta:\n    x = 1\n" for n in range(100)}
    files.update({f"other{n:03}.py": "class Other:\n    pass\n" for n in range(200)})
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        request = LexicalRequest(query="class Meta", syntax="text")
        first = index.search_lexical(request, limit=5)
        again = index.search_lexical(request, limit=5)
        assert first.next_cursor is not None
        assert (first.total, [(h.path, h.line) for h in first.hits]) == (
            again.total, [(h.path, h.line) for h in again.hits])
        lexical = index._pipeline.lexical
        fragments = [Fragment("class", True, False), Fragment("meta", False, True)]
        lexical._terms.reset()  # as after a rebuild: the next query finds no term index read
        assert lexical.ranked(fragments).count == 100

        class SlowSearcher:  # the real searcher, its dictionary read slowly: a warm-up's read still under way
            def __init__(self, real: Any) -> None:
                self.real = real

            def terms_with_prefix(self, *args: Any) -> Any:
                time.sleep(0.5)
                return self.real.terms_with_prefix(*args)

        lexical._terms.reset()
        warm = threading.Thread(target=lexical._terms.ensure_base, kwargs={"wait": True},
                                args=(lambda: SlowSearcher(lexical._index.searcher()),))
        warm.start()
        time.sleep(0.1)
        assert lexical.ranked(fragments).count == 100  # it went on with the regex (300) while the read ran
        warm.join()


def test_the_text_cache_sees_a_same_size_rewrite_whose_mtime_was_put_back(tmp_path: Path) -> None:
    # ``cp -p``/``touch -r``: same size, same mtime, same inode; only ctime moves (git compares it too). Search
    # answered ``def alpha_one`` from its cache for a file that now says ``def alpha_two``.
    path = tmp_path / "m.py"
    path.write_text("def alpha_one():\n    pass\n")
    old = os.stat(path).st_mtime_ns - 10 * 10**9
    os.utime(path, ns=(old, old))
    cache = TextCache(tmp_path)
    time.sleep(RACY_SEC + 0.2)  # older than the racy window: cached
    assert cache.read("m.py") == "def alpha_one():\n    pass\n"
    with path.open("r+") as handle:  # in place: the inode stays
        handle.write("def alpha_two():\n    pass\n")
    os.utime(path, ns=(old, old))
    assert os.stat(path).st_mtime_ns == old
    assert cache.read("m.py") == "def alpha_two():\n    pass\n"


def test_streams_left_mid_answer_are_bounded_by_their_weight_not_their_handful_of_items(tmp_path: Path) -> None:
    # Each stream a small page leaves behind holds its candidates and a file's text (~0.4 MB) but counted as its
    # few items: 1,000 distinct searches kept 358 MB for the cursors' hour. Past the budget, the oldest go.
    files = {f"m{n:02}.py": "".join(f"word_{k} = {k}\n" for k in range(40)) for n in range(6)}
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        cursors = []
        for k in range(40):
            page = index.search_lexical(LexicalRequest(query=f"word_{k}", syntax="identifier"), limit=1)
            assert page.next_cursor is not None
            cursors.append((k, page.next_cursor))
        index._cursors._max_items = 10 * STREAM_WEIGHT  # as if the default budget were reached
        newest = index.search_lexical(LexicalRequest(query="word_0", syntax="text"), limit=1)
        assert newest.next_cursor is not None
        with pytest.raises(CodePlaneError) as gone:
            index.search_lexical(LexicalRequest(query="word_0", syntax="identifier"), limit=1, cursor=cursors[0][1])
        assert gone.value.code == 1005
        k, last = cursors[-1]
        page = index.search_lexical(LexicalRequest(query=f"word_{k}", syntax="identifier"), limit=1, cursor=last)
        assert [h.path for h in page.hits] == ["m01.py"]


def test_a_scan_of_every_file_estimates_its_total_by_hits_per_byte(tmp_path: Path) -> None:
    # A regex with no literal to narrow by scans every file; its estimate took hits per file from 8 files, and
    # said "5 of ~14 hits" where rg found 3,541: files' sizes vary far more than their density.
    line = "value = compute()\n" + "x" * 181 + "\n"  # 200 bytes, one hit
    files = {f"a{n:02}.py": line for n in range(40)}
    files["z_big.py"] = line * 1000
    repo = make_repo(tmp_path / "repo", files)
    with running_index(repo) as index:
        page = index.search_lexical(LexicalRequest(query=r"\w+\(\)", syntax="regex"), limit=5)
        assert page.next_cursor is not None
        assert 520 <= page.total <= 2080, page.total  # 1,040 in all
