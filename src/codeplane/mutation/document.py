"""A text file as the engine edits it: decoded text plus the format needed to write it back byte-exactly.

The text keeps its original line endings (nothing is normalised), so bytes outside an edited span are
re-encoded to exactly what was read. Decoding is ``repo.content``'s, the one every read and search uses:
UTF-8 (its BOM kept), or UTF-16 after a UTF-16 mark. A byte that does not decode is shown as U+FFFD, as
``read_source`` shows it, so ``old_text`` and ``expected_content`` copied from a read match; underneath, the
engine holds it as a lone surrogate (``Document.raw``, as long as the shown text) and writes it back as the
same byte wherever an edit leaves its place alone (:func:`keep_undecodable`). New text is always written in
the file's encoding, UTF-8 for such a file: never a second, guessed encoding for the whole file.

A line ends at ``\n`` (its ``\r\n`` included), as git, ``rg``, tree-sitter and the index number lines; a lone
``\r`` is an ordinary character. What is text is ``repo.content.is_binary``'s answer, the index's: no NUL in the
first 8 KiB unless a UTF-16 mark explains it (as git decides), so a file the index searches and ``read_source``
shows can be edited.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Literal

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.repo.content import LONE_SURROGATE, decode_exact, exact_errors, is_binary, shown

LineEnding = Literal["LF", "CRLF"]
NEWLINES: dict[LineEnding, str] = {"LF": "\n", "CRLF": "\r\n"}


@dataclass(frozen=True)
class TextFormat:
    """How a file's text becomes bytes again."""

    encoding: str = "utf-8"
    bom: bytes = b""
    #: The file's dominant line ending; new text is written with it.
    line_ending: LineEnding = "LF"

    @property
    def newline(self) -> str:
        return NEWLINES[self.line_ending]

    @property
    def label(self) -> str:
        """``utf-8``, ``utf-8-bom``, ``utf-16-le-bom`` ... as shown in the delta."""
        return f"{self.encoding}-bom" if self.bom else self.encoding


