"""Getting an index artifact from where the user configured it (``index.artifact``), and nowhere else (D1).

A source is a local path (relative to the repository root), an ``https://`` URL (``http://`` only to a
loopback host), or a URL template with ``{commit}``, tried for HEAD and then its first-parent ancestors
(``index.artifact_ancestors``): a branch ahead of the default branch finds the newest artifact CI built
below it. The expected sha256 is the pinned ``index.artifact_sha256`` or the sidecar ``<source>.sha256``
(``sha256sum`` format, as ``cpl index export`` writes it; for a URL, ``.sha256`` goes on its path and the query
stays, so a presigned URL's signature is kept); without either the artifact is refused (3102), unless there is no
artifact at the URL either (3101, not found). A URL is only
ever shown redacted (``core/redaction.py``): its password and query-string signatures or tokens never reach a
message, ``/status`` or the log.
Downloads go through httpx with ``index.artifact_retries`` retries (with backoff) on timeouts, connection
errors and 5xx, into a content-addressed cache under ``.codeplane/artifact-cache/`` (so ``cpl up``'s prefetch
and the server's adoption download once). A download is written to a ``.<uuid>.part`` file locked while it is open;
one a killed fetch left is removed by the next fetch, the next start and ``cpl doctor --fix`` (:func:`sweep_partials`).
A full disk while downloading is 5010 ``STORAGE_FULL``. ``index.artifact_timeout_sec`` bounds the whole fetch (sidecars,
every candidate and attempt): a host that trickles bytes cannot hold the server's start longer than that
(a per-read timeout let 16 KiB every 0.5 s take 52 s with 5 s set); a read that stalls for
:data:`STALL_SEC` is retried sooner.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlparse, urlsplit

import portalocker
import pygit2

from codeplane.core.clock import monotonic
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_file
from codeplane.core.redaction import redact_url, redact_urls
from codeplane.core.storage import storage_error
from codeplane.index.artifact_format import SUFFIX

if TYPE_CHECKING:
    import httpx

FetchProgress = Callable[[int, int | None], None]
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_BACKOFF_SEC = 0.25
#: Longest one read may wait for bytes before the attempt is given up (and retried, time allowing).
STALL_SEC = 30.0
#: A download in progress in the cache: ``.<uuid>.part``, renamed to ``<sha256>.tar.zst`` once it is checked.
PARTIAL_SUFFIX = ".part"


class _OutOfTime(Exception):
    """The fetch's deadline (``index.artifact_timeout_sec``) passed during a download."""


@dataclass(frozen=True)
class FetchedArtifact:
    path: Path
    sha256: str
    #: The path or URL it came from (templates resolved, a URL redacted), for status.
    source: str


def is_url(source: str) -> bool:
    return "://" in source


def _fail(message: str, *, retryable: bool = True, **details: object) -> CodePlaneError:
    return CodePlaneError(ErrorCode.ARTIFACT_FETCH_FAILED, message, retryable=retryable, details=dict(details))


def _check_url(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme == "https" or (parsed.scheme == "http" and parsed.hostname in _LOOPBACK):
        return
    shown = redact_url(url)
    raise _fail(f"index.artifact must be a path, an https:// URL or http:// to a loopback host, not {shown!r}",
                retryable=False, url=shown)


def candidates(source: str, root: Path, ancestors: int) -> list[str]:
    """The concrete sources to try, in order."""
    if "{commit}" not in source:
        return [source]
    try:
        repo = pygit2.Repository(str(root))
        commit = repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError) as exc:
        raise _fail(f"index.artifact names {{commit}} but HEAD has no commit: {exc}", retryable=False) from exc
    found: list[str] = []
    for _ in range(ancestors + 1):
        found.append(source.replace("{commit}", str(commit.id)))
        if not commit.parents:
            break
        commit = commit.parents[0]
    return found


def parse_sidecar(text: str, where: str) -> str:
    token = text.strip().split()[0].lower() if text.strip() else ""
    if not _HEX64.match(token):
        raise CodePlaneError(ErrorCode.ARTIFACT_UNVERIFIED, f"{where} does not start with a sha256",
                             details={"sidecar": where})
    return token


