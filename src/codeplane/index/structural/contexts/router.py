"""§8.4.6 The router: a file's owning context for a family — valid contexts only, deepest root first."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from codeplane.index.structural.contexts.discovery import Candidate
from codeplane.index.structural.contexts.probe import owns


@dataclass(frozen=True)
class Context:
    context_id: int
    family: str
    root_path: str
    tier: int
    probe_status: str
    markers: tuple[str, ...]
    include_spec: tuple[str, ...]
    exclude_spec: tuple[str, ...]
    samples: tuple[str, ...] = ()


def load_contexts(conn: sqlite3.Connection, *, valid_only: bool = False) -> list[Context]:
    query = ("SELECT context_id, family, root_path, tier, probe_status, markers, include_spec, exclude_spec, samples "
             "FROM st_context")
    if valid_only:
        query += " WHERE probe_status = 'valid'"
    return [Context(cid, family, root, tier, status, tuple(json.loads(markers)), tuple(json.loads(include)),
                    tuple(json.loads(exclude)), tuple(json.loads(samples)))
            for cid, family, root, tier, status, markers, include, exclude, samples in
            conn.execute(query + " ORDER BY family, root_path")]


def shape_of(ctx: Context) -> Candidate:
    """The candidate form ``probe.owns`` understands."""
    return Candidate(ctx.family, ctx.root_path, ctx.tier, list(ctx.markers), ctx.probe_status, list(ctx.exclude_spec),
                     list(ctx.samples))


class ContextRouter:
    """Answers ``get_context_for_file`` from the stored (already probed) contexts."""

    def __init__(self, contexts: list[Context]) -> None:
        self._by_family: dict[str, list[tuple[Context, Candidate]]] = {}
        for ctx in contexts:
            if ctx.probe_status != "valid":
                continue
            self._by_family.setdefault(ctx.family, []).append((ctx, shape_of(ctx)))
        for entries in self._by_family.values():
            entries.sort(key=lambda e: (-len(e[0].root_path), e[0].root_path))

    def get_context_for_file(self, file_path: str, language_family: str | None) -> Context | None:
        for ctx, shape in self._by_family.get(language_family or "", []):
            if owns(shape, file_path):
                return ctx
        return None
