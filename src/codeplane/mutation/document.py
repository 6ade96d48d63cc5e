"""A text file as the engine edits it: decoded text plus the format needed to write it back byte-exactly.

The text keeps its original line endings (nothing is normalised), so bytes outside an edited span are
re-encoded to exactly what was read. Supported: UTF-8 with or without BOM, UTF-16 with BOM, and any
other text as Latin-1 (which maps every byte to one character, so it round-trips exactly; new text that
Latin-1 cannot hold is refused rather than corrupting the file). What is text is ``repo.content.is_binary``'s
answer, the index's: no NUL in the first 8 KiB unless a UTF-16 mark explains it (as git decides), so a file
the index searches and ``read_source`` shows can be edited.
"""

from __future__ import annotations

import codecs
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Literal

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.repo.content import is_binary

LineEnding = Literal["LF", "CRLF", "CR"]
NEWLINES: dict[LineEnding, str] = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


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
    """The most frequent line ending, or ``None`` when the text has none (ties prefer LF, then CRLF)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    if not (crlf or lf or cr):
        return None
    best = max((lf, 2, "LF"), (crlf, 1, "CRLF"), (cr, 0, "CR"))
    ending: LineEnding = best[2]  # type: ignore[assignment]
    return ending


def to_newline(text: str, newline: str) -> str:
    """``text`` with every line ending (``\\r\\n``, ``\\r`` or ``\\n``) written as ``newline``."""
    folded = text.replace("\r\n", "\n").replace("\r", "\n")
    return folded if newline == "\n" else folded.replace("\n", newline)




@dataclass(frozen=True)
class Document:
    """Decoded text and its format. Lines are split on the file's separator (``\\n``, or ``\\r`` for
    files that use only ``\\r``); line ``k`` (1-based) starts at ``line_starts[k - 1]``."""

    text: str
    fmt: TextFormat
    line_starts: tuple[int, ...] = field(repr=False)

    @classmethod
    def decode(cls, data: bytes, path: str, *, default_ending: LineEnding = "LF") -> Document:
        """Raises 5008 for binary content."""
        if is_binary(data):
            raise CodePlaneError(ErrorCode.BINARY_FILE, f"{path} is binary; only text files can be edited",
                                 details={"path": path})
        encoding, bom = "utf-8", b""
        for marker, name in _BOMS:
            if data.startswith(marker):
                encoding, bom = name, marker
                break
        body = data[len(bom):]
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError:
            if bom:
                raise CodePlaneError(ErrorCode.BINARY_FILE, f"{path} has a {encoding} BOM but invalid content",
                                     details={"path": path, "encoding": encoding}) from None
            encoding, text = "latin-1", body.decode("latin-1")
        ending = detect_line_ending(text) or default_ending
        return cls.from_text(text, TextFormat(encoding=encoding, bom=bom, line_ending=ending))

    @classmethod
    def from_text(cls, text: str, fmt: TextFormat) -> Document:
        sep = "\r" if "\n" not in text and "\r" in text else "\n"
        starts = [0]
        pos = text.find(sep)
        while pos != -1:
            starts.append(pos + 1)
            pos = text.find(sep, pos + 1)
        if starts[-1] == len(text) and len(starts) > 1:
            starts.pop()  # a final separator ends the last line; it does not open a new one
        if not text:
            starts = []
        return cls(text=text, fmt=fmt, line_starts=tuple(starts))

    @property
    def line_count(self) -> int:
        return len(self.line_starts)

    @property
    def ends_with_newline(self) -> bool:
        return self.text.endswith(("\n", "\r"))

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
        raw = self.text[self.offset(number):self.offset(number + 1)]
        return raw.removesuffix("\n").removesuffix("\r")

    def lines(self) -> list[str]:
        return [self.line(n) for n in range(1, self.line_count + 1)]

    def encode(self, text: str, path: str) -> bytes:
        """``text`` in this document's encoding and BOM. Raises 1003 if the encoding cannot hold it."""
        try:
            return self.fmt.bom + text.encode(self.fmt.encoding)
        except UnicodeEncodeError as exc:
            raise CodePlaneError(
                ErrorCode.INVALID_ARGUMENTS,
                f"{path} is {self.fmt.encoding}; the new text has characters it cannot hold "
                f"({text[exc.start:exc.end]!r})",
                details={"path": path, "encoding": self.fmt.encoding},
            ) from None