def detect_line_ending(text: str) -> LineEnding | None:
    """The more frequent line ending, or ``None`` when the text has none (a tie prefers LF)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if not (crlf or lf):
        return None
    return "CRLF" if crlf > lf else "LF"


def to_newline(text: str, newline: str) -> str:
    """``text`` with every line ending (``\\r\\n`` or ``\\n``) written as ``newline``; a lone ``\\r`` is kept."""
    folded = text.replace("\r\n", "\n")
    return folded if newline == "\n" else folded.replace("\n", newline)


_LINE = re.compile(r"[^\n]*\n|[^\n]+")


def _lines_with_ends(text: str) -> list[str]:
    return _LINE.findall(text)


def _keep_ends(raw: str, old: str, new: str) -> str:
    """``new`` over one line whose text was ``old`` (``raw`` underneath): the raw characters of the prefix and
    suffix ``new`` shares with ``old`` (an undecodable byte outside the edited part stays that byte)."""
    limit = min(len(old), len(new))
    head = 0
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return raw[:head] + new[head:len(new) - tail] + raw[len(raw) - tail:]


def keep_undecodable(raw: str, new: str) -> str:
    """The raw text to write for ``new`` replacing ``raw`` (whose shown text has U+FFFD for its undecodable
    bytes): lines ``new`` leaves as they were, and the unchanged start and end of a line it changes, keep their
    raw characters, so an undecodable byte the edit did not touch is written back as itself. Lines are aligned
    by ``difflib`` (only for a span that holds such a byte, which a valid UTF-8 file never has)."""
    if not LONE_SURROGATE.search(raw):
        return new
    raw_lines = _lines_with_ends(raw)
    old_lines = [shown(line) for line in raw_lines]
    new_lines = _lines_with_ends(new)
    out: list[str] = []
    matcher = SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += raw_lines[i1:i2]
        elif tag == "replace" and i2 - i1 == j2 - j1:
            out += [_keep_ends(raw_lines[i1 + k], old_lines[i1 + k], new_lines[j1 + k]) for k in range(i2 - i1)]
        else:
            out += new_lines[j1:j2]
    return "".join(out)


@dataclass(frozen=True)
class Document:
    """Decoded text and its format. ``text`` is the shown text (every edit matches and counts on it);
    ``raw`` is the same text with undecodable bytes held as lone surrogates (the same length: an offset means
    the same in both). Lines are split after ``\\n``; line ``k`` (1-based) starts at ``line_starts[k - 1]``."""

    text: str
    fmt: TextFormat
    line_starts: tuple[int, ...] = field(repr=False)
    raw: str = field(default="", repr=False)

    @classmethod
    def decode(cls, data: bytes, path: str, *, default_ending: LineEnding = "LF") -> Document:
        """Raises 5008 for binary content (and for UTF-16 that ends in half a code unit)."""
        if is_binary(data):
            raise CodePlaneError(ErrorCode.BINARY_FILE, f"{path} is binary; only text files can be edited",
                                 details={"path": path})
        try:
            encoding, bom, raw = decode_exact(data)
        except UnicodeDecodeError:
            raise CodePlaneError(ErrorCode.BINARY_FILE, f"{path} has a UTF-16 mark but an odd number of bytes",
                                 details={"path": path}) from None
        ending = detect_line_ending(raw) or default_ending
        return cls.from_text(shown(raw), TextFormat(encoding=encoding, bom=bom, line_ending=ending), raw=raw)

    @classmethod
    def from_text(cls, text: str, fmt: TextFormat, *, raw: str | None = None) -> Document:
        starts = [0]
        pos = text.find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        if starts[-1] == len(text) and len(starts) > 1:
            starts.pop()  # a final separator ends the last line; it does not open a new one
        if not text:
            starts = []
        return cls(text=text, fmt=fmt, line_starts=tuple(starts), raw=text if raw is None else raw)

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    @property
    def ends_with_newline(self) -> bool:
        return self.text.endswith("\n")

    def offset(self, line: int) -> int:
        """Character offset where ``line`` starts; ``line_count + 1`` is the end of the text."""
        if line <= self.line_count:
            return self.line_starts[line - 1]
        return len(self.text)

    def line_of(self, offset: int) -> int:
        """The 1-based line holding character ``offset`` (``line_count`` for the end of the text)."""
        return max(1, bisect_right(self.line_starts, offset))

    def line(self, number: int) -> str:
        """Line ``number`` without its terminator."""
        text = self.text[self.offset(number):self.offset(number + 1)]
        return text[:-2] if text.endswith("\r\n") else text.removesuffix("\n")

    def lines(self) -> list[str]:
        return [self.line(n) for n in range(1, self.line_count + 1)]

    def encode(self, text: str, path: str) -> bytes:
        """``text`` (raw: lone surrogates are this file's undecodable bytes) in this document's encoding and BOM.
        Raises 1003 if the encoding cannot hold it, or if it adds non-ASCII text to a file that is not UTF-8 and
        declares another encoding (PEP 263 ``# -*- coding: latin-1 -*-``): written as UTF-8, Python would read
        those bytes as other characters."""
        declared = _declared_encoding(self.raw) if self.fmt.encoding == "utf-8" else None
        if declared is not None and _non_ascii(text) > _non_ascii(self.raw):
            raise CodePlaneError(
                ErrorCode.INVALID_ARGUMENTS,
                f"{path} declares coding {declared} and holds bytes that are not UTF-8: new non-ASCII text would "
                "be written as UTF-8, which that coding reads as other characters; write it escaped (\\xe9) or "
                "convert the file to UTF-8 first",
                details={"path": path, "encoding": declared},
            )
        try:
            return self.fmt.bom + text.encode(self.fmt.encoding, exact_errors(self.fmt.encoding))
        except UnicodeEncodeError as exc:
            raise CodePlaneError(
                ErrorCode.INVALID_ARGUMENTS,
                f"{path} is {self.fmt.encoding}; the new text has characters it cannot hold "
                f"({text[exc.start:exc.end]!r})",
                details={"path": path, "encoding": self.fmt.encoding},
            ) from None


#: PEP 263: a coding declaration in a comment on the first or second line.
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def _undecodable(raw: str) -> bool:
    return any("\udc80" <= char <= "\udcff" for char in raw)


def _non_ascii(text: str) -> int:
    """Characters beyond ASCII that are real text (not an undecodable byte held as a lone surrogate)."""
    return sum(1 for char in text if char > "\x7f" and not "\udc80" <= char <= "\udcff")


def _declared_encoding(raw: str) -> str | None:
    """The non-UTF-8 encoding a file that is not valid UTF-8 declares on its first two lines, else ``None``."""
    if not _undecodable(raw):
        return None
    for line in raw.split("\n", 2)[:2]:
        found = _CODING.match(line)
        if found is not None:
            name = found.group(1).lower().replace("_", "-")
            return None if name in ("utf-8", "utf8") or name.startswith("utf-8-") else found.group(1)
    return None


def lines_of(text: str | None) -> list[str]:
    """``text``'s lines without terminators, split as :class:`Document` splits them (``str.splitlines`` also
    breaks at ``\\r``, ``\\f``, U+2028 ..., which would number a diff's lines unlike every other answer)."""
    return Document.from_text(text, TextFormat()).lines() if text else []
