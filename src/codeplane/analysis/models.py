"""The plain values of a semantic diff: one definition's state, a change between two states, a report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codeplane.analysis.impact import PageTests

ADDED = "added"
REMOVED = "removed"
SIGNATURE_CHANGED = "signature_changed"
BODY_CHANGED = "body_changed"
RENAMED = "renamed"
#: A definition removed from one file and added, with the same name and text, to another.
MOVED = "moved"
CHANGE_KINDS: tuple[str, ...] = (SIGNATURE_CHANGED, REMOVED, RENAMED, MOVED, BODY_CHANGED, ADDED)


@dataclass(frozen=True)
class DefState:
    """One definition as one side of the diff saw it."""

    def_uid: str
    kind: str
    name: str
    lexical_path: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    signature_hash: str
    display_name: str
    parent_uid: str | None
    #: Hash of the definition's own lines (nested definitions cut out, decorators included); None when
    #: the side keeps no text (epoch snapshots).
    own_hash: str | None = None
    #: ``own_hash`` with the definition's name blanked out in its header: equal across a pure rename.
    rename_hash: str | None = None


@dataclass(frozen=True)
class FileDefs:
    """What extraction said about one file version."""

    path: str
    language: str | None
    #: ``parsed`` or the extractor's reason for no facts (``unsupported``, ``grammar_missing``, ...).
    status: str
    defs: tuple[DefState, ...] = ()

    @property
    def parsed(self) -> bool:
        return self.status == "parsed"


@dataclass(frozen=True)
class Impact:
    """Blast radius of one change, from the structural index as it is now (§23.7 ImpactInfo)."""

    reference_basis: str  # ref_facts_resolved | ref_facts_partial | unknown
    confidence: str  # high | low
    proven: int = 0
    strong: int = 0
    anchored: int = 0
    unknown: int = 0
    referencing_files: tuple[str, ...] = ()
    referencing_files_total: int = 0
    importing_files: tuple[str, ...] = ()
    #: How many files import it / how many test files it affects: the lists stop at ``impact.MAX_FILES``.
    importing_files_total: int = 0
    #: Of those, the files importing it by the base side's name from the base side's module (a rename or a
    #: move): they break unless the old module re-exports it.
    stale_importing_files: tuple[str, ...] = ()
    stale_importing_files_total: int = 0
    affected_test_files: tuple[str, ...] = ()
    affected_test_files_total: int = 0
    visibility: str | None = None
    #: Whose references these are when not the change's own: a required member added to a type is felt by the
    #: type's uses (``members.py``), so the type's lexical path.
    refs_of: str | None = None
    #: The file the index holds the definition in when it is not the change's: a target revision's file moved or
    #: renamed since, the definition found there by kind and lexical path (the only one in the index so).
    indexed_at: str | None = None
    #: Why the references are unknown although the index answered (basis ``unknown``): ``file_not_in_index`` (the
    #: file is gone from the work tree: moved or removed since the target), ``not_in_file`` (the definition is) or
    #: ``not_indexed_yet`` (a work-tree diff: the index has not caught up with the file).
    refs_unknown: str | None = None

    @property
    def reference_count(self) -> int:
        return self.proven + self.strong + self.anchored + self.unknown


@dataclass(frozen=True)
class Change:
    """One definition that differs between the two states."""

    path: str
    kind: str
    name: str
    qualified_name: str
    change: str
    old: DefState | None
    new: DefState | None
    old_path: str | None = None
    lines_changed: int | None = None
    delta_tags: tuple[str, ...] = ()
    preview: tuple[str, ...] = ()
    structural_severity: str = "non_breaking"
    behavior_change_risk: str = "unknown"
    impact: Impact | None = None
    #: An added member every use of its type must supply (``members.REQUIRED_MEMBER``): that type, whose uses are
    #: the blast radius.
    owner: DefState | None = None
    #: Index (in the report's change list) of the change this one nests under: its nearest changed
    #: container. Set when ordering.
    parent: int | None = None

    @property
    def entity(self) -> DefState:
        state = self.new or self.old
        assert state is not None
        return state


@dataclass(frozen=True)
class FileChange:
    """A changed file with no structural changes to report (no grammar, unparsed, or outside definitions)."""

    path: str
    status: str  # added | modified | deleted | renamed
    category: str  # prod | test | build | config | docs
    language: str | None = None
    reason: str | None = None
    old_path: str | None = None


@dataclass
class DiffReport:
    """The whole answer before pagination: every change of both kinds, in answer order."""

    base: str
    target: str
    mode: str  # git | epoch
    files_analyzed: int
    changes: list[Change] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: Every test file the changes affect (each change's own list stops at ``impact.MAX_FILES``): the hint's.
    affected_tests: tuple[str, ...] = ()
    #: Each change's affected tests, filled in as pages show them (``impact.PageTests``); None: nothing to fill.
    page_tests: PageTests | None = field(default=None, compare=False, repr=False)
