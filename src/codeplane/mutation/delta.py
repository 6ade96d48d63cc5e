"""The structured delta every mutating call returns (spec §9.5, §10 "critical mutation semantics", §23.7).

It describes the full effect of a batch so the caller needs no verification loop: per file the action,
the SHA-256 of the exact bytes before and after (``file_sha256`` is the next call's
``expected_file_sha256``), diff stats, line ending, the edited line ranges and any span re-anchoring; for
the batch the mutation id, the repository fingerprint, the symbols and tests touched.

Lean (issue 16): each value once, and no list longer than an agent acts on. A field left at its default is
left out of the answer (``old_sha256`` of a move or an unchanged file is its ``file_sha256``; a created or
deleted file's one edit range is its whole new or old text, already counted by ``insertions``/``deletions``).
Symbols and tests are listed up to :data:`LISTED`, the rest counted; many tests are named by their files, and
``tests_affected_by`` is the exact ``affected_by`` of ``run_test_targets`` / ``changed_files`` of
``inspect_affected_tests`` that selects them all again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from codeplane.core.calls import MutationReport

FileAction = Literal["created", "updated", "deleted", "moved", "unchanged"]
#: Most symbols / tests an answer lists; more are counted (``*_total``), the tests named by their files.
LISTED = 10
#: Most symbols kept for the ledger's mutation fingerprint (not part of the answer).
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

    #: The edit's place in the batch (0, the default, is also the only edit of a one-edit batch).
    edit_index: int = 0
    original: LineSpan
    corrected: LineSpan


class TextReindent(_Frozen):
    """An ``old_text`` of several lines found only with its lines after the first indented by ``indent`` (as a
    ``search`` block shows them, without the indentation they share); ``new_text``'s were indented alike."""

    edit_index: int = 0
    #: Where the match starts (1-based).
    line: int
    indent: str


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
    #: SHA-256 of the exact bytes before, when they differ from ``file_sha256`` (``None`` for a created file;
    #: a move or an unchanged file keeps its bytes).
    old_sha256: str | None = None
    #: SHA-256 of the exact bytes after (``None`` once deleted): the next edit's ``expected_file_sha256``.
    file_sha256: str | None = None
    insertions: int = 0
    deletions: int = 0
    #: The text file's line ending and encoding (``None`` for a deleted, moved or binary file).
    line_ending: Literal["LF", "CRLF"] | None = "LF"
    encoding: str | None = "utf-8"
    #: Edited line ranges (adjacent edits on shared lines merged), at most 100; see ``edit_ranges_truncated``.
    #: Empty for a created or deleted file (its whole text).
    edit_ranges: tuple[EditRange, ...] = ()
    edit_ranges_truncated: bool = False
    line_corrections: tuple[LineCorrection, ...] = ()
    reindented: tuple[TextReindent, ...] = ()
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
    #: Fingerprint of the repository state after the batch.
    repo_fingerprint: str
    #: The state before it (``None`` for a dry run, which changes nothing).
    repo_fingerprint_before: str | None = None
    #: Definitions whose spans the edits touch, before or after (``path:kind:name``), sorted; the first
    #: :data:`LISTED`.
    symbols_changed: tuple[str, ...] = ()
    #: How many there are, when more than listed.
    symbols_changed_total: int = 0
    #: Tests that cover the changed lines (from the tests subsystem, when wired): up to :data:`LISTED` test ids
    #: (``file::case`` or a target id), each runnable by ``run_test_targets(targets=...)``; for more, the
    #: files that hold them (the first :data:`LISTED`).
    tests_affected: tuple[str, ...] = ()
    #: When ``tests_affected`` names files: how many tests there are ...
    tests_affected_total: int = 0
    #: ... and how many files, when more than it lists.
    tests_affected_files: int = 0
    #: When ``tests_affected`` names files, or when the affected tests are unknown (a warning says why; the
    #: list is then empty, which does not mean "none"): the changed files as ``path:lines`` (lines as the file is
    #: now), the ``affected_by`` that selects the tests in ``run_test_targets`` (``changed_files`` of
    #: ``inspect_affected_tests``).
    tests_affected_by: tuple[str, ...] = ()
    #: Unified diff of the whole batch; returned for dry runs (bounded, see ``diff_truncated``).
    diff: str | None = None
    diff_truncated: bool = False
    warnings: tuple[str, ...] = ()

    #: Zero-context hunks of the edited segments, for the ledger; not part of the answer.
    _short_diff: str = PrivateAttr(default="")
    #: Every symbol changed (up to :data:`MAX_LISTED`), for the mutation fingerprint; not part of the answer.
    _symbols: tuple[str, ...] = PrivateAttr(default=())

    @classmethod
    def build(cls, *, short_diff: str = "", symbols: Sequence[str] = (), tests: Sequence[str] = (),
              tests_by: Sequence[str] = (), tests_unknown: bool = False, **fields: Any) -> Delta:
        """The delta with ``symbols`` (sorted) and ``tests`` (sorted ids, selected by ``tests_by``) listed
        within :data:`LISTED`; ``tests_unknown``: the look-up failed, ``tests_by`` is what selects them later."""
        tested = {"tests_affected_by": tuple(tests_by)} if tests_unknown else _listed_tests(tests, tests_by)
        delta = cls(**fields, **_listed_symbols(symbols), **tested)
        delta._short_diff = short_diff[:_REPORT_DIFF_CHARS]
        delta._symbols = tuple(symbols[:MAX_LISTED])
        return delta

    def mutation_report(self) -> MutationReport:
        """The call-observer view of this delta (ledger and mutation fingerprint)."""
        return MutationReport(
            changed_paths=tuple(sorted([(f.path, f.file_sha256 or "") for f in self.files]
                                       + [(f.old_path, "") for f in self.files if f.old_path])),
            insertions=self.insertions,
            deletions=self.deletions,
            symbols_changed=self._symbols or self.symbols_changed,
            short_diff=(self._short_diff or self.diff or "")[:_REPORT_DIFF_CHARS],
            repo_before=self.repo_fingerprint_before or self.repo_fingerprint,
            repo_after=self.repo_fingerprint,
            # A move's destination is a file that did not exist: created, whatever the excerpt's length.
            created_paths=tuple(sorted(f.path for f in self.files if f.action in ("created", "moved"))),
        )


def _listed_symbols(symbols: Sequence[str]) -> dict[str, Any]:
    listed = tuple(symbols[:LISTED])
    return {"symbols_changed": listed, "symbols_changed_total": len(symbols) if len(symbols) > LISTED else 0}


def _listed_tests(tests: Sequence[str], tests_by: Sequence[str]) -> dict[str, Any]:
    """A few tests by id; more by the files holding them, with the count and the selection that reruns them."""
    if len(tests) <= LISTED:
        return {"tests_affected": tuple(tests)}
    files = sorted({test.split("::", 1)[0] for test in tests})
    return {"tests_affected": tuple(files[:LISTED]), "tests_affected_total": len(tests),
            "tests_affected_files": len(files) if len(files) > LISTED else 0, "tests_affected_by": tuple(tests_by)}