class _Http:
    def __init__(self, timeout: float, retries: int) -> None:
        # Imported only when a URL is fetched: every `cpl up` imports this module (~25-60 ms for httpx, issue 19).
        import httpx

        self.timeout = timeout
        self.retries = retries
        self.deadline = monotonic() + timeout
        # Redirects are followed (release hosts and object stores use them), but never to plain http elsewhere.
        self.client = httpx.Client(timeout=httpx.Timeout(min(timeout, STALL_SEC)), follow_redirects=True,
                                   event_hooks={"request": [lambda request: _check_url(str(request.url))]})

    def check_deadline(self) -> None:
        """Raise once the fetch has run out of time (a download's sink calls it for every block)."""
        if monotonic() >= self.deadline:
            raise _OutOfTime

    def close(self) -> None:
        self.client.close()

    def get(self, url: str, sink: Callable[[httpx.Response], None]) -> bool:
        """GET with retries; ``sink`` consumes a 200. False on 404 (no such artifact); raises 3101 otherwise."""
        import httpx  # already imported by __init__

        shown = redact_url(url)
        last = ""
        attempts = 0
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(_BACKOFF_SEC * 2 ** (attempt - 1), max(0.0, self.deadline - monotonic())))
            left = self.deadline - monotonic()
            if left <= 0:
                break
            attempts += 1
            try:
                with self.client.stream("GET", url, timeout=httpx.Timeout(min(left, STALL_SEC))) as response:
                    if response.status_code == 404:
                        return False
                    if response.status_code >= 500 or response.status_code == 429:
                        last = f"HTTP {response.status_code}"
                        continue
                    if response.status_code != 200:
                        raise _fail(f"fetching {shown} failed: HTTP {response.status_code}", retryable=False,
                                    url=shown, status=response.status_code)
                    sink(response)
                    return True
            except (httpx.TimeoutException, _OutOfTime):
                last = f"timed out (index.artifact_timeout_sec is {self.timeout:g} s for the whole fetch)"
            except httpx.TransportError as exc:
                last = redact_urls(f"{type(exc).__name__}: {exc}")  # httpx may name the URL
        if not attempts:
            last = f"no time left of index.artifact_timeout_sec ({self.timeout:g} s)"
        raise _fail(f"fetching {shown} failed after {attempts} attempt{'s' if attempts != 1 else ''}: {last}",
                    url=shown, attempts=attempts, last_error=last)


def _download(http: _Http, url: str, sha256: str, cache_dir: Path, progress: FetchProgress | None) -> Path | None:
    cached = cache_dir / f"{sha256}{SUFFIX}"
    if cached.is_file() and sha256_file(cached) == sha256:
        return cached
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        sweep_partials(cache_dir)
        partial, out = _claim_partial(cache_dir)
    except OSError as exc:
        raise _write_failed(exc, cache_dir) from exc
    digests: list[hashlib._Hash] = []

    def sink(response: httpx.Response) -> None:
        total = response.headers.get("content-length")
        size = int(total) if total and total.isdigit() else None
        done = 0
        digest = hashlib.sha256()
        digests.append(digest)  # a retried attempt starts over: the last one counts
        try:
            out.seek(0)
            out.truncate()
            # Blocks as they arrive (``iter_bytes(size)`` would gather a size first): the deadline is checked
            # for each, so a trickle cannot outlast it.
            for block in response.iter_bytes():
                http.check_deadline()
                out.write(block)
                digest.update(block)
                done += len(block)
                if progress is not None:
                    progress(done, size)
            out.flush()
        except OSError as exc:
            raise _write_failed(exc, partial) from exc

    try:
        if not http.get(url, sink):
            return None
        found = digests[-1].hexdigest()
        if found != sha256:
            shown = redact_url(url)
            raise CodePlaneError(ErrorCode.ARTIFACT_CHECKSUM_MISMATCH,
                                 f"{shown} has sha256 {found}, expected {sha256}",
                                 details={"expected": sha256, "found": found, "url": shown})
        try:
            partial.replace(cached)
        except OSError as exc:
            raise _write_failed(exc, cached) from exc
    finally:
        out.close()  # lets go of the lock: a sweep may take it now, and finds nothing left to remove
        partial.unlink(missing_ok=True)
    for old in cache_dir.glob(f"*{SUFFIX}"):  # keep only the newest artifact
        if old != cached:
            old.unlink(missing_ok=True)
    return cached


def _write_failed(exc: OSError, path: Path) -> CodePlaneError:
    """A download that could not be written: the disk is full (5010, retryable, as everywhere in CodePlane: the
    artifact is not to blame) or the cache cannot be written (3101 naming the cause)."""
    return storage_error(exc, doing="downloading the index artifact", path=path,
                         outcome="the partial download was removed") or \
        _fail(f"writing the download to {path} failed: {exc}", retryable=False, path=str(path))


def _claim_partial(cache_dir: Path) -> tuple[Path, BinaryIO]:
    """A new partial download, locked for as long as it is open: :func:`sweep_partials` removes only the ones
    nobody holds (a fetch that was killed), never one being written."""
    while True:
        partial = cache_dir / f".{uuid.uuid4().hex}{PARTIAL_SUFFIX}"
        out = partial.open("xb")
        try:
            # Blocking: only a sweep holds it, for as long as it takes to remove it.
            portalocker.lock(out, portalocker.LockFlags.EXCLUSIVE)
            if os.path.samestat(os.fstat(out.fileno()), os.stat(partial)):
                return partial, out
        except FileNotFoundError:
            pass  # a sweep took it between its creation and the lock: another name
        except BaseException:
            out.close()
            partial.unlink(missing_ok=True)
            raise
        out.close()


