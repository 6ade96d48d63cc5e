"""Tier 0: the Tantivy index at ``.codeplane/tantivy/`` (spec §7.2), one document per text file.

Tantivy only narrows candidates; exact positions always come from scanning the files. So the one
property this module must keep is *completeness*: every file containing a fragment is returned.
Both text fields tokenize :func:`indexed_text`: the content with every non-ASCII character a separator (but
the four letters Python's ``re`` matches to an ASCII one ignoring case: ``ſ`` is an ``s``, ``ı`` and ``İ`` an
``i``, ``K`` a ``k``) and ``_`` spelled ``0``, cut into its ASCII letter-and-digit runs by Tantivy's simple
tokenizer. ``content`` lowercases them and keeps whole tokens (no length cut-off), which is exactly what a
whole-identifier fragment needs; substring fragments look their terms up in the term dictionary
(``lexical_terms.py``). ``cased`` keeps their case, for case-sensitive queries: ``EACH`` then reads the files
spelling it so, not every file saying ``each`` (a search whose page never fills reads all its candidates). A
fragment is an ASCII run (``query.py``), so it is a token of the indexed text wherever it matches; the only cost
of the simplification is candidates the scan rejects (``A0B`` for ``A_B``, ``caf`` in ``café``).

A schema version file sits next to Tantivy's own metadata; a version mismatch or an index that fails to
open or answer is wiped and recreated with a warning (``rebuilt_reason``) and the caller re-adds every
document. The writer is used only under the index service's writer lock.

A big epoch defers its writes (``defer``): they queue here, in order, and reach Tantivy at ``commit``, which the
epoch runs in a thread beside the indexers' single-threaded finishing work. Handed over as they come, Tantivy's
indexing threads would take cores from the extraction workers while a core idles at the end.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.core.stores import drop_store
from codeplane.index import lexical_rank
from codeplane.index.lexical_check import damaged_segment_file
from codeplane.index.lexical_rank import LiveBm25
from codeplane.index.lexical_terms import TermIndex

log = get_logger(__name__)

#: Its home was here (tests and callers import it from this module).
RankedCandidates = lexical_rank.RankedCandidates

#: Bump when the schema or the tokenizer changes; an older index is then rebuilt from disk.
#: 2: ``sample_key``, a fast field for the hit-count estimate's sample (:meth:`RankedCandidates.spread`).
#: 3: tokens are runs of Python's word characters, folded to ASCII (see the module docstring).
#: 4: ``cased``, ASCII tokens with their case kept, for case-sensitive whole-token fragments.
#: 5: ``cased`` keeps ``_`` inside its tokens (as ``0``).
#: 6: ``content`` tokenizes the same ASCII text as ``cased`` (``indexed_text``), lowercased.
#: 7: a token longer than Tantivy keeps is indexed as overlapping pieces (``indexed_text``).
#: 8: ``tokens``, each document's token count, for the live average length of ``lexical_rank``'s BM25.
LEXICAL_SCHEMA_VERSION = 8
VERSION_FILE = "codeplane-schema.json"
_TOKENIZER = "codeplane_code"
_CASED_TOKENIZER = "codeplane_cased"
_WRITER_HEAP_BYTES = 128 * 1024 * 1024
#: Open fragments of one query looked up in the term index (each is a scan of the dictionary, ~1 ms on Django).
MAX_OPEN_FRAGMENTS = 3


@dataclass(frozen=True)
class Fragment:
    """Lowercase ASCII ``[a-z0-9_]+`` text every matching file must contain as (part of) a token.

    ``left_open`` means the fragment may be preceded by more word characters inside the same token
    (it is a token suffix); ``right_open`` that it may be followed by more (a token prefix).
    """

    text: str
    left_open: bool
    right_open: bool
    #: The fragment as the query spells it, for a case-sensitive query's closed fragment (else empty): a file must
    #: then hold it as a whole token with this case (``EACH`` is in 8 of Django's files, ``each`` in 2,300).
    cased: str = ""

    @property
    def closed(self) -> bool:
        return not (self.left_open or self.right_open)


#: The text fields that score, by their number in :func:`_schema` (an explanation names a field by it). Both
#: tokenize :func:`indexed_text` alike, so a document has one length in both (its ``tokens``).
SCORING_FIELDS = {6: "content", 7: "cased"}


def _schema() -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("file_id", stored=True, indexed=True, fast=True)
    builder.add_unsigned_field("unit_id", stored=False, indexed=True)
    builder.add_unsigned_field("sample_key", stored=False, indexed=False, fast=True)
    builder.add_unsigned_field("tokens", stored=False, indexed=False, fast=True)
    builder.add_text_field("path", stored=True, tokenizer_name="raw")
    builder.add_text_field("language", stored=False, tokenizer_name="raw")
    builder.add_text_field("content", stored=False, tokenizer_name=_TOKENIZER, index_option="freq")
    builder.add_text_field("cased", stored=False, tokenizer_name=_CASED_TOKENIZER, index_option="basic")
    return builder.build()


def sample_key(path: str) -> int:
    """A document's place in the estimate's sample: a hash of its path, so the matching documents with the
    lowest keys are a uniform (and deterministic) draw from all of them."""
    return int.from_bytes(hashlib.blake2b(path.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


def _analyzer() -> Any:
    """``content``: the ASCII letter-and-digit runs of :func:`indexed_text`, lowercased. Tantivy's simple tokenizer
    over ASCII costs a third of the regex tokenizer (``[\\p{L}\\p{N}_]+``, ASCII-folded) this field had: 0.8 s
    against 2.2 s of CPU for a cold index of Django."""
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase()).build()


def _cased_analyzer() -> Any:
    """``cased``: the same runs, case kept."""
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).build()


#: The non-ASCII letters Python's ``re`` matches to an ASCII letter ignoring case (all of them: the test checks
#: every code point): ``ſum`` is a case-insensitive match of ``sum``, so its file must hold the term ``sum``.
_CASELESS_ASCII = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


#: Tantivy drops a token longer than this many bytes (``MAX_TOKEN_LEN``, with a warning): a file whose only
#: match lies inside one (a minified bundle, a base64 blob) would never be a candidate.
TOKEN_LIMIT = 65_530
#: Such a run is indexed as pieces this long, each starting this much later than the one before: any fragment
#: inside the run (at most ``query.MAX_QUERY_CHARS``, 1,000 characters) lies whole inside one piece.
RUN_PIECE, RUN_STEP = 32_768, 32_768 - 1_024
_LONG_RUN = re.compile(f"(?<![A-Za-z0-9])[A-Za-z0-9]{{{TOKEN_LIMIT + 1},}}")
#: The quick test first (the regex costs ~14 ms a MB, this ~1 ms): token characters as ``a``, the rest as spaces.
_AS_RUNS = bytes(0x61 if i < 128 and chr(i).isalnum() else 0x20 for i in range(256))
_LONG_MARK = b"a" * (TOKEN_LIMIT + 1)


def indexed_text(text: str) -> str:
    """``text`` as both fields tokenize it: each non-ASCII character a ``?`` (but the four letters ``re`` matches
    to an ASCII one ignoring case, as that letter), each ``_`` a ``0``, and a token longer than Tantivy keeps
    (:data:`TOKEN_LIMIT`) as overlapping pieces.

    A fragment is an ASCII run (``query.py``), and wherever it matches, the characters around it are ones ``re``
    does not count as word characters or non-ASCII ones: both end a token here, so the fragment is a token (or
    inside one, for an open side) of the indexed text. Only ASCII runs may be tokens because Rust's alphanumerics
    include marks Python's ``\\w`` does not (``EACH\\u0345`` is one Rust token, while ``re`` sees ``EACH`` end there);
    and the tokenizer ends a token at ``_``, where an identifier goes on (``AUTH_USER_MODEL`` would be a file
    holding ``MODEL``). ``_`` → ``0`` (:func:`term_of` on the query's side) only makes ``A_B`` and ``A0B`` one
    term, and a non-ASCII letter a token end (``café`` holds ``caf``): files the scan then rejects, never one it
    misses. A piece of a long run starts or ends inside the token: as a token prefix or suffix it may admit a file
    the scan rejects, never lose one (the first piece starts the token, the last ends it)."""
    if not text.isascii():
        for letter, ascii_letter in _CASELESS_ASCII:  # ``str.translate`` would cost a dict lookup per character
            if letter in text:
                text = text.replace(letter, ascii_letter)
        text = text.encode("ascii", "replace").decode("ascii")
    text = text.replace("_", "0")
    if len(text) > TOKEN_LIMIT and text.encode("ascii").translate(_AS_RUNS).find(_LONG_MARK) >= 0:
        text = _LONG_RUN.sub(_pieces, text)
    return text


def token_count(indexed: str) -> int:
    """How many tokens Tantivy's simple tokenizer makes of :func:`indexed_text`'s output (ASCII): its letter-and-digit
    runs, counted where one starts (in C: ~1 ms a MB)."""
    runs = indexed.encode("ascii").translate(_AS_RUNS)
    return runs.count(b" a") + (1 if runs[:1] == b"a" else 0)


def _pieces(run: re.Match[str]) -> str:
    token = run.group()
    starts = range(0, len(token) - RUN_PIECE + RUN_STEP, RUN_STEP)
    return " ".join(token[start:start + RUN_PIECE] for start in starts)


def term_of(fragment_text: str) -> str:
    """A fragment's text as the index spells its terms (:func:`indexed_text`)."""
    return fragment_text.replace("_", "0")


def cased_terms(fragment: Fragment) -> list[str]:
    """The ``cased`` terms a file holding ``fragment`` as a whole token spelled as it is must contain."""
    return [term_of(fragment.cased)] if fragment.cased else []


def _scoring_terms(fragments: Sequence[Fragment]) -> list[tuple[str, str]]:
    """The terms whose BM25 ranks: the closed fragments' (``content``, and ``cased`` for a case-sensitive one), or
    without any, every fragment as a whole ``content`` token (``LexicalIndex._query``)."""
    closed = sorted({term_of(f.text) for f in fragments if f.closed})
    if not closed:
        return [("content", t) for t in sorted({term_of(f.text) for f in fragments})]
    cased = sorted({term for f in fragments if f.closed for term in cased_terms(f)})
    return [("content", t) for t in closed] + [("cased", t) for t in cased]


def _narrows(query: Any) -> Any:
    """A clause that selects documents without adding to their score."""
    return tantivy.Query.const_score_query(query, 0.0)


def is_native_panic(exc: BaseException) -> bool:
    """A panic in Tantivy's Rust code (pyo3's ``PanicException``, a ``BaseException``): the index object that raised
    it must not be used again."""
    return type(exc).__name__ == "PanicException"


#: One write as queued by ``LexicalIndex.defer``: (kind, path, language, text, file_id).
_Write = tuple[str, str, str, str, int]


class LexicalIndex:
    def __init__(self, directory: Path, *, threads: int | None = None) -> None:
        self.directory = directory
        #: Writer threads: half the cores (at most 4), one on 2 cores. A big epoch hands its documents over beside
        #: the writer's own single-threaded finishing work (``defer``); more indexing threads would take the core
        #: that work runs on. (An artifact export asks for one, so the same documents give the same segment bytes.)
        self._threads = threads or max(1, min(4, (os.cpu_count() or 1) // 2))
        self._schema = _schema()
        self._index: Any = None
        self._writer: Any = None
        self.rebuilt_reason: str | None = None
        #: Opstamp of the last commit found on disk at open (compared with the one SQLite recorded).
        self.opened_opstamp = 0
        #: Writes not yet handed to Tantivy (``defer``), oldest first, and the text they hold.
        self._queue: deque[_Write] | None = None
        self._queued_chars = 0
        self._budget_chars = 0
        #: The term dictionary for open fragments (``lexical_terms.py``), kept in step with every write.
        self._terms = TermIndex(_analyzer(), "content")

    # -- lifecycle -------------------------------------------------------------------------------------
    def open(self) -> None:
        self.rebuilt_reason = None
        self._terms.reset()
        problem = self._try_open()
        if problem is not None:
            log.warning("Tantivy index is unusable; rebuilding it", reason=problem)
            self.close()
            with contextlib.suppress(OSError):
                drop_store(self.directory)  # a file in the directory's place too
            self.rebuilt_reason = problem
            again = self._try_open()
            if again is not None:
                raise RuntimeError(f"cannot create the Tantivy index: {again}")

    def _try_open(self) -> str | None:
        version_file = self.directory / VERSION_FILE
        try:
            fresh = not (self.directory.is_dir() and tantivy.Index.exists(str(self.directory)))
            if not fresh:
                recorded = json.loads(version_file.read_text()) if version_file.is_file() else {}
                if recorded.get("schema_version") != LEXICAL_SCHEMA_VERSION:
                    return f"schema version {recorded.get('schema_version')} != {LEXICAL_SCHEMA_VERSION}"
                damaged = damaged_segment_file(self.directory)
                if damaged is not None:
                    return damaged
            self.directory.mkdir(parents=True, exist_ok=True)
            index = tantivy.Index(self._schema, path=str(self.directory), reuse=True)
            index.register_tokenizer(_TOKENIZER, _analyzer())
            index.register_tokenizer(_CASED_TOKENIZER, _cased_analyzer())
            writer = index.writer(heap_size=_WRITER_HEAP_BYTES, num_threads=self._threads)
            index.reload()
            index.searcher().search(tantivy.Query.all_query(), limit=1)
            if fresh:
                version_file.write_text(json.dumps({"schema_version": LEXICAL_SCHEMA_VERSION}))
        except (OSError, ValueError, RuntimeError, json.JSONDecodeError) as exc:
            if "LockBusy" in str(exc):
                # Another process owns the writer: that is not corruption, and its files must not be wiped.
                raise CodePlaneError(ErrorCode.INDEX_BUILD_FAILED, "another CodePlane process is writing this "
                                     "repository's index (is `cpl up` running?)", retryable=True,
                                     details={"directory": str(self.directory)}) from exc
            return f"{type(exc).__name__}: {exc}"
        self._index, self._writer = index, writer
        self.opened_opstamp = int(writer.commit_opstamp)
        return None

    def close(self) -> None:
        if self._writer is not None:
            try:
                self._writer.wait_merging_threads()
            except (ValueError, RuntimeError):
                pass
        self._writer = None
        self._index = None

    # -- writing (writer lock held) ----------------------------------------------------------------------
    def defer(self, budget_chars: int) -> None:
        """Queue the writes until ``commit`` (or drop them at ``rollback``), keeping at most ``budget_chars`` of
        text queued: beyond it the oldest writes go to Tantivy at once, so memory stays bounded on any tree."""
        if self._queue is None:
            self._queue = deque()
        self._budget_chars = budget_chars

    def delete(self, path: str) -> None:
        self._write(("delete", path, "", "", 0))

    def delete_all(self) -> None:
        self._write(("delete_all", "", "", "", 0))

    def add(self, file_id: int, path: str, language: str | None, text: str) -> None:
        self._write(("add", path, language or "", text, file_id))

    def _write(self, op: _Write) -> None:
        queue = self._queue
        if queue is None:
            self._apply(op)
            return
        queue.append(op)
        self._queued_chars += len(op[3])
        while self._queued_chars > self._budget_chars and queue:
            self._apply_oldest(queue)

    def _apply_oldest(self, queue: deque[_Write]) -> None:
        op = queue.popleft()
        self._queued_chars -= len(op[3])
        self._apply(op)

    def _apply(self, op: _Write) -> None:
        kind, path, language, text, file_id = op
        indexed = indexed_text(text) if kind == "add" else None
        self._terms.applying(indexed)
        if kind == "delete_all":
            self._terms.reset()
        if indexed is not None:
            doc = tantivy.Document(path=path, language=language, content=indexed, cased=indexed)
            doc.add_unsigned("file_id", file_id)
            doc.add_unsigned("unit_id", 0)
            doc.add_unsigned("sample_key", sample_key(path))
            doc.add_unsigned("tokens", token_count(indexed))
            self._writer.add_document(doc)
        elif kind == "delete":
            self._writer.delete_documents_by_term("path", path)
        else:
            self._writer.delete_all_documents()

    def commit(self) -> int:
        """Hand over the queued writes (in order) and commit; deferring ends here."""
        queue, self._queue = self._queue, None
        while queue:
            self._apply_oldest(queue)
        opstamp = int(self._writer.commit())
        self._index.reload()
        self._terms.committed()
        return opstamp

    def rollback(self) -> None:
        self._queue, self._queued_chars = None, 0
        self._terms.rolled_back()
        try:
            self._writer.rollback()
        except (ValueError, RuntimeError):
            log.exception("Tantivy rollback failed")

    # -- reading ---------------------------------------------------------------------------------------
    def num_docs(self) -> int:
        return int(self._index.searcher().num_docs)

    def num_segments(self) -> int:
        return int(self._index.searcher().num_segments)

    def _query(self, fragments: Sequence[Fragment], languages: Sequence[str], generation: int,
               bm25: LiveBm25) -> tuple[Any, bool]:
        """The query, and whether each execution walks the term dictionary (a regex).

        Only the term queries of :func:`_scoring_terms` score (``lexical_rank`` recomputes their BM25 from live
        statistics); every other clause only narrows and scores 0 (Tantivy's BM25 of ``language`` counts deleted
        documents too, and a term set or regex scored a constant)."""
        closed = sorted({term_of(f.text) for f in fragments if f.closed})
        cased = sorted({term for f in fragments if f.closed for term in cased_terms(f)})
        # The lowercase terms rank by BM25 over their frequency; the cased ones narrow, and rank as rarer words.
        clauses: list[tuple[Any, Any]] = [
            *((tantivy.Occur.Must, bm25.term_query(("content", t))) for t in closed),
            *((tantivy.Occur.Must, bm25.term_query(("cased", t))) for t in cased)]
        walks = False
        if not closed:
            # Each open fragment's terms narrow the candidates (``def save``: files holding a ``*def*`` term and a
            # ``*save*`` one, not every file with a ``*save*`` term); the longest first, at most a few lookups.
            longest_first = sorted(set(fragments), key=lambda f: (-len(f.text), f.text, f.left_open, f.right_open))
            narrowed = False
            for open_ in longest_first[:MAX_OPEN_FRAGMENTS]:
                terms = self._terms.matching(term_of(open_.text), left_open=open_.left_open,
                                             right_open=open_.right_open, generation=generation)
                if terms is not None:
                    clauses.append((tantivy.Occur.Must, _narrows(tantivy.Query.term_set_query(
                        self._schema, "content", terms) if terms else tantivy.Query.empty_query())))
                    narrowed = True
            # Term sets and regexes score every document alike (path order: ``class Meta`` scanned 332 files of
            # Django, locale files first, for its first 20 hits). The fragments as whole tokens rank the
            # candidates by BM25 without narrowing them: files saying ``class`` and ``meta`` come first.
            clauses += [(tantivy.Occur.Should, bm25.term_query(term)) for term in _scoring_terms(fragments)]
            if not narrowed:
                open_ = longest_first[0]
                self._terms.ensure_base(self._index.searcher)
                pattern = (".*" if open_.left_open else "") + term_of(open_.text) + (".*" if open_.right_open else "")
                clauses.append((tantivy.Occur.Must, _narrows(tantivy.Query.regex_query(self._schema, "content",
                                                                                       pattern))))
                walks = True
        if languages:
            by_language = [(tantivy.Occur.Should, tantivy.Query.term_query(self._schema, "language", lang))
                           for lang in sorted(set(languages))]
            clauses.append((tantivy.Occur.Must, _narrows(tantivy.Query.boolean_query(by_language))))
        return tantivy.Query.boolean_query(clauses), walks

    def ranked(self, fragments: Sequence[Fragment], languages: Sequence[str] = ()) -> RankedCandidates:
        """Every document containing all ``fragments`` (and in ``languages``), best BM25 score first (a BM25 of
        live statistics, the same for the same tree whatever its history: ``lexical_rank.py``).

        Closed fragments are exact term lookups; when there is none, the terms holding each of the longest open
        fragments (up to :data:`MAX_OPEN_FRAGMENTS`) come from the term index (``lexical_terms.py``, read first if
        it is not yet), or, while a write is pending or when too many terms match every one of them, from a regex
        over the term dictionary for the longest; the fragments as whole tokens then only rank. Using fewer
        fragments than given only widens the candidate set, so completeness never depends on which ones are chosen.
        """
        if not all(f.closed for f in fragments):
            # The same query must narrow the same way on every call (its first page states a total estimated
            # from the candidates): wait for the term index rather than narrow by a regex until it is read.
            self._terms.ensure_base(self._index.searcher, wait=True)
        searcher, generation = self._terms.snapshot(self._index.searcher)
        bm25 = LiveBm25(searcher, self._schema, _scoring_terms(fragments), SCORING_FIELDS)
        query, walks = self._query(fragments, languages, generation, bm25)
        # A regex walks the term dictionary (~0.3 s on 500k terms under load) at each execution, whatever the
        # limit, and a term set costs per term it holds: without a closed fragment, fetch the sample pool in the
        # first execution.
        narrows_by_set = walks or not any(f.closed for f in fragments)
        first = RankedCandidates.SAMPLE_POOL if narrows_by_set else RankedCandidates.FIRST_BATCH
        return RankedCandidates(searcher, query, bm25, first_batch=first)

    def warm_terms(self) -> None:
        """Read the term index now (the server does once ready; otherwise the first open-fragment query does)."""
        self._terms.ensure_base(self._index.searcher, wait=True)
