"""``search`` (§23.7): one tool, several modes dispatched through :data:`MODE_HANDLERS`.

``lexical`` is served by the index service. Structural modes (``symbol``, ``definitions``,
``references``) are declared in the params model already; they answer 3006 "not available yet" until a
handler is registered with :func:`register_mode`. A handler runs in a worker thread and returns a
:class:`SearchResult`; every answer carries the epoch it was computed at.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

import anyio
from pydantic import Field

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.languages import language_names, language_suffixes, scope_family
from codeplane.index.search import LARGE_SCAN_MAX_BYTES, LexicalScope
from codeplane.index.service_models import LexicalRequest
from codeplane.repo.universe import quoted_path
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.git_render import path_text
from codeplane.server.tools.paging import CURSOR_STAND_IN, PAGE_BYTES, items_that_fit

SearchMode = Literal["lexical", "symbol", "definitions", "references"]


class SearchScope(ToolParams):
    paths: list[str] = Field(default_factory=list, max_length=50, description=(
        "Gitignore-style globs limiting the files searched: '*.py' matches at any depth, 'src/' a directory, "
        "'/setup.py' anchors at the root. As in rg -g: only '!x' globs = everything but x; '*.{py,txt}' braces "
        "expand; './' anchors like '/'."))
    languages: list[str] = Field(default_factory=list, max_length=20, description=(
        "Language families to search (python, javascript, go, rust, jvm, dotnet, ruby, php, markdown, ...)."))
    kinds: list[str] = Field(default_factory=list, max_length=20, description=(
        "Symbol kinds (function, class, variable, ...) for the symbol modes; ignored by lexical."))


class SearchParams(ToolParams):
    query: str = Field(min_length=1, max_length=1000, description="What to search for.")
    mode: SearchMode = Field(default="lexical", description="lexical: text in files; symbol modes: see describe.")
    syntax: Literal["text", "phrase", "identifier", "regex"] = Field(default="text", description=(
        "lexical only. text: all whitespace-separated terms on one line (case-insensitive); phrase: the exact "
        "string; identifier: whole identifier, like `rg -w`; regex: a Python regular expression."))
    case_sensitive: bool | None = Field(default=None, description=(
        "Override case sensitivity (default: text is case-insensitive, the other syntaxes are case-sensitive)."))
    scope: SearchScope | None = None
    limit: int = Field(default=20, ge=1, le=100, description="Hits per page.")
    cursor: Cursor = Field(default=None, description="next_cursor of the previous page (same query).")
    include_snippets: bool = Field(default=True, description="Include the matching line.")
    context_lines: int = Field(default=0, ge=0, le=10, description="Lines of context before/after each hit.")


class SymbolInfo(ToolResult):
    name: str
    kind: str
    container: str | None = None
    qualified_name: str | None = Field(default=None, description="Symbol modes: module.Class.member.")
    def_uid: str | None = Field(default=None, description="Symbol modes: stable definition id (query by it).")


class SearchHit(ToolResult):
    path: str
    line: int = Field(description="1-based line of the match start.")
    column: int = Field(description="1-based column (characters) of the match start.")
    end_line: int
    end_column: int = Field(description="1-based column just after the match (exclusive).")
    snippet: str | None = None
    context_before: list[str] = []
    context_after: list[str] = []
    symbol: SymbolInfo | None = None
    score: float
    match_type: Literal["exact", "fuzzy", "semantic"] = "exact"
    language: str | None = None
    role: str | None = Field(default=None, description=(
        "references: DEFINITION, REFERENCE, IMPORT or EXPORT."))
    ref_tier: str | None = Field(default=None, description=(
        "references, computed at index time: PROVEN (same-file binding), STRONG (import/export chain), "
        "ANCHORED (unresolved member access, grouped by token), UNKNOWN."))
    certainty: str | None = Field(default=None, description="references: CERTAIN or UNCERTAIN.")


class Pagination(ToolResult):
    next_cursor: str | None = None
    total_estimate: int | None = Field(default=None, description=(
        "Total hits of the query: exact once the last page is reached, an estimate before (symbol modes: exact)."))


class SearchResult(ToolResult):
    mode: str
    query: str
    results: list[SearchHit]
    pagination: Pagination
    epoch: int = Field(description="Index epoch the answer was computed at.")
    language: str | None = Field(default=None, description=(
        "The language of every hit when they all share one: said here once, not per hit."))
    truncated: bool = Field(default=False, description=(
        "True when the scan time bound was hit: not every hit can be paged to (total_estimate is a lower bound)."))
    unsearched: list[str] = Field(default_factory=list, description=(
        f"lexical, first page: files in scope too large to scan (over {LARGE_SCAN_MAX_BYTES >> 20} MiB), so not "
        "searched."))
    query_time_ms: float


ModeHandler = Callable[[Services, SearchParams], SearchResult]


def _scope_languages(names: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The families ``scope.languages`` selects, and the suffixes of the languages it names that are narrower than
    their family (``typescript``) or have none (C, C++: the lexical index knows files by family); 1003 for a name no
    file is indexed under (``pythn`` answered "no hits")."""
    families: list[str] = []
    suffixes: list[str] = []
    for index, name in enumerate(names):
        family = scope_family(name)
        if language_suffixes(name):  # a language narrower than its family (typescript), or with none (c)
            suffixes += language_suffixes(name)
        elif family is not None:
            families.append(family)
        else:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"scope.languages: {name!r} is not a language or family the index knows",
                                 details={"field": f"scope.languages.{index}", "known": language_names()})
    return tuple(dict.fromkeys(families)), tuple(dict.fromkeys(suffixes))


