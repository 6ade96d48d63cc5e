"""From planned token-span edits to one mutation batch (D7: applied with the preview's hashes).

The mutation engine edits whole lines (``UpdateSpan``). A file's token edits become one line update over
the lines they span, whose new content is the old lines with exactly those token spans replaced — every
other character is copied unchanged. Every update carries the preview's file SHA-256, so a file that
changed since the preview fails the whole batch (5002) and nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_bytes
from codeplane.mutation.edits import CreateFile, DeleteFile, Edit, MoveFile, UpdateSpan
from codeplane.refactor.models import FileMove, PlannedEdit
from codeplane.refactor.spans import SourceText
from codeplane.repo.content import decode


@dataclass(frozen=True)
class _Group:
    start: int
    end: int
    edits: tuple[PlannedEdit, ...]


def _groups(edits: Sequence[PlannedEdit]) -> list[_Group]:
    """One line range per file, from the first edited line to the last: a rename of hundreds of call sites
    stays one engine edit per file (batches are capped by ``mutation.max_batch_edits``)."""
    ordered = sorted(edits, key=lambda e: (e.line, e.column, e.end_line, e.end_column))
    if not ordered:
        return []
    return [_Group(ordered[0].line, max(e.end_line for e in ordered), tuple(ordered))]


def _group_update(src: SourceText, group: _Group, sha: str) -> UpdateSpan:
    if src.text == "":
        # An empty file has no line to update: the edits (insertions) become an insertion at line 1.
        return UpdateSpan(path=src.path, start_line=1, end_line=0, new_content=_edited_text(src, group.edits),
                          expected_file_sha256=sha)
    old_lines = [src.line_text(n) for n in range(group.start, group.end + 1)]
    old_block = "\n".join(old_lines)
    # Offsets inside the folded block (lines joined by "\n", any "\r" dropped) so CRLF files line up.
    line_base = [0]
    for text in old_lines:
        line_base.append(line_base[-1] + len(text) + 1)
    parts: list[str] = []
    cursor = 0
    for edit in group.edits:
        begin = line_base[edit.line - group.start] + edit.column
        end = line_base[edit.end_line - group.start] + edit.end_column
        if begin < cursor or old_block[begin:end] != edit.old_text.replace("\r\n", "\n"):
            raise CodePlaneError(
                ErrorCode.MUTATION_PRECONDITION_FAILED,
                f"{edit.path}:{edit.line}:{edit.column}: the planned span no longer holds {edit.old_text!r}",
                details={"path": edit.path, "edit_id": edit.edit_id, "line": edit.line},
            )
        parts.append(old_block[cursor:begin])
        parts.append(edit.new_text)
        cursor = end
    parts.append(old_block[cursor:])
    new_block = "".join(parts)
    # The engine replaces the span's lines with their terminators and reads one final newline as the last
    # line's. A block emptied whole goes with its terminators (deleted lines leave no blank line); any other
    # block says its last line's terminator itself, or a last line left empty (an edit ending at column 0 of
    # a blank line) would vanish: a definition moved in where the destination's import of it stood lost the
    # blank line below. The file's last line may have no terminator.
    last = group.end
    terminated = bool(new_block) and src.offset(last, 0) + len(src.line_text(last)) < len(src.text)
    return UpdateSpan(path=src.path, start_line=group.start, end_line=group.end,
                      new_content=new_block + ("\n" if terminated else ""),
                      # Always newline-terminated: the engine drops one optional final newline, and a block
                      # whose last line is empty must keep that line.
                      expected_content=old_block + "\n", expected_file_sha256=sha)


def read_sources(root: Path, paths: Iterable[str]) -> tuple[dict[str, SourceText], dict[str, str]]:
    """Current text and exact-bytes SHA-256 of each existing path (missing files are left out)."""
    sources: dict[str, SourceText] = {}
    hashes: dict[str, str] = {}
    for path in sorted(set(paths)):
        try:
            data = (root / path).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            continue
        hashes[path] = sha256_bytes(data)
        sources[path] = SourceText(path, decode(data))
    return sources, hashes


def changed_files(root: Path, expected: Mapping[str, str]) -> list[dict[str, str | None]]:
    """Files whose bytes no longer hash to the preview's value (sorted), with both hashes."""
    changed: list[dict[str, str | None]] = []
    for path, sha in sorted(expected.items()):
        try:
            current: str | None = sha256_bytes((root / path).read_bytes())
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            current = None
        if current != sha:
            changed.append({"path": path, "expected_sha256": sha, "current_sha256": current})
    return changed


