"""``cpl index export``: write the index as a shared artifact (pre-API spec "shared index artifact", §6.5).

What goes in, and why it is the same bytes for the same commit and CodePlane build:
- ``index.db``: a consistent snapshot through SQLite's backup API, then made canonical — stat columns
  (``mtime_ns``, ``inode``) zeroed (they describe one machine's checkout; the importer's reconcile hashes
  instead), the epoch history and diagnostic timings dropped, the definition snapshots cut to each current
  file's latest at epoch 1 (``_collapse_history``: what a deleted file once defined is not shared) — and
  rewritten by ``VACUUM INTO`` (pages in rowid order, no free pages; each table's rows and indexes in one run
  of pages, the tables in the order the store created them: the references first, see ``structural/schema.py``).
  Where each table's pages end goes into the manifest (``index_db_layout``, from SQLite's ``dbstat``), so an
  importer checks each table as soon as its pages are unpacked.
- ``tantivy/``: rebuilt from the files on disk with one writer thread (same documents in the same order
  give the same segment bytes), segment files renamed after their content instead of Tantivy's random
  UUIDs, lock files left out.
- The tar has fixed member order, mtimes, owners and modes; zstd runs at one level on one thread.
A cold build of one commit gives the same file ids and facts, so its artifact's sha256 is stable. An index
that lived through many edits holds the same content with other ids: equal answers, other bytes.

Only the commit's files may be shared (§6.5): every indexed file must be tracked at HEAD with exactly the
bytes on disk (``.cplignore`` excepted, see :data:`CPLIGNORE`), otherwise the export is refused (3106)
naming the first offenders — so an untracked secret or an unfinished edit never leaves the machine.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pygit2
import zstandard

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.index.artifact_format import (
    INDEX_DB,
    MANIFEST,
    TANTIVY_DIR,
    ZSTD_LEVEL,
    Manifest,
    ManifestFile,
    PartDigest,
    current_versions,
)
from codeplane.index.facts_api import FactIndexer
from codeplane.index.lexical import LexicalIndex
from codeplane.repo.content import load_content

#: Meta rows that describe the index's content; the rest (inflight markers, origins, timings) is local.
_KEPT_META = ("store_schema", "epoch")
#: Rows of indexer-owned state tables that are diagnostics (timings), not facts.
_DIAGNOSTIC_ROWS = (("st_state", "key", "last_apply"),)
_TANTIVY_LOCKS = (".tantivy-meta.lock", ".tantivy-writer.lock")
_SHOW_OFFENDERS = 10
#: ``cpl init`` writes a default ``.cplignore`` when the repository has none: CodePlane's own settings (no
#: secret), present in every checkout that runs CodePlane, so it may be shared untracked.
CPLIGNORE = ".cplignore"


@dataclass(frozen=True)
class ExportReport:
    out: Path
    sha256: str
    size: int
    commit: str
    files: int
    parts: dict[str, PartDigest]


def _refuse(message: str, **details: object) -> CodePlaneError:
    return CodePlaneError(ErrorCode.ARTIFACT_EXPORT_REFUSED, message, details=dict(details))


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def git_blob_id(data: bytes) -> str:
    """Git's object id of a blob with these bytes (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data, usedforsecurity=False).hexdigest()


def _head_tree(root: Path) -> tuple[str, dict[str, str]]:
    """HEAD's commit id and ``{path: blob id}`` of every blob in its tree (submodules skipped)."""
    try:
        repo = pygit2.Repository(str(root))
        commit = repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError) as exc:
        raise _refuse(f"the repository has no commit to export from: {exc}") from exc
    blobs: dict[str, str] = {}
    stack: list[tuple[str, pygit2.Tree]] = [("", commit.tree)]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            path = f"{prefix}{entry.name}"
            if entry.type_str == "tree":
                stack.append((f"{path}/", repo[entry.id].peel(pygit2.Tree)))
            elif entry.type_str == "blob":
                blobs[path] = str(entry.id)
    return str(commit.id), blobs


