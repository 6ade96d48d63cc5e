"""``map_repo`` (§23.7): the repository's shape from the index — structure, languages, entry points,
dependencies, test layout, public API and contexts. Only ``structure`` paginates; other lists are capped and
say how much more there is (``public_api_under`` scopes the public API to reach the rest)."""

from __future__ import annotations

from typing import Literal

import anyio
from pydantic import Field

from codeplane.index.structural.service import RepoMap
from codeplane.repo.universe import quoted_path
from codeplane.server.services import Services
from codeplane.server.tooling import ToolContext, ToolExample, ToolParams, ToolResult, ToolSpec
from codeplane.server.tools.cursor_arg import Cursor
from codeplane.server.tools.git_render import path_text
from codeplane.server.tools.paging import CURSOR_STAND_IN, items_that_fit

Section = Literal["structure", "languages", "entry_points", "dependencies", "test_layout", "public_api", "contexts"]


class MapRepoParams(ToolParams):
    include: list[Section] = Field(default_factory=list, max_length=7, description=(
        "Sections to compute (default: all)."))
    depth: int | None = Field(default=None, ge=1, le=12, description=(
        "Directory levels listed in structure.tree, all of them (paginated). Default: up to 3, folded to fit one "
        "page, the directories with most code opened first."))
    limit: int = Field(default=200, ge=1, le=1000, description="Tree nodes per page.")
    cursor: Cursor = Field(default=None, description="structure.next_cursor of the previous page.")
    public_api_under: str | None = Field(default=None, max_length=1000, description=(
        "public_api of the modules at or below this repo-relative path only (the section lists whole modules, "
        "packages' __init__ and shallow ones first, up to 150 names, and counts the rest)."))


class DirectoryNode(ToolResult):
    path: str
    name: str
    is_dir: bool
    depth: int = Field(description="1 for entries at the repository root.")
    file_count: int | None = Field(default=None, description="Directories: files below, at any depth.")
    line_count: int | None = Field(default=None, description="Files: line count, when text.")


class Structure(ToolResult):
    root: str
    tree: list[DirectoryNode] = Field(description="Pre-order (directories first, then files, by name).")
    tree_total: int
    next_cursor: str | None = None
    file_count: int | None = None
    contexts: list[str] = Field(default_factory=list, description="Valid context roots ('' = repository root).")
    folded: bool = Field(default=False, description="Directories were left closed to fit one page (pass depth).")


class LanguageEntry(ToolResult):
    language: str
    family: str | None
    file_count: int
    percentage: float


class EntryPointEntry(ToolResult):
    path: str
    kind: str
    name: str
    qualified_name: str | None = None
    evidence: str
    indexed: bool = Field(True, description="False: a declared file the index does not hold (a build's output).")


class ExternalModule(ToolResult):
    name: str
    import_count: int


class DependenciesSection(ToolResult):
    external_modules: list[ExternalModule]
    import_count: int
    truncated: bool
    external_total: int = Field(default=0, description="External modules imported, listed or not.")


class TestLayoutSection(ToolResult):
    test_files: list[str]
    test_count: int
    test_dirs: list[str]


class PublicApiItem(ToolResult):
    path: str
    name: str
    def_uid: str | None = None
    certainty: str
    evidence: str


class ContextItem(ToolResult):
    context_id: int
    family: str
    root_path: str
    tier: int
    probe_status: str
    markers: list[str]


class MapRepoResult(ToolResult):
    epoch: int
    structure: Structure | None = None
    languages: list[LanguageEntry] | None = None
    entry_points: list[EntryPointEntry] | None = None
    dependencies: DependenciesSection | None = None
    test_layout: TestLayoutSection | None = None
    public_api: list[PublicApiItem] | None = None
    public_api_modules: int | None = Field(default=None, description="Modules with a public API in scope.")
    public_api_names: int | None = Field(default=None, description="Names they export, listed or not.")
    contexts: list[ContextItem] | None = None


