"""The mutation engine: one batch of edits in, one structured delta out, all or nothing (spec §9).

Pipeline of :meth:`MutationEngine.apply`:

1. **scope** every path (5001) and check the batch's shape (5006: a path created and deleted, moved and
   edited, two moves onto one path ...) — pure, no I/O on targets;
2. **lock** every target in sorted order (5003 after ``mutation.lock_timeout_ms``);
3. **read and plan** every file in memory: the tree's shape where the batch writes (``places.py``: a path
   under another of the batch, a file where a directory must be), preconditions (5002/5004/5005), span
   re-anchoring, merging of same-file edits, overlap detection (5006), new bytes in the file's own
   encoding/BOM/line ending;
4. **commit** through the journal (:mod:`codeplane.mutation.commit`);
5. **after_write**: the injected index refresh, so the next ``search``/``read_source`` sees the change;
6. the delta's **symbols** (of the text read and of the text written, from those texts' own facts) and, once the
   locks are released, its **affected tests**: advisory look-ups that may wait for the index, which must not keep
   another writer of the same file waiting (QA63: 5003 after 2 s behind a 25 s look-up). A look-up that fails or
   times out says so in a warning, never as "nothing affected".

Nothing is written before step 4, so every error of steps 1–3 leaves the work tree untouched. Subsystems
this engine must not import (tests, git tools, tasks) are reached through injected callables.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger
from codeplane.core.tracing import span
from codeplane.core.worktree_lock import worktree_lock
from codeplane.mutation import git_index, journal
from codeplane.mutation.commit import Commit, FileWrite, stat_key
from codeplane.mutation.delta import Delta, FileDelta
from codeplane.mutation.diffs import bounded, unified
from codeplane.mutation.document import LineEnding, lines_of
from codeplane.mutation.edits import CreateFile, DeleteFile, Edit, MoveFile, ReplaceText, UpdateSpan
from codeplane.mutation.journal import JournalMove
from codeplane.mutation.locks import PathLocks
from codeplane.mutation.places import Place, check_places
from codeplane.mutation.plan import Current, Planned, plan_create, plan_delete, plan_move, plan_update
from codeplane.mutation.repo_style import Attributes, dominant_line_ending
from codeplane.mutation.scope import AllowList, Scope, Target
from codeplane.mutation.syntax_check import python_warnings
from codeplane.repo.gitlock import git_running, index_lock, wait_for_git

log = get_logger(__name__)

#: Fault-injection hook (tests only): milliseconds to sleep before each replace of a batch.
PAUSE_ENV = "CODEPLANE_DEBUG_MUTATION_PAUSE_MS"

AfterWrite = Callable[[Sequence[str]], object]
TestsFor = Callable[[Sequence[str]], list[str]]
Fingerprint = Callable[[], str]
#: Held from before a batch's commit until its ``after_write`` returned, with every path it writes or creates
#: (``IndexService.writing``: reads that may answer as of before the batch do not wait for its refresh).
Writing = Callable[[Sequence[str]], AbstractContextManager[object]]


class SymbolsFor(Protocol):
    """The definitions the lines ``ranges`` of ``path`` touch (``path:kind:name``), read from the facts of the text
    whose SHA-256 is ``sha256``; raises when the index cannot give them (it holds another text, it lags)."""

    def __call__(self, path: str, ranges: list[tuple[int, int]], /, *, sha256: str | None = None) -> list[str]: ...


def _no_symbols(path: str, ranges: list[tuple[int, int]], /, *, sha256: str | None = None) -> list[str]:
    return []


def _no_tests(paths: Sequence[str]) -> list[str]:
    return []


def _changes(planned: Sequence[Planned], written: set[str]) -> list[str]:
    """The written files as impact selection takes them (``affected_by`` spelling): ``path:12-30,41`` with the
    changed lines of the new text for an edited file, so the tests are picked per changed definition; the
    bare path for a created, deleted or moved one."""
    lines = {p.delta.path: p.new_ranges for p in planned if p.delta.action == "updated" and p.new_ranges}
    out = []
    for path in sorted(written):
        ranges = lines.get(path)
        spans = ",".join(f"{min(a, b)}-{max(a, b)}" for a, b in ranges or ())
        out.append(f"{path}:{spans}" if spans else path)
    return out


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


class WriteChainFingerprint:
    """Default repository fingerprint: HEAD's commit id chained with every batch this engine applied.

    Cheap and deterministic for a given history; the index's content fingerprint replaces it when wired.
    """

    def __init__(self, root: Path) -> None:
        self._root = root
        self._value: str | None = None
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            if self._value is None:
                self._value = "rf_" + hashlib.sha256(git_index.head_id(self._root).encode()).hexdigest()[:32]
            return self._value

    def advance(self, changes: Sequence[tuple[str, str]]) -> None:
        with self._lock:
            blob = json.dumps([self._value, sorted(changes)]).encode()
            self._value = "rf_" + hashlib.sha256(blob).hexdigest()[:32]


@dataclass(frozen=True)
class _Resolved:
    index: int
    edit: Edit
    target: Target
    #: The destination of a move.
    dest: Target | None = None


class MutationEngine:
    """Applies batches of :data:`~codeplane.mutation.edits.Edit` atomically. Thread-safe: disjoint
    batches run in parallel, overlapping ones wait for each other's locks or fail with 5003."""

    def __init__(self, root: Path, config: MutationConfig, *, after_write: AfterWrite | None = None,
                 symbols_for: SymbolsFor | None = None, tests_for: TestsFor | None = None,
                 repo_fingerprint: Fingerprint | None = None, environ: Mapping[str, str] | None = None,
                 writing: Writing | None = None) -> None:
        self.root = root.resolve()
        self.config = config
        layout = RepoLayout(self.root)
        self.journal_dir = layout.journal_dir
        self.after_write = after_write
        self.symbols_for = symbols_for or _no_symbols
        self.tests_for = tests_for or _no_tests
        self.writing: Writing = writing or (lambda _paths: nullcontext())
        self._chain = WriteChainFingerprint(self.root) if repo_fingerprint is None else None
        self.repo_fingerprint: Fingerprint = repo_fingerprint or self._chain or (lambda: "")
        self._scope = Scope(self.root)
        self._locks = PathLocks(layout.state_dir / "locks", config.lock_timeout_ms / 1000.0)
        self._executor = ThreadPoolExecutor(max_workers=config.write_workers, thread_name_prefix="cpl-mutation")
        pause_ms = float((environ if environ is not None else os.environ).get(PAUSE_ENV, "0") or 0)
        self._commit = Commit(self.root, self.journal_dir, self._executor, pause_s=pause_ms / 1000.0)
        self._new_file_mode = 0o666 & ~_current_umask()
        #: The batches a crash left unfinished that this start rolled back (``/status`` and ``describe`` say so).
        self.rolled_back_at_start: list[str] = []
        self._line_ending: LineEnding | None = None

    def recover(self) -> list[str]:
        """Roll back every batch a crash left unfinished. Run once at startup, before serving."""
        self.rolled_back_at_start = journal.recover(self.root, self.journal_dir)
        return self.rolled_back_at_start

    @property
    def broken(self) -> str | None:
        """Why writes are refused until a restart (a batch that could not be rolled back), or ``None``."""
        batch = self._commit.broken
        return None if batch is None else f"write batch {batch} could not be rolled back; restart the server"

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    def apply(self, edits: Sequence[Edit], *, dry_run: bool = False, allow: Sequence[str] | None = None) -> Delta:
        """Apply ``edits`` as one batch and describe the effect.

        All paths are vetted and every precondition checked before the first byte is written; on any
        error nothing changed on disk. With ``dry_run`` nothing is locked or written and the delta
        carries a unified diff. ``allow`` (gitignore-style patterns) restricts the batch's paths.
        """
        self._commit.check_usable()
        if not edits:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "a batch needs at least one edit",
                                 details={"field": "edits"})
        self.check_batch_size(len(edits))
        try:
            return self._apply(edits, dry_run=dry_run, allow=allow)
        except CodePlaneError as exc:
            if len(edits) == 1:  # the only edit: its index says nothing
                exc.details.pop("edit_index", None)
            raise

    def check_batch_size(self, count: int) -> None:
        """1003 naming ``mutation.max_batch_edits`` when a batch of ``count`` edits is over it.

        The one place the limit is enforced: ``write_source``'s schema has no cap of its own, so the configured
        limit, up to its config bound, is what an agent gets (a fixed 500 in the schema refused 600 at 1000).
        """
        if count > self.config.max_batch_edits:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"{count} edits exceed mutation.max_batch_edits={self.config.max_batch_edits}",
                                 details={"field": "edits", "limit": self.config.max_batch_edits})

    def _apply(self, edits: Sequence[Edit], *, dry_run: bool, allow: Sequence[str] | None) -> Delta:
        allow_list = AllowList(allow) if allow is not None else None
        resolved = [self._resolve(i, e, allow_list) for i, e in enumerate(edits)]
        paths = _check_shape(resolved)
        if len(paths) > self.config.max_batch_files:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"{len(paths)} files exceed mutation.max_batch_files={self.config.max_batch_files}",
                                 details={"field": "edits", "limit": self.config.max_batch_files})
        mutation_id = "mut_" + uuid.uuid4().hex
        held: AbstractContextManager[object] = nullcontext() if dry_run else self._locks.acquire(paths)
        with held:
            with span("mutation.plan", files=len(paths)):
                check_places(self.root, _places(resolved))
                current = {p: self._read(p) for p in paths}
                planned = self._plan(resolved, current)
            before = self.repo_fingerprint()
            if dry_run:
                return self._delta(mutation_id, planned, before, before, dry_run=True)
            warnings: list[str] = []
            symbols = self._symbols(planned, warnings, after=False)
            writes = [w for p in planned for w in p.writes]
            if writes:
                moves = [JournalMove(p.delta.old_path, p.delta.path) for p in planned
                         if p.delta.git_mv and p.delta.old_path]
                changed = sorted({w.rel for w in writes})
                missing = self._missing_dirs(writes)
                with self.writing(changed + missing):
                    with span("mutation.commit", files=len(writes)), self._worktree_held():
                        self._commit.run(mutation_id, writes, missing, moves)
                    if self._chain is not None:
                        self._chain.advance([(p.delta.path, p.delta.file_sha256 or "") for p in planned])
                    warnings += self._refresh(changed)
            symbols |= self._symbols(planned, warnings, after=True)
            after = self.repo_fingerprint()
        # The tests walk the whole import graph (waiting for the index to catch up with what other programs
        # changed): another writer of these files need not wait for that.
        changes = _changes(planned, {w.rel for w in writes})
        tests, unknown = self._tests(changes, warnings)
        return self._delta(mutation_id, planned, before, after, dry_run=False, symbols=symbols, tests=tests,
                           tests_by=changes, tests_unknown=unknown, warnings=warnings)

    # -- steps -------------------------------------------------------------------------------------

    def _resolve(self, index: int, edit: Edit, allow: AllowList | None) -> _Resolved:
        target = self._scope.target(edit.path, allow)
        dest = self._scope.target(edit.to, allow) if isinstance(edit, MoveFile) else None
        return _Resolved(index, edit, target, dest)

    def _read(self, rel: str) -> Current:
        path = self.root / rel
        try:
            st = path.lstat()
        except (FileNotFoundError, NotADirectoryError):  # the latter: a file where a parent should be
            return Current(None, 0, None)
        limit = self.config.max_file_bytes
        if st.st_size > limit:
            raise CodePlaneError(ErrorCode.FILE_TOO_LARGE,
                                 f"{rel} is {st.st_size} bytes; mutation.max_file_bytes is {limit}",
                                 details={"path": rel, "size": st.st_size, "limit": limit})
        data = path.read_bytes()
        return Current(data, st.st_mode & 0o7777, stat_key(st))

    def _default_ending(self) -> LineEnding:
        if self._line_ending is None:
            self._line_ending = dominant_line_ending(self.root)
        return self._line_ending

    def _plan(self, resolved: Sequence[_Resolved], current: Mapping[str, Current]) -> list[Planned]:
        planned: list[Planned] = []
        done: set[str] = set()
        attributes = Attributes(self.root)
        for item in resolved:  # edit order, so the first failing edit is the one reported
            edit, rel = item.edit, item.target.rel
            if isinstance(edit, UpdateSpan | ReplaceText):
                if rel in done:
                    continue
                done.add(rel)
                group = [(r.index, r.edit) for r in resolved
                         if r.target.rel == rel and isinstance(r.edit, UpdateSpan | ReplaceText)]
                declared = attributes.declared(rel)
                # A file with no line break yet takes the one its attributes declare, as a new file would.
                ending = declared if declared is not None and declared != "as-given" else self._default_ending()
                planned.append(plan_update(item.target, current[rel], group,
                                           window=self.config.reanchor_window_lines, default_ending=ending))
            elif isinstance(edit, CreateFile):
                planned.append(plan_create(item.target, current[rel], item.index, edit,
                                           default_ending=self._default_ending(), declared=attributes.declared(rel),
                                           new_mode=self._new_file_mode))
            elif isinstance(edit, DeleteFile):
                planned.append(plan_delete(item.target, current[rel], item.index, edit.expected_file_sha256))
            else:
                assert item.dest is not None
                git_mv = git_index.can_record_move(self.root, rel, item.dest.rel)
                planned.append(plan_move(item.target, item.dest, current[rel], current[item.dest.rel], item.index,
                                         overwrite=edit.overwrite, expected_sha=edit.expected_file_sha256,
                                         git_mv=git_mv))
        return sorted(planned, key=lambda p: p.delta.path)

    def _missing_dirs(self, writes: Sequence[FileWrite]) -> list[str]:
        missing: list[str] = []
        for write in writes:
            if write.new is None or write.old is not None:
                continue
            parent = (self.root / write.rel).parent
            chain: list[str] = []
            while parent != self.root and not parent.exists():
                chain.append(parent.relative_to(self.root).as_posix())
                parent = parent.parent
            missing += [d for d in reversed(chain) if d not in missing]
        return missing

    @contextmanager
    def _worktree_held(self) -> Iterator[None]:
        """The work tree's lock (``core/worktree_lock.py``) around the commit's checks and replaces, so a git
        checkout, reset or merge never runs between them; 5003 when one holds it past ``lock_timeout_ms``.

        A git command run by another program (a terminal's ``git checkout``) takes no lock of ours, only git's
        ``index.lock``, and writes the files it checked out *after* checking them: an edit replaced in between was
        answered as applied and then overwritten by git. So the commit also waits for a live ``index.lock`` to go
        (the same bound), and then checks the preconditions against what git left."""
        timeout = self.config.lock_timeout_ms / 1000.0
        began = time.monotonic()
        lock = worktree_lock(self.root)
        if not lock.acquire(timeout=timeout):
            raise CodePlaneError(ErrorCode.MUTATION_LOCK_TIMEOUT, "a git operation is changing the work tree; retry "
                                 "shortly", details={"waited_ms": self.config.lock_timeout_ms})
        try:
            git_lock = index_lock(self.root)
            left = max(0.0, timeout - (time.monotonic() - began))
            wait_for_git(git_lock, threading.Event(), max_wait=left)
            if git_lock is not None and git_running(git_lock):
                raise CodePlaneError(ErrorCode.MUTATION_LOCK_TIMEOUT,
                                     "a git command run outside CodePlane is changing the work tree (.git/index.lock "
                                     "is held); nothing was written: retry once it has finished",
                                     details={"waited_ms": self.config.lock_timeout_ms, "git_index_lock": True})
            yield
        finally:
            lock.release()

    def _refresh(self, paths: Sequence[str]) -> list[str]:
        if self.after_write is None:
            return []
        try:
            self.after_write(paths)
        except Exception as exc:  # the files are written: report the index lag instead of failing
            log.exception("index refresh after a write failed", paths=len(paths))
            return [f"the files were written but the index refresh failed ({type(exc).__name__}: {exc}); "
                    "search may lag until the watcher catches up"]
        return []

    def _symbols(self, planned: Sequence[Planned], warnings: list[str], *, after: bool) -> set[str]:
        """The definitions the edits touch in the text read (``after=False``) or written, each from the facts of
        that very text (never another version's lines); one the index cannot give is a warning."""
        found: set[str] = set()
        for p in planned:
            path = p.delta.path if after else (p.delta.old_path or p.delta.path)
            ranges = list(p.new_ranges if after else p.old_ranges)
            if not ranges or p.delta.action == "unchanged" or (after and p.delta.action == "deleted"):
                continue
            sha = p.delta.file_sha256 if after else (p.delta.old_sha256 or p.delta.file_sha256)
            try:
                found.update(self.symbols_for(path, ranges, sha256=sha))
            except Exception as exc:  # noqa: BLE001 - symbol facts are advisory; never fail a write for them
                warnings.append(f"symbols changed unknown in {path} ({_failed('symbols_for', exc)})")
        return found

    def _tests(self, paths: Sequence[str], warnings: list[str]) -> tuple[list[str], bool]:
        """The affected tests, and whether they are unknown (the look-up failed: a warning says why)."""
        if not paths:
            return [], False
        try:
            return sorted(set(self.tests_for(paths))), False
        except Exception as exc:  # noqa: BLE001 - test mapping is advisory
            # Said in full for a text-only client, which is not shown ``tests_affected_by``.
            selection = json.dumps(list(paths)) if len(paths) <= 3 else f"tests_affected_by ({len(paths)} files)"
            warnings.append(f"affected tests unknown ({_failed('tests_for', exc)}): run them; run_test_targets("
                            f"affected_by={selection}) selects them once the index has caught up")
            return [], True

    def _delta(self, mutation_id: str, planned: Sequence[Planned], before: str, after: str, *, dry_run: bool,
               symbols: set[str] | None = None, tests: Sequence[str] = (), tests_by: Sequence[str] = (),
               tests_unknown: bool = False, warnings: Sequence[str] = ()) -> Delta:
        files: list[FileDelta] = [p.delta for p in planned]
        notes = list(warnings) + [f"{f.path} is ignored by git; confirm it was meant to be edited"
                                  for f in files if f.git_ignored]
        notes += python_warnings((p.delta.path, p.old_text, p.new_text) for p in planned)
        diff: str | None = None
        truncated = False
        if dry_run:
            diff, truncated = bounded("".join(_file_diff(p) for p in planned), self.config.max_diff_chars)
        changed = [f for f in files if f.action != "unchanged"]
        return Delta.build(
            mutation_id=mutation_id, files_changed=len(changed),
            insertions=sum(f.insertions for f in files), deletions=sum(f.deletions for f in files),
            files=tuple(files), repo_fingerprint_before=None if dry_run else before, repo_fingerprint=after,
            symbols=sorted(symbols or ()), tests=tests, tests_by=tests_by, tests_unknown=tests_unknown,
            diff=diff, diff_truncated=truncated, warnings=tuple(notes),
            short_diff="".join(p.short_diff for p in planned),
        )