def _clean_blobs(root: Path) -> dict[str, str]:
    """``{path: blob id}`` from git's index for every tracked path ``git status`` finds unchanged."""
    try:
        repo = pygit2.Repository(str(root))
        changed = frozenset(repo.status(untracked_files="no"))
        return {entry.path: str(entry.id) for entry in repo.index if entry.path not in changed}
    except (pygit2.GitError, OSError, KeyError, ValueError):
        return {}  # git cannot vouch: files checked out through filters are refused as changed


def _read_exact(path: Path, is_symlink: bool) -> bytes | None:
    try:
        if is_symlink:
            return os.readlink(path).encode("utf-8", errors="surrogateescape")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _snapshot(index_db: Path, dest: Path) -> None:
    """A consistent copy of ``index.db`` (backup API: works while a server writes)."""
    if not index_db.is_file():
        raise _refuse("there is no index to export; run `cpl init` first")
    source = sqlite3.connect(f"file:{index_db}?mode=ro", uri=True)
    target = sqlite3.connect(dest)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def _rows(db: Path) -> list[tuple[int, str, str, str | None, str]]:
    conn = sqlite3.connect(db)
    try:
        return [(int(r[0]), str(r[1]), str(r[2]), r[3], str(r[4])) for r in conn.execute(
            "SELECT id, path, kind, language, file_sha256 FROM files ORDER BY id")]
    finally:
        conn.close()


def _check_files(root: Path, rows: list[tuple[int, str, str, str | None, str]],
                 tree: dict[str, str]) -> list[ManifestFile]:
    """Every indexed file, tracked at HEAD with the bytes the index saw; refuse with the offenders."""
    untracked: list[str] = []
    differs: list[str] = []
    files: list[ManifestFile] = []
    clean = cache(lambda: _clean_blobs(root))  # git status only when some file's bytes are not its blob's
    for _id, path, kind, _language, sha in rows:
        data = _read_exact(root / path, kind == "symlink")
        if data is None or hashlib.sha256(data).hexdigest() != sha:
            differs.append(path)
            continue
        blob = git_blob_id(data)
        if tree.get(path) != blob and path != CPLIGNORE:
            # Checked out through a filter (``eol=crlf`` in .gitattributes, ``core.autocrlf``): the bytes are not
            # the blob's, but git says the file is clean, so HEAD's blob stands for them, as in every clone.
            vouched = clean().get(path)
            if vouched is None or vouched != tree.get(path):
                untracked.append(path)
                continue
            blob = vouched
        files.append(ManifestFile(path, blob, sha))
    if differs:
        raise _refuse(f"{len(differs)} indexed files changed since they were indexed (e.g. "
                      f"{', '.join(sorted(differs)[:_SHOW_OFFENDERS])}); let the index catch up and export again",
                      paths=sorted(differs)[:_SHOW_OFFENDERS])
    if untracked:
        raise _refuse(f"{len(untracked)} indexed files are untracked or differ from HEAD (e.g. "
                      f"{', '.join(sorted(untracked)[:_SHOW_OFFENDERS])}); an artifact holds only the commit's "
                      "files: export from a clean clone, or list them in .cplignore",
                      paths=sorted(untracked)[:_SHOW_OFFENDERS])
    return sorted(files, key=lambda f: f.path)


def _canonical_tantivy(root: Path, directory: Path, rows: list[tuple[int, str, str, str | None, str]],
                       max_bytes: int) -> int:
    """Rebuild Tantivy deterministically from the files; returns the commit opstamp."""
    lexical = LexicalIndex(directory, threads=1)
    lexical.open()
    try:
        for file_id, path, kind, language, _sha in rows:
            if kind != "text":
                continue
            content = load_content(root / path, is_symlink=False, max_bytes=max_bytes)
            if content is None or content.text is None:
                raise _refuse(f"{path} vanished or changed while exporting; export again", path=path)
            lexical.add(file_id, path, language, content.text)
        opstamp = lexical.commit()
    finally:
        lexical.close()
    _rename_segments(directory)
    return opstamp


