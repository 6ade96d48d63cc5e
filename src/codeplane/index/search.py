"""Lexical search (spec §7.2, §23.7 ``search`` mode ``lexical``): Tantivy narrows, scanning proves.

1. The query's fragments select candidate files from Tantivy (complete by construction, see
   :mod:`codeplane.index.query`), best BM25 score first (ties by path); with no fragment every text file in
   scope is a candidate, in path order.
2. Each candidate is read from disk when the scan reaches it and scanned whole, so every hit is a real,
   current occurrence; hits are ordered by file score, then path, line, column.
3. The scan is a :class:`HitStream`: it runs only until the page asked for is full (plus one hit, to know
   whether another page exists), so a page costs work proportional to the files it reaches, not to every
   hit of the query. The cursor chain keeps the stream and continues it (``cursors.py``): pages never repeat
   or skip a hit, and each file is read once per chain (a file changed after the first page is read as it is
   when the scan reaches it). A page that would serve hits of a file read before it (the scan stopped inside
   it, or hits produced ahead) checks that file first: one changed since is 1005 (:meth:`HitStream.changed`),
   as ``read_source`` refuses a stale continuation, since its hits would carry the old line numbers and
   re-reading it could neither tell which of its hits were served nor keep each exactly once.
Files over ``index.max_file_bytes`` (no Tantivy document) are candidates too, scanned last, so a search misses
nothing ``rg`` finds; one over :data:`LARGE_SCAN_MAX_BYTES` is not read and the answer names it.
The total is exact once the stream has ended; before that it is an estimate (hits in the files scanned so far,
extrapolated over the candidates not yet reached). Work per page is bounded by :data:`SCAN_BUDGET_SEC`; a
scan that runs out ends the chain with ``truncated``.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.index import globs
from codeplane.index.cursors import STREAM_WINDOW
from codeplane.index.languages import family_of
from codeplane.index.lexical import LexicalIndex
from codeplane.index.query import CompiledQuery
from codeplane.index.scan import Lines, count_at_most, iter_matches, snippet
from codeplane.repo.content import head_is_binary
from codeplane.repo.textcache import TextCache

SCAN_BUDGET_SEC = 10.0
#: Files over ``index.max_file_bytes`` have no Tantivy document; a search scans them from disk after the ranked
#: candidates (as ``rg`` searches every file), up to this size each: a bigger one is named as not searched.
LARGE_SCAN_MAX_BYTES = 64 * 1024 * 1024
#: At most this many unsearched files are named in an answer.
MAX_UNSEARCHED = 20
MAX_CONTEXT_LINES = 10
#: Candidates not reached yet that are scanned (once per chain) to estimate the total, each up to a cap.
ESTIMATE_SAMPLE = 8
#: Without a closed fragment (``text`` syntax) a candidate only holds a token containing each term, and hits per
#: candidate vary more: a larger sample (on Django's ``text`` queries the estimate's mean |log2(estimate/exact)|
#: went from 1.44 to 0.88).
ESTIMATE_SAMPLE_OPEN = 16
#: A scan of every text file (no fragment to narrow by) samples more, each weighed by its size.
ESTIMATE_SAMPLE_SCAN = 32
ESTIMATE_CAP = 500
#: The file a page stopped inside is counted to its end for the estimate, up to this many hits (a page of 100
#: from a file holding 5,000 said "of 101").
CURRENT_FILE_CAP = 20_000


@dataclass(frozen=True)
class LexicalScope:
    #: Gitignore-style globs read as ``rg -g`` reads them (:mod:`codeplane.index.globs`); empty = all.
    paths: tuple[str, ...] = ()
    #: Families (the lexical index knows a file by its family).
    languages: tuple[str, ...] = ()
    #: File suffixes of the languages asked for that have no family (C: ``.c``, ``.h``): also in the selection.
    suffixes: tuple[str, ...] = ()

    def keep(self) -> Callable[[str], bool] | None:
        """Whether a path is in scope (its globs, and its family or suffix when languages are asked for); ``None``
        for every path."""
        selected = globs.path_matcher(self.paths)
        languages, suffixes = set(self.languages), self.suffixes
        if selected is None and not languages and not suffixes:
            return None

        def keep(path: str) -> bool:
            chosen = not (languages or suffixes) or family_of(path) in languages or path.lower().endswith(suffixes)
            return chosen and (selected is None or selected(path))

        return keep

    def in_languages(self, path: str, family: str | None) -> bool:
        if not self.languages and not self.suffixes:
            return True
        return family in self.languages or path.lower().endswith(self.suffixes)


@dataclass(frozen=True, slots=True)
class LexicalHit:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    snippet: str | None
    context_before: tuple[str, ...]
    context_after: tuple[str, ...]
    score: float
    language: str | None


def scope_concerns(root: Path, scope: LexicalScope) -> Callable[[str], bool]:
    """Which pending paths a search in ``scope`` must wait for (per-file freshness, D6): those in scope, and any
    path that is not a regular file now (a directory, or gone) since it may hold or have held files in scope."""
    keep = scope.keep()
    if keep is None:
        return lambda _path: True

    def concerns(path: str) -> bool:
        return not os.path.isfile(os.path.join(root, path)) or keep(path)

    return concerns


def _text_rows(conn: sqlite3.Connection, scope: LexicalScope) -> list[tuple[str, int]]:
    """Text files in scope with their sizes, from the file table (only needed when Tantivy cannot narrow)."""
    rows = conn.execute("SELECT path, language, size FROM files WHERE kind = 'text' ORDER BY path")
    return [(path, int(size)) for path, lang, size in rows if scope.in_languages(path, lang)]


_END = object()


class HitStream:
    """A query's hits in order, produced on demand; :attr:`items` holds the newest produced (at most
    :data:`~codeplane.index.cursors.STREAM_WINDOW` behind the last), :attr:`base` the position of the first.

    Not thread-safe by itself: the cursor store calls :meth:`fill` under :attr:`lock`.
    """

    def __init__(self, texts: TextCache, query: CompiledQuery, candidates: Iterable[tuple[str, float]],
                 candidate_count: int, *, keep: Callable[[str], bool] | None, context_lines: int,
                 include_snippets: bool, budget_sec: float = SCAN_BUDGET_SEC,
                 sampler: Callable[[int, int], list[str]] | None = None, sample_size: int = ESTIMATE_SAMPLE,
                 unsearched: tuple[str, ...] = (), sizes: Mapping[str, int] | None = None,
                 bytes_after: Callable[[int], int] | None = None) -> None:
        self.lock = threading.Lock()
        #: Files in scope too large to scan (over :data:`LARGE_SCAN_MAX_BYTES`), at most :data:`MAX_UNSEARCHED`.
        self.unsearched = unsearched
        self.items: list[LexicalHit] = []
        self.base = 0
        self.produced = 0
        self.exhausted = False
        self.truncated = False
        self.files_scanned = 0
        self._texts = texts
        self._query = query
        self._candidate_count = candidate_count
        self._keep = keep
        self._context = max(0, min(context_lines, MAX_CONTEXT_LINES))
        self._snippets = include_snippets
        self._budget = budget_sec
        self._sampler = sampler
        self._sample_size = sample_size
        #: With every candidate's size (a scan of every text file): the estimate goes by hits per byte, as files'
        #: sizes vary more than their density (a regex's "5 of ~14 hits" where rg finds 3,541).
        self._sizes = sizes
        self._bytes_after = bytes_after
        self._per_file: float | None = None
        #: Hits of the files scanned to their end, and those produced so far from the file being scanned.
        self._completed_hits = 0
        self._current_hits: int | None = None
        #: The file being scanned and, once counted for an estimate, its hits (at most CURRENT_FILE_CAP).
        self._current_text: str | None = None
        self._current_path: str | None = None
        self._current_count: int | None = None
        #: ``hash()`` of the text each file with hits was scanned in, while a page may still serve those hits
        #: (:meth:`changed`); pruned with the window.
        self._read: dict[str, int] = {}
        self._produce = self._hits(iter(candidates))

    @property
    def total(self) -> int:
        """Exact once the stream has ended (or ran out of budget: then a lower bound); an estimate before.

        The estimate is the hits of the files scanned to their end, those of the file being scanned (counted to
        its end once, up to :data:`CURRENT_FILE_CAP`) and, for each candidate not started yet, the mean hits of a
        few candidates drawn uniformly from those not scanned (``RankedCandidates.spread``): the files scanned
        first are the best-scoring, i.e. the densest, so extrapolating from them would overestimate several times.
        """
        if self.exhausted:
            return self.produced
        if self._per_file is None:
            self._per_file = self._sample_mean()
        unstarted: float = max(self._candidate_count - self.files_scanned, 0)
        if self._bytes_after is not None:
            unstarted = self._bytes_after(self.files_scanned)
        current = 0.0
        if self._current_hits is not None and self._current_text is not None:
            if self._current_count is None:
                self._current_count = count_at_most(self._current_text, self._query, CURRENT_FILE_CAP)
            current = float(max(self._current_hits, self._current_count))
        return self._completed_hits + round(current + self._per_file * unstarted)

    def _sample_mean(self) -> float:
        """Hits per candidate file (per byte, with sizes) in a sample of those not scanned yet."""
        paths = self._sampler(self._sample_size, self.files_scanned) if self._sampler is not None else []
        keep = self._keep
        read = [(p, self._texts.read(p)) for p in paths if keep is None or keep(p)]
        counted = [(p, count_at_most(text, self._query, ESTIMATE_CAP)) for p, text in read if text is not None]
        if self._sizes is not None and self._bytes_after is not None:
            size = sum(self._sizes.get(p, 0) for p, _ in counted)
            return sum(c for _, c in counted) / size if size else 0.0
        if counted:
            return sum(c for _, c in counted) / len(counted)
        return self.produced / max(self.files_scanned, 1)

    def fill(self, count: int) -> None:
        """Produce hits until ``count`` exist in all (kept or dropped), the candidates run out, or the time budget
        does; then drop the oldest beyond the window."""
        deadline = time.monotonic() + self._budget
        items = self.items
        while self.produced < count and not self.exhausted:
            hit = next(self._produce, _END)
            if hit is _END:
                self.exhausted = True
            elif isinstance(hit, LexicalHit):
                items.append(hit)
                self.produced += 1
            elif time.monotonic() > deadline:  # a file boundary: the place to check the clock
                self.truncated = self.exhausted = True
        if len(items) > STREAM_WINDOW:
            dropped = len(items) - STREAM_WINDOW
            del items[:dropped]
            self.base += dropped
            live = {hit.path for hit in items}
            self._read = {p: h for p, h in self._read.items() if p in live or p == self._current_path}

    def changed(self, start: int, end: int) -> str | None:
        """The first path (in path order) whose text changed since the scan read it, among the files of the hits
        at ``start:end`` already produced and, when producing up to ``end`` resumes the scan, the file it stopped
        inside; ``None`` when all are as read. Called under :attr:`lock`, with ``start >= base``."""
        paths = {hit.path for hit in self.items[start - self.base:end - self.base]}
        if self._current_path is not None and not self.exhausted and self.produced <= end:
            paths.add(self._current_path)
        for path in sorted(paths):
            text = self._texts.read(path)
            if text is None or hash(text) != self._read.get(path):
                return path
        return None

    def _hits(self, candidates: Iterator[tuple[str, float]]) -> Iterator[LexicalHit | None]:
        keep, query, context = self._keep, self._query, self._context
        for path, score in candidates:
            if keep is not None and not keep(path):
                continue
            text = self._texts.read(path)
            self.files_scanned += 1
            if text is not None:
                lines = Lines(text)
                language = family_of(path)
                self._current_hits, self._current_text, self._current_count = 0, text, None
                self._current_path = path
                for match in iter_matches(text, query, lines):
                    if not self._current_hits:
                        self._read[path] = hash(text)  # str caches its hash: the text cache's copy costs it once
                    self._current_hits += 1
                    body: str | None = None
                    before: tuple[str, ...] = ()
                    after: tuple[str, ...] = ()
                    if self._snippets:
                        body = snippet(lines.line_at(match.line_start), match.column, match.end_column)
                        if context:
                            before = tuple(snippet(t, 1, 1) for t in lines.before(match.line_start, context))
                            after = tuple(snippet(t, 1, 1) for t in lines.after(match.line_start, context))
                    yield LexicalHit(
                        path=path, line=match.line, column=match.column, end_line=match.end_line,
                        end_column=match.end_column, snippet=body, context_before=before, context_after=after,
                        score=score, language=language)
                self._completed_hits += self._current_hits
                self._current_hits = self._current_text = self._current_path = None
            yield None


class LargeFiles:
    """The oversized text files (path, language, size), listed once per epoch (none: no query; the file table has
    no index on ``kind``). Binary ones are left out by their first 8 KiB, as the index does (a 2.6 MB PDF read whole
    and dropped by every search that reached the end of its candidates)."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._cached: tuple[int, tuple[tuple[str, str | None, int], ...]] = (-1, ())

    def of(self, conn: sqlite3.Connection, epoch: int, oversized: int) -> tuple[tuple[str, str | None, int], ...]:
        """As of ``epoch`` (read through ``conn``), which counts ``oversized`` such files."""
        cached_epoch, rows = self._cached
        if cached_epoch != epoch:
            found = () if not oversized else tuple(conn.execute(
                "SELECT path, language, size FROM files WHERE kind = 'oversized' ORDER BY path"))
            rows = tuple(row for row in found if not head_is_binary(self._root / row[0]))  # None: the scan skips it
            self._cached = (epoch, rows)
        return rows