def _result(root: str, m: RepoMap) -> MapRepoResult:
    valid = [str(c["root_path"]) for c in m.contexts if c.get("probe_status") == "valid"]
    wanted = set(m.included)
    return MapRepoResult(
        epoch=m.epoch,
        structure=Structure(root=root, tree=[DirectoryNode(
            path=n.path, name=n.name, is_dir=n.is_dir, depth=n.depth, file_count=n.file_count,
            line_count=n.line_count) for n in m.tree], tree_total=m.tree_total, next_cursor=m.next_cursor,
            file_count=m.file_count if m.file_count >= 0 else None, contexts=sorted(set(valid)), folded=m.folded)
        if "structure" in wanted else None,
        languages=[LanguageEntry(language=s.language, family=s.family, file_count=s.file_count,
                                 percentage=s.percentage) for s in m.languages] if "languages" in wanted else None,
        entry_points=[EntryPointEntry(path=e.path, kind=e.kind, name=e.name, qualified_name=e.qualified_name,
                                      evidence=e.evidence, indexed=e.indexed) for e in m.entry_points]
        if "entry_points" in wanted else None,
        dependencies=DependenciesSection(
            external_modules=[ExternalModule(name=n, import_count=c) for n, c in m.dependencies.external_modules],
            import_count=m.dependencies.import_count, truncated=m.dependencies.truncated,
            external_total=m.dependencies.external_total)
        if m.dependencies is not None else None,
        test_layout=TestLayoutSection(test_files=list(m.test_layout.test_files), test_count=m.test_layout.test_count,
                                      test_dirs=list(m.test_layout.test_dirs)) if m.test_layout is not None else None,
        public_api=[PublicApiItem(path=p.path, name=p.name, def_uid=p.def_uid, certainty=p.certainty,
                                  evidence=p.evidence) for p in m.public_api] if "public_api" in wanted else None,
        public_api_modules=m.public_api_modules if "public_api" in wanted else None,
        public_api_names=m.public_api_names if "public_api" in wanted else None,
        contexts=[ContextItem(context_id=int(str(c["context_id"])), family=str(c["family"]),
                              root_path=str(c["root_path"]), tier=int(str(c["tier"])),
                              probe_status=str(c["probe_status"]),
                              markers=[str(x) for x in c["markers"]] if isinstance(c["markers"], list) else [])
                  for c in m.contexts] if "contexts" in wanted else None,
    )


async def _map_repo(ctx: ToolContext, params: MapRepoParams) -> MapRepoResult:
    services = ctx.services
    def built(limit: int) -> MapRepoResult:
        return _result(str(services.root), services.structural.map_repo(
            tuple(params.include), depth=params.depth, limit=limit, cursor=params.cursor,
            public_api_under=params.public_api_under))

    result = await anyio.to_thread.run_sync(lambda: built(params.limit))
    st = result.structure
    if st is None:
        return result
    fit = items_that_fit(len(st.tree), lambda k: render_map(result.model_copy(update={"structure": st.model_copy(
        update={"tree": st.tree[:k], "next_cursor": CURSOR_STAND_IN})})))
    if fit == len(st.tree):
        return result
    # Fewer tree nodes, so that the text fits; the cursor resumes after the last one shown.
    return await anyio.to_thread.run_sync(lambda: built(fit))