def _rename_segments(directory: Path) -> None:
    """Give segments names derived from their bytes, so the directory's listing is deterministic too."""
    meta_path = directory / "meta.json"
    meta = json.loads(meta_path.read_text())
    renames: dict[str, str] = {}
    for segment in meta["segments"]:
        old = uuid.UUID(segment["segment_id"]).hex
        digest = hashlib.sha256()
        for part in sorted(directory.glob(f"{old}.*")):
            digest.update(part.suffix.encode() + b"\0" + _sha256_file(part).encode())
        named = uuid.UUID(hex=digest.hexdigest()[:32])
        renames[old] = named.hex
        segment["segment_id"] = str(named)
    for old, new in renames.items():
        for part in directory.glob(f"{old}.*"):
            part.rename(directory / f"{new}{part.suffix}")
    meta["segments"].sort(key=lambda s: s["segment_id"])
    meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True))
    for lock in _TANTIVY_LOCKS:
        (directory / lock).unlink(missing_ok=True)
    managed = sorted(p.name for p in directory.iterdir() if p.name not in (".managed.json", "codeplane-schema.json"))
    (directory / ".managed.json").write_text(json.dumps(managed))


def _canonical_db(snapshot: Path, dest: Path, opstamp: int) -> None:
    conn = sqlite3.connect(snapshot, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("BEGIN")
        conn.execute("UPDATE files SET mtime_ns = 0, inode = 0")
        conn.execute("DELETE FROM epochs")
        _collapse_history(conn)
        kept = ", ".join("?" for _ in _KEPT_META)
        conn.execute(f"DELETE FROM meta WHERE key NOT IN ({kept}) AND key NOT LIKE 'indexer.%'", _KEPT_META)
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('tantivy_opstamp', ?), "
                     "('tantivy_inflight', '[]')", (str(opstamp),))
        for table, column, key in _DIAGNOSTIC_ROWS:
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table,)).fetchone()
            if exists:
                conn.execute(f"DELETE FROM {table} WHERE {column} = ?", (key,))
        _renumber_meta(conn)
        conn.execute("COMMIT")
        conn.execute("VACUUM INTO ?", (str(dest),))
    finally:
        conn.close()


#: Per-epoch history (``structural/snapshots.py``) and the epoch columns: an index that lived through edits keeps
#: the definitions of files deleted long ago (an untracked scratch file, a secret), which must not leave the
#: machine, and its epoch numbers. The artifact holds what a cold build of the commit holds: each current file's
#: latest snapshot, everything at epoch 1.
_EPOCH_COLUMNS = (("files", "indexed_epoch"), ("st_file", "epoch"), ("st_export_surface", "epoch_id"),
                  ("st_snapshot_file", "epoch_id"), ("st_def_snapshot", "epoch_id"))


def _collapse_history(conn: sqlite3.Connection) -> None:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if {"st_snapshot_file", "st_def_snapshot"} <= tables:
        conn.execute("CREATE TEMP TABLE latest AS SELECT s.file_path, max(s.epoch_id) AS epoch_id "
                     "FROM st_snapshot_file s JOIN files f ON f.path = s.file_path GROUP BY s.file_path")
        for table in ("st_snapshot_file", "st_def_snapshot"):
            conn.execute(f"DELETE FROM {table} WHERE NOT EXISTS (SELECT 1 FROM temp.latest l WHERE "
                         f"l.file_path = {table}.file_path AND l.epoch_id = {table}.epoch_id)")
        conn.execute("DROP TABLE temp.latest")
    if "st_state" in tables:  # the pruned history's floor (``snapshots.prune``): a cold build has none
        conn.execute("DELETE FROM st_state WHERE key = 'snapshots_from'")
    for table, column in _EPOCH_COLUMNS:
        if table in tables:
            conn.execute(f"UPDATE {table} SET {column} = 1")
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('epoch', '1')")