def sweep_partials(cache_dir: Path) -> list[str]:
    """Remove the partial downloads a killed fetch left in ``cache_dir`` (a ``SIGKILL``, a power cut: nothing else
    ever would, and each is as big as what had arrived); the names removed. One a live fetch holds is kept."""
    try:
        found = sorted(cache_dir.glob(f".*{PARTIAL_SUFFIX}"))
    except OSError:
        return []
    removed: list[str] = []
    for path in found:
        try:
            handle = path.open("rb")
        except OSError:
            continue
        with handle:
            try:
                portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
            except (portalocker.exceptions.LockException, portalocker.exceptions.AlreadyLocked):
                continue  # a fetch is writing it
            try:
                path.unlink()
            except OSError:
                continue
            removed.append(path.name)
    return removed


def sidecar_url(url: str) -> str:
    """``https://h/a.tar.zst?sig=x`` -> ``https://h/a.tar.zst.sha256?sig=x``: the sidecar is a sibling file, and
    a presigned URL's query (its signature) must reach the server unchanged."""
    parts = urlsplit(url)
    return parts._replace(path=parts.path + ".sha256").geturl()


def _sidecar_sha(http: _Http, url: str) -> str | None:
    chunks: list[bytes] = []
    sidecar = sidecar_url(url)
    if not http.get(sidecar, lambda r: chunks.append(r.read()[:4096])):
        return None
    return parse_sidecar(b"".join(chunks).decode("utf-8", errors="replace"), redact_url(sidecar))


def _local(source: str, root: Path, pinned: str | None) -> FetchedArtifact:
    path = Path(source).expanduser()
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        raise _fail(f"index artifact {path} does not exist", retryable=False, path=str(path))
    if pinned is not None:
        return FetchedArtifact(path, pinned, str(path))
    sidecar = path.with_name(path.name + ".sha256")
    if not sidecar.is_file():
        raise CodePlaneError(ErrorCode.ARTIFACT_UNVERIFIED,
                             f"{path} has no sidecar {sidecar.name} and index.artifact_sha256 is not set",
                             details={"path": str(path)})
    return FetchedArtifact(path, parse_sidecar(sidecar.read_text(errors="replace"), str(sidecar)), str(path))


def fetch_artifact(source: str, *, root: Path, cache_dir: Path, pinned: str | None = None, timeout: float = 300.0,
                   retries: int = 2, ancestors: int = 0, progress: FetchProgress | None = None) -> FetchedArtifact:
    """Resolve ``source`` to a local archive and the sha256 it must have (not yet checked against it
    for local files; downloads are checked while streaming). Raises 3101/3102/3103."""
    tried = candidates(source, root, ancestors)
    if not is_url(source):
        for candidate in tried:
            if (Path(candidate).is_absolute() and Path(candidate).is_file()) or (root / candidate).is_file():
                return _local(candidate, root, pinned)
        return _local(tried[0], root, pinned)
    for url in tried:
        _check_url(url)
    http = _Http(timeout, retries)
    try:
        for url in tried:
            expected = pinned if pinned is not None else _sidecar_sha(http, url)
            if expected is None:
                continue
            found = _download(http, url, expected, cache_dir, progress)
            if found is not None:
                return FetchedArtifact(found, expected, redact_url(url))
        shown = [redact_url(url) for url in tried[:5]]
        if pinned is None and _any_exists(http, tried):
            raise CodePlaneError(ErrorCode.ARTIFACT_UNVERIFIED,
                                 f"no {redact_url(sidecar_url(tried[0]))} sidecar was found ({len(tried)} candidates "
                                 "tried) and index.artifact_sha256 is not set", details={"tried": shown})
    finally:
        http.close()
    raise _fail(f"no artifact found at {shown[0]} ({len(tried)} candidates tried)", retryable=False, tried=shown)


def _any_exists(http: _Http, urls: list[str]) -> bool:
    """Whether any of ``urls`` (none had a sidecar) has an artifact behind it: only then is the missing sidecar
    the problem; a URL with nothing behind it is "not found" (3101), not "unverified" (QA62 #8). What cannot be
    told (an error, no time left) counts as there: the missing sidecar is then all that is known."""
    for url in urls:
        try:
            if http.get(url, lambda response: None):  # the body is left unread: the stream is closed
                return True
        except CodePlaneError:
            return True
    return False