def _failed(lookup: str, exc: Exception) -> str:
    """Why an advisory look-up failed, for its warning (logged; with the traceback when it is no catalog error): a
    freshness wait's 3005 says how far behind the index is."""
    if not isinstance(exc, CodePlaneError):
        log.error(f"{lookup} failed", exc_info=exc)
        return f"{type(exc).__name__}: {exc}"
    log.warning(f"{lookup} failed", error=str(exc))
    if exc.error is ErrorCode.INDEX_FRESHNESS_TIMEOUT and exc.details.get("pending_total"):
        total = int(exc.details["pending_total"])
        return f"{exc.code}: the index is catching up with {total:,} changed path{'s' if total != 1 else ''}"
    return f"{exc.code}: {exc.message}"


def _file_diff(p: Planned) -> str:
    d = p.delta
    if (p.old_text is None and d.old_sha256 and d.action != "moved") or (p.new_text is None and d.file_sha256):
        return f"Binary file {d.path} {d.action}\n"
    old_path = d.old_path or (d.path if d.action != "created" else None)
    new_path = d.path if d.action != "deleted" else None
    old = lines_of(p.old_text) if d.action != "created" else []
    new = lines_of(p.new_text) if d.action != "deleted" else []
    return unified(old_path, new_path, old, new)