@dataclass(frozen=True)
class Batch:
    """The mutation edits of one apply, plus moves to record in git's index afterwards.

    A file that is both moved and edited goes in as delete + create (the engine refuses to move and edit
    one path in a batch); ``git_moves`` lists those, so the caller can record them like ``git mv``.
    """

    edits: list[Edit]
    git_moves: list[tuple[str, str]]


def _edited_text(src: SourceText, edits: Sequence[PlannedEdit]) -> str:
    newline = "\r\n" if "\r\n" in src.text else "\n"
    out: list[str] = []
    cursor = 0
    for edit in sorted(edits, key=lambda e: (e.line, e.column)):
        begin, end = src.offset(edit.line, edit.column), src.offset(edit.end_line, edit.end_column)
        out.append(src.text[cursor:begin])
        out.append(edit.new_text.replace("\n", newline) if newline != "\n" else edit.new_text)
        cursor = end
    out.append(src.text[cursor:])
    return "".join(out)


def build_batch(root: Path, edits: Sequence[PlannedEdit], hashes: Mapping[str, str], *,
                moves: Sequence[FileMove] = (), deletes: Sequence[str] = (), creates: Sequence[str] = (),
                can_git_mv: Callable[[str, str], bool] | None = None) -> Batch:
    """The mutation edits for ``edits`` (+ moves/deletes), each pinned to the preview hash.

    Raises 5002 listing *every* file that changed since the preview before building anything.
    """
    touched = {e.path for e in edits} | {m.from_path for m in moves} | set(deletes)
    changed = changed_files(root, {p: hashes[p] for p in touched if p in hashes})
    if changed:
        raise CodePlaneError(
            ErrorCode.MUTATION_PRECONDITION_FAILED,
            f"{len(changed)} file(s) changed since the preview; nothing was applied — preview again",
            details={"changed": changed},
        )
    sources, _ = read_sources(root, {e.path for e in edits} - set(creates))
    by_path: dict[str, list[PlannedEdit]] = {}
    for edit in edits:
        by_path.setdefault(edit.path, []).append(edit)
    moved_to = {m.from_path: m.to_path for m in moves}
    batch: list[Edit] = []
    git_moves: list[tuple[str, str]] = []
    for path in sorted(by_path):
        if path in creates:
            # A new module: its edits are insertions into an empty text (5005 if the file appeared since).
            batch.append(CreateFile(path=path, content=_edited_text(SourceText(path, ""), by_path[path])))
            continue
        src = sources[path]
        if path in moved_to:
            continue
        for group in _groups(by_path[path]):
            batch.append(_group_update(src, group, hashes[path]))
    for move in moves:
        if move.from_path in by_path:
            if can_git_mv is not None and can_git_mv(move.from_path, move.to_path):
                git_moves.append((move.from_path, move.to_path))
            src = sources[move.from_path]
            batch.append(DeleteFile(path=move.from_path, expected_file_sha256=hashes.get(move.from_path)))
            batch.append(CreateFile(path=move.to_path, content=_edited_text(src, by_path[move.from_path])))
        else:
            batch.append(MoveFile(path=move.from_path, to=move.to_path,
                                  expected_file_sha256=hashes.get(move.from_path)))
    batch += [DeleteFile(path=p, expected_file_sha256=hashes.get(p)) for p in deletes]
    return Batch(batch, git_moves)
