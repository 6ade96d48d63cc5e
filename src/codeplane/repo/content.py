"""What a universe file holds: its kind, decoded text, hashes and line count (spec §5.3, §5.7).

Kinds: ``text`` (content-indexed), ``binary`` (NUL byte in the first 8 KiB, unless a UTF-16 mark explains it),
``oversized`` (larger than the configured limit) and ``symlink`` (its content is the link target, as git stores
it; never followed). Only ``text`` files are content-indexed; every kind is listed.

Lines are counted the way ``rg`` and editors number them: split on ``\\n`` only, a trailing newline does
not open a new line, and an empty file has zero lines.
"""

from __future__ import annotations

import codecs
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from codeplane.core.hashing import content_hash, sha256_bytes, sha256_file

FileKind = Literal["text", "binary", "oversized", "symlink"]

#: How much of a file is inspected for a NUL byte to call it binary (git uses the same window).
BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class FileContent:
    kind: FileKind
    #: Decoded text (UTF-8, invalid bytes replaced) for ``text`` files, else ``None``.
    text: str | None
    #: SHA-256 of the exact bytes on disk (what ``read_source`` returns and ``write_source`` checks).
    file_sha256: str
    #: Line-ending-normalised hash, used only to decide whether the index must change.
    content_hash: str
    line_count: int
    size: int


_UTF16_BOMS: tuple[tuple[bytes, str], ...] = ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def _utf16(data: bytes) -> str | None:
    return next((encoding for bom, encoding in _UTF16_BOMS if data.startswith(bom)), None)


def is_binary(data: bytes) -> bool:
    """A NUL byte in the first 8 KiB, unless a UTF-16 byte-order mark explains it: text saved as UTF-16 (Windows
    editors, PowerShell, SQL Server scripts) is text, as ``rg`` and ``mutation.document`` treat it, when those
    8 KiB decode and hold no NUL character."""
    head = data[:BINARY_SNIFF_BYTES]
    if b"\x00" not in head:
        return False
    encoding = _utf16(head)
    if encoding is None:
        return True
    try:  # incremental: the window may cut a character (or a surrogate pair) in two
        text = codecs.getincrementaldecoder(encoding)().decode(head[2:], final=False)
    except UnicodeDecodeError:
        return True
    return "\x00" in text


def head_is_binary(path: Path) -> bool | None:
    """:func:`is_binary` of the file's first 8 KiB, read alone; ``None`` if it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return is_binary(handle.read(BINARY_SNIFF_BYTES))
    except OSError:
        return None


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def decode_exact(data: bytes) -> tuple[str, bytes, str]:
    """``(encoding, bom, text)`` of a text file, losslessly: ``text.encode(encoding, exact_errors(encoding))``
    after ``bom`` gives ``data`` back byte for byte. UTF-8 unless a mark says UTF-16; each byte UTF-8 cannot
    decode becomes one lone surrogate (``surrogateescape``), and a UTF-16 lone surrogate stays one
    (``surrogatepass``). Raises ``UnicodeDecodeError`` only for UTF-16 with an odd trailing byte."""
    encoding, bom = _utf16(data), b""
    if encoding is not None:
        bom = data[:2]
    elif data.startswith(codecs.BOM_UTF8):
        encoding, bom = "utf-8", codecs.BOM_UTF8
    else:
        encoding = "utf-8"
    return encoding, bom, data[len(bom):].decode(encoding, exact_errors(encoding))


def exact_errors(encoding: str) -> str:
    """The codec error handler that makes :func:`decode_exact` round-trip for ``encoding``."""
    return "surrogatepass" if encoding.startswith("utf-16") else "surrogateescape"


#: A lone surrogate: the mark :func:`decode_exact` leaves for an undecodable byte.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(text: str) -> str:
    """``text`` of :func:`decode_exact` as it is shown: each undecodable byte (UTF-16: code unit) one U+FFFD, so
    a character offset means the same in both texts."""
    return text if text.isascii() else LONE_SURROGATE.sub("\ufffd", text)


def decode(data: bytes) -> str:
    """A text file's text as every tier and tool sees it: UTF-8, each invalid byte replaced by one U+FFFD, and a
    leading UTF-8 byte-order mark dropped. ``rg`` and editors do not show the mark and ``mutation.document`` edits
    the text after it, so line 1's columns (index facts, refactor spans, write positions) must not count it. A
    file with a UTF-16 mark is UTF-16 (the mark dropped the same way), as ``rg`` transcodes it and the engine
    writes it. One U+FFFD per byte (not per invalid sequence, as the codec's ``replace`` does) keeps this text
    the same length as the engine's lossless :func:`decode_exact`, so a column here is a column there."""
    encoding = _utf16(data) or "utf-8"
    body = data[2:] if encoding != "utf-8" else data.removeprefix(codecs.BOM_UTF8)
    try:
        return body.decode(encoding)
    except UnicodeDecodeError:
        pass
    try:
        return shown(body.decode(encoding, exact_errors(encoding)))
    except UnicodeDecodeError:  # UTF-16 with an odd trailing byte: the engine refuses to edit it anyway
        return body.decode(encoding, errors="replace")


def lossy(data: bytes) -> bool:
    """Whether :func:`decode` replaced bytes (a Latin-1 byte in a UTF-8 file): the text shown is then not the file.
    The engine keeps such a byte wherever an edit leaves its place alone; text written over it is new text."""
    encoding = _utf16(data)
    try:
        if encoding is not None:
            data[2:].decode(encoding)
        else:
            data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def classify_bytes(data: bytes, max_bytes: int) -> FileContent:
    """Classify bytes already in memory (the caller read them in one go)."""
    digest = sha256_bytes(data)
    if len(data) > max_bytes:
        return FileContent("oversized", None, digest, digest, 0, len(data))
    if is_binary(data):
        return FileContent("binary", None, digest, digest, 0, len(data))
    text = decode(data)
    normalized = content_hash(data) if b"\r" in data else digest
    return FileContent("text", text, digest, normalized, count_lines(text), len(data))


def load_content(path: Path, *, is_symlink: bool, max_bytes: int) -> FileContent | None:
    """Read and classify one file; ``None`` if it vanished or cannot be read."""
    try:
        if is_symlink:
            target = os.readlink(path).encode("utf-8", errors="surrogateescape")
            digest = sha256_bytes(target)
            return FileContent("symlink", None, digest, digest, 0, len(target))
        size = path.stat().st_size
        if size > max_bytes:
            # Never pull a huge file into memory: stream the hash, index nothing.
            digest = sha256_file(path)
            return FileContent("oversized", None, digest, digest, 0, size)
        with path.open("rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return classify_bytes(data, max_bytes)
