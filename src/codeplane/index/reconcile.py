"""Reconcile: what changed between the file table and the disk (spec §5.4, §5.6, §5.9).

Stat first, hash only when the stat differs. A stat change with an equal line-ending-normalised hash
(a touch, a CRLF↔LF flip) is *touched*: the row's stat and exact-bytes hash are refreshed, nothing is
reindexed. A deleted row and an added file with the same hash are a *rename*: the row keeps its id.
The diff only reads; publishing it is :mod:`codeplane.index.epochs`' job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from codeplane.index.store import FileRecord
from codeplane.repo.content import FileContent, load_content
from codeplane.repo.universe import DiskEntry

#: Rows whose mtime is younger than this are re-hashed even when their stat is unchanged (racy git).
RACY_NS = 2_000_000_000
#: Contents read while diffing are kept for publishing up to this many bytes in total (then re-read).
KEEP_CONTENT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Upsert:
    """A file whose content must be (re)indexed: added (``previous is None``) or modified."""

    entry: DiskEntry
    previous: FileRecord | None
    #: Content already read during the diff, or ``None`` to read it while publishing.
    content: FileContent | None = None


@dataclass(frozen=True)
class Touched:
    record: FileRecord
    entry: DiskEntry
    content: FileContent


@dataclass(frozen=True)
class Rename:
    old: FileRecord
    new: Upsert


@dataclass
class ChangeSet:
    upserts: list[Upsert] = field(default_factory=list)
    touched: list[Touched] = field(default_factory=list)
    deleted: list[FileRecord] = field(default_factory=list)
    renamed: list[Rename] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.upserts or self.touched or self.deleted or self.renamed)

    @property
    def added(self) -> int:
        return sum(1 for u in self.upserts if u.previous is None)

    @property
    def modified(self) -> int:
        return sum(1 for u in self.upserts if u.previous is not None)

    def paths(self) -> set[str]:
        """Every path whose index state this change set rewrites."""
        found = {u.entry.path for u in self.upserts} | {t.entry.path for t in self.touched}
        found |= {r.path for r in self.deleted}
        for rename in self.renamed:
            found |= {rename.old.path, rename.new.entry.path}
        return found


class _Budget:
    def __init__(self) -> None:
        self.left = KEEP_CONTENT_BYTES

    def keep(self, content: FileContent) -> FileContent | None:
        if content.text is None or content.size > self.left:
            return None
        self.left -= content.size
        return content


def racy_after(stat_reference_ns: int = 0) -> int:
    """Rows with an mtime at or after this are re-hashed although their stat is unchanged (see :func:`diff`)."""
    return max(time.time_ns() - RACY_NS, stat_reference_ns)


def differing(indexed: set[tuple[str, int, int, int, int]], disk: dict[str, DiskEntry]) -> set[str]:
    """Paths where the file table (``IndexStore.stat_keys``) and the walk disagree: a row the walk lacks, a file
    the table lacks, another stat or kind. Any other path, unless racy, passes :func:`diff`'s first test unread,
    so a full reconcile needs whole records only for these; compared as sets of tuples, in C, where a loop over
    133k records took most of a second of a warm restart (issue 19)."""
    walked = {(e.path, e.size, e.mtime_ns, e.inode, e.is_symlink) for e in disk.values()}
    return {key[0] for key in indexed.symmetric_difference(walked)}


def unsettled(records: dict[str, FileRecord], disk: dict[str, DiskEntry]) -> set[str]:
    """Indexed paths that ``disk`` misses, or shows with another kind or stat, before any hashing.

    A walk taken before the writer lock is stale exactly where a write landed since, and such a write
    leaves one of these: a record the walk did not see, or one whose stat is newer than the walk's. Stat'ing
    them again under the lock makes the diff what a walk under the lock would have given. (A path only the
    walk has needs no second look: the diff reads its content under the lock anyway.)
    """
    found: set[str] = set()
    entry_at = disk.get
    # One pass with the stat compared inline: a warm restart runs this over every row (~7k on Django, issue 19).
    for path, record in records.items():
        entry = entry_at(path)
        if entry is None or entry.size != record.size or entry.mtime_ns != record.mtime_ns \
                or entry.inode != record.inode or entry.is_symlink != (record.kind == "symlink"):
            found.add(path)
    return found


def diff(root: Path, records: dict[str, FileRecord], disk: dict[str, DiskEntry], *, max_bytes: int,
         trust_stat: bool = True, stat_reference_ns: int = 0) -> ChangeSet:
    """Compare ``records`` (rows in scope) with ``disk`` (entries in the same scope).

    With ``trust_stat`` an unchanged stat means unchanged content, except for "racy" rows whose mtime is
    younger than :data:`RACY_NS` (a rewrite within one timestamp tick keeps size and mtime) — unless it is
    older than ``stat_reference_ns``, a file timestamp observed before any of the rows' stats was taken
    (``artifact_restat.py``): a later write cannot keep such an mtime. Explicit refreshes pass
    ``trust_stat=False`` and hash every file they name.
    """
    changes = ChangeSet()
    racy_from = racy_after(stat_reference_ns)
    budget = _Budget()
    added: list[DiskEntry] = []
    missing = [rec for path, rec in records.items() if path not in disk]
    for path in sorted(disk):
        entry = disk[path]
        record = records.get(path)
        if record is None:
            added.append(entry)
            continue
        if trust_stat and record.mtime_ns < racy_from and entry.mtime_ns == record.mtime_ns \
                and entry.size == record.size and entry.inode == record.inode \
                and entry.is_symlink == (record.kind == "symlink"):
            continue  # the stat compared inline: this runs for every row of a full reconcile
        content = load_content(root / path, is_symlink=entry.is_symlink, max_bytes=max_bytes)
        if content is None:
            missing.append(record)
        elif content.content_hash == record.content_hash and content.kind == record.kind \
                and content.line_count == record.line_count:
            # Same text up to CRLF/LF: no line moved. The line count also heals a row an older build indexed
            # when a lone CR counted as a line break in this hash (the text was never reindexed).
            if not (content.file_sha256 == record.file_sha256
                    and entry.same_stat(record.size, record.mtime_ns, record.inode)):
                changes.touched.append(Touched(record, entry, content))
        else:
            changes.upserts.append(Upsert(entry, record, budget.keep(content)))
    if missing and added:
        # Rename detection needs the hash of every added file; a hash shared by several deleted rows is
        # ambiguous and falls back to delete + add (§5.6 default).
        by_hash: dict[str, FileRecord | None] = {}
        for record in sorted(missing, key=lambda r: r.path):
            by_hash[record.content_hash] = None if record.content_hash in by_hash else record
        renamed_ids: set[int] = set()
        for entry in added:
            content = load_content(root / entry.path, is_symlink=entry.is_symlink, max_bytes=max_bytes)
            if content is None:
                continue
            old = by_hash.get(content.content_hash)
            if old is not None and old.kind == content.kind and old.id not in renamed_ids:
                renamed_ids.add(old.id)
                changes.renamed.append(Rename(old, Upsert(entry, old, budget.keep(content))))
            else:
                changes.upserts.append(Upsert(entry, None, budget.keep(content)))
        missing = [r for r in missing if r.id not in renamed_ids]
    else:
        changes.upserts += [Upsert(entry, None) for entry in added]
    changes.deleted = sorted(missing, key=lambda r: r.path)
    return changes