def _split_large(large: Sequence[tuple[str, str | None, int]], scope: LexicalScope,
                 keep: Callable[[str], bool] | None) -> tuple[list[str], tuple[str, ...]]:
    """The oversized files in scope: (those to scan, in path order; those too large to, named)."""
    in_scope = sorted((path, size) for path, language, size in large
                      if scope.in_languages(path, language) and (keep is None or keep(path)))
    too_large = tuple(path for path, size in in_scope if size > LARGE_SCAN_MAX_BYTES)
    return [path for path, size in in_scope if size <= LARGE_SCAN_MAX_BYTES], too_large[:MAX_UNSEARCHED]


def _literal_prefix(paths: Sequence[str]) -> str:
    """A prefix every path the globs select starts with (``""`` when there is none to tell): anchored globs'
    (a leading or inner ``/``) literal heads, in common; a negation or an unanchored glob can select any path."""
    heads: list[str] = []
    for line in globs.rg_globs(paths):
        if line.startswith("!") or "/" not in line.rstrip("/"):
            return ""
        body = line.lstrip("/")
        # Up to the first wildcard, escape or blank (gitignore drops trailing blanks: "a.py " selects a.py).
        cut = min((at for at in (body.find(ch) for ch in "*?[\\ ") if at >= 0), default=len(body))
        heads.append(body[:cut])
    # By character on purpose: the prefix narrows a term walk, and "django/utils" also covers "django/utils.py".
    return os.path.commonprefix(heads) if heads else ""  # noqa: RUF071


