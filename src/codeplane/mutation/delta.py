"""The structured delta every mutating call returns (spec §9.5, §10 "critical mutation semantics", §23.7).

It describes the full effect of a batch so the caller needs no verification loop: per file the action,
the SHA-256 of the exact bytes before and after (``new_sha256`` is the next call's
``expected_file_sha256``), diff stats, line ending, the edited line ranges and any span re-anchoring; for
the batch the mutation id, the repository fingerprint, the symbols and tests touched.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from codeplane.core.calls import MutationReport

FileAction = Literal["created", "updated", "deleted", "moved", "unchanged"]
#: Most symbols / tests listed in one delta (the answer stays bounded).
MAX_LISTED = 500
#: Longest ``short_diff`` handed to the ledger.
_REPORT_DIFF_CHARS = 4_000


class _Frozen(BaseModel):
    # defer_build: built on first use, or by the server's warm-up after /ready (issue 19's warm restart)
    model_config = ConfigDict(frozen=True, defer_build=True)


class LineSpan(_Frozen):
    start_line: int
    end_line: int


class LineCorrection(_Frozen):
    """A span that drifted and was re-anchored to the unique nearby match of its ``expected_content``."""

    edit_index: int
    original: LineSpan
    corrected: LineSpan


class EditRange(_Frozen):
    """One edit's lines before (``old_*``) and after (``new_*``) the batch; 1-based, inclusive.
    An empty range (pure insertion or deletion) has ``end == start - 1``."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int


class FileDelta(_Frozen):
    path: str
    action: FileAction
    #: The source path of a move.
    old_path: str | None = None
    #: SHA-256 of the exact bytes before / after (``None`` when the file did not / no longer exists).
    old_sha256: str | None = None
    new_sha256: str | None = None
    #: Same as ``new_sha256``: pass it as ``expected_file_sha256`` of the next edit (§23.7 name).
    file_sha256: str | None = None
    insertions: int = 0
    deletions: int = 0
    line_ending: Literal["LF", "CRLF", "CR"] | None = None
    encoding: str | None = None
    #: Edited line ranges (adjacent edits on shared lines merged), at most 100; see ``edit_ranges_truncated``.
    edit_ranges: tuple[EditRange, ...] = ()
    edit_ranges_truncated: bool = False
    line_corrections: tuple[LineCorrection, ...] = ()
    #: The path is ignored by git: editable, but the caller should confirm it meant to (§9.4).
    git_ignored: bool = False
    #: For moves: whether git's index was updated like ``git mv`` (clean tracked files only, §8.10).
    git_mv: bool | None = None


class Delta(_Frozen):
    mutation_id: str
    files_changed: int
    insertions: int
    deletions: int
    #: Sorted by path.
    files: tuple[FileDelta, ...]
    repo_fingerprint_before: str
    #: Fingerprint of the repository state after the batch (equal to ``_before`` for a dry run).
    repo_fingerprint: str
    #: Definitions whose spans the edits touch, before or after (``path:kind:name``), sorted.
    symbols_changed: tuple[str, ...] = ()
    #: Tests that cover the changed files (filled by the tests subsystem when wired).
    tests_affected: tuple[str, ...] = ()
    #: True when more than ``MAX_LISTED`` symbols or tests were found; the lists hold the first ones.
    lists_truncated: bool = False
    #: Unified diff of the whole batch; returned for dry runs (bounded, see ``diff_truncated``).
    diff: str | None = None
    diff_truncated: bool = False
    warnings: tuple[str, ...] = ()

    #: Zero-context hunks of the edited segments, for the ledger; not part of the answer.
    _short_diff: str = PrivateAttr(default="")

    @classmethod
    def build(cls, *, short_diff: str = "", **fields: Any) -> Delta:
        delta = cls(**fields)
        delta._short_diff = short_diff[:_REPORT_DIFF_CHARS]
        return delta

    def mutation_report(self) -> MutationReport:
        """The call-observer view of this delta (ledger and mutation fingerprint)."""
        return MutationReport(
            changed_paths=tuple(sorted([(f.path, f.new_sha256 or "") for f in self.files]
                                       + [(f.old_path, "") for f in self.files if f.old_path])),
            insertions=self.insertions,
            deletions=self.deletions,
            symbols_changed=self.symbols_changed,
            short_diff=(self._short_diff or self.diff or "")[:_REPORT_DIFF_CHARS],
            repo_before=self.repo_fingerprint_before,
            repo_after=self.repo_fingerprint,
        )
