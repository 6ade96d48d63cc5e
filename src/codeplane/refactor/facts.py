"""The refactor engine's read-only view of the structural index (§7.3, §7.8), as frozen rows.

The planner reads facts only through :class:`FactReader`; ``indexview.py`` implements it over the index
service's SQLite tables. Positions are 1-based lines and 0-based character columns, like the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Def:
    def_uid: str
    path: str
    language: str | None
    kind: str
    name: str
    qualified_name: str
    lexical_path: str
    line: int
    column: int
    end_line: int
    end_column: int
    name_line: int
    name_column: int
    parent_uid: str | None
    #: Scope the name is bound in (the enclosing file/class/function scope).
    scope_id: int | None


@dataclass(frozen=True, slots=True)
class Ref:
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    token: str
    role: str
    tier: str
    target_uid: str | None
    via_import_uid: str | None
    is_member: bool
    receiver_shape: str | None
    scope_id: int | None
    #: The same-file binding a PROVEN reference resolves to (definition sites share it).
    bind_id: int | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    scope_id: int
    path: str
    parent_id: int | None
    kind: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True, slots=True)
class Bind:
    scope_id: int
    name: str
    target_kind: str
    target_uid: str | None
    certainty: str
    reason: str


@dataclass(frozen=True, slots=True)
class Import:
    import_uid: str
    path: str
    scope_id: int | None
    imported_name: str
    alias: str | None
    source_literal: str | None
    kind: str
    line: int
    column: int
    #: The repository file the import's source resolved to at index time, if any.
    resolved_path: str | None = None


@dataclass(frozen=True, slots=True)
class DynamicSite:
    path: str
    line: int
    column: int
    pattern_type: str
    literals: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileInfo:
    path: str
    language: str | None
    sha256: str
    #: Whether structural facts exist for the file (a grammar and adapter covered it).
    structural: bool


class FactReader(Protocol):
    """Bounded lookups the planner needs. Every list is sorted by (path, line, column)."""

    def files(self) -> Sequence[FileInfo]:
        """Every indexed text file (the universe minus ``.cplignore``)."""

    def get_def(self, def_uid: str) -> Def | None: ...

    def defs_named(self, name: str, limit: int) -> Sequence[Def]: ...

    def defs_in_file(self, path: str, limit: int) -> Sequence[Def]: ...

    def defs_at(self, path: str, line: int) -> Sequence[Def]:
        """Definitions whose span contains ``line``, innermost last."""

    def refs_to(self, def_uid: str, limit: int) -> Sequence[Ref]:
        """References whose ``target_uid`` is ``def_uid`` (any tier)."""

    def refs_named(self, token: str, paths: Sequence[str] | None, limit: int) -> Sequence[Ref]:
        """Every reference fact with ``token_text == token`` (optionally only in ``paths``)."""

    def refs_in_file(self, path: str, limit: int) -> Sequence[Ref]: ...

    def import_refs_named(self, token: str, limit: int) -> Sequence[Ref]:
        """The ``IMPORT`` references with ``token_text == token``: the names import statements bind."""

    def refs_on_line(self, path: str, line: int) -> Sequence[Ref]:
        """The references starting on ``line`` of ``path``, by column."""

    def scope(self, scope_id: int) -> Scope | None: ...

    def binds_named(self, scope_ids: Sequence[int], name: str) -> Sequence[Bind]: ...

    def imports_of(self, import_uids: Sequence[str]) -> Sequence[Import]: ...

    def imports_in_file(self, path: str, limit: int) -> Sequence[Import]: ...

    def dynamic_sites(self, paths: Sequence[str], limit: int) -> Sequence[DynamicSite]: ...

    def module_file(self, module: str) -> str | None:
        """The file a dotted Python module name resolves to (the index's module keys), if any."""
