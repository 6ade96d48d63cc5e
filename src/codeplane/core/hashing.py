"""The one hasher.

Two hashes exist on purpose:
- ``sha256_bytes``: the SHA-256 of the exact bytes on disk. ``read_source`` returns it and
  ``write_source`` checks it (D8): both sides compute the same function over the same bytes.
- ``content_hash``: SHA-256 of the text with CRLF folded to LF, used only by the index so a
  line-ending flip does not mark a file dirty (§5.7). It is never shown as a precondition hash. A lone CR is
  not folded: lines end at LF everywhere (git, ``rg``, the index, the engine), so turning a lone CR into an LF
  adds a line, and the file must be reindexed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def normalize_line_endings(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n")


def content_hash(data: bytes) -> str:
    return hashlib.sha256(normalize_line_endings(data)).hexdigest()


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
