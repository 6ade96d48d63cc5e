"""The composition root: every subsystem service a tool handler may reach, built once per server.

Subsystems add a typed attribute here and a :class:`Lifecycle` entry in ``build_services``; tools reach
them through ``ctx.services``. Nothing below ``server`` imports this module.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Generic, TypeVar

import anyio

from codeplane.core.artifacts import ArtifactStore
from codeplane.core.bytecode import prune_sourceless
from codeplane.core.calls import CallObserver
from codeplane.core.clock import now_ms
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.core.stores import Recovery
from codeplane.index.service import IndexService
from codeplane.index.structural.service import StructuralService
from codeplane.mutation import MutationEngine
from codeplane.repo.workspace import head_info
from codeplane.server.boot_index import EarlyIndex, build_index
from codeplane.server.observability import Observability
from codeplane.tasks import Ledger, RepoSnapshot, TaskTracker, TrackerSettings
from codeplane.tasks.inspection import quarantine_warnings

if TYPE_CHECKING:
    from codeplane.analysis import SemanticDiffService
    from codeplane.git import GitService
    from codeplane.lint import LintService
    from codeplane.refactor.service import RefactorService
    from codeplane.testing import TestingService

T = TypeVar("T")


@dataclass
class Readiness:
    """Whether the server can answer index-backed queries; ``/ready`` reports it (through :meth:`now`)."""

    ready: bool = False
    reason: str = "starting"
    #: Whether the index still answers: it goes back to building when an adopted artifact fails the integrity
    #: check it owed after ready (``index/artifact_integrity.py``), and queries then answer 3004.
    index_ready: Callable[[], bool] = lambda: True
    #: Why a ready index went back to building, when the index knows (a damaged or deleted ``index.db``).
    rebuilding_why: Callable[[], str | None] = lambda: None

    def now(self) -> tuple[bool, str]:
        if self.ready and not self.index_ready():
            return False, self.rebuilding_why() or \
                "index: rebuilding from disk (the adopted artifact failed its integrity check)"
        return self.ready, self.reason


class Deferred(Generic[T]):
    """A service built, imports included, on first use rather than at boot.

    For services whose own modules no tool module imports at boot (``refactor``: ~50 ms of imports;
    ``analysis``: ~25 ms, ``tools/analysis.py`` imports it inside its functions), so the boot can leave them out
    of what it spends before ``/ready``; ``lint`` too, though ``tools/lint.py``'s result models still import its
    package; ``testing`` and ``git``, whose packages load their services lazily while the tool modules import
    only the result models (~30 ms and ~10 ms of imports, and testing's store opening and orphan reaping).
    :meth:`Services.warm_deferred` builds them on a daemon thread once the server serves; a call that comes first
    builds it itself (one build, under the lock), so every tool works from ``/ready`` on, the first such call
    possibly slower.
    """

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None
        self._on_build: list[Callable[[T], None]] = []

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                if self._value is None:
                    built = self._build()
                    # Before anyone else can reach it: a listener (metrics) sees everything the service does.
                    for hook in self._on_build:
                        hook(built)
                    self._value = built
                value = self._value
        return value

    def on_build(self, hook: Callable[[T], None]) -> None:
        """Run ``hook`` on the service when it is built (now, if it is): subscriptions without building it."""
        with self._lock:
            value = self._value
            if value is None:
                self._on_build.append(hook)
        if value is not None:
            hook(value)

    def peek(self) -> T | None:
        """The service if something has built it, without building it (a stop has nothing to stop otherwise)."""
        return self._value


@dataclass(frozen=True)
class Lifecycle:
    """A named start/stop pair run by the app lifespan, in order (stop in reverse)."""

    name: str
    start: Callable[[], Awaitable[None]]
    stop: Callable[[], Awaitable[None]]


@dataclass
class Services:
    root: Path
    config: CodePlaneConfig
    repo_id: str
    layout: RepoLayout = field(init=False)
    pid: int = field(default_factory=os.getpid)
    started_at_ms: int = field(default_factory=now_ms)
    readiness: Readiness = field(default_factory=Readiness)
    observers: list[CallObserver] = field(default_factory=list)
    lifecycles: list[Lifecycle] = field(default_factory=list)
    #: Set when the server stops while the lifecycles start: a start's bounded wait (the index's first reconcile)
    #: ends at once, so a Ctrl-C during a long startup reconcile stops the server without waiting up to a minute.
    stopping: threading.Event = field(default_factory=threading.Event)
    #: Named sections of ``/status`` and ``describe`` (``index``, ``tasks``, ...), computed on demand.
    status_sections: dict[str, Callable[[], dict[str, object]]] = field(default_factory=dict)
    last_error: str | None = None
    #: Repository truth and the lexical index (file table, epochs, watcher, Tantivy); see ``index/``.
    index: IndexService = field(init=False)
    #: Structural facts (tree-sitter defs/refs/scopes/imports, contexts) and their bounded queries (§7.3, §8.4).
    structural: StructuralService = field(init=False)
    #: The one writer of repository files (spec §9); ``write_source`` and the refactor engine use it.
    mutation: MutationEngine = field(init=False)
    #: Sessions, tasks, budgets and the ledger (§12); also the call observer that records every call.
    tasks: TaskTracker = field(init=False)
    #: Content-addressed store for large outputs (test logs, full diffs) under ``.codeplane/artifacts``.
    artifacts: ArtifactStore = field(init=False)
    #: Test discovery, runs and impact selection (§11).
    deferred_testing: Deferred[TestingService] = field(init=False)
    #: Rename/move/impact previews and their atomic application (§8); plans live in memory. See ``refactor``.
    deferred_refactor: Deferred[RefactorService] = field(init=False)
    #: The repository's linters and their diagnostics (§23.4); their fixes go through ``mutation``.
    deferred_lint: Deferred[LintService] = field(init=False)
    #: ``semantic_diff`` (§23.7): structural changes between revisions or epochs, with blast radius.
    deferred_analysis: Deferred[SemanticDiffService] = field(init=False)
    #: Git over pygit2 (§10): status/diff/log, commits, branches, merges, rebases, remotes, recovery points.
    deferred_git: Deferred[GitService] = field(init=False)
    #: Metrics, per-call traces and the live window behind ``/metrics`` and ``/dashboard`` (§13).
    observability: Observability = field(init=False)

    def __post_init__(self) -> None:
        self.layout = RepoLayout(self.root)

    def status(self) -> dict[str, object]:
        """Every section; one that fails (a deferred service whose build failed) reports its error in its place,
        so ``/status`` answers whatever else is wrong."""
        out: dict[str, object] = {}
        for name, section in sorted(self.status_sections.items()):
            try:
                out[name] = section()
            except Exception as exc:  # noqa: BLE001 - shown to the operator, not raised
                out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        return out

    @property
    def testing(self) -> TestingService:
        """The tests service, built on first use (:class:`Deferred`)."""
        return self.deferred_testing.get()

    @property
    def git(self) -> GitService:
        """The git service, built on first use (:class:`Deferred`)."""
        return self.deferred_git.get()

    def tests_for(self, paths: Sequence[str], ranges: Mapping[str, Sequence[tuple[int, int]]] | None = None,
                  ) -> list[str]:
        """The tests service's ``tests_for``, for the mutation, refactor and semantic diff hooks: held from the
        wiring on, it builds the service at its first use rather than at theirs."""
        return self.testing.tests_for(paths, ranges)

    def tests_evidence(self) -> int:
        """The generation of the coverage evidence ``tests_for`` narrows by (a report keyed by it is rebuilt after
        a coverage run)."""
        return self.testing.coverage.generation

    @property
    def refactor(self) -> RefactorService:
        """The refactor service, built on first use (:class:`Deferred`)."""
        return self.deferred_refactor.get()

    @property
    def lint(self) -> LintService:
        """The lint service, built on first use (:class:`Deferred`)."""
        return self.deferred_lint.get()

    @property
    def analysis(self) -> SemanticDiffService:
        """The semantic diff service, built on first use (:class:`Deferred`)."""
        return self.deferred_analysis.get()

    def warm_deferred(self) -> None:
        """Build the deferred services now (the server calls it on a daemon thread once it serves)."""
        # Git's first status (~0.4 s on Django: the index parsed, every directory listed) on a thread of its own, so
        # the services below do not wait for it; started after /ready, it no longer takes the boot's CPU. A failure
        # only means a slower first call.
        threading.Thread(target=lambda: self.git.warm_caches(), name="cpl-git-warm",  # noqa: PLW0108 - built there
                         daemon=True).start()
        self.deferred_testing.get()
        self.deferred_git.get()
        self.deferred_refactor.get()
        self.deferred_analysis.get()
        self.deferred_lint.get()
        self.structural.warm()  # last: a first map_repo then reads no table (QA48: the first call cost 2-25x)


def _wire_index(services: Services, early: EarlyIndex | None) -> None:
    services.index = early.index if early is not None else build_index(services.root, services.config)
    index = services.index
    services.readiness = Readiness(
        ready=False, reason="index: first reconcile running", index_ready=lambda: index.ready,
        rebuilding_why=lambda: f"index: rebuilding from disk ({index.rebuilt})"
        if index.state == "rebuilding" and index.rebuilt else None)

    def mark_ready() -> None:
        services.readiness.ready = True
        services.readiness.reason = "index ready"

    services.index.on_ready(mark_ready)

    async def start() -> None:
        # Open/repair the stores and queue the startup reconcile (begun by the boot, before its imports, when it
        # passed an EarlyIndex); wait (bounded) so a warm start announces a ready server. A huge cold tree keeps
        # building in the background; queries answer 3004 meanwhile.
        await anyio.to_thread.run_sync(services.index.start if early is None else early.started)
        await anyio.to_thread.run_sync(_wait_ready, services)

    async def stop() -> None:
        await anyio.to_thread.run_sync(services.index.stop)

    services.lifecycles.append(Lifecycle("index", start, stop))
    services.status_sections["index"] = services.index.status


def _wait_ready(services: Services) -> None:
    """Wait (bounded by ``startup_wait_sec``) for the startup reconcile, or until the server is stopping."""
    deadline = monotonic() + services.config.index.startup_wait_sec
    while not services.stopping.is_set():
        left = deadline - monotonic()
        if left <= 0 or services.index.wait_ready(min(left, 0.1)):
            return


def _wire_structural(services: Services) -> None:
    # The indexer itself is registered by build_index; this is the read side.
    services.structural = StructuralService(services.index, services.root, services.layout.index_db)
    services.status_sections["structural"] = services.structural.status


def _wire_mutation(services: Services, early: EarlyIndex | None) -> None:
    # after_write: a write returns only once search and list_files see it. symbols_for/tests_for fill the
    # delta's symbols_changed/tests_affected; tests_for builds the tests service at its first call. writing: reads
    # that may answer as of before a batch do not wait for its refresh.
    services.mutation = MutationEngine(
        services.root, services.config.mutation, after_write=services.index.refresh_paths,
        symbols_for=services.structural.symbols_touching,
        tests_for=services.tests_for, writing=services.index.writing)

    async def recover() -> None:
        # First lifecycle: an unfinished batch from a crash is rolled back before anything reads files (an
        # EarlyIndex ran the same recovery before it started the index: wait for it and raise its error).
        services.mutation.rolled_back_at_start = await anyio.to_thread.run_sync(
            services.mutation.recover if early is None else early.recovered)

    async def close() -> None:
        await anyio.to_thread.run_sync(services.mutation.close)

    services.lifecycles.insert(0, Lifecycle("mutation", recover, close))
    # Writes refused until a restart must show where an operator looks (/status, `cpl status`), not only in the
    # answers of the writes that fail.
    # A batch a crash cut short, rolled back at this start, is said there too: the agent whose write died mid-call
    # (and its operator) learn that none of its files changed, which only the log said.
    services.status_sections["mutation"] = lambda: {
        **({"broken": broken} if (broken := services.mutation.broken) else {}),
        **({"rolled_back_at_start": rolled[:20]} if (rolled := services.mutation.rolled_back_at_start) else {})}


def _rolled_back_line(batches: list[str]) -> str:
    shown = ", ".join(batches[:3]) + (f" and {len(batches) - 3} more" if len(batches) > 3 else "")
    return (f"{len(batches)} write batch{'es' if len(batches) > 1 else ''} a crash left unfinished "
            f"{'were' if len(batches) > 1 else 'was'} rolled back at this start ({shown}): none of "
            f"{'their' if len(batches) > 1 else 'its'} files changed")


def _wire_tasks(services: Services) -> None:
    config = services.config.tasks
    services.artifacts = ArtifactStore(services.layout.artifacts_dir, config.artifact_retention_hours)

    def snapshot() -> RepoSnapshot:
        return RepoSnapshot(git_head=head_info(services.root).head, index_version=services.index.epoch)

    services.tasks = TaskTracker(Ledger(services.layout.ledger_db), TrackerSettings.from_config(config),
                                 snapshot=snapshot, artifacts=services.artifacts)
    services.observers.append(services.tasks)
    services.status_sections["tasks"] = services.tasks.status
    maintenance: list[asyncio.Task[None]] = []

    async def maintain() -> None:
        # A maintenance step that fails at every run (a ledger retention past SQLite's integers) was only logged:
        # ``cpl status`` said "last error: none". It is the last error until a run succeeds.
        before = services.tasks.maintenance_error
        await anyio.to_thread.run_sync(services.tasks.maintain)
        if services.tasks.maintenance_error is not None:
            services.last_error = services.tasks.maintenance_error
        elif before is not None and services.last_error == before:
            services.last_error = None

    async def maintain_forever() -> None:
        while True:
            await anyio.sleep(config.maintenance_interval_sec)
            await maintain()

    async def start() -> None:
        # Restart semantics (§12.4): every task a previous server left OPEN becomes CLOSED_INTERRUPTED.
        await anyio.to_thread.run_sync(services.tasks.start)
        await maintain()
        maintenance.append(asyncio.get_running_loop().create_task(maintain_forever()))

    async def stop() -> None:
        for job in maintenance:
            job.cancel()
        await anyio.to_thread.run_sync(services.tasks.stop)

    services.lifecycles.append(Lifecycle("tasks", start, stop))


def _wire_testing(services: Services) -> None:
    def build() -> TestingService:
        # Impact selection (§11.9) reads import facts through the index's consistent read connection, as of before a
        # write batch still in flight (another call's: selecting for it before it answered is linearizable).
        from codeplane.testing import ImpactIndex, TestingService
        from codeplane.testing.discovery import indexed_paths, written_since

        read = functools.partial(services.index.read_connection, skip_writes=True)
        return TestingService(services.root, services.config.tests, services.layout, services.artifacts,
                              impact=ImpactIndex(read),
                              files_version=lambda: services.index.epoch if services.index.ready else None,
                              files_source=lambda: indexed_paths(read),
                              files_written_since=lambda epoch: written_since(read, epoch),
                              refresh_files=services.index.refresh_if_changed)

    services.deferred_testing = Deferred(build)
    services.status_sections["tests"] = lambda: services.testing.status()  # noqa: PLW0108 - built on first use

    async def start() -> None:
        # A file standing where the bytecode tree belongs is damaged derived state: removed now, not at the
        # first test run (prune_sourceless drops it).
        pycache = services.layout.pycache_dir
        if pycache.exists() and not pycache.is_dir():
            await anyio.to_thread.run_sync(prune_sourceless, pycache)

    async def stop() -> None:
        # Kill every runner process group before the server exits: no orphaned test processes (none if no call
        # or warm-up built the service: it is not built just to be closed).
        testing = services.deferred_testing.peek()
        if testing is not None:
            await anyio.to_thread.run_sync(testing.close)

    services.lifecycles.append(Lifecycle("testing", start, stop))


def _wire_git(services: Services) -> None:
    def build() -> GitService:
        # A git operation that moves HEAD or rewrites files reconciles the index before its tool returns (§10).
        from codeplane.git import GitService

        return GitService(services.root, services.config.git, after_tree_change=services.index.reconcile,
                          while_writing=services.index.holding)

    services.deferred_git = Deferred(build)


def _wire_refactor(services: Services) -> None:
    def build() -> RefactorService:
        from codeplane.refactor.service import RefactorService

        return RefactorService.for_repository(services.root, services.config.refactor, services.index,
                                              services.mutation, tests_for=services.tests_for)

    services.deferred_refactor = Deferred(build)
    services.status_sections["refactor"] = lambda: services.refactor.status()  # noqa: PLW0108 - built on first use


def _wire_observability(services: Services) -> None:
    # Last: it wraps the task tracker's observer and subscribes to the index and test runs.
    from codeplane.server.observability.wiring import wire

    services.observability = wire(services)


def _wire_storage(services: Services) -> None:
    # Damage found at open (issue 24): derived stores rebuilt or kept in memory, a ledger quarantined. The
    # index reports its own rebuilds in its section; this one gathers the rest, for /status and cpl status.
    def status() -> dict[str, object]:
        recoveries = [r for r in (services.testing.costs.recovery, services.testing.store.recovery,
                                  services.testing.coverage.recovery) if r]
        ledger = services.tasks.ledger.quarantined
        if ledger is not None and ledger.missing:
            recoveries.append(Recovery("ledger.db", "missing", f"{ledger.reason}; a new chain records it"))
        elif ledger is not None:
            recoveries.append(Recovery("ledger.db", "quarantined", f"{ledger.reason}; moved to {ledger.file} "
                                       f"(sha256 {ledger.sha256})"))
        warnings = [r.line() for r in recoveries] + quarantine_warnings(services.layout.state_dir,
                                                                       skip=ledger.file if ledger else None)
        warnings += [f"ledger.db was edited outside CodePlane: {sign} (recorded in the ledger; `cpl doctor` "
                     "checks the whole chain)" for sign in services.tasks.ledger.tampering]
        if rolled_back := services.mutation.rolled_back_at_start:
            warnings.append(_rolled_back_line(rolled_back))
        return {"warnings": warnings, "recoveries": [r.__dict__ for r in recoveries]}

    services.status_sections["storage"] = status


def _wire_analysis(services: Services) -> None:
    # Blob facts persist in .codeplane/semantic_diff.db (a cache: dropped when damaged or out of date).
    def build() -> SemanticDiffService:
        from codeplane.analysis import SemanticDiffService

        return SemanticDiffService(services.root, services.index, tests_for=services.tests_for,
                                   evidence=services.tests_evidence,
                                   cache_db=services.layout.state_dir / "semantic_diff.db")

    services.deferred_analysis = Deferred(build)


def _wire_lint(services: Services) -> None:
    # Discovery reads the index's file list once it is ready rather than walking the tree again.
    def build() -> LintService:
        from codeplane.lint import LintService
        from codeplane.testing.discovery import indexed_paths

        return LintService(
            services.root, services.config.lint, services.mutation,
            files_source=lambda: indexed_paths(services.index.read_connection) if services.index.ready else None)

    services.deferred_lint = Deferred(build)

    async def nothing() -> None:
        return None

    async def close() -> None:
        # A linter still running when the server stops is killed with its process group, not waited for.
        lint = services.deferred_lint.peek()
        if lint is not None:
            lint.close()

    services.lifecycles.append(Lifecycle("lint", nothing, close))


def build_services(root: Path, config: CodePlaneConfig, repo_id: str, *, early: EarlyIndex | None = None) -> Services:
    """Every service, wired; ``early``: the index the boot already started (``boot_index``), else one built here."""
    services = Services(root=root, config=config, repo_id=repo_id)
    _wire_index(services, early)
    _wire_structural(services)
    _wire_mutation(services, early)
    _wire_tasks(services)
    _wire_testing(services)
    _wire_refactor(services)
    _wire_lint(services)
    _wire_analysis(services)
    _wire_git(services)
    _wire_storage(services)
    _wire_observability(services)
    return services
