"""The shared index artifact's format: a zstd-compressed tar of ``manifest.json``, ``index.db``, ``tantivy/``.

The manifest names the format version, the versions that decide compatibility (store, lexical and indexer
schemas, the grammar wheels, the Tantivy library), the commit the index was built from, its file table
(path, git blob id, SHA-256 of the exact bytes), the size and SHA-256 of every part, and where each table's
pages end in ``index.db`` (``index_db_layout``: only *when* the importer checks a table depends on it, see
``artifact_integrity.FileArrival``; optional, so older artifacts still read). Everything in it is
deterministic for one commit and one CodePlane build, so the artifact's bytes are too (CI cache keys work).

The manifest is *untrusted input* on import: :func:`parse_manifest` checks every field's type and shape and
turns anything unexpected into a 3104 (malformed) or 3105 (incompatible) error, never a crash.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from codeplane import __version__
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import canonicalize
from codeplane.index.facts_api import FactIndexer
from codeplane.index.lexical import LEXICAL_SCHEMA_VERSION
from codeplane.index.store import STORE_SCHEMA_VERSION

FORMAT = "codeplane-index-artifact"
#: Bump when the artifact's layout or the manifest's meaning changes; readers refuse any other value.
FORMAT_VERSION = 2
#: zstd level of the archive: 5x faster to unpack and 8x faster to write than gzip -6 was (format 1), and a
#: little smaller; one thread, so the same input gives the same bytes.
ZSTD_LEVEL = 3
#: The archive's conventional file suffix.
SUFFIX = ".tar.zst"
MANIFEST = "manifest.json"
INDEX_DB = "index.db"
TANTIVY_DIR = "tantivy"
#: What a part may be called: ``index.db`` or one flat file name under ``tantivy/`` (no directories).
_PART_NAME = re.compile(r"^(index\.db|tantivy/[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}|tantivy/\.managed\.json)$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
#: Bound on ``index_db_layout``'s entries (a table per entry: CodePlane's schema has a few dozen).
_MAX_LAYOUT = 1000


def is_part_name(name: str) -> bool:
    return bool(_PART_NAME.match(name))


def is_canonical(path: str) -> bool:
    """Whether ``path`` is already what :func:`codeplane.core.paths.canonicalize` makes of it (and accepts).

    The same rules, without building a ``PurePosixPath`` (an artifact holds tens of thousands of paths to
    check): relative, no NUL byte, no drive letter, no backslash where it is a separator, and no empty,
    ``.`` or ``..`` segment (``canonicalize`` drops or refuses those, so such a path never equals its form).
    """
    if not path or "\x00" in path or path[0] == "/" or (len(path) > 1 and path[1] == ":"):
        return False
    if os.sep == "\\" and "\\" in path:
        return False
    framed = f"/{path}/"  # every segment between two slashes: an empty, "." or ".." one shows as below
    return "//" not in framed and "/./" not in framed and "/../" not in framed


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def current_versions(indexers: Sequence[FactIndexer]) -> dict[str, Any]:
    """What this build writes into a manifest and requires of one (besides ``codeplane``, informational)."""
    return {
        "codeplane": __version__,
        "store_schema": STORE_SCHEMA_VERSION,
        "lexical_schema": LEXICAL_SCHEMA_VERSION,
        "indexers": {i.name: i.schema_version for i in sorted(indexers, key=lambda i: i.name)},
        "tantivy": _dist_version("tantivy"),
        "tree_sitter": _dist_version("tree-sitter"),
        "tree_sitter_language_pack": _dist_version("tree-sitter-language-pack"),
    }


@dataclass(frozen=True)
class PartDigest:
    sha256: str
    size: int


@dataclass(frozen=True)
class ManifestFile:
    path: str
    #: Git blob id of the file at ``commit`` (what ``git ls-tree`` shows).
    blob: str
    #: SHA-256 of the exact bytes (the index's ``file_sha256``).
    sha256: str


@dataclass(frozen=True)
class Manifest:
    commit: str
    versions: dict[str, Any]
    files: tuple[ManifestFile, ...]
    parts: dict[str, PartDigest]
    format_version: int = FORMAT_VERSION
    #: ``(table, last page)`` of every table of ``index.db`` (its rows, indexes and overflow), by last page.
    layout: tuple[tuple[str, int], ...] = ()

    def to_bytes(self) -> bytes:
        body: dict[str, Any] = {
            "format": FORMAT,
            "format_version": self.format_version,
            "versions": self.versions,
            "commit": self.commit,
            "parts": {name: {"sha256": p.sha256, "size": p.size} for name, p in sorted(self.parts.items())},
            "files": [[f.path, f.blob, f.sha256] for f in self.files],
        }
        if self.layout:
            body["index_db_layout"] = [[table, page] for table, page in self.layout]
        return (json.dumps(body, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


def _invalid(message: str, **details: Any) -> CodePlaneError:
    return CodePlaneError(ErrorCode.ARTIFACT_INVALID, message, details=details)


def incompatibilities(found: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """Version fields that differ (``codeplane`` itself is informational: same schemas, same index)."""
    return {key: {"artifact": found.get(key), "ours": value} for key, value in ours.items()
            if key != "codeplane" and found.get(key) != value}


def _body(raw: bytes) -> dict[str, Any]:
    """The manifest's JSON object, once it names this format and its version (3104, 3105)."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid(f"manifest.json is not valid JSON: {exc}") from exc
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise _invalid(f"manifest.json does not describe a {FORMAT}")
    version = body.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise _invalid("manifest.json has no integer format_version")
    if version != FORMAT_VERSION:
        newer = "newer" if version > FORMAT_VERSION else "older"
        raise CodePlaneError(ErrorCode.ARTIFACT_INCOMPATIBLE,
                             f"artifact format {version} is {newer} than this CodePlane reads ({FORMAT_VERSION})",
                             details={"format_version": version, "supported": FORMAT_VERSION})
    return body


