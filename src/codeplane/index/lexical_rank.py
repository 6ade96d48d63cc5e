"""Ranking Tantivy's candidates by a BM25 that depends on the tree alone (ARCHITECTURE: "hits are ordered by file
BM25, then path").

Tantivy's BM25 takes its statistics (documents, documents holding a term, average length) from its segments, deleted
documents included until a merge purges them; tantivy-py cannot merge on demand. So after an edit, a rename or a
checkout its scores, and often its order, differed from a cold index of the same tree, and a restart kept them so.

Here a candidate's score is BM25 recomputed from what is history-free: its term frequencies and (Tantivy's
quantised) field length, read from Tantivy's explanation of that document, and live statistics: the live document
count, each term's live document count (a count query), and the live average length (the sum of each document's
``tokens`` fast field, over live documents only). Tantivy still finds the candidates and fetches them best first by
its own score, whose term queries are boosted to carry the live idf (``LiveBm25.term_query``); that score then
differs from the live one only by the average length, and bounds it (``LiveBm25.ceiling``): a candidate's live score
is released once no document not explained yet (each scores at most the next Tantivy score) can reach it. A cold
index's bound is its own score, and an explanation costs a few microseconds: an identifier's first page explains
about as many documents as it scans (~0.5 ms for ``self`` on Django, 0.15 ms before).
"""

from __future__ import annotations

import heapq
import itertools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import tantivy

#: Tantivy's BM25 parameters.
K1, B = 1.2, 0.75
#: Slack on the bound of a document's live score from its stale one: Tantivy scores in 32-bit floats.
_SLACK = 1 + 1e-5
#: Scores are reported (and compared) rounded to this many decimals.
DECIMALS = 4
_TERM = re.compile(r'field=(\d+), type=Str, "([^"]*)"\)$')
#: A scoring term: (field, term).
Term = tuple[str, str]


def idf(docs: float, holding: float) -> float:
    return math.log(1 + (docs - holding + 0.5) / (holding + 0.5))


class LiveBm25:
    """BM25 over live statistics of one searcher, for documents Tantivy explains.

    Each scoring term's query is boosted by its live idf over Tantivy's (stale) one, so Tantivy's own score has the
    live idf and differs from the live score only by the average length (:meth:`ceiling`). Only these term queries
    score: every other clause of the query only narrows (``LexicalIndex._query``)."""

    def __init__(self, searcher: Any, schema: Any, terms: Sequence[Term], fields: Mapping[int, str]) -> None:
        """``terms``: the scoring ones, in text fields tokenized alike (the same length per document); ``fields``:
        their names by their number in the schema (how an explanation names them)."""
        self._searcher = searcher
        self._schema = schema
        self._fields = fields
        docs = int(searcher.num_docs)
        total = searcher.aggregate(tantivy.Query.all_query(), {"t": {"sum": {"field": "tokens"}}})["t"]["value"]
        self._avgdl = float(total or 0) / docs if docs else 1.0
        # Every document holds ``unit_id`` 0: its document count is Tantivy's, deleted documents included.
        stale_docs = int(searcher.doc_freq("unit_id", 0))
        self._idf: dict[Term, float] = {}
        self._boost: dict[Term, float] = {}
        for term in sorted(set(terms)):
            query = tantivy.Query.term_query(schema, *term)
            holding = int(searcher.search(query, limit=1, count=True).count)
            stale = idf(stale_docs, int(searcher.doc_freq(*term)))
            self._idf[term] = idf(docs, holding)
            self._boost[term] = self._idf[term] / stale if holding and stale > 0 else 1.0
        #: Tantivy's average length over the live one (from the first explanation, which states Tantivy's).
        self.shrink: float | None = None
        # Explained alone: an explanation builds the scorer of every clause, and a term set's or regex's costs
        # milliseconds (they score 0 anyway).
        self._explained = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, self.term_query(term)) for term in sorted(self._idf)])
        self.explanations = 0

    @property
    def schema(self) -> Any:
        return self._schema

    def term_query(self, term: Term) -> Any:
        """The scoring query of ``term``, its score carrying the live idf."""
        query = tantivy.Query.term_query(self._schema, *term)
        boost = self._boost.get(term, 1.0)
        return query if boost == 1.0 else tantivy.Query.boost_query(query, boost)

    def score(self, address: Any) -> float:
        """The live score of one document (Tantivy's explanation gives its frequencies and length)."""
        total = 0.0
        self.explanations += 1
        explanation = json.loads(self._explained.explain(self._searcher, address).to_json())
        for field, text, freq, length, stale_avgdl in _term_nodes(explanation):
            if self.shrink is None:
                self.shrink = stale_avgdl / self._avgdl if stale_avgdl > 0 and self._avgdl > 0 else 1.0
            weight = self._idf.get((self._fields.get(field, ""), text))
            if weight is not None:
                total += weight * (K1 + 1) * freq / (freq + K1 * (1 - B + B * length / self._avgdl))
        return total

    def ceiling(self, stale: float) -> float:
        """The highest live score, rounded, that a document whose Tantivy score is ``stale`` can have.

        Per term, with ``u`` the saturation Tantivy gives (``freq / (freq + k1 (1 - b + b dl / avgdl))``) and
        ``q`` its average length over the live one: a live average no larger (``q >= 1``) never scores higher;
        else the live saturation is at most ``u / (u + q (1 - u))`` (its limit for a large ``freq``), near ``u``
        for the saturated documents that rank first. That bound is concave in ``u``: over several terms (weights
        ``idf (k1 + 1)``, their shares of ``stale`` unknown) it is largest with every term at the mean saturation."""
        if stale <= 0:
            return 0.0
        q = self.shrink
        if q is None:
            return math.inf
        if q >= 1:
            return round(stale * _SLACK, DECIMALS)
        top = sum(self._idf.values()) * (K1 + 1)
        u = min(stale / top, 1.0) if top > 0 else 1.0
        return round(top * u / (u + q * (1 - u)) * _SLACK, DECIMALS)