def lexical_stream(conn: sqlite3.Connection, texts: TextCache, lexical: LexicalIndex, query: CompiledQuery,
                   scope: LexicalScope, *, context_lines: int = 0, include_snippets: bool = True,
                   budget_sec: float = SCAN_BUDGET_SEC,
                   large: Sequence[tuple[str, str | None, int]] = ()) -> HitStream:
    """Every occurrence of ``query`` in scope, as a stream (nothing is scanned until it is filled).

    ``large`` lists the oversized files (path, language, size): they are scanned after the indexed candidates.
    """
    keep = scope.keep()
    scanned_large, unsearched = _split_large(large, scope, keep)
    if query.fragments:
        # Tantivy narrows by family; a family-less language (C) is kept by its suffix, after it.
        ranked = lexical.ranked(query.fragments, () if scope.suffixes else scope.languages)
        if keep is not None and (scope.paths or scope.suffixes):
            # The total is estimated over the candidates: they must be the scope's, not the whole tree's.
            ranked = ranked.within(keep, _literal_prefix(scope.paths))
        candidates = itertools.chain(ranked, ((p, 0.0) for p in scanned_large))
        return HitStream(texts, query, candidates, ranked.count + len(scanned_large), keep=keep,
                         context_lines=context_lines, include_snippets=include_snippets, budget_sec=budget_sec,
                         sampler=ranked.spread, unsearched=unsearched,
                         sample_size=ESTIMATE_SAMPLE if any(f.closed for f in query.fragments)
                         else ESTIMATE_SAMPLE_OPEN)
    # No fragment (e.g. a regex without a required literal): every text file in scope, in path order.
    sizes = {path: size for path, size in _text_rows(conn, scope) if keep is None or keep(path)}
    sizes.update((path, size) for path, _, size in large if path in scanned_large)
    paths = sorted(sizes)
    after = list(itertools.accumulate(reversed([sizes[p] for p in paths]), initial=0))[::-1]
    return HitStream(texts, query, ((p, 0.0) for p in paths), len(paths), keep=keep,
                     context_lines=context_lines, include_snippets=include_snippets, budget_sec=budget_sec,
                     sampler=lambda size, skip: paths[skip::max((len(paths) - skip) // size, 1)][:size],
                     sample_size=ESTIMATE_SAMPLE_SCAN, unsearched=unsearched, sizes=sizes,
                     bytes_after=lambda scanned: after[min(scanned, len(paths))])
