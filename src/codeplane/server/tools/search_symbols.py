"""``search`` modes ``symbol``, ``definitions`` and ``references`` (§23.7), served by the structural index.

Registered into ``search.MODE_HANDLERS`` by :func:`register`; matching rules live in
``index/structural/symbols.py``. Columns are shown 1-based, like lexical hits.
"""

from __future__ import annotations

import time

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.languages import language_names
from codeplane.index.structural.service import SymbolRequest
from codeplane.index.structural.symbols import container_of
from codeplane.server.services import Services
from codeplane.server.tools.search import (
    Pagination,
    SearchHit,
    SearchParams,
    SearchResult,
    SearchScope,
    SymbolInfo,
    register_mode,
)

_SCORES = {"uid": 1.0, "qualified": 1.0, "exact": 1.0, "prefix": 0.75, "substring": 0.5}


def _search(services: Services, params: SearchParams) -> SearchResult:
    started = time.perf_counter()
    scope = params.scope or SearchScope()
    mode = params.mode
    assert mode in ("symbol", "definitions", "references")
    known = language_names()
    for index, name in enumerate(scope.languages):
        if name not in known:  # definitions carry their language and family: any of those names selects
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"scope.languages: {name!r} is not a language or "
                                 "family the index knows", details={"field": f"scope.languages.{index}",
                                                                     "known": known})
    request = SymbolRequest(mode=mode, query=params.query, paths=tuple(scope.paths),
                            languages=tuple(scope.languages), kinds=tuple(scope.kinds))
    page = services.structural.search(request, limit=params.limit, cursor=params.cursor,
                                      include_snippets=params.include_snippets)
    if not page.hits and scope.kinds and params.cursor is None:
        # Nothing found: say so if a kind is no kind at all (``functon``), not "no hits".
        with services.structural.reading() as queries:
            held = queries.kinds()
        for index, kind in enumerate(scope.kinds):
            if kind not in held:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"scope.kinds: no definition in the index is of "
                                     f"kind {kind!r}", details={"field": f"scope.kinds.{index}", "known": held})
    hits = []
    for hit, snippet in zip(page.hits, page.snippets, strict=True):
        d = hit.definition
        ref = hit.ref
        hits.append(SearchHit(
            path=hit.path, line=hit.line, column=hit.col + 1, end_line=hit.end_line, end_column=hit.end_col + 1,
            snippet=snippet,
            symbol=None if hit.shared else SymbolInfo(name=d.name, kind=d.kind, container=container_of(d),
                                                      qualified_name=d.qualified_name, def_uid=d.def_uid),
            score=_SCORES.get(hit.match, 0.5), match_type="exact" if hit.match != "substring" else "fuzzy",
            language=d.language, role=ref.role if ref else None, ref_tier=ref.ref_tier if ref else None,
            certainty=ref.certainty if ref else None))
    return SearchResult(mode=mode, query=params.query, results=hits,
                        pagination=Pagination(next_cursor=page.next_cursor, total_estimate=page.total),
                        epoch=page.epoch, truncated=page.truncated,
                        query_time_ms=round((time.perf_counter() - started) * 1000, 3))


def register() -> None:
    """Serve the three structural modes through the ``search`` tool."""
    for mode in ("symbol", "definitions", "references"):
        register_mode(mode, _search)
