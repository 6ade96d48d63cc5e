"""A small content-addressed store for large, disposable outputs (§12.5 v1.5, DECISIONS D10).

Test logs, JUnit/JSON reports and full diffs are too large (and may hold file contents) for the
ledger, so they live here under ``.codeplane/artifacts/<artifact_id>`` and records point at them by
``artifact_id`` + ``sha256``. The id is derived from the content, so storing the same bytes twice
yields one file (its lifetime is renewed). Artifacts are short-lived: :meth:`ArtifactStore.gc`
deletes those older than the retention window. Nothing authoritative may depend on an artifact
existing: a missing or altered artifact is reported, never fatal.

Lives in ``core`` because both the tasks subsystem (ledger) and the tests subsystem (run records)
store artifacts, and the two may not import each other.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.clock import now_ms

_ID_PREFIX = "art_"
_ID_HEX = 32
_ID_RE = re.compile(rf"^{_ID_PREFIX}[0-9a-f]{{{_ID_HEX}}}$")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ArtifactRef:
    """How a record points at an artifact. ``created_ms`` is when this content was (last) stored."""

    artifact_id: str
    sha256: str
    size: int
    created_ms: int


def artifact_id_for(sha256: str) -> str:
    """The id of the artifact holding content with this SHA-256 (hex)."""
    return _ID_PREFIX + sha256[:_ID_HEX]


def is_artifact_id(value: str) -> bool:
    return bool(_ID_RE.match(value))


class ArtifactStore:
    """Files under one directory, named by content hash, expired after ``retention_hours``.

    Writes are atomic (temp file + rename in the same directory), so a reader sees a whole artifact
    or none. Thread-safe without locks: concurrent writers of equal content produce equal files.
    """

    def __init__(self, directory: Path, retention_hours: float) -> None:
        self.directory = directory
        self.retention_ms = int(retention_hours * 3600 * 1000)

    @staticmethod
    def ref_for(data: bytes) -> ArtifactRef:
        """The reference ``put_bytes(data)`` will return, without writing (to record it before storing)."""
        digest = hashlib.sha256(data).hexdigest()
        return ArtifactRef(artifact_id_for(digest), digest, len(data), now_ms())

    def put_bytes(self, data: bytes) -> ArtifactRef:
        """Store ``data``; returns its reference. Re-storing existing content renews its lifetime."""
        digest = hashlib.sha256(data).hexdigest()
        target = self._path(artifact_id_for(digest))
        if not self._renew(target):
            self._write(target, [data])
        return ArtifactRef(artifact_id_for(digest), digest, len(data), now_ms())

    def put_text(self, text: str) -> ArtifactRef:
        return self.put_bytes(text.encode("utf-8"))

    def put_file(self, source: Path) -> ArtifactRef:
        """Copy ``source`` into the store, streaming (logs can be large)."""
        digest = hashlib.sha256()
        size = 0
        with source.open("rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                digest.update(chunk)
                size += len(chunk)
        sha = digest.hexdigest()
        target = self._path(artifact_id_for(sha))
        if not self._renew(target):
            with source.open("rb") as handle:
                self._write(target, iter(lambda: handle.read(_CHUNK), b""))
        return ArtifactRef(artifact_id_for(sha), sha, size, now_ms())

    def path_of(self, artifact_id: str) -> Path | None:
        """The file holding the artifact, or ``None`` when it is unknown, malformed or collected."""
        if not is_artifact_id(artifact_id):
            return None
        path = self._path(artifact_id)
        return path if path.is_file() else None

    def read_bytes(self, artifact_id: str, *, limit: int | None = None) -> bytes | None:
        """The artifact's bytes (at most ``limit``), or ``None`` when it no longer exists."""
        path = self.path_of(artifact_id)
        if path is None:
            return None
        try:
            with path.open("rb") as handle:
                return handle.read() if limit is None else handle.read(limit)
        except FileNotFoundError:  # collected between the check and the read
            return None

    def verify(self, ref: ArtifactRef) -> bool:
        """True when the artifact exists and its content still hashes to ``ref.sha256``."""
        path = self.path_of(ref.artifact_id)
        if path is None:
            return False
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(_CHUNK), b""):
                    digest.update(chunk)
        except FileNotFoundError:
            return False
        return digest.hexdigest() == ref.sha256

    def gc(self, *, now: int | None = None) -> int:
        """Delete artifacts (and stray temp files) older than the retention window; returns the count."""
        if not self.directory.is_dir():
            return 0
        cutoff = (now_ms() if now is None else now) - self.retention_ms
        removed = 0
        for entry in os.scandir(self.directory):
            if not entry.is_file(follow_symlinks=False):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime * 1000 < cutoff:
                    os.unlink(entry.path)
                    removed += 1
            except FileNotFoundError:
                continue
        return removed

    def stats(self) -> dict[str, int]:
        count = size = 0
        if self.directory.is_dir():
            for entry in os.scandir(self.directory):
                if entry.is_file(follow_symlinks=False) and is_artifact_id(entry.name):
                    count += 1
                    size += entry.stat(follow_symlinks=False).st_size
        return {"artifacts": count, "bytes": size}

    def _path(self, artifact_id: str) -> Path:
        return self.directory / artifact_id

    @staticmethod
    def _renew(target: Path) -> bool:
        # Same id means same content (SHA-256), so an existing file only needs a fresh mtime for GC.
        try:
            os.utime(target, (time.time(), time.time()))
        except FileNotFoundError:
            return False
        return True

    def _write(self, target: Path, chunks: Iterable[bytes]) -> None:
        # No fsync: artifacts are disposable (§12.5), and a torn one fails ``verify``, nothing more.
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