def part_sizes(raw: bytes) -> dict[str, int]:
    """The size of every part an untrusted manifest lists, read as soon as the manifest is unpacked (the first
    member): each later member is refused from its header when it is not listed or its size differs, so a small
    archive cannot unpack gigabytes before the manifest check sees them (QA62 #2). Raises what
    :func:`parse_manifest` raises for the fields it reads."""
    return {name: digest.size for name, digest in _parts(_body(raw).get("parts")).items()}


def parse_manifest(raw: bytes, indexers: Sequence[FactIndexer]) -> Manifest:
    """Parse and check an untrusted manifest: shape (3104), then format and versions (3105)."""
    body = _body(raw)
    version = body["format_version"]
    versions = body.get("versions")
    if not isinstance(versions, dict):
        raise _invalid("manifest.json has no versions")
    differ = incompatibilities(versions, current_versions(indexers))
    if differ:
        names = ", ".join(f"{k} {v['artifact']!r} (ours {v['ours']!r})" for k, v in sorted(differ.items()))
        raise CodePlaneError(ErrorCode.ARTIFACT_INCOMPATIBLE, f"artifact built with other versions: {names}",
                             details={"differ": differ})
    commit = body.get("commit")
    if not isinstance(commit, str) or not _HEX40.match(commit):
        raise _invalid("manifest.json's commit is not a 40-hex commit id")
    layout = _layout(body.get("index_db_layout"))
    if layout is None:
        raise _invalid("manifest.json's index_db_layout is not a list of [table, last page] by page")
    return Manifest(commit=commit, versions=versions, files=_files(body.get("files")),
                    parts=_parts(body.get("parts")), format_version=version, layout=layout)


def _layout(raw: object) -> tuple[tuple[str, int], ...] | None:
    """``index_db_layout`` as ``((table, last page), ...)``; ``()`` when absent, ``None`` when malformed."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > _MAX_LAYOUT:
        return None
    layout: list[tuple[str, int]] = []
    for entry in raw:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str) and 0 < len(entry[0]) <= 128
                and isinstance(entry[1], int) and not isinstance(entry[1], bool) and entry[1] > 0):
            return None
        layout.append((entry[0], entry[1]))
    if [page for _, page in layout] != sorted(page for _, page in layout) or len({t for t, _ in layout}) < len(layout):
        return None
    return tuple(layout)


def layout_hint(raw: bytes) -> tuple[tuple[str, int], ...]:
    """``index_db_layout`` from a manifest not checked yet (the unpack reads it before the rest has arrived): the
    layout, or ``()`` when the manifest has none or anything about it is wrong (:func:`parse_manifest` refuses
    that later)."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return ()
    layout = _layout(body.get("index_db_layout")) if isinstance(body, dict) else None
    return layout or ()


def _parts(raw: object) -> dict[str, PartDigest]:
    if not isinstance(raw, dict) or INDEX_DB not in raw:
        raise _invalid("manifest.json lists no parts (index.db is required)")
    parts: dict[str, PartDigest] = {}
    for name, digest in raw.items():
        if not isinstance(name, str) or not is_part_name(name):
            raise _invalid(f"manifest.json names a part outside the artifact's layout: {name!r}", part=str(name))
        if not (isinstance(digest, dict) and isinstance(digest.get("sha256"), str)
                and _HEX64.match(digest["sha256"]) and isinstance(digest.get("size"), int) and digest["size"] >= 0):
            raise _invalid(f"manifest.json's entry for {name} has no sha256/size", part=name)
        parts[name] = PartDigest(digest["sha256"], digest["size"])
    return parts


def _files(raw: object) -> tuple[ManifestFile, ...]:
    if not isinstance(raw, list):
        raise _invalid("manifest.json has no file table")
    files: list[ManifestFile] = []
    for row in raw:
        if not (isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row)
                and _HEX40.match(row[1]) and _HEX64.match(row[2])):
            raise _invalid("manifest.json's file table has a malformed row", row=repr(row)[:200])
        path = row[0]
        if not is_canonical(path):
            try:
                canonicalize(path)
            except CodePlaneError as exc:
                raise _invalid(f"manifest.json names a path that escapes the repository: {path!r} ({exc.message})",
                               path=path) from exc
            raise _invalid(f"manifest.json names a path that is not canonical: {path!r}", path=path)
        files.append(ManifestFile(path, row[1], row[2]))
    if [f.path for f in files] != sorted({f.path for f in files}):
        raise _invalid("manifest.json's file table is not sorted or repeats a path")
    return tuple(files)