def render_map(result: MapRepoResult) -> str:
    """Sections as short text: an indented tree (dirs end in ``/`` with their file count), then one line or a
    few per other section."""
    # No epoch (the record keeps it; ``describe`` says it for semantic_diff's base='epoch:N'): the same tree maps
    # as the same bytes on a fresh clone. The tool's name would only repeat the call.
    lines: list[str] = []
    st = result.structure
    if st is not None:
        # The root is the repository the agent works in; the node count matters only when the tree is cut.
        told = [f"{st.file_count} files"] if st.file_count is not None else []
        if st.next_cursor or len(st.tree) < st.tree_total:
            told.append(f"{len(st.tree)} of {st.tree_total} nodes")
        if st.next_cursor:
            told.append(f"next cursor: {st.next_cursor}")
        if st.folded:
            told.append("folded to fit: pass depth to list every directory")
        lines += ["; ".join(told)] if told else []
        for n in st.tree:
            pad = "  " * (n.depth - 1)
            if n.is_dir:
                lines.append(f"{pad}{quoted_path(n.name)}/ {n.file_count if n.file_count is not None else ''}".rstrip())
            else:
                lines.append(f"{pad}{quoted_path(n.name)}" + (f" {n.line_count}L" if n.line_count is not None else ""))
    if result.languages:
        lines.append("languages: " + ", ".join(f"{lang.language} {lang.file_count} ({lang.percentage:.0f}%)"
                                              for lang in result.languages))
    if result.entry_points:
        lines.append("entry points: " + "; ".join(_entry_points(result.entry_points)))
    if result.dependencies is not None:
        deps = result.dependencies
        external = ", ".join(f"{m.name} {m.import_count}" for m in deps.external_modules)
        more = deps.external_total - len(deps.external_modules)
        lines.append(f"imports ({deps.import_count}): {external or 'no external module'}"
                     + (f" … {more} more, each imported less" if more > 0 else "") if deps.import_count
                     else "imports: none")
    if result.test_layout is not None:
        t = result.test_layout
        dirs = ", ".join(quoted_path(d) for d in t.test_dirs) or "."
        lines.append(f"tests: {t.test_count} files in {dirs}" if t.test_count else "tests: none found")
    if result.public_api:
        # One line per module, its path once: the path repeated per name was a third of the section.
        by_path: dict[str, list[str]] = {}
        for item in result.public_api:
            uid = f" #{item.def_uid}" if item.def_uid else ""
            by_path.setdefault(item.path, []).append(path_text(item.name) + uid)
        lines.append("public api:")
        lines += [f"  {quoted_path(path)}: {', '.join(names)}" for path, names in by_path.items()]
        lines += _api_more(result, len(by_path))
    if result.contexts:
        # A context whose probe found nothing of its kind says nothing about the repository: counted, not named.
        shown = [c for c in result.contexts if c.probe_status != "empty"]
        empty = len(result.contexts) - len(shown)
        lines.append("contexts: " + "; ".join(
            f"#{c.context_id} {c.family} {quoted_path(c.root_path) or '.'} {c.probe_status}" for c in shown)
            + (f" (+{empty} empty)" if empty else ""))
    return "\n".join(lines) or "nothing found in the sections asked for"


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="map_repo",
            category="search",
            summary=("A mental model of the repository from the index: directory structure (paginated), languages, "
                     "entry points, external dependencies, test layout, public API and contexts."),
            params=MapRepoParams,
            result=MapRepoResult,
            render=render_map,
            handler=_map_repo,
            kind="read",
            when_to_use=("starting work on an unfamiliar repository", "finding where tests, entry points or the "
                         "public API live", "listing external dependencies actually imported"),
            when_not_to_use=("listing one directory's files (use list_files)",
                             "finding a symbol (use search mode='symbol')"),
            examples=(ToolExample("everything, two levels deep", {"depth": 2}),
                      ToolExample("only dependencies and public API", {"include": ["dependencies", "public_api"]})),
        )
    ]


def _api_more(result: MapRepoResult, modules_shown: int) -> list[str]:
    """``… 66 more modules, 1432 more names``: the list stops at a whole module, so a reader never takes it
    for all; ``public_api_under`` reaches the rest."""
    names_more = (result.public_api_names or 0) - len(result.public_api or ())
    if names_more <= 0:
        return []
    modules_more = (result.public_api_modules or 0) - modules_shown
    counted = (f"{modules_more} more modules, " if modules_more > 0 else "") + f"{names_more} more names"
    return [f"  … {counted} (public_api_under=<dir> lists a package's)"]


def _entry_points(entries: list[EntryPointEntry]) -> list[str]:
    """One item per entry point, with what declares it: ``src/flask/cli.py function flask.cli.main (script flask,
    main)`` rather than the same words twice, once per evidence; a file by its path (``lib/index.js file (script
    main)``), its conventional name being the path's own."""
    tags: dict[str, list[str]] = {}
    for e in entries:
        # A file is one entry whatever names it (qs's lib/index.js: package.json's "main" and its own name).
        path = quoted_path(e.path)
        head = f"{path} file" if e.kind == "file" else f"{path} {e.kind} {path_text(e.qualified_name or e.name)}"
        said = tags.setdefault(head, [])
        tag = f"script {e.name}" if e.evidence == "declared_script" else "main" if e.evidence == "main_function" else ""
        if tag and tag not in said:
            said.append(tag)
        if not e.indexed and "not indexed" not in said:
            said.append("not indexed")
    return [f"{head} ({', '.join(said)})" if said else head for head, said in tags.items()]