def _lexical(services: Services, params: SearchParams) -> SearchResult:
    started = time.perf_counter()
    scope = params.scope or SearchScope()
    families, suffixes = _scope_languages(scope.languages)
    request = LexicalRequest(
        query=params.query, syntax=params.syntax, case_sensitive=params.case_sensitive,
        scope=LexicalScope(paths=tuple(scope.paths), languages=families, suffixes=suffixes),
        context_lines=params.context_lines, include_snippets=params.include_snippets,
    )
    page = services.index.search_lexical(request, limit=params.limit, cursor=params.cursor)
    # One language said once (``_language_once``), decided before the hits are built rather than copied after.
    languages = {h.language for h in page.hits}
    shared = languages.pop() if len(page.hits) > 1 and len(languages) == 1 else None
    hits = [SearchHit(path=h.path, line=h.line, column=h.column, end_line=h.end_line, end_column=h.end_column,
                      snippet=h.snippet, context_before=list(h.context_before), context_after=list(h.context_after),
                      score=h.score, language=None if shared else h.language) for h in page.hits]
    return SearchResult(
        mode="lexical", query=params.query, results=hits, language=shared,
        pagination=Pagination(next_cursor=page.next_cursor, total_estimate=page.total),
        epoch=page.epoch, truncated=page.truncated, unsearched=list(page.unsearched),
        query_time_ms=round((time.perf_counter() - started) * 1000, 3),
    )


#: Mode name → handler. The structural index adds ``symbol``/``definitions``/``references`` here.
MODE_HANDLERS: dict[str, ModeHandler] = {"lexical": _lexical}


def register_mode(mode: str, handler: ModeHandler) -> None:
    """Serve ``mode`` with ``handler`` (called from the mode's owner at import or wiring time)."""
    MODE_HANDLERS[mode] = handler


async def _search(ctx: ToolContext, params: SearchParams) -> SearchResult:
    handler = MODE_HANDLERS.get(params.mode)
    if handler is None:
        raise CodePlaneError(
            ErrorCode.INVALID_QUERY, f"search mode {params.mode!r} is not available yet; use mode='lexical'",
            details={"mode": params.mode, "available": sorted(MODE_HANDLERS)})
    result = await anyio.to_thread.run_sync(handler, ctx.services, params)
    fit = _hits_that_fit(result)
    if fit < len(result.results):
        # The same page with fewer hits, so that its text fits; its cursor resumes after the last one shown.
        result = await anyio.to_thread.run_sync(handler, ctx.services, params.model_copy(update={"limit": fit}))
    return _language_once(result)


def _language_once(result: SearchResult) -> SearchResult:
    """The hits' language on the answer when they share one (a page of 20 Python hits said it 20 times)."""
    languages = {hit.language for hit in result.results}
    if len(result.results) < 2 or len(languages) != 1 or None in languages:
        return result
    return result.model_copy(update={"language": languages.pop(), "results": [
        hit.model_copy(update={"language": None}) for hit in result.results]})


