"""Builders for index tests: a real index service over a real git repository (no server)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig, IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.search import LexicalScope
from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.server.services import Services, build_services
from codeplane.testing import ImpactIndex, TestingService


def open_index(root: Path, **config: Any) -> IndexService:
    """Start an index service (watcher off unless asked) and wait for its first reconcile."""
    settings = {"watch": False, **config}
    service = IndexService(root, RepoLayout(root), IndexConfig(**settings))
    service.start()
    assert service.wait_ready(60), service.status()
    return service


@contextmanager
def running_index(root: Path, **config: Any) -> Iterator[IndexService]:
    service = open_index(root, **config)
    try:
        yield service
    finally:
        service.stop()


def all_hits(service: IndexService, query: str, syntax: str = "identifier", **kwargs: Any) -> list[Any]:
    """Every hit of a lexical query, following cursors to the end."""
    scope = kwargs.pop("scope", LexicalScope())
    request = LexicalRequest(query=query, syntax=syntax, scope=scope, **kwargs)  # type: ignore[arg-type]
    page = service.search_lexical(request, limit=100)
    hits = list(page.hits)
    while page.next_cursor is not None:
        page = service.search_lexical(request, limit=100, cursor=page.next_cursor)
        hits += page.hits
    return hits


def hit_lines(service: IndexService, query: str, syntax: str = "identifier", **kwargs: Any) -> set[tuple[str, int]]:
    return {(h.path, h.line) for h in all_hits(service, query, syntax, **kwargs)}


@contextmanager
def selecting(repo: Path, **tests: Any) -> Iterator[tuple[IndexService, TestingService]]:
    """The repository's index with its structural facts, ready, and a testing service selecting over it
    (``tests``: changes to its config, e.g. ``retry_failed=False``)."""
    layout = RepoLayout(repo)
    index = IndexService(repo, layout, CodePlaneConfig().index)
    index.register_indexer(StructuralIndexer())
    index.start()
    service = TestingService(repo, CodePlaneConfig().tests.model_copy(update=tests), layout,
                             ArtifactStore(layout.artifacts_dir, 1), impact=ImpactIndex(index.read_connection))
    try:
        assert index.wait_ready(60), index.error
        yield index, service
    finally:
        service.close()
        index.stop()


def selected_cases(service: TestingService, change: str) -> dict[str, tuple[str, ...]]:
    """Target id → the cases ``affected_by=[change]`` selects (empty: the whole target)."""
    view = service.discover(affected_by=[change])
    return {t.target_id: t.cases for t in view.targets}


@contextmanager
def running_services(root: Path, name: str, *, freshness_wait_ms: int = 300,
                     **mutation: Any) -> Iterator[Services]:
    """The server's services on ``root`` with a watcher (20 ms debounce) and a short freshness wait, started
    and ready; ``mutation`` overrides ``mutation.*`` settings. Stopped and closed on exit."""
    defaults = CodePlaneConfig()
    config = defaults.model_copy(update={
        "index": defaults.index.model_copy(update={"watch": True, "debounce_ms": 20,
                                                   "freshness_wait_ms": freshness_wait_ms}),
        "mutation": defaults.mutation.model_copy(update=mutation)})
    built = build_services(root, config, name)
    built.index.start()
    try:
        assert built.index.wait_ready(60), built.index.error
        yield built
    finally:
        built.index.stop()
        built.testing.close()
        built.mutation.close()