def _term_nodes(node: dict[str, Any]) -> Iterator[tuple[int, str, float, float, float]]:
    """(field number, term, freq, dl, avgdl) of each ``TermQuery`` node of an explanation."""
    if str(node.get("description", "")).startswith("TermQuery"):
        match = _TERM.search(str((node.get("context") or [""])[0]))
        values = {str(d["description"]).split(",")[0]: float(d["value"])
                  for part in node.get("details", []) for d in part.get("details", [])}
        if match is not None:
            yield int(match.group(1)), match.group(2), values["freq"], values["dl"], values["avgdl"]
        return
    for child in node.get("details", []) or []:
        yield from _term_nodes(child)


class RankedCandidates:
    """Matching documents as ``(path, score)`` in (live BM25 descending, path) order, fetched lazily.

    A search that needs one page of hits should not pay for every matching document: the documents come from one
    searcher (a point-in-time view) in growing top-k batches by Tantivy's score; each is explained (its live score)
    in that order, and released once nothing unexplained can score as high (module docstring). Equal rounded
    scores are released together, by path. Nothing is searched until the candidates (or their count) are asked
    for.
    """

    FIRST_BATCH = 64
    GROWTH = 4
    #: How many of the best documents an open fragment's first search fetches (its term-dictionary regex costs
    #: per execution); :meth:`spread` then draws its sample from them.
    SAMPLE_POOL = 4096
    #: :meth:`within` narrows by fetching every matching document up to this many (then by a term set of paths).
    PREFETCH_MAX = 4096

    def __init__(self, searcher: Any, query: Any, bm25: LiveBm25, *, first_batch: int = FIRST_BATCH) -> None:
        self._searcher = searcher
        self._query = query
        self._bm25 = bm25
        self._paths: dict[tuple[int, int], str] = {}
        self._first_batch = first_batch
        #: The best documents by Tantivy's score fetched so far (``None``: not searched yet), and the limit they were
        #: fetched with.
        self._top: list[Any] | None = None
        self._top_limit = first_batch
        self._count = 0
        #: Paths released so far, in order (what a scan reaches first).
        self._released: list[str] = []

    def _fetched(self) -> list[Any]:
        if self._top is None:
            # The first batch comes with the count (one search for both).
            first = self._searcher.search(self._query, limit=self._first_batch, count=True) \
                if int(self._searcher.num_docs) else None
            self._top = list(first.hits) if first is not None else []
            self._count = int(first.count) if first is not None else 0
        return self._top

    @property
    def count(self) -> int:
        """Number of matching documents (exact)."""
        self._fetched()
        return self._count

    def within(self, keep: Callable[[str], bool], prefix: str = "") -> RankedCandidates:
        """These candidates narrowed to the paths under ``prefix`` that ``keep`` accepts (a search's
        ``scope.paths``), ranked alike: their count and the estimate's sample are then the scope's (a scope holding
        300 hits said "of ~30958"), and a scan never visits the rest.

        Up to :data:`PREFETCH_MAX` matching documents are fetched whole and the scope's kept (a document's path
        costs about a microsecond); beyond, a term set of the scope's paths narrows the query. Tantivy's ``path``
        terms name every live document (a deleted one's term selects nothing), so either narrowing is exact. The
        set alone cost ~15 ms on Django for ``scope.paths: ["django/"]`` (every path term listed, matched, and
        looked up), for an identifier in 122 documents."""
        if self.count <= self.PREFETCH_MAX:
            kept = [hit for hit in self._best(self.count) if (path := self._path(hit[1])).startswith(prefix)
                    and keep(path)]
            return RankedCandidates._fetched_whole(self, kept)
        paths = [path for path, _ in self._searcher.terms_with_prefix("path", prefix) if keep(path)]
        inside = tantivy.Query.term_set_query(self._bm25.schema, "path", paths) if paths \
            else tantivy.Query.empty_query()
        narrowed = tantivy.Query.boolean_query([  # the path clause selects without scoring, as every narrowing does
            (tantivy.Occur.Must, self._query), (tantivy.Occur.Must, tantivy.Query.const_score_query(inside, 0.0))])
        return RankedCandidates(self._searcher, narrowed, self._bm25, first_batch=self._first_batch)

    @classmethod
    def _fetched_whole(cls, wider: RankedCandidates, hits: list[Any]) -> RankedCandidates:
        """Candidates that are exactly ``hits`` (some of ``wider``'s, in its order): fetched, so never searched
        again (its query is never run)."""
        narrowed = cls(wider._searcher, wider._query, wider._bm25, first_batch=wider._first_batch)
        narrowed._top, narrowed._count, narrowed._top_limit = hits, len(hits), max(len(hits), 1)
        narrowed._paths = wider._paths
        return narrowed

    def _best(self, limit: int) -> list[Any]:
        top = self._fetched()
        if limit > self._top_limit and self._top_limit < self._count:
            top = self._top = list(self._searcher.search(self._query, limit=limit, count=False).hits)
            self._top_limit = limit
        return top[:limit]

    def _path(self, address: Any) -> str:
        key = (address.segment_ord, address.doc)
        path = self._paths.get(key)
        if path is None:
            path = self._paths[key] = self._searcher.doc(address)["path"][0]
        return path

    def _live(self, stale: float, address: Any) -> float:
        if stale <= 0:  # no scoring term in the document: nothing to explain
            return 0.0
        return round(self._bm25.score(address), DECIMALS)

    def _ceiling(self, stale: float) -> float:
        return self._bm25.ceiling(stale)

    def spread(self, size: int, skip: int) -> list[str]:
        """Up to ``size`` paths of matching documents not among the first ``skip`` released, to estimate how many
        hits the documents not scanned yet hold: those with the lowest ``sample_key`` (a hash of the path), a
        uniform and deterministic draw. When every matching document is here (an open fragment fetches up to
        :data:`SAMPLE_POOL` at once) their keys are read from the fast field; otherwise one top-k search of
        ``size + skip`` by that field finds them."""
        if self.count <= skip:
            return []
        scanned = set(self._released[:skip])
        if self._top_limit >= self.count:
            addresses = [address for _, address in self._fetched()]
            keys = self._searcher.fast_field_values("sample_key", addresses)
            drawn = [addresses[n] for _, n in sorted(zip(keys, range(len(addresses)), strict=True))]
        else:
            drawn = [address for _, address in self._searcher.search(
                self._query, limit=size + skip, count=False, order_by_field="sample_key",
                order=tantivy.Order.Asc).hits]
        return [path for path in (self._path(address) for address in drawn) if path not in scanned][:size]

    def __iter__(self) -> Iterator[tuple[str, float]]:
        if not self.count:
            return
        limit = self._top_limit
        explained: set[tuple[int, int]] = set()
        waiting: list[tuple[float, int, Any]] = []  # (-live score, order explained, address)
        order = itertools.count()
        while True:
            hits = self._best(limit)
            complete = len(hits) < limit or limit >= self.count
            released_before = len(self._released)
            position = 0
            while True:
                while position < len(hits) and (hits[position][1].segment_ord, hits[position][1].doc) in explained:
                    position += 1
                if position < len(hits):
                    ceiling: float | None = self._ceiling(float(hits[position][0]))
                else:  # documents not fetched score at most the last fetched one
                    ceiling = None if complete else self._ceiling(float(hits[-1][0]) if hits else 0.0)
                # A run of equal scores is released whole, once no unexplained document can reach it.
                while waiting and (ceiling is None or -waiting[0][0] > ceiling):
                    score = -waiting[0][0]
                    run = []
                    while waiting and -waiting[0][0] == score:
                        run.append(heapq.heappop(waiting)[2])
                    for path in sorted(self._path(address) for address in run):
                        self._released.append(path)
                        yield path, score
                if position >= len(hits):
                    break
                stale, address = hits[position]
                explained.add((address.segment_ord, address.doc))
                heapq.heappush(waiting, (-self._live(float(stale), address), next(order), address))
                position += 1
            if complete:
                return
            # A batch that ties all the way down released nothing (a query without a closed fragment may score every
            # document 0): growing by GROWTH would search again and again. Fetch them all at once.
            limit = self.count if len(self._released) == released_before else limit * self.GROWTH
