"""Frozen fact rows as other subsystems see them (§7.3), returned by ``queries.StructuralQueries``.

Positions: 1-based lines, 0-based character columns (tool layers add 1 to columns for display). Every row
carries its file ``path`` so callers never need this tier's internal file ids.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DefFact:
    def_uid: str
    path: str
    language: str | None
    unit_id: int
    kind: str
    name: str
    qualified_name: str
    lexical_path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    name_line: int
    name_col: int
    signature_hash: str
    display_name: str
    parent_uid: str | None
    scope_id: int | None


@dataclass(frozen=True, slots=True)
class RefFact:
    ref_id: int
    path: str
    unit_id: int
    scope_id: int | None
    token_text: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    role: str
    ref_tier: str
    certainty: str
    bind_id: int | None
    target_uid: str | None
    via_import_uid: str | None
    is_member: bool
    receiver_shape: str | None


@dataclass(frozen=True, slots=True)
class ScopeFact:
    scope_id: int
    path: str
    parent_scope_id: int | None
    kind: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int


@dataclass(frozen=True, slots=True)
class LocalBindFact:
    bind_id: int
    path: str
    scope_id: int
    name: str
    target_kind: str
    target_uid: str | None
    certainty: str
    reason_code: str


@dataclass(frozen=True, slots=True)
class ImportFact:
    import_uid: str
    path: str
    scope_id: int | None
    imported_name: str
    alias: str | None
    source_literal: str | None
    import_kind: str
    certainty: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    #: The repository file the source resolves to (None: external, dynamic or ambiguous).
    resolved_path: str | None
    #: For ``from pkg import name``: the submodule file ``pkg/name`` when it exists.
    resolved_alt_path: str | None


@dataclass(frozen=True, slots=True)
class ExportSurface:
    surface_id: int
    path: str
    unit_id: int
    surface_hash: str
    epoch_id: int


@dataclass(frozen=True, slots=True)
class ExportEntry:
    entry_id: int
    surface_id: int
    path: str
    exported_name: str
    def_uid: str | None
    certainty: str
    evidence_kind: str


@dataclass(frozen=True, slots=True)
class AnchorGroup:
    group_id: int
    unit_id: int
    member_token: str
    receiver_shape: str
    total_count: int
    exemplar_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DynamicAccessSite:
    site_id: int
    path: str
    start_line: int
    start_col: int
    pattern_type: str
    extracted_literals: tuple[str, ...]
    has_non_literal_key: bool


@dataclass(frozen=True, slots=True)
class DefSnapshot:
    epoch_id: int
    path: str
    kind: str
    name: str
    lexical_path: str
    signature_hash: str
    display_name: str
    start_line: int
    end_line: int
    def_uid: str


@dataclass(frozen=True, slots=True)
class FileStructure:
    """What the structural tier knows about one file."""

    path: str
    language: str | None
    family: str | None
    status: str
    error: str | None
    unit_id: int
    line_count: int | None
    epoch: int
