"""What extraction produces for one file: plain, picklable rows (§7.3), before they get database ids.

Extraction runs in worker processes, so rows are ``NamedTuple``s (cheap to pickle, immutable). Cross-row
links inside one file use list positions (``scope`` is an index into ``FileFacts.scopes``, ``bind`` into
``FileFacts.binds``); the store turns them into database ids. Lines are 1-based, columns are 0-based
**character** offsets within the line (what a Python ``str`` index means), never byte offsets.
"""

from __future__ import annotations

from typing import NamedTuple

# Roles (§7.3.2)
DEFINITION = "DEFINITION"
REFERENCE = "REFERENCE"
IMPORT = "IMPORT"
EXPORT = "EXPORT"
ROLES: tuple[str, ...] = (DEFINITION, REFERENCE, IMPORT, EXPORT)
# Tiers, strongest first (§7.3.2)
PROVEN = "PROVEN"
STRONG = "STRONG"
ANCHORED = "ANCHORED"
UNKNOWN = "UNKNOWN"
TIERS: tuple[str, ...] = (PROVEN, STRONG, ANCHORED, UNKNOWN)
CERTAIN = "CERTAIN"
UNCERTAIN = "UNCERTAIN"
# LocalBindFact target kinds and reasons (§7.3.4)
TARGET_DEF = "DEF"
TARGET_IMPORT = "IMPORT"
TARGET_UNKNOWN = "UNKNOWN"
PARAM = "PARAM"
LOCAL_ASSIGN = "LOCAL_ASSIGN"
DEF_IN_SCOPE = "DEF_IN_SCOPE"
IMPORT_ALIAS = "IMPORT_ALIAS"


class DefRow(NamedTuple):
    def_uid: str
    kind: str
    name: str
    #: Nesting inside the file (``Class.method``); the store prefixes the module to get ``qualified_name``.
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
    #: Scope (index) in which the name is bound.
    scope: int


class ScopeRow(NamedTuple):
    parent: int  # -1 for the file scope
    kind: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int


class BindRow(NamedTuple):
    scope: int
    name: str
    target_kind: str
    target_uid: str | None
    certainty: str
    reason_code: str


class ImportRow(NamedTuple):
    import_uid: str
    scope: int
    imported_name: str
    alias: str | None
    source_literal: str | None
    import_kind: str
    certainty: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int


class RefRow(NamedTuple):
    scope: int
    token_text: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    role: str
    ref_tier: str
    certainty: str
    #: Index into ``FileFacts.binds`` for PROVEN refs, else -1.
    bind: int
    #: def_uid (or import_uid for refs bound to an import) the ref is proven to denote, if any.
    target_uid: str | None
    #: The import this ref goes through; linking may upgrade it to STRONG across files.
    via_import_uid: str | None
    #: Attribute/field/property token (``obj.<token>``); member refs form anchor groups.
    is_member: bool
    #: ``self.``, ``cls.``, ``this.``, ``obj.``, ``expr.``, ``kwarg=`` ... (§7.3.9), None for plain names.
    receiver_shape: str | None


class ExportRow(NamedTuple):
    exported_name: str
    local_def_uid: str | None
    import_uid: str | None
    certainty: str
    evidence_kind: str


class ThunkRow(NamedTuple):
    mode: str  # REEXPORT_ALL | EXPLICIT_NAMES | ALIAS_MAP
    import_uid: str
    source_literal: str
    explicit_names: tuple[str, ...]
    alias_map: tuple[tuple[str, str], ...]
    evidence_kind: str


class DynamicRow(NamedTuple):
    start_line: int
    start_col: int
    pattern_type: str
    extracted_literals: tuple[str, ...]
    has_non_literal_key: bool


class ParseStats(NamedTuple):
    """What the §8.4.5 probe needs, recorded at parse time so probing never re-reads files."""

    node_count: int
    error_count: int
    has_named: bool


class FileFacts(NamedTuple):
    path: str
    language: str
    #: Package/namespace declared in the file (Java, Kotlin, C#, Go), used for qualified names and linking.
    package: str | None
    stats: ParseStats
    line_count: int
    defs: list[DefRow]
    scopes: list[ScopeRow]
    binds: list[BindRow]
    imports: list[ImportRow]
    refs: list[RefRow]
    exports: list[ExportRow]
    thunks: list[ThunkRow]
    dynamic: list[DynamicRow]