def _renumber_meta(conn: sqlite3.Connection) -> None:
    """``INSERT OR REPLACE`` gives a rewritten key a new rowid, so a long-lived index holds its meta rows under
    other rowids than a cold build: the same rows, renumbered in key order."""
    rows = conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    conn.execute("DELETE FROM meta")
    conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", rows)


def _layout(db: Path) -> tuple[tuple[str, int], ...]:
    """``(table, last page)`` of every table (its own pages, its indexes' and overflow pages), by last page; ``()``
    where SQLite was built without ``dbstat`` (the importer then checks every table once all is unpacked)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_schema").fetchall())
        ends: dict[str, int] = {}
        for name, page in conn.execute("SELECT name, max(pageno) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)  # sqlite_schema has no row of its own
            ends[table] = max(ends.get(table, 0), int(page))
    except sqlite3.OperationalError:  # no such table: dbstat
        return ()
    finally:
        conn.close()
    return tuple(sorted(ends.items(), key=lambda item: (item[1], item[0])))


def _parts(staging: Path) -> dict[str, PartDigest]:
    parts = {INDEX_DB: PartDigest(_sha256_file(staging / INDEX_DB), (staging / INDEX_DB).stat().st_size)}
    for path in sorted((staging / TANTIVY_DIR).iterdir()):
        parts[f"{TANTIVY_DIR}/{path.name}"] = PartDigest(_sha256_file(path), path.stat().st_size)
    return parts


def _tar_member(tar: tarfile.TarFile, name: str, data: io.BufferedIOBase | io.BytesIO, size: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname = size, 0, 0o644, 0, 0, "", ""
    tar.addfile(info, data)


def _write_archive(staging: Path, manifest: Manifest, out: Path) -> None:
    raw = manifest.to_bytes()
    with out.open("wb") as handle:
        compressor = zstandard.ZstdCompressor(level=ZSTD_LEVEL, threads=0)
        with compressor.stream_writer(handle, closefd=False) as packed, \
                tarfile.open(fileobj=packed, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            _tar_member(tar, MANIFEST, io.BytesIO(raw), len(raw))
            for name, digest in sorted(manifest.parts.items()):
                with (staging / name).open("rb") as part:
                    _tar_member(tar, name, part, digest.size)
        handle.flush()
        os.fsync(handle.fileno())


def export_artifact(root: Path, layout: RepoLayout, indexers: Sequence[FactIndexer], out: Path, *,
                    max_bytes: int) -> ExportReport:
    """Write ``out`` and its sidecar ``out.sha256``; raises 3106 (nothing written) if the index cannot be shared.

    The index must be current (``cpl init`` or a running server keeps it so); the export reads a snapshot,
    so a server may keep running.
    """
    staging = layout.state_dir / f"export-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        commit, tree = _head_tree(root)
        snapshot = staging / "snapshot.db"
        _snapshot(layout.index_db, snapshot)
        rows = _rows(snapshot)
        files = _check_files(root, rows, tree)
        (staging / TANTIVY_DIR).mkdir()
        opstamp = _canonical_tantivy(root, staging / TANTIVY_DIR, rows, max_bytes)
        _canonical_db(snapshot, staging / INDEX_DB, opstamp)
        manifest = Manifest(commit=commit, versions=current_versions(indexers), files=tuple(files),
                            parts=_parts(staging), layout=_layout(staging / INDEX_DB))
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(f".{out.name}.{uuid.uuid4().hex[:8]}.part")
        try:
            _write_archive(staging, manifest, partial)
            sha = _sha256_file(partial)
            os.replace(partial, out)
        finally:
            partial.unlink(missing_ok=True)
        sidecar = out.with_name(out.name + ".sha256")
        sidecar.write_text(f"{sha}  {out.name}\n")
        return ExportReport(out=out, sha256=sha, size=out.stat().st_size, commit=commit, files=len(files),
                            parts=manifest.parts)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
