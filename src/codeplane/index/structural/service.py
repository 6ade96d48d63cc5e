"""``StructuralService``: what tools and other subsystems use to read structural facts.

Reads go through the index service's read connection, so they wait (bounded) until every change marked before
them is indexed and see one consistent epoch. Symbol look-ups answer as of before a write batch still in flight in
this server (not waiting for its refresh: it has not answered yet) and re-check the files of their hits on disk.
Symbol searches and the ``map_repo`` tree are paginated over stored snapshots (§23.6). ``status()`` never waits:
it opens its own read-only connection.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.cursors import CursorStore
from codeplane.index.globs import path_matcher
from codeplane.index.languages import C_FAMILY_SUFFIXES
from codeplane.index.service import IndexService
from codeplane.index.structural import repo_map, symbols
from codeplane.index.structural.leading import documented_start
from codeplane.index.structural.map_cache import MapCache
from codeplane.index.structural.queries import StructuralQueries
from codeplane.index.structural.status import structural_status
from codeplane.index.structural.symbols import SymbolHit, SymbolScope
from codeplane.repo.textcache import TextCache

SymbolMode = Literal["symbol", "definitions", "references"]
SECTIONS = ("structure", "languages", "entry_points", "dependencies", "test_layout", "public_api", "contexts")


#: C/C++ headers: a declaration there and the definition in a source file read as the definition.
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp")


@dataclass(frozen=True)
class SymbolRequest:
    mode: SymbolMode
    query: str
    paths: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()

    def key(self) -> str:
        raw = json.dumps([self.mode, self.query, self.paths, self.languages, self.kinds])
        return hashlib.sha256(raw.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class SymbolPage:
    hits: tuple[SymbolHit, ...]
    snippets: tuple[str | None, ...]
    next_cursor: str | None
    total: int
    epoch: int
    truncated: bool


@dataclass(frozen=True)
class RepoMap:
    epoch: int
    file_count: int
    tree: tuple[repo_map.TreeNode, ...] = ()
    next_cursor: str | None = None
    tree_total: int = 0
    #: Directories above the depth were left closed so that the tree fits one page (no depth was asked).
    folded: bool = False
    languages: tuple[repo_map.LanguageShare, ...] = ()
    entry_points: tuple[repo_map.EntryPoint, ...] = ()
    dependencies: repo_map.Dependencies | None = None
    test_layout: repo_map.TestLayout | None = None
    public_api: tuple[repo_map.PublicApiEntry, ...] = ()
    #: Modules and names ``public_api`` holds in its scope, listed or not.
    public_api_modules: int = 0
    public_api_names: int = 0
    contexts: tuple[dict[str, object], ...] = ()
    included: tuple[str, ...] = field(default_factory=tuple)


#: Characters of candidate lines an ambiguous symbol's message lists (the message is cut at 2000).
_CANDIDATE_CHARS = 1600


def _ambiguous(query: str, spans: list[tuple[str, int, str | None, str | None]]) -> CodePlaneError:
    """1003 listing the definitions ``query`` names, one ``path:line qualified_name #def_uid`` line each (what a
    next ``symbol`` or ``path`` accepts), as many as fit and the rest counted: a list of JSON objects repeated
    its keys on each and was cut without saying so."""
    lines: list[str] = []
    size = 0
    for path, line, qualified, uid in spans:
        text = f"{path}:{line}" + (f" {qualified}" if qualified else "") + (f" #{uid}" if uid else "")
        if size + len(text) > _CANDIDATE_CHARS:
            break
        lines.append(text)
        size += len(text) + 1
    more = len(spans) - len(lines)
    if more:
        lines.append(f"… {more} more (search mode=definitions lists them all)")
    # No details: the lines are the candidates (the error's text prints details again, as JSON).
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{query!r} names {len(spans)} definitions; give a "
                          "qualified name or a def_uid (or a path):\n" + "\n".join(lines))


#: The levels ``map_repo`` lists when no depth is asked (folded to fit a page).
FITTED_DEPTH = 3


class StructuralService:
    def __init__(self, index: IndexService, root: Path, index_db: Path) -> None:
        self._index = index
        self._index_db = index_db
        self._texts = TextCache(root, max_bytes=8 * 1024 * 1024)
        self._symbol_cursors: CursorStore[SymbolHit] = CursorStore()
        self._tree_cursors: CursorStore[repo_map.TreeNode] = CursorStore()
        # Each section kept with what it was computed from (``map_cache``): an edit recomputes what it can change.
        self._maps = MapCache()

    @contextmanager
    def reading(self) -> Iterator[StructuralQueries]:
        """Bounded queries (``queries.StructuralQueries``) over one fresh, consistent snapshot."""
        with self._index.read_connection() as conn:
            yield StructuralQueries(conn)

    def symbols_touching(self, path: str, line_ranges: list[tuple[int, int]], *, sha256: str | None = None,
                         limit: int = 50) -> list[str]:
        """``path:kind:qualified_name`` of the definitions overlapping ``line_ranges`` (1-based, inclusive),
        sorted; the mutation delta's ``symbols_changed``. With ``sha256`` (of the text the lines are of) only from
        that text's facts, waiting for nothing when the index holds it (a write's own refresh), and 3005 when it
        holds another text (the file changed again)."""
        if sha256 is None:
            with self.reading() as queries:
                defs = queries.defs_overlapping(path, line_ranges, limit=limit)
        else:
            with self._index.reading_content(path, sha256) as conn:
                if conn is None:
                    raise CodePlaneError(ErrorCode.INDEX_FRESHNESS_TIMEOUT, f"the index holds another text of {path} "
                                         "than the one asked about (it changed again)", details={"path": path})
                defs = StructuralQueries(conn).defs_overlapping(path, line_ranges, limit=limit)
        return sorted({f"{d.path}:{d.kind}:{d.qualified_name or d.name}" for d in defs})

    def definition_span(self, query: str, path: str | None = None) -> tuple[str, int, int]:
        """``(path, first line, last line)`` of the one definition ``query`` names (a name, a qualified name
        or dotted suffix of one, or a ``def_uid``, as ``search`` mode ``definitions``; with ``path``, among those
        defined in that file), as the index spans it plus the decorators, attributes and comments directly above
        it (``leading.py``).

        3007 when nothing matches; 1003 listing the candidates when several do (the caller picks one by
        qualified name or def_uid), but several of one qualified name in one file (overloads) span them all."""
        def found() -> list[SymbolHit]:
            with self._index.read_connection(skip_writes=True) as conn:
                return list(symbols.search_definitions(conn, query, exact_only=True, scope=SymbolScope(
                    path_filter=None if path is None else lambda p: p == path)))

        hits = found()
        if self._index.refresh_if_changed(h.path for h in hits):  # stored lines of a file edited since
            hits = found()
        spans = sorted({(h.path, h.definition.start_line, h.definition.end_line, h.definition.qualified_name,
                         h.definition.def_uid) for h in hits})
        if not spans:
            raise self._not_found(query if path is None else f"{query} in {path}", query)
        if len({(p, q) for p, _, _, q, _ in spans}) == 1:
            # One name defined several times in one file (``@overload`` stubs and the implementation, a function
            # per ``if``/``else`` branch): one read of them all, as their qualified name cannot tell them apart.
            spans = [(spans[0][0], spans[0][1], max(e for _, _, e, _, _ in spans), spans[0][3], spans[0][4])]
        if len(spans) > 1 and len({q for *_, q, _ in spans}) == 1 and all(p.endswith(C_FAMILY_SUFFIXES)
                                                                       for p, *_ in spans):
            # A C/C++ function or method declared in a header and defined in a source file is one entity: read the
            # definition (its body), as "go to definition" does (``Shape::length`` named 2 definitions).
            bodies = [span for span in spans if not span[0].endswith(_HEADERS)]
            spans = bodies if len(bodies) == 1 else spans
        if len(spans) > 1:
            raise _ambiguous(query, [(p, line, q, u) for p, line, _, q, u in spans])
        path, start, end, _, _ = spans[0]
        text = self._texts.read(path)
        # What is written above it belongs to it: ``@cached_property`` says ``App.name`` is no method to call.
        return path, documented_start(path, text.split("\n"), start) if text is not None else start, end

    def _not_found(self, what: str, query: str) -> CodePlaneError:
        """3007, naming the definitions of the query's last name (``Flask.name`` is ``App.name``, inherited)."""
        name = query.rpartition(".")[2]
        hits: list[SymbolHit] = []
        if name and name != what:
            with self._index.read_connection(skip_writes=True) as conn:
                hits = symbols.search_definitions(conn, name, exact_only=True, scope=SymbolScope(path_filter=None))
        named = sorted({(h.definition.qualified_name, h.path, h.definition.start_line) for h in hits})
        return CodePlaneError(
            ErrorCode.SYMBOL_NOT_FOUND, f"no definition named {what!r}",
            details={"symbol": query, "suggestions": [{"qualified_name": q, "path": p, "line": line}
                                                      for q, p, line in named[:10]]})

    # -- search ------------------------------------------------------------------------------------
    def search(self, request: SymbolRequest, *, limit: int, cursor: str | None = None,
               include_snippets: bool = True) -> SymbolPage:
        key = request.key()
        if cursor is not None:
            page = self._symbol_cursors.next_page(cursor, query_key=key, limit=limit)
            self._refuse_stale_page(page.items, page.epoch, cursor)
        else:
            hits, epoch = self._symbol_hits(request)
            # A file in the page changed on disk since it was indexed (the watcher has not seen it yet): its lines
            # are reindexed now and the query runs again, so no hit pairs an old line number with new text.
            if self._index.refresh_if_changed(h.path for h in hits[:limit]):
                hits, epoch = self._symbol_hits(request)
            page = self._symbol_cursors.first_page(hits, total=len(hits), epoch=epoch, query_key=key, limit=limit,
                                                   truncated=len(hits) >= symbols.MAX_HITS)
        snippets = tuple(self._line(h.path, h.line) if include_snippets else None for h in page.items)
        return SymbolPage(page.items, snippets, page.next_cursor, page.total, page.epoch, page.truncated)

    def _refuse_stale_page(self, hits: Sequence[SymbolHit], epoch: int, cursor: str) -> None:
        """1005 when a file of a later page changed since the first page's epoch: the stored hits carry that
        epoch's line numbers, and a snippet read now would pair them with another line (lexical pages refuse
        the same way)."""
        paths = sorted({h.path for h in hits})
        self._index.refresh_if_changed(paths)
        with self._index.read_connection(skip_writes=True) as conn:
            indexed = {path: conn.execute("SELECT indexed_epoch FROM files WHERE path = ?", (path,)).fetchone()
                       for path in paths}
        for path in paths:
            row = indexed[path]
            if row is None or row[0] > epoch:
                raise CodePlaneError(ErrorCode.INVALID_CURSOR, f"{path!r} changed since the cursor was issued (its "
                                     "hits would carry the old line numbers); search again without a cursor",
                                     details={"cursor": cursor[:100], "path": path})

    def _symbol_hits(self, request: SymbolRequest) -> tuple[list[SymbolHit], int]:
        scope = SymbolScope(path_filter=path_matcher(request.paths),
                            languages=request.languages, kinds=request.kinds)
        with self._index.read_connection(skip_writes=True) as conn:
            epoch = self._index.epoch
            if request.mode == "references":
                return list(symbols.search_references(conn, request.query, scope=scope)), epoch
            return list(symbols.search_definitions(conn, request.query, exact_only=request.mode == "definitions",
                                                   scope=scope)), epoch

    def _line(self, path: str, line: int) -> str | None:
        text = self._texts.read(path)
        if text is None:
            return None
        lines = text.split("\n")
        return lines[line - 1].rstrip("\r")[:500] if 0 < line <= len(lines) else None

    # -- map_repo ----------------------------------------------------------------------------------
    def map_repo(self, include: tuple[str, ...], *, depth: int | None, limit: int,
                 cursor: str | None = None, public_api_under: str | None = None) -> RepoMap:
        """``depth=None``: up to ``FITTED_DEPTH`` levels, folded to fit ``limit`` nodes (``fitted_structure``);
        ``public_api_under``: only the public API of modules at or below that path."""
        wanted = tuple(s for s in SECTIONS if s in include) if include else SECTIONS
        budget = limit if depth is None else 0
        levels = FITTED_DEPTH if depth is None else depth
        key = hashlib.sha256(json.dumps(["map_repo", levels, budget]).encode()).hexdigest()[:24]
        if cursor is not None:
            page = self._tree_cursors.next_page(cursor, query_key=key, limit=limit)
            return RepoMap(epoch=page.epoch, file_count=-1, tree=page.items, next_cursor=page.next_cursor,
                           tree_total=page.total, included=("structure",))
        maps = self._maps
        with self._index.read_connection() as conn, maps.lock:
            epoch = maps.sync(conn)
            nodes = maps.tree(levels, budget) if "structure" in wanted else []
            api = maps.public_api(conn, public_api_under) if "public_api" in wanted else repo_map.PublicApi((), 0, 0)
            result = RepoMap(
                epoch=epoch, file_count=maps.file_count,
                languages=tuple(maps.languages()) if "languages" in wanted else (),
                entry_points=tuple(maps.entry_points(conn)) if "entry_points" in wanted else (),
                dependencies=maps.dependencies(conn) if "dependencies" in wanted else None,
                test_layout=maps.test_layout() if "test_layout" in wanted else None,
                public_api=api.entries, public_api_modules=api.module_total, public_api_names=api.name_total,
                contexts=tuple(maps.contexts(conn)) if "contexts" in wanted else (),
                included=wanted,
            )
        page = self._tree_cursors.first_page(nodes, total=len(nodes), epoch=epoch, query_key=key, limit=limit)
        return replace(result, tree=page.items, next_cursor=page.next_cursor, tree_total=len(nodes),
                       folded=bool(budget) and repo_map.has_closed_directory(nodes, levels))

    def warm(self) -> None:
        """Read the file table into the map cache (a first ``map_repo`` on Django spent ~100 ms there); only once
        the index is ready (a first build's writer holds the table)."""
        if not self._index.ready or self._index.first_build_writing:
            return
        with self._index.read_connection() as conn, self._maps.lock:
            self._maps.sync(conn)

    # -- status ------------------------------------------------------------------------------------
    def status(self) -> dict[str, object]:
        """The ``structural`` status section: per-language counts, parse failures, grammars, contexts."""
        if self._index.first_build_writing:  # its reader would wait for the build's lock
            return {"state": "not_built", "building": True}
        return structural_status(self._index_db, wait=False)  # never a table scan in /status
