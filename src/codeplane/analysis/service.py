"""``SemanticDiffService``: the one entry point of ``semantic_diff`` (§23.7).

Git mode parses each changed file's two versions (blobs by id; the work tree from disk) with the index's
extractors (``facts.py``, cached by blob id), compares definitions (``compare.py``) and enriches every
change with its blast radius from the structural index (``impact.py``). Epoch mode reads the index's
definition snapshots (``epochs.py``). The full report is built once per query and paged from a snapshot
(``paging.py``).

What a call costs: a changed file whose edit lies outside every statement (a header or trailer comment) is settled
without extracting it (``unchanged.py``); a git-mode report is kept by its query and state (both commits, every
changed file's blob ids, the index epoch), so a repeat on an unchanged repository lists the changed files and
answers; each change's affected tests are looked up when a page shows it, the hint's count in one walk for all.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pygit2

from codeplane.analysis import epochs, report
from codeplane.analysis.blobstore import BlobFactsStore
from codeplane.analysis.categories import category
from codeplane.analysis.compare import Version, compare
from codeplane.analysis.facts import FactsCache, Lru, file_defs, file_defs_many
from codeplane.analysis.impact import SHARP_FILES, Enricher, PageTests, TestsFor, union_of_tests
from codeplane.analysis.models import MOVED, Change, DiffReport, FileChange, FileDefs
from codeplane.analysis.moves import imports_of, pair_moves, reexported, reexported_in
from codeplane.analysis.paging import ReportStore
from codeplane.analysis.sides import FilePair, GitSides, blob_at, changed_files, epoch_of, read_blob, read_worktree
from codeplane.analysis.unchanged import structure_kept
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.index.languages import detect
from codeplane.index.structural.facts import ImportRow
from codeplane.repo.content import decode
from codeplane.repo.ignore import IgnoreRules

if TYPE_CHECKING:
    from codeplane.index.service import IndexService

MAX_LIMIT = 100
NO_CHANGE = "no_definition_changed"
#: A file whose bytes are the same on both sides: its mode (the executable bit) changed.
MODE_CHANGED = "mode_changed"
#: Changed files whose comparison is kept (each a handful of small records).
PAIR_CACHE = 8192
#: Changed files one git-mode diff parses (a bound on its time: ~3 ms a file version); the rest are listed.
MAX_COMPARED = 5000
#: File versions parsed per ``extract_many`` call.
PARSE_BATCH = 256
#: Whole git-mode reports kept for a repeat of the same query on the same state (each holds its changes).
REPORT_CACHE = 8


@dataclass(frozen=True)
class DiffPage:
    report: DiffReport
    changes: tuple[Change, ...]
    #: Index of ``changes[0]`` in ``report.changes`` (parents are report indexes).
    first_index: int
    files: tuple[FileChange, ...]
    next_cursor: str | None
    summary: str
    breaking_summary: str | None
    agentic_hint: str

    @property
    def total(self) -> int:
        return len(self.report.changes) + len(self.report.files)


class SemanticDiffService:
    def __init__(self, root: Path, index: IndexService | None = None, *, tests_for: TestsFor | None = None,
                 evidence: Callable[[], int] | None = None, cache: FactsCache | None = None,
                 cache_db: Path | None = None) -> None:
        self.root = root
        #: Blob facts across restarts (``blobstore.py``); None keeps them in memory only.
        self.store = BlobFactsStore(cache_db) if cache_db is not None else None
        self._index = index
        self._tests_for = tests_for
        #: The generation of the evidence ``tests_for`` selects by besides the index (coverage recordings).
        self._evidence = evidence
        self.cache = cache or FactsCache()
        #: File versions this service parsed (not found in either cache).
        self.parsed = 0
        #: Changed files found to keep their structure without extracting them (``unchanged.py``).
        self.kept = 0
        #: A file's raw changes (before enrichment) by (old path, old blob, new path, new blob).
        self._pairs: Lru[tuple[str | None, str | None, str | None, str | None],
                         tuple[tuple[tuple[Change, str | None], ...], str | None]] = Lru(PAIR_CACHE)
        self._reports = ReportStore()
        #: Git-mode reports by query and state (``_state_key``): a repeated call on an unchanged repository and
        #: index answers from here instead of comparing and enriching every file again.
        self._built: Lru[str, DiffReport] = Lru(REPORT_CACHE)
        #: Reports this service built (not answered from ``_built``).
        self.reports_built = 0

    # -- the tool ----------------------------------------------------------------------------------
    def diff(self, base: str | None = None, target: str | None = None, paths: Sequence[str] | None = None, *,
             cursor: str | None = None, limit: int = 20) -> DiffPage:
        if not 1 <= limit <= MAX_LIMIT:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"limit must be within 1..{MAX_LIMIT}",
                                 details={"limit": limit})
        base = base or "HEAD"
        scope = None if paths is None else sorted({resolve_in_repo(self.root, p).rel for p in paths})
        key = hashlib.sha256(json.dumps([base, target, scope]).encode()).hexdigest()[:16]
        if cursor:
            snapshot_id, built, offset = self._reports.get(cursor, key)
        else:
            built, offset = self.build(base, target, scope), 0
            snapshot_id = None
        items = len(built.changes) + len(built.files)
        end = min(offset + limit, items)
        nxt = None
        if end < items:
            snapshot_id = snapshot_id or self._reports.keep(built, key)
            nxt = self._reports.cursor(snapshot_id, end)
        n = len(built.changes)
        if built.page_tests is not None:
            # Only the page's changes get their tests looked up (the hint's count comes from one walk for all).
            for i in range(offset, min(end, n)):
                built.changes[i] = built.page_tests.fill(built.changes[i])
        return DiffPage(built, tuple(built.changes[offset:min(end, n)]), offset,
                        tuple(built.files[max(offset - n, 0):max(end - n, 0)]), nxt,
                        report.summary(built.changes, built.files_analyzed, len(built.files)),
                        report.breaking_summary(built.changes),
                        report.agentic_hint(built.changes, built.affected_tests))

    def build(self, base: str, target: str | None, scope: Sequence[str] | None) -> DiffReport:
        """The whole report for one query (every change, enriched and ordered)."""
        base_epoch, target_epoch = epoch_of(base), epoch_of(target)
        if (base_epoch is None) != (target_epoch is None) and not (base_epoch is not None and target is None):
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "base and target must both be git revisions or both "
                                 "epoch:N (an epoch base with no target compares with the current epoch)",
                                 details={"base": base, "target": target})
        if base_epoch is not None:
            return self._epoch_report(base_epoch, target_epoch, scope)
        return self._git_report(base, target, scope)

    # -- git mode ----------------------------------------------------------------------------------
    def _defs(self, repo: pygit2.Repository, path: str, blob_id: str, data: bytes | None) -> FileDefs:
        found = self.cache.lookup(path, blob_id)
        if found is None and self.store is not None:
            found = self.store.get(path, blob_id)
            if found is not None:
                self.cache.store(path, blob_id, found)
        if found is None:
            self.parsed += 1
            found = file_defs(path, data if data is not None else read_blob(repo, blob_id))
            self.cache.store(path, blob_id, found)
            if self.store is not None:
                self.store.put(path, blob_id, found)
        return found

    def _git_report(self, base: str, target: str | None, scope: Sequence[str] | None) -> DiffReport:
        repo = pygit2.Repository(str(self.root))
        try:
            sides = changed_files(repo, base, target, scope, IgnoreRules.load(self.root) if target is None else None)
            state = self._state_key(base, target, scope, sides)
            kept = self._built.get(state)
            if kept is not None:
                return kept
            self.reports_built += 1
            changes, files, modified, drifted = self._compare_all(repo, sides, target is None)
            paired = pair_moves(changes)
            # Only the first files by path are selected from their lines (``impact.SHARP_FILES``): diffing every
            # file's lines against its base was ~20 % of a 1,500-file work-tree diff, for nothing.
            sharp = sorted({c.path for c, _ in paired})[:SHARP_FILES]
            # A revision's old module is read as that revision has it: whether it imports a moved name back is
            # the target's to say, not the work tree's (QA65 F2).
            kept_imports = None if sides.target_commit is None else {
                c.old_path: self._imports_at(repo, sides.target_commit, c.old_path)
                for c, _ in paired if c.change == MOVED and c.old_path is not None}
            lines = {p: spans for path in sharp if path in modified
                     for p, spans in self._worktree_lines(repo, modified[path]).items()}
        finally:
            repo.free()
            if self.store is not None:
                self.store.prune()
        described = f"{base} ({sides.base_commit[:12] or 'no commit yet'})"
        target_text = "work tree" if target is None else f"{target} ({(sides.target_commit or '')[:12]})"
        out = DiffReport(described, target_text, "git", len(sides.pairs), files=files)
        if len(sides.pairs) > MAX_COMPARED:
            out.notes.append(f"{len(sides.pairs)} files changed: the first {MAX_COMPARED} by path were compared, "
                             "the rest are listed as not_compared (narrow with paths)")
        self._enrich(out, changes, exact=target is None, lines=lines, old_imports=kept_imports)
        if not drifted:  # a file that changed while it was read was compared as it is now, not as ``state`` says
            self._built.put(state, out)
        return out

    def _imports_at(self, repo: pygit2.Repository, commit_id: str, path: str) -> tuple[ImportRow, ...] | None:
        data = blob_at(repo, commit_id, path)
        return None if data is None else imports_of(path, data)

    def _state_key(self, base: str, target: str | None, scope: Sequence[str] | None, sides: GitSides) -> str:
        """What a git-mode report depends on: the query, both commits, every changed file's blob ids (a work-tree
        file's as hashed from disk now, so an edit is never answered from an older report) and the index epoch
        (the blast radius and tests come from the index as it is) and the test-selection evidence (a coverage run
        since narrows the tests)."""
        epoch = self._index.epoch if self._index is not None and self._index.ready else None
        evidence = self._evidence() if self._evidence is not None else None
        pairs = [[p.status, p.old_path, p.new_path, p.old_id, p.new_id, p.regular, p.untracked] for p in sides.pairs]
        return hashlib.sha256(json.dumps([base, target, scope, sides.base_commit, sides.target_commit, epoch,
                                          evidence, pairs]).encode()).hexdigest()

    def _compare_all(self, repo: pygit2.Repository, sides: GitSides, worktree: bool,
                     ) -> tuple[list[tuple[Change, str | None]], list[FileChange], dict[str, FilePair], bool]:
        """Every changed file compared (the first ``MAX_COMPARED``): its changes, the files without any, for a
        work-tree diff each file with changes by path (whose changed lines test selection may use), and whether
        a work-tree file read differed from its listing (edited meanwhile)."""
        compared = 0
        self._prefetch(repo, sides.pairs[:MAX_COMPARED], worktree)
        changes: list[tuple[Change, str | None]] = []
        files: list[FileChange] = []
        modified: dict[str, FilePair] = {}
        drifted: list[str] = []
        for pair in sides.pairs:
            found: list[tuple[Change, str | None]] = []
            reason: str | None = "not_compared"
            if compared < MAX_COMPARED:
                compared += 1
                found, reason = self._pair(repo, pair, worktree, drifted)
                if found and worktree:
                    modified[pair.path] = pair
            changes += found
            if reason is not None:
                info = detect(pair.path)
                files.append(FileChange(pair.path, pair.status, category(pair.path),
                                        info.language if info else None, reason, _moved_from(pair)))
        return changes, files, modified, bool(drifted)

    def _worktree_lines(self, repo: pygit2.Repository, pair: FilePair) -> dict[str, tuple[tuple[int, int], ...]]:
        """The lines of a modified file as the work tree has it that differ from the base (what the index holds
        now, so test selection can start from the definitions around them); nothing for an added, deleted or
        unreadable file, which is selected by its imports."""
        if pair.old_id is None or pair.new_path is None or pair.old_path != pair.new_path:
            return {}
        read = read_worktree(self.root, pair.on_disk)
        if read is None:
            return {}
        spans = changed_spans(_lines(read_blob(repo, pair.old_id)), _lines(read[1]))
        return {pair.new_path: spans} if spans else {}

    def _prefetch(self, repo: pygit2.Repository, pairs: Sequence[FilePair], worktree: bool) -> None:
        """Parse every version not cached yet, in batches (see ``file_defs_many``); bytes are read per
        batch, so memory stays bounded by the batch, not the diff."""
        todo: list[tuple[str, str, str | None]] = []  # path, blob id, the work-tree name to read it from
        for pair in pairs:
            if not pair.regular or (pair.old_path, pair.old_id, pair.new_path, pair.new_id) in self._pairs:
                continue
            if self._kept(repo, pair, worktree):
                continue
            for path, blob_id, on_disk in ((pair.old_path, pair.old_id, None),
                                           (pair.new_path, pair.new_id,
                                            pair.on_disk if worktree and pair.new_path is not None else None)):
                if path is None or blob_id is None or self.cache.peek(path, blob_id):
                    continue
                stored = self.store.get(path, blob_id) if self.store is not None else None
                if stored is not None:
                    self.cache.store(path, blob_id, stored)
                else:
                    todo.append((path, blob_id, on_disk))
        for start in range(0, len(todo), PARSE_BATCH):
            batch: list[tuple[str, str, bytes]] = []
            for path, blob_id, on_disk in todo[start:start + PARSE_BATCH]:
                read = read_worktree(self.root, on_disk) if on_disk else (blob_id, read_blob(repo, blob_id))
                if read is not None and read[0] == blob_id:  # a work-tree file that changed meanwhile: later
                    batch.append((path, blob_id, read[1]))
            self.parsed += len(batch)
            parsed = file_defs_many([(p, d) for p, _, d in batch])
            for (path, blob_id, _), defs in zip(batch, parsed, strict=True):
                self.cache.store(path, blob_id, defs)
            if self.store is not None:
                self.store.put_many([(path, blob_id, defs) for (path, blob_id, _), defs in zip(batch, parsed,
                                                                                                  strict=True)])

    def _kept(self, repo: pygit2.Repository, pair: FilePair, worktree: bool) -> bool:
        """Whether this modified file's change leaves its definitions as they were (``unchanged.py``), settled
        without extracting either version; its comparison is then recorded as having no change."""
        if pair.status != "modified" or pair.old_path != pair.new_path or pair.old_id is None or pair.new_id is None:
            return False
        path = pair.old_path
        assert path is not None
        if self.cache.peek(path, pair.old_id) and self.cache.peek(path, pair.new_id):
            return False  # both extracted already: comparing them costs less than the check
        if worktree:
            read = read_worktree(self.root, pair.on_disk)
            if read is None or read[0] != pair.new_id:
                return False  # changed since it was listed: ``_pair`` reads it again
            new = read[1]
        else:
            new = read_blob(repo, pair.new_id)
        if not structure_kept(path, read_blob(repo, pair.old_id), new):
            return False
        self.kept += 1
        self._pairs.put((pair.old_path, pair.old_id, pair.new_path, pair.new_id), ((), NO_CHANGE))
        return True

    def _pair(self, repo: pygit2.Repository, pair: FilePair, worktree: bool,
              drifted: list[str]) -> tuple[list[tuple[Change, str | None]], str | None]:
        """This file's changes, or why it has none to report (cached by both blob ids)."""
        if not pair.regular:
            return [], "not_a_regular_file"
        if pair.status == "modified" and pair.old_id == pair.new_id:
            return [], MODE_CHANGED  # the same bytes: only the executable bit differs
        new_data: bytes | None = None
        new_id = pair.new_id
        if pair.new_path is not None and worktree:
            read = read_worktree(self.root, pair.on_disk)
            if read is None or read[0] != pair.new_id:
                drifted.append(pair.new_path)
            if read is None:
                return [], "unreadable"
            new_id, new_data = read
        key = (pair.old_path, pair.old_id, pair.new_path, new_id)
        cached = self._pairs.get(key)
        if cached is None:
            cached = self._compare(repo, pair, new_id, new_data)
            self._pairs.put(key, cached)
        return list(cached[0]), cached[1]

    def _compare(self, repo: pygit2.Repository, pair: FilePair, new_id: str | None,
                 new_data: bytes | None) -> tuple[tuple[tuple[Change, str | None], ...], str | None]:
        old = new = None
        old_lines: list[str] | None = None
        new_lines: list[str] | None = None
        if pair.old_path is not None and pair.old_id is not None:
            data = read_blob(repo, pair.old_id)
            old = self._defs(repo, pair.old_path, pair.old_id, data)
            old_lines = _lines(data)
        if pair.new_path is not None and new_id is not None:
            data = new_data if new_data is not None else read_blob(repo, new_id)
            new = self._defs(repo, pair.new_path, new_id, data)
            new_lines = _lines(data)
        unparsed = next((d.status for d in (old, new) if d is not None and not d.parsed), None)
        if unparsed is not None:
            return (), unparsed
        found = compare(Version(pair.old_path, old.defs, old_lines) if old and pair.old_path else None,
                        Version(pair.new_path, new.defs, new_lines) if new and pair.new_path else None)
        either = new or old
        language = either.language if either is not None else None
        if not found:
            return (), NO_CHANGE
        return tuple((c, language) for c in found), None

    # -- epoch mode --------------------------------------------------------------------------------
    def _epoch_report(self, base: int, target: int | None, scope: Sequence[str] | None) -> DiffReport:
        index = self._require_index()
        current = index.epoch
        upto = current if target is None else target
        changes: list[tuple[Change, str | None]] = []
        files: list[FileChange] = []
        with index.read_connection() as conn:
            epochs.check_range(conn, base, upto, current)
            paths, truncated = epochs.changed_paths(conn, base, upto)
            if scope is not None:
                paths = [p for p in paths if any(p == s or p.startswith(s + "/") or not s for s in scope)]
            compared = 0
            for path in paths:
                old, new = epochs.version_at(conn, path, base), epochs.version_at(conn, path, upto)
                if old is None and new is None:
                    continue  # created and deleted inside the range: no net change (was listed as added)
                compared += 1
                status = "added" if old is None else "deleted" if new is None else "modified"
                info = detect(path)
                if info is None or info.grammar is None:
                    files.append(FileChange(path, status, category(path), info.language if info else None,
                                            "unsupported"))
                    continue
                found = compare(old, new)
                if not found:
                    files.append(FileChange(path, status, category(path), info.language, NO_CHANGE))
                changes += [(c, info.language) for c in found]
        out = DiffReport(f"epoch:{base}", f"epoch:{upto}", "epoch", compared, files=files)
        if truncated:
            out.notes.append(f"only the first {epochs.MAX_FILES} changed files were compared")
        out.notes.append("epoch mode: snapshots keep no text, so body changes are seen only when a definition's "
                         "length changed, without lines_changed or preview")
        self._enrich(out, changes, exact=upto == current)
        return out

    # -- shared ------------------------------------------------------------------------------------
    def _require_index(self) -> IndexService:
        if self._index is None or not self._index.ready:
            raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "epoch mode needs the index; it is still building")
        return self._index

    @contextlib.contextmanager
    def _connection(self, notes: list[str]) -> Iterator[sqlite3.Connection | None]:
        """The index's read connection, or None (noted) when it is not ready or busy past its wait:
        the blast radius is then ``unknown``, the diff itself is still answered."""
        if self._index is None or not self._index.ready:
            if self._index is not None:
                notes.append("the index is still building: blast radius unknown")
            yield None
            return
        with contextlib.ExitStack() as stack:
            try:
                conn: sqlite3.Connection | None = stack.enter_context(self._index.read_connection())
            except CodePlaneError as exc:
                notes.append(f"blast radius unknown: {exc.message}")
                conn = None
            yield conn

    def _enrich(self, out: DiffReport, found: Sequence[tuple[Change, str | None]], *,
                exact: bool, lines: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                old_imports: Mapping[str, tuple[ImportRow, ...] | None] | None = None) -> None:
        """``out``'s changes, each with its blast radius, and every test file they affect. ``old_imports``: for
        a revision target, the imports of each moved definition's old module as it has them."""
        found = pair_moves(found)
        paths = [c.path for c, _ in found]
        # Tests are looked up outside the read transaction (the testing service opens its own): the union for the
        # hint now, each file's own list when a page shows its changes (``diff``).
        out.affected_tests = union_of_tests(paths, self._tests_for, lines)
        out.page_tests = PageTests(paths, self._tests_for, lines) if self._tests_for is not None else None
        with self._connection(out.notes) as conn:
            if exact and conn is not None:  # the index holds the target's text: whether the old module re-exports
                found = [(reexported(conn, c), language) for c, language in found]
            elif old_imports is not None and conn is not None:
                found = [(reexported_in(conn, c, old_imports.get(c.old_path or "")), language)
                         for c, language in found]
            enricher = Enricher(conn, {}, exact=exact)
            assessed = [report.assess(c, enricher.impact(c, language)) for c, language in found]
        out.changes = report.order(assessed)


def _lines(data: bytes) -> list[str]:
    return decode(data).split("\n")


def changed_spans(old: Sequence[str], new: Sequence[str]) -> tuple[tuple[int, int], ...]:
    """1-based inclusive spans of ``new`` that differ from ``old``: added or replaced lines, and for a removal the
    two lines around it (as ``inspect_affected_tests`` reads git's hunks)."""
    spans: list[tuple[int, int]] = []
    for tag, _i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            spans.append((j1 + 1, j2) if j2 > j1 else (max(1, j1), j1 + 1))
    return tuple(spans)


def _moved_from(pair: FilePair) -> str | None:
    return pair.old_path if pair.status == "renamed" else None