def _bytes_at_most(text: str | None) -> int:
    return 0 if not text else len(text) if text.isascii() else 4 * len(text)


#: Bytes a hit's text may add beyond its path, snippet and context lines (line numbers, a symbol's tag, a role).
_HIT_OVERHEAD = 256


def _hits_that_fit(result: SearchResult) -> int:
    # Every search passes here: an upper bound of the text's size spares rendering the page twice when it
    # clearly fits (an ordinary page of 20 one-line hits is a few KB).
    bound = 512 + sum(_HIT_OVERHEAD + _bytes_at_most(h.path) + _bytes_at_most(h.snippet)
                      + sum(_bytes_at_most(c) + 16 for c in (*h.context_before, *h.context_after))
                      + _bytes_at_most(h.symbol.qualified_name if h.symbol else None) for h in result.results)
    if bound <= PAGE_BYTES:
        return len(result.results)
    pagination = result.pagination.model_copy(update={"next_cursor": CURSOR_STAND_IN})
    return items_that_fit(len(result.results), lambda k: render_search(result.model_copy(
        update={"results": result.results[:k], "pagination": pagination})))


def _symbol_tag(hit: SearchHit) -> str:
    sym = hit.symbol
    if sym is None:
        return ""
    # A qualified name holds its module's, from the file's path: quoted as that path is when it has to be.
    return f"{sym.kind} {path_text(sym.qualified_name or sym.name)}" + (f" #{sym.def_uid}" if sym.def_uid else "")


def _definition_tag(hit: SearchHit) -> str:
    """A definition's hit line shows its kind and name (``def get_current_context(``) and its path the module:
    only the class it is in and its uid are news (``Context.invoke #e6537588922e77d2``; the kind and the qualified
    name made a hit 1.4-1.9 times ``rg -n``'s line)."""
    sym = hit.symbol
    if sym is None:
        return ""
    uid = f"#{sym.def_uid}" if sym.def_uid else ""
    return f"{sym.container}.{sym.name} {uid}".rstrip() if sym.container else uid or sym.name


def _role_tag(hit: SearchHit) -> str:
    return (hit.role or "") + (f" {hit.ref_tier}" if hit.role and hit.ref_tier else "")


def _dedented(texts: list[str]) -> list[str]:
    """A hit's lines without the leading whitespace they all share (blank lines aside), like ``rg --trim``
    for a lone hit line: indentation is a fifth of a hit's bytes in nested code and locates nothing; a hit
    with context keeps its lines' indentation relative to one another. An edit's ``old_text`` taken from a
    trimmed line still matches, as it does from the middle of a line."""
    if len(texts) == 1:  # a lone hit line (no context lines): every page's common case, so taken directly
        return [texts[0].lstrip() if texts[0].strip() else texts[0]]
    indents = [t[:len(t) - len(t.lstrip())] for t in texts if t.strip()]
    # The prefix common to all is the one the lexically first and last share.
    low, high = (min(indents), max(indents)) if indents else ("", "")
    shared = low[:next((i for i, (a, b) in enumerate(zip(low, high, strict=False)) if a != b), len(low))]
    return [t[len(shared):] if t.startswith(shared) else t.strip() for t in texts]


def _hit_tags(hit: SearchHit, *, symbol: bool, usual_role: str, named: set[str]) -> str:
    """What a symbol mode says a hit is, before its text: its symbol unless the page's head line says it for every
    hit, in full the first time, then by its ``#def_uid`` alone (``named`` holds the uids said so far; a name's
    references anchored to one definition repeat it on every hit, ~100 bytes each), and its role unless usual."""
    tags = []
    if symbol and hit.symbol is not None:
        uid = hit.symbol.def_uid
        tags.append(f"#{uid}" if uid and uid in named else _definition_tag(hit) if hit.role in (None, "DEFINITION")
                    else _symbol_tag(hit))
        named.update([uid] if uid else [])
    role = _role_tag(hit)
    if role and role != usual_role:
        tags.append(role)
    return "; ".join(tags)


