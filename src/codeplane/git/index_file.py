"""Reading git's index file (``.git/index``, versions 2-4) with the cached stat data of every entry.

pygit2 does not expose the stat data git keeps per entry, and that data is what makes ``git diff`` fast:
a file whose size, mtime, ctime and inode still match needs no read at all. Only what the fast
working-tree scan needs is decoded; anything unusual (SHA-256 repositories, split or sparse indexes)
raises :class:`UnsupportedIndex` and the caller falls back to libgit2.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_HEADER = struct.Struct(">4sII")
_ENTRY = struct.Struct(">10I20sH")
_EXTENDED = 0x4000
_SKIP_WORKTREE = 0x4000  # in the v3 extended flags word
_UNSUPPORTED_EXTENSIONS = (b"link", b"sdir")


class UnsupportedIndex(Exception):
    """The index uses a feature this reader does not handle; use libgit2 instead."""


@dataclass(frozen=True, slots=True)
class IndexEntry:
    path: bytes
    ctime_s: int
    ctime_ns: int
    mtime_s: int
    mtime_ns: int
    dev: int
    ino: int
    mode: int
    size: int
    oid: bytes
    stage: int
    #: intent-to-add, skip-worktree (v3 extended flags): such entries need git's own rules.
    extended: bool
    #: Outside a sparse checkout's cone (``git update-index --skip-worktree``): git ignores the work tree there.
    skip_worktree: bool = False


@dataclass(frozen=True)
class IndexSnapshot:
    entries: tuple[IndexEntry, ...]
    #: The index file's mtime (ns): entries changed at or after it are "racily clean" and must be read.
    mtime_ns: int


def read_index(path: Path) -> IndexSnapshot:
    """Decode ``path``; :class:`UnsupportedIndex` for formats or extensions not handled here."""
    data = path.read_bytes()
    return IndexSnapshot(entries=decode_entries(data), mtime_ns=path.stat().st_mtime_ns)


def decode_entries(data: bytes) -> tuple[IndexEntry, ...]:
    """The entries of an index file's bytes; :class:`UnsupportedIndex` for formats or extensions not handled here
    (and for bytes that are no index)."""
    if len(data) < _HEADER.size:
        raise UnsupportedIndex("not an index file")
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4):
        raise UnsupportedIndex(f"index signature {signature!r} version {version}")
    pos = _HEADER.size
    entries: list[IndexEntry] = []
    previous = b""
    for _ in range(count):
        start = pos
        fields = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        flags = fields[11]
        extended = skip = False
        if version >= 3 and flags & _EXTENDED:
            word = struct.unpack_from(">H", data, pos)[0]
            extended, skip = word != 0, bool(word & _SKIP_WORKTREE)
            pos += 2
        if version == 4:
            strip, pos = _varint(data, pos)
            end = data.index(b"\0", pos)
            name = previous[:len(previous) - strip] + data[pos:end]
            pos = end + 1
        else:
            end = data.index(b"\0", pos)
            name = data[pos:end]
            # v2/v3 entries are NUL-padded to a multiple of 8 bytes (at least one NUL).
            pos = start + ((end - start) // 8 + 1) * 8
        previous = name
        entries.append(IndexEntry(
            path=name, ctime_s=fields[0], ctime_ns=fields[1], mtime_s=fields[2], mtime_ns=fields[3],
            dev=fields[4], ino=fields[5], mode=fields[6], size=fields[9], oid=fields[10],
            stage=(flags >> 12) & 3, extended=extended, skip_worktree=skip,
        ))
    _check_extensions(data, pos)
    return tuple(entries)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset encoding for v4 path compression (big-endian 7-bit groups with +1 carries)."""
    byte = data[pos]
    pos += 1
    value = byte & 0x7F
    while byte & 0x80:
        byte = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos


def _check_extensions(data: bytes, pos: int) -> None:
    end = len(data) - 20  # trailing SHA-1 checksum
    while pos + 8 <= end:
        name, size = struct.unpack_from(">4sI", data, pos)
        if name in _UNSUPPORTED_EXTENSIONS:
            raise UnsupportedIndex(f"index extension {name!r}")
        pos += 8 + size
