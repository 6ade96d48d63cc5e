"""Applying a previewed plan: choose the edits, pin them to the preview's hashes, one mutation batch.

Selection: edits at or above ``min_certainty`` (default ``medium``; ``low`` never by default), plus the
ids in ``include``, minus the ids in ``exclude``; documentation edits at or above the doc-sweep threshold
when doc edits are applied. Unknown ids are 1003; unaccepted collisions are 4007; a file changed since the
preview is 5002 listing every such file. Nothing is written unless the whole batch can be.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.mutation.delta import Delta
from codeplane.mutation.edits import Edit
from codeplane.refactor.batch import build_batch
from codeplane.refactor.models import CERTAINTY_RANK, AppliedFile, ApplyOutcome, Certainty, PlannedEdit
from codeplane.refactor.plans import PlanOption

log = get_logger(__name__)

ApplyBatch = Callable[[Sequence[Edit]], Delta]
GitMove = Callable[[Path, str, str], object]
CanGitMove = Callable[[Path, str, str], bool]


def select_edits(option: PlanOption, *, include: Sequence[str], exclude: Sequence[str], min_certainty: Certainty,
                 apply_docs: bool, doc_min: Certainty) -> tuple[list[PlannedEdit], list[PlannedEdit]]:
    """``(code edits, doc edits)`` to apply; 1003 for ids the plan does not have."""
    known = option.edit_by_id()
    unknown = sorted(set(include) - set(known)) + sorted(set(exclude) - set(known))
    if unknown:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"unknown edit ids: {unknown[:20]}",
                             details={"field": "include/exclude", "unknown": unknown[:100]})
    wanted, dropped = set(include), set(exclude)
    floor = CERTAINTY_RANK[min_certainty]
    code = [e for e in option.edits if e.edit_id not in dropped
            and (e.edit_id in wanted or (CERTAINTY_RANK[e.certainty] >= max(floor, 1)))]
    doc_floor = CERTAINTY_RANK[doc_min]
    docs = [e for e in option.doc_edits if e.edit_id not in dropped
            and (e.edit_id in wanted or (apply_docs and CERTAINTY_RANK[e.certainty] >= doc_floor))]
    return code, docs


def _prune_emptied_dirs(root: Path, paths: Sequence[str]) -> None:
    """Directories a move or delete left empty go too (git does not track them; a moved package's old
    directory would otherwise linger). Only parents of the moved/deleted files, and only when empty."""
    parents = sorted({str(Path(p).parent) for p in paths if "/" in p}, key=lambda d: -d.count("/"))
    for rel in parents:
        current = root / rel
        while current != root and current.is_dir():
            try:
                current.rmdir()
            except OSError:
                break
            current = current.parent


class Applier:
    """Turns a chosen plan option into one mutation batch and reports what changed."""

    def __init__(self, root: Path, apply_batch: ApplyBatch, *, can_git_mv: CanGitMove | None = None,
                 record_git_move: GitMove | None = None) -> None:
        self.root = root
        self._apply_batch = apply_batch
        self._can_git_mv = can_git_mv
        self._record_git_move = record_git_move

    def apply(self, refactor_id: str, option: PlanOption, *, include: Sequence[str], exclude: Sequence[str],
              min_certainty: Certainty, apply_docs: bool, doc_min: Certainty,
              accept_collisions: bool) -> ApplyOutcome:
        if option.collisions and not accept_collisions:
            raise CodePlaneError(
                ErrorCode.REFACTOR_COLLISION,
                f"the new name collides with {len(option.collisions)} existing binding(s); rename differently or "
                "pass accept_collisions=true",
                details={"collisions": [c.model_dump() for c in option.collisions[:20]]},
            )
        code, docs = select_edits(option, include=include, exclude=exclude, min_certainty=min_certainty,
                                  apply_docs=apply_docs, doc_min=doc_min)
        chosen = code + docs
        if not chosen and not option.moves and not option.deletes:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "nothing to apply with this selection",
                                 details={"min_certainty": min_certainty, "include": list(include)})
        probe = self._can_git_mv
        can_mv = (lambda a, b: probe(self.root, a, b)) if probe is not None else None
        batch = build_batch(self.root, chosen, dict(option.file_hashes), moves=option.moves,
                            deletes=option.deletes, creates=option.creates, can_git_mv=can_mv)
        try:
            delta = self._apply_batch(batch.edits)
        except CodePlaneError as exc:
            if exc.error is not ErrorCode.MUTATION_PRECONDITION_FAILED or \
                    exc.details.get("reason") != "file hash mismatch":
                raise  # another refusal (an edit's text not found...) says what it is in its own words
            # Lost a race with another write after the preview's check: the batch's own wording (an edit_index of
            # a batch the caller never built) helps no one.
            path = exc.details.get("path")
            raise CodePlaneError(ErrorCode.MUTATION_PRECONDITION_FAILED, f"{path} changed since the preview (another "
                                 "write landed first); nothing was applied — preview again", details={
                                     "path": path, "actual_file_sha256": exc.details.get("actual_file_sha256")},
                                 ) from exc
        warnings = list(delta.warnings)
        git_mv = any(f.git_mv for f in delta.files)
        for src, dst in batch.git_moves:
            try:
                if self._record_git_move is not None:
                    self._record_git_move(self.root, src, dst)
                    git_mv = True
            except Exception as exc:  # the files moved; only git's index lags
                log.exception("recording a move in git's index failed", src=src, dst=dst)
                warnings.append(f"{src} -> {dst} moved, but git's index was not updated ({type(exc).__name__})")
        _prune_emptied_dirs(self.root, [m.from_path for m in option.moves] + list(option.deletes))
        per_file: dict[str, int] = {}
        moved_to = {m.from_path: m.to_path for m in option.moves}
        for edit in chosen:
            key = moved_to.get(edit.path, edit.path)
            per_file[key] = per_file.get(key, 0) + 1
        files = [AppliedFile(path=f.path, sha256=f.file_sha256 or "", edits=per_file.get(f.path, 0))
                 for f in delta.files if f.action != "deleted" or f.path in option.deletes]
        skipped = sum(1 for e in option.edits if e.certainty == "low" and e not in code)
        return ApplyOutcome(
            refactor_id=refactor_id, candidate_id=option.candidate_id, applied_edits=len(code),
            applied_doc_edits=len(docs), skipped_low=skipped, files=files, moves=list(option.moves),
            deleted=list(option.deletes), git_mv=git_mv, insertions=delta.insertions, deletions=delta.deletions,
            warnings=warnings, delta=delta,
        )