def _line_tags(hits: list[SearchHit], *, symbol: bool, usual_role: str, named: set[str]) -> str:
    """The tags of one line's hits, each said once (``REFERENCE PROVEN, DEFINITION ANCHORED``: ``window.f = f;``
    printed the line once per role). The usual role is named when the line's hits differ: left out, an untagged
    hit merged into a tagged one would read as that one."""
    start = set(named)  # each hit's tags as the first on the line would have them: equal hits say equal tags

    def tags(hit: SearchHit, usual: str) -> str:
        return _hit_tags(hit, symbol=symbol, usual_role=usual, named=set(start))

    said = list(dict.fromkeys(tags(h, usual_role) for h in hits))
    if len(said) > 1:
        said = list(dict.fromkeys(tags(h, "") for h in hits))
    if symbol:
        named.update(h.symbol.def_uid for h in hits if h.symbol is not None and h.symbol.def_uid)
    return ", ".join(said)


def _hit_lines(hit: SearchHit, tags: str) -> list[str]:
    """``line:text`` like ``rg -n --trim`` under its file's heading (context lines as ``line-text``), ``tags``
    (:func:`_line_tags`) before the text. The column is left out: the text shows where the match is."""
    if hit.snippet is None and not hit.context_before and not hit.context_after:
        # Snippets off: no text shows where the match is, so the column does (``rg --vimgrep`` without the line).
        return [f"{hit.line}:{hit.column}" + (f" [{tags}]" if tags else "")]
    prefix = f"{hit.line}:" + (f"[{tags}] " if tags else "")
    before = len(hit.context_before)
    texts = _dedented([*hit.context_before, (hit.snippet or "").rstrip("\r\n"), *hit.context_after])
    lines = [f"{hit.line - before + i}-{text}" for i, text in enumerate(texts[:before])]
    lines.append(prefix + texts[before])
    lines += [f"{hit.line + 1 + i}-{text}" for i, text in enumerate(texts[before + 1:])]
    return lines


def _in_line_order(shown: list[tuple[int, str]], *, grouped: bool) -> list[str]:
    """A file's lines by line number (a hit's after-context came before the next hit's own line when their
    windows overlapped; QA s55), with ``--`` between context groups that do not touch, as ``rg -C`` prints."""
    lines: list[str] = []
    previous = None
    for number, line in sorted(shown, key=lambda item: item[0]):  # stable: one line's hits keep their order
        if grouped and previous is not None and number > previous + 1:
            lines.append("--")
        lines.append(line)
        previous = number
    return lines


def _numbered(line: str) -> tuple[int, str]:
    """The line number a rendered line starts with and its mark (``:`` a hit, ``-`` context)."""
    digits = len(line) - len(line.lstrip("0123456789"))
    return (int(line[:digits]) if digits else 0), line[digits:digits + 1]


def _common(hits: list[SearchHit]) -> tuple[str, str]:
    """What a page of several hits says once instead of per hit: the symbol when every hit is of the same
    one (``references`` always is: ~90 bytes a hit), and the role/tier most hits have (the others keep
    theirs). Empty strings for nothing in common."""
    if len(hits) < 2:
        return "", ""
    symbols = {_symbol_tag(h) for h in hits}
    symbol = symbols.pop() if len(symbols) == 1 else ""
    roles: dict[str, int] = {}
    for hit in hits:
        if role := _role_tag(hit):
            roles[role] = roles.get(role, 0) + 1
    usual = max(roles, key=lambda r: (roles[r], r)) if roles else ""
    # An untagged hit reads as the usual role: only when every hit has one.
    return symbol, usual if roles.get(usual, 0) > 1 and sum(roles.values()) == len(hits) else ""