def _places(resolved: Sequence[_Resolved]) -> list[Place]:
    out: list[Place] = []
    for item in resolved:
        if item.dest is not None:
            out += [Place(item.index, item.target.rel, False), Place(item.index, item.dest.rel, True)]
        else:
            out.append(Place(item.index, item.target.rel, isinstance(item.edit, CreateFile)))
    return out


def _check_shape(resolved: Sequence[_Resolved]) -> list[str]:
    """Every path the batch touches; 5006 if one path has contradictory roles."""
    roles: dict[str, list[tuple[int, str]]] = {}
    for item in resolved:
        kind = "update" if isinstance(item.edit, UpdateSpan | ReplaceText) else item.edit.kind
        roles.setdefault(item.target.rel, []).append((item.index, "move_src" if kind == "move" else kind))
        if item.dest is not None:
            if item.dest.rel == item.target.rel:
                raise CodePlaneError(ErrorCode.EDIT_CONFLICT, f"edit {item.index} moves {item.target.rel} onto itself",
                                     details={"path": item.target.rel, "edits": [item.index]})
            roles.setdefault(item.dest.rel, []).append((item.index, "move_dst"))
    for rel, uses in sorted(roles.items()):
        kinds = {k for _, k in uses}
        if len(uses) > 1 and kinds != {"update"}:
            raise CodePlaneError(
                ErrorCode.EDIT_CONFLICT,
                f"{rel} is used by edits {[i for i, _ in uses]} in ways that contradict each other "
                f"({', '.join(k for _, k in uses)}); split them into separate calls",
                details={"path": rel, "edits": [i for i, _ in uses], "roles": [k for _, k in uses]},
            )
    return sorted(roles)
