"""Open fragments through the term index (``lexical_terms.py``) find exactly what the term-dictionary regex and
``rg`` find, before and after edits, and a searcher older than the index's base falls back to the regex."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.index.lexical import LexicalIndex
from codeplane.index.lexical_terms import MAX_TERMS, TermIndex
from tests.builders import make_repo
from tests.index_helpers import hit_lines, running_index

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed; .ci/run installs it")

FILES = {
    "a.py": "def get_cache_key(x):\n    return CACHE_PREFIX + x\n",
    "b.py": "class cachedProperty:\n    pass\nnocache = 1\n",
    "c.md": "Un café_cache très_cachée\nÉCOLE_cache\n",
    "d.js": "const precache = caches.open('v1');\n",
    "e.txt": "nothing to see\n",
}
#: Substrings (text syntax), each an open fragment on both sides, a prefix or a suffix of some token.
WORDS = ["cache", "ach", "cach", "ache", "che_key", "get_c", "_prefix", "caf", "cole_c", "nothingness", "prec", "v1"]


def _rg(repo: Path, word: str) -> set[tuple[str, int]]:
    assert RG is not None
    out = subprocess.run([RG, "--no-ignore", "--hidden", "-n", "--no-heading", "-i", "-F", "-g", "!.git", "-g",
                          "!.codeplane", "--", word, "."], cwd=repo, capture_output=True, text=True, check=False)
    found = set()
    for line in out.stdout.splitlines():
        path, number, _ = line.split(":", 2)
        found.add((path.removeprefix("./"), int(number)))
    return found


def _through_terms(index: object) -> TermIndex:
    lexical = index._pipeline.lexical  # type: ignore[attr-defined]
    lexical.warm_terms()
    terms: TermIndex = lexical._terms
    assert terms.matching("cache", left_open=True, right_open=True, generation=terms.generation) is not None
    return terms


@needs_rg
def test_open_fragments_through_the_term_index_find_what_rg_finds_before_and_after_edits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_index(repo) as index:
        _through_terms(index)
        for word in WORDS:
            assert hit_lines(index, word, "text") == _rg(repo, word), word
        # New tokens after the base was read (they come from the analyzer as the writer adds them), and a removed
        # file whose tokens stay in the index's strings but in no document.
        (repo / "f.py").write_text("zq_cache_new = precache_zq\n")
        (repo / "b.py").unlink()
        index.refresh_paths(["f.py", "b.py"])
        _through_terms(index)
        for word in [*WORDS, "zq_c", "he_zq", "_new"]:
            assert hit_lines(index, word, "text") == _rg(repo, word), word


def test_a_searcher_older_than_the_base_uses_the_regex_and_too_many_terms_do_too(tmp_path: Path) -> None:
    lexical = LexicalIndex(tmp_path / "tantivy")
    lexical.open()
    try:
        lexical.add(1, "many.txt", "text", " ".join(f"t{n}" for n in range(MAX_TERMS + 5)))
        lexical.add(2, "a.txt", "text", "alpha")
        lexical.commit()
        terms = lexical._terms
        older = terms.generation - 1
        # A write pending (applied to the writer, not committed) when the base would be read: it waits.
        lexical.add(3, "b.txt", "text", "pending")
        lexical.warm_terms()
        assert terms.matching("alph", left_open=False, right_open=True, generation=terms.generation) is None
        lexical.commit()
        lexical.warm_terms()
        current = terms.generation
        assert terms.matching("alph", left_open=False, right_open=True, generation=current) == ["alpha"]
        assert terms.matching("alph", left_open=False, right_open=True, generation=older) is None
        assert terms.matching("t", left_open=False, right_open=True, generation=current) is None  # > MAX_TERMS
        assert terms.matching("pend", left_open=False, right_open=True, generation=current) == ["pending"]
        # Added after the base was read: recorded as the writer applies it, before its commit (as the index spells
        # its terms: ``_`` is ``0``).
        lexical.add(4, "c.txt", "text", "Beta gamma_alpha")
        lexical.commit()
        current = terms.generation
        assert terms.matching("alpha", left_open=True, right_open=False, generation=current) == ["alpha", "gamma0alpha"]
        assert terms.matching("ph", left_open=True, right_open=True, generation=current) == ["alpha", "gamma0alpha"]
        assert terms.matching("beta", left_open=False, right_open=False, generation=current) == ["beta"]
        # Every document going (a rebuild) starts over: no base until one is read again.
        lexical.delete_all()
        lexical.commit()
        assert terms.matching("alph", left_open=False, right_open=True, generation=terms.generation) is None
    finally:
        lexical.close()