def render_search(result: SearchResult) -> str:
    """Hits grouped under their file's path in rank order of each file's first hit, like ``rg --heading``, each
    file's in line order: a path is read once however many hits it has. A header says how many of how many, and
    the cursor, only when there are more; a line says once what every hit of the page is (references of one
    symbol, mostly one role and tier)."""
    unsearched = (f"not searched (over {LARGE_SCAN_MAX_BYTES >> 20} MiB): "
                  f"{', '.join(quoted_path(p) for p in result.unsearched)}"
                  if result.unsearched else "")
    if not result.results:
        return "\n".join(filter(None, ("no hits", unsearched)))
    symbol, usual = _common(result.results)
    files: dict[str, list[SearchHit]] = {}
    for hit in result.results:
        files.setdefault(hit.path, []).append(hit)
    named: set[str] = set()
    body: list[str] = []
    for path, ranked in files.items():
        # A file's hits in line order, as rg prints them (a symbol page's rank order read 2042, 2233, 1933); the
        # files stay in rank order, and the record keeps every hit's rank.
        hits = sorted(ranked, key=lambda h: h.line)  # stable: a line's hits keep their rank order
        body.append(quoted_path(path))  # (a newline in a name read as two entries)
        shown_last: list[str] = []
        last_line = 0
        # Context windows that overlap are merged, as ``rg -C`` does: a line once, and a hit's line as a hit.
        matched = {h.line for h in hits}
        printed: set[int] = set()
        # Hits with their text on one line print the line once, with every hit's tags (column-only hits, snippets
        # off, stay one per match: the column is all that tells them apart).
        on_line: dict[int, list[SearchHit]] = {}
        for hit in hits:
            if hit.snippet is not None:
                on_line.setdefault(hit.line, []).append(hit)
        in_file: list[tuple[int, str]] = []
        for hit in hits:
            same = on_line.get(hit.line, [hit]) if hit.snippet is not None else [hit]
            if same[0] is not hit:
                continue
            block = _hit_lines(hit, _line_tags(same, symbol=not symbol, usual_role=usual, named=named))
            # Several matches on one line: the line once, as rg prints it (again only to say something new about
            # a match there: ``var f = function f()`` is a definition and, without a tag, a usual reference).
            if block != shown_last and not (hit.line == last_line and block[-1].startswith(f"{hit.line}:")
                                            and not block[-1].startswith(f"{hit.line}:[")):
                for line in block:
                    number, mark = _numbered(line)
                    if mark == "-" and (number in printed or number in matched):
                        continue
                    printed.add(number)
                    in_file.append((number, line))
            shown_last, last_line = block, hit.line
        body += _in_line_order(in_file, grouped=any(h.context_before or h.context_after for h in hits))
    if symbol or usual:
        said = ": ".join(part for part in (symbol, usual and f"{usual} unless marked") if part)
        body.insert(0, said)
    if unsearched:
        body.append(unsearched)
    if not result.pagination.next_cursor and not result.truncated:
        return "\n".join(body)  # every hit is here, like rg's output
    total = result.pagination.total_estimate
    # Exact only once the last page is reached; a truncated scan's total is a lower bound.
    shown = "?" if total is None else f"{total}+" if result.truncated else \
        f"~{total}" if result.pagination.next_cursor else str(total)
    head = f"{len(result.results)} of {shown} hits"
    if result.truncated:
        head += " (truncated)"
    if result.pagination.next_cursor:
        head += f"; next cursor: {result.pagination.next_cursor}"
    return "\n".join([head, *body])


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="search",
            category="search",
            summary=("Search the repository. mode='lexical' finds exact occurrences of text, a phrase, a whole "
                     "identifier or a regex, with path/line/column and the matching line read from disk; writes "
                     "through CodePlane are searchable at once, other programs' edits within ~0.2 s (the file "
                     "watcher). mode='symbol' finds definitions "
                     "by name (exact, prefix, substring), 'definitions' by exact name, qualified name "
                     "(module.Class.method) or def_uid, 'references' lists a definition's references with the "
                     "tier (PROVEN, STRONG, ANCHORED, UNKNOWN) and certainty computed at index time."),
            params=SearchParams,
            result=SearchResult,
            handler=_search,
            render=render_search,
            kind="read",
            when_to_use=("finding where an identifier or string occurs (syntax='identifier' for `rg -w` "
                         "semantics)", "locating code before reading it with read_source",
                         "paging through many hits with cursor",
                         "finding where a function or class is defined, or who uses it (symbol modes)"),
            when_not_to_use=("reading a file's content (use read_source)",
                             "listing files or directories (use list_files)"),
            examples=(
                ToolExample("every use of an identifier", {"query": "get_or_create", "syntax": "identifier"}),
                ToolExample("lines mentioning two words, Python only",
                            {"query": "cache timeout", "scope": {"languages": ["python"]}}),
                ToolExample("regex in tests with context", {"query": r"def test_\w+_cache", "syntax": "regex",
                                                             "scope": {"paths": ["tests/"]}, "context_lines": 2}),
                ToolExample("classes whose name contains 'cache'",
                            {"query": "cache", "mode": "symbol", "scope": {"kinds": ["class"]}}),
                ToolExample("references of a method, strongest tier first",
                            {"query": "QuerySet.get_or_create", "mode": "references"}),
            ),
        )
    ]
