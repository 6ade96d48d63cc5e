"""Starting from a shared index artifact: fetch, verify, swap in — or refuse and build as usual.

Called by the index service before it opens its stores (so nothing else has them open; the server's
instance lock keeps other servers out); the server begins the fetch and unpack earlier, on a thread, while
it imports its subsystems (:func:`begin_early`). When ``index.artifact`` is set and the policy says so
(``if_missing``: there is no ``index.db`` yet; ``always``: replace it unless it came from this very
artifact), the artifact is fetched (:mod:`artifact_fetch`) and checked in a staging directory under
``.codeplane/`` (:mod:`artifact_verify`). Only then is it swapped in:

1. the old ``index.db`` and its ``-wal``/``-shm`` are moved aside (from here until step 3 there is *no*
   index.db: a crash means a cold build, and Tantivy is refilled because its opstamp disagrees with the
   fresh store's; a stale WAL is never left beside a new database),
2. the old ``tantivy/`` is moved aside and the staged one moved in,
3. the staged ``index.db`` is fsynced, then renamed into place — the commit point.

Any refusal (3101–3105, 3107) is logged and returned; the caller starts from whatever index it had (or none:
a cold build). The index's file rows carry no stat data (the exporter zeroed it); rows of files git shows
unchanged since the artifact's commit get this checkout's stat (:mod:`artifact_restat`), and the startup
reconcile hashes the rest: equal content is only *touched*, and exactly the files that differ from the
artifact's commit are reindexed (spec §5).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from codeplane.core.clock import iso_utc, monotonic, now_ms
from codeplane.core.config import IndexConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_file
from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger
from codeplane.core.redaction import redact_url, redact_urls
from codeplane.core.storage import storage_error
from codeplane.index import artifact_progress as fetch_progress
from codeplane.index.artifact_fetch import FetchedArtifact, FetchProgress, fetch_artifact, sweep_partials
from codeplane.index.artifact_format import INDEX_DB, TANTIVY_DIR
from codeplane.index.artifact_integrity import AFTER_READY, BEFORE_ADOPT, integrity_mode
from codeplane.index.artifact_restat import GitCleanState, git_clean_state, restat_clean_files
from codeplane.index.artifact_verify import IntegrityCheck, unpack_checked, verify_unpacked
from codeplane.index.facts_api import FactIndexer
from codeplane.index.store import mark_checked

log = get_logger(__name__)

ORIGIN_META_KEY = "origin"
STAGING_DIR = "artifact-staging"
REPLACED_DIR = "index-replaced"
CACHE_DIR = fetch_progress.CACHE_DIR


@dataclass(frozen=True)
class AdoptOutcome:
    #: ``adopted``, ``skipped`` or ``refused``.
    result: str
    reason: str
    origin: dict[str, Any] | None = None
    #: The catalog payload of a refusal (``code``, ``error``, ``message``, ``details``).
    error: dict[str, Any] | None = None

    def after_adoption(self, problem: str, warnings: list[str]) -> AdoptOutcome:
        """This start's outcome once the index it adopted proved unusable after the swap (its ``index.db`` failed
        SQLite's check after ``/ready``, or the store's open): an adoption becomes a refusal (3104) naming the
        artifact (source, sha256, commit), since the index built from disk instead keeps nothing of it (QA62 #7),
        and ``warnings`` gets a line saying so. Any other outcome is returned as it is."""
        if self.result != "adopted":
            return self
        origin = self.origin or {}
        identity: dict[str, Any] = {key: origin[key] for key in ("source", "sha256", "commit") if key in origin}
        error = CodePlaneError(ErrorCode.ARTIFACT_INVALID, problem, details=identity)
        warnings.append(f"index artifact refused after adoption: {problem}; built from disk instead")
        log.warning("index artifact refused after adoption; building the index from disk", reason=problem, **identity)
        return AdoptOutcome("refused", problem, error=error.to_payload())


def cache_dir(layout: RepoLayout) -> Path:
    return layout.state_dir / CACHE_DIR


def read_origin(index_db: Path) -> dict[str, Any] | None:
    """Where an existing ``index.db`` came from (``None``: built here)."""
    if not index_db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{index_db}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (ORIGIN_META_KEY,)).fetchone()
        finally:
            conn.close()
        value = json.loads(row[0]) if row else None
    except (sqlite3.DatabaseError, json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def should_adopt(layout: RepoLayout, config: IndexConfig) -> str | None:
    """Why not to adopt (``None``: go ahead, subject to the already-adopted check)."""
    if not config.artifact:
        return "index.artifact is not set"
    if config.artifact_adopt == "if_missing" and layout.index_db.is_file():
        return "a local index exists (index.artifact_adopt: if_missing)"
    return None


def fetch_configured(root: Path, layout: RepoLayout, config: IndexConfig,
                     progress: FetchProgress | None = None) -> FetchedArtifact:
    """``index.artifact`` as a local file and its expected sha256 (downloads land in the cache)."""
    if not config.artifact:
        raise ValueError("index.artifact is not set")
    return fetch_artifact(config.artifact, root=root, cache_dir=cache_dir(layout), pinned=config.artifact_sha256,
                          timeout=config.artifact_timeout_sec, retries=config.artifact_retries,
                          ancestors=config.artifact_ancestors, progress=progress)


def _record_origin(index_db: Path, origin: dict[str, Any]) -> None:
    conn = sqlite3.connect(index_db, isolation_level=None)
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        # The staging copy (a crash discards it): no journal, no fsync here — swap_in fsyncs it once.
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (ORIGIN_META_KEY, json.dumps(origin)))
    finally:
        conn.close()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def swap_in(staging: Path, layout: RepoLayout) -> None:
    """Replace ``index.db`` and ``tantivy/`` with the staged ones (see the module docstring's order)."""
    replaced = layout.state_dir / f"{REPLACED_DIR}-{uuid.uuid4().hex[:8]}"
    replaced.mkdir()
    for suffix in ("", "-wal", "-shm"):
        old = Path(f"{layout.index_db}{suffix}")
        if old.exists():
            os.replace(old, replaced / old.name)
    if layout.tantivy_dir.exists():
        os.replace(layout.tantivy_dir, replaced / TANTIVY_DIR)
    os.replace(staging / TANTIVY_DIR, layout.tantivy_dir)
    _fsync(staging / INDEX_DB)  # its bytes are on disk before the rename that commits them (mostly flushed already)
    _fsync(layout.state_dir)
    os.replace(staging / INDEX_DB, layout.index_db)
    _fsync(layout.state_dir)
    shutil.rmtree(replaced, ignore_errors=True)


def _clean_leftovers(layout: RepoLayout) -> None:
    """What a crash mid-adoption left behind (never the live index: that is renamed in last), and the partial
    downloads of a fetch that was killed."""
    if not layout.state_dir.is_dir():
        return
    for path in layout.state_dir.iterdir():
        if path.name == STAGING_DIR or path.name.startswith(f"{REPLACED_DIR}-"):
            shutil.rmtree(path, ignore_errors=True)
    removed = clean_partial_downloads(layout)
    if removed:
        log.info("removed what a killed artifact download left", files=removed)


def clean_partial_downloads(layout: RepoLayout) -> list[str]:
    """Remove the partial downloads (and the progress record) a killed fetch left in the artifact cache; the
    names removed. A download in progress (this process's or another's) is left alone."""
    cache = cache_dir(layout)
    if not cache.is_dir():
        return []
    return [*sweep_partials(cache), *fetch_progress.sweep(cache)]


@dataclass(frozen=True)
class _Unpacked:
    fetched: FetchedArtifact
    #: ``{part: (sha256, size)}`` in the staging directory; ``None``: the local index came from this artifact.
    written: dict[str, tuple[str, int]] | None
    #: What git vouches for in this checkout, taken while the archive unpacked.
    git: GitCleanState | None = None
    #: ``index.db``'s integrity check, running (``None``: after ``/ready`` instead, or nothing to check).
    integrity: IntegrityCheck | None = None


#: Unpacking begun early (:func:`begin_early`), by staging directory; taken by :func:`adopt_configured`.
_early: dict[Path, Future[_Unpacked]] = {}
#: Fetches that already failed in this process (:func:`fetch_failed`), by staging directory.
_failed: dict[Path, CodePlaneError] = {}
_early_lock = threading.Lock()


def _fetch_and_unpack(root: Path, layout: RepoLayout, config: IndexConfig, staging: Path) -> _Unpacked:
    fetched = fetch_configured(root, layout, config)
    current = read_origin(layout.index_db)
    if current is not None and current.get("sha256") == fetched.sha256:
        # The sidecar names the index already adopted: the file itself is hashed all the same (a fraction of an
        # unpack), or a truncated or swapped copy beside a copied sidecar was "already adopted" unread (QA44 §6).
        found = sha256_file(fetched.path)
        if found != fetched.sha256:
            raise CodePlaneError(ErrorCode.ARTIFACT_CHECKSUM_MISMATCH,
                                 f"{fetched.path.name} has sha256 {found}, expected {fetched.sha256}",
                                 details={"expected": fetched.sha256, "found": found})
        return _Unpacked(fetched, None)
    staging.mkdir(parents=True)
    # git status (≈0.2 s on Django) overlaps the unpack, which spends its time in zstd and sha256 without the GIL.
    git_state: Future[GitCleanState | None] = Future()

    def take_git_state() -> None:
        try:
            git_state.set_result(git_clean_state(root))
        except Exception as exc:  # noqa: BLE001 - re-raised below by result(); the adoption refuses with it
            git_state.set_exception(exc)

    threading.Thread(target=take_git_state, name="codeplane-artifact-git", daemon=True).start()
    written, integrity = unpack_checked(fetched.path, fetched.sha256, staging,
                                        integrity=integrity_mode(config) == BEFORE_ADOPT)
    try:
        return _Unpacked(fetched, written, git_state.result(), integrity)
    except BaseException:
        if integrity is not None:
            integrity.cancel()
        raise


def begin_early(root: Path, config: IndexConfig) -> None:
    """Fetch, checksum and unpack ``index.artifact`` on a thread now, if it is to be adopted.

    The server calls this before its slow imports, so the costliest part of an adoption (decompressing and
    hashing ``index.db``, which release the GIL) overlaps with them; the index service's start then only
    verifies and swaps (:func:`adopt_configured` picks the result up, failures included). Nothing the server
    uses is touched: only the staging directory is written.
    """
    layout = RepoLayout(root)
    if should_adopt(layout, config) is not None:
        return
    with _early_lock:
        if layout.state_dir / STAGING_DIR in _failed:  # cpl up's download failed: adoption refuses with that
            return
    _clean_leftovers(layout)
    staging = layout.state_dir / STAGING_DIR
    future: Future[_Unpacked] = Future()
    with _early_lock:
        _early[staging] = future

    def run() -> None:
        try:
            future.set_result(_fetch_and_unpack(root, layout, config, staging))
        except Exception as exc:  # noqa: BLE001 - delivered to adopt_configured, which refuses with it
            future.set_exception(exc)

    threading.Thread(target=run, name="codeplane-artifact", daemon=True).start()


def require_known_commit(root: Path, commit: str, source: str) -> None:
    """Refuse (3107) an artifact whose commit this repository does not have: another repository's index.

    Its answers would come out right (the startup reconcile reindexes every file that differs), but status
    would name a commit that is not here, and the "reuse" is a cold build in disguise. A shallow clone may lack
    an ancestor the artifact was built at, so there a missing commit proves nothing and the artifact is kept.
    """
    try:
        repo = pygit2.Repository(str(root))
        if repo.is_shallow or commit in repo:
            return
    except (pygit2.GitError, ValueError, TypeError) as exc:
        log.info("could not look up the artifact's commit; adopting it", commit=commit, reason=str(exc))
        return
    raise CodePlaneError(ErrorCode.ARTIFACT_FOREIGN_COMMIT,
                         f"{source} was built at commit {commit}, which is not in this repository (an index of "
                         "another repository?)", details={"commit": commit, "source": source})


def fetch_failed(layout: RepoLayout, error: CodePlaneError) -> None:
    """Note that fetching ``index.artifact`` failed in this process (``cpl up``'s download, before the server
    starts): the server's adoption then refuses with this error, which it records (``/status``, the log) like
    any refusal, instead of fetching again (after the same timeouts, to fail the same way)."""
    with _early_lock:
        _failed[layout.state_dir / STAGING_DIR] = error


def adopt_configured(root: Path, layout: RepoLayout, config: IndexConfig,
                     indexers: Sequence[FactIndexer]) -> AdoptOutcome:
    """Adopt ``index.artifact`` if configured and wanted; never raises for a bad or missing artifact."""
    staging = layout.state_dir / STAGING_DIR
    with _early_lock:
        early = _early.pop(staging, None)
        failed = _failed.pop(staging, None)
    if failed is not None and early is None and config.artifact:
        log.warning("index artifact refused; building the index from disk", code=failed.code,
                    reason=failed.message)
        return AdoptOutcome("refused", failed.message, error=failed.to_payload())
    if early is None:
        _clean_leftovers(layout)
    why_not = should_adopt(layout, config)
    if why_not is not None and early is None:
        return AdoptOutcome("skipped", why_not)
    started = monotonic()
    try:
        unpacked = early.result() if early is not None else _fetch_and_unpack(root, layout, config, staging)
        fetched = unpacked.fetched
        if unpacked.written is None:
            return AdoptOutcome("skipped", "the local index already came from this artifact",
                                origin=read_origin(layout.index_db))
        unpacked_at = monotonic()
        manifest = verify_unpacked(staging, unpacked.written, indexers, unpacked.integrity)
        require_known_commit(root, manifest.commit, fetched.source)
        verified_at = monotonic()
        vouched = restat_clean_files(staging / INDEX_DB, manifest, unpacked.git)
        restated_at = monotonic()
        origin = {"kind": "artifact", "source": fetched.source, "sha256": fetched.sha256,
                  "commit": manifest.commit, "built_by": manifest.versions.get("codeplane"),
                  "files": len(manifest.files), "stat_from_git": vouched, "adopted_at": iso_utc(now_ms()),
                  # when SQLite's full integrity check ran (or runs): before_adopt / after_ready
                  "integrity": integrity_mode(config),
                  # checked table by table before adoption: the whole file's page accounting runs after ready
                  **({"whole_file_check": AFTER_READY}
                     if unpacked.integrity is not None and not unpacked.integrity.whole_file else {}),
                  # what the index start spent: fetch and unpack (unless begun early) + checks + swap
                  "adopt_ms": int((restated_at - started) * 1000),
                  # where it went: waiting for the unpack, the checks (index.db's integrity check among them
                  # when it runs before adoption), the rows' stat data; the swap is in the startup's time
                  "adopt_phases_ms": {"unpack_wait": int((unpacked_at - started) * 1000),
                                      "verify": int((verified_at - unpacked_at) * 1000),
                                      "restat": int((restated_at - verified_at) * 1000)}}
        _record_origin(staging / INDEX_DB, origin)
        swapping = monotonic()
        swap_in(staging, layout)
        log.info("artifact swapped in", ms=int((monotonic() - swapping) * 1000))
        # verify_unpacked waited for quick_check, or the server runs it after ready (withholding the clean-close marker
        # until it passes): the store's open need not run it now
        mark_checked(layout.index_db)
        if fetched.path.parent == cache_dir(layout):  # a download has served its purpose
            fetched.path.unlink(missing_ok=True)
    except CodePlaneError as exc:
        log.warning("index artifact refused; building the index from disk", code=exc.code, reason=exc.message)
        return AdoptOutcome("refused", exc.message, error=exc.to_payload())
    except Exception as exc:  # a bad artifact (or a bug here) must not stop the server starting
        full = storage_error(exc, doing="adopting the index artifact", path=layout.state_dir,
                             outcome="the index is built from disk")
        if full is not None:  # the disk, not the artifact (writing the staged copy, the swap)
            log.warning("index artifact refused; building the index from disk", code=full.code, reason=full.message)
            return AdoptOutcome("refused", full.message, error=full.to_payload())
        log.exception("index artifact could not be adopted; building the index from disk",
                      reason=redact_urls(str(exc)))
        error = CodePlaneError(ErrorCode.ARTIFACT_INVALID, redact_urls(f"{type(exc).__name__}: {exc}"))
        return AdoptOutcome("refused", error.message, error=error.to_payload())
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    log.info("adopted index artifact", source=origin["source"], commit=origin["commit"], sha256=origin["sha256"],
             stat_from_git=vouched)
    return AdoptOutcome("adopted", f"adopted {fetched.source}", origin=origin)


def index_source(origin: dict[str, Any] | None, outcome: AdoptOutcome | None,
                 integrity: dict[str, Any] | None = None, *, rebuilt: str | None = None) -> dict[str, Any]:
    """The ``source`` field of the index status: where this index came from, any refusal this start, the
    state of an adopted artifact's integrity check when it runs after ready, and why this run found
    ``index.db`` unusable and built it from disk (``rebuilt_from_disk``)."""
    source: dict[str, Any] = dict(origin) if origin else {"kind": "local"}
    if isinstance(source.get("source"), str):  # an index.db adopted before URLs were redacted on the way in
        source["source"] = redact_url(source["source"])
    if rebuilt is not None and not origin:
        source["rebuilt_from_disk"] = rebuilt
    if integrity is not None and origin:
        source["integrity_check"] = integrity
    if outcome is not None and outcome.result == "refused":
        source["artifact_refused"] = outcome.error
    return source
