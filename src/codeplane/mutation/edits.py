"""The edits a batch is made of (spec §9, §23.7 ``write_source``).

Every edit names one repository path (POSIX, relative to the repo root) and may carry
``expected_file_sha256``: the SHA-256 of the exact bytes on disk, the same value ``read_source``
returns (``codeplane.core.hashing.sha256_bytes``). Line numbers are 1-based and inclusive; all span
edits in one batch refer to the file as it was *before* the batch (they do not shift each other).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from codeplane.repo.content import LONE_SURROGATE

#: The whole SHA-256 or, like a short git id, its first 12+ hex digits (what answers' text shows): 48 bits
#: still make "the file changed since I read it" impossible to miss by chance (one in 2.8e14), and the check
#: compares against the hash of the exact bytes on disk either way.
SHA256_PREFIX_MIN = 12
_SHA256 = rf"^[0-9a-fA-F]{{{SHA256_PREFIX_MIN},64}}$"


def _text(value: str) -> str:
    # A lone surrogate is how the engine holds a byte the file's encoding cannot decode (``document.py``): one
    # sent as text would be written as that raw byte, or fail to encode at all.
    if LONE_SURROGATE.search(value):
        raise ValueError("holds a lone surrogate (\\ud800-\\udfff), which no file encoding can write")
    return value


class _Edit(BaseModel):
    # defer_build: built on first use, or by the server's warm-up after /ready (issue 19's warm restart)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    path: str = Field(min_length=1)
    #: Refuse the edit unless the file's current bytes hash to this, or to a hash starting with it (5002).
    expected_file_sha256: str | None = Field(default=None, pattern=_SHA256)

    @field_validator("expected_file_sha256")
    @classmethod
    def _lower(cls, value: str | None) -> str | None:
        return value.lower() if value is not None else None  # hex is hex in either case (``sha256sum`` vs tools)


class CreateFile(_Edit):
    """Create ``path`` with ``content`` (5005 if it exists, unless ``overwrite``).

    Line endings: the path's ``.gitattributes`` ``eol``, when it declares one, whatever ``content`` carries (git
    converts to it on checkout); under ``-text`` (``binary``) ``content`` as given. Otherwise content with no
    ``\\r`` is written with the repository's dominant line ending (an overwrite: the file's), content that
    already carries ``\\r`` as given. New files are UTF-8 without BOM.
    """

    kind: Literal["create"] = "create"
    content: str
    overwrite: bool = False

    _content = field_validator("content")(_text)


class UpdateSpan(_Edit):
    """Replace lines ``start_line..end_line`` (inclusive) with ``new_content``.

    ``end_line == start_line - 1`` is an empty span: ``new_content`` is inserted before ``start_line``
    (``start_line = line_count + 1`` appends). ``new_content`` is written in the file's line ending; a
    trailing newline is added when the replaced lines had one (inserted lines always get one, except after
    an unterminated last line, which stays unterminated). ``""`` deletes the lines.
    ``expected_content`` (the old text of the span, line-ending-insensitive) lets the engine re-anchor a
    span that drifted to the unique nearby match and report the correction.
    """

    kind: Literal["update_span"] = "update_span"
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=0)
    new_content: str
    expected_content: str | None = None

    _new_content = field_validator("new_content")(_text)

    @model_validator(mode="after")
    def _span_is_ordered(self) -> Self:
        if self.end_line < self.start_line - 1:
            raise ValueError(f"end_line {self.end_line} is before start_line {self.start_line} - 1")
        if self.end_line == self.start_line - 1 and self.expected_content:
            # An insertion replaces nothing, so there is no old text to expect (or to re-anchor by).
            raise ValueError("expected_content must be empty for an insertion (end_line = start_line - 1)")
        return self


class ReplaceText(_Edit):
    """Replace the exact text ``old_text`` with ``new_text``; it must occur exactly once unless
    ``replace_all``. ``\\n`` in both is read as the file's line ending."""

    kind: Literal["replace_text"] = "replace_text"
    old_text: str = Field(min_length=1)
    new_text: str
    replace_all: bool = False

    _new_text = field_validator("new_text")(_text)


class DeleteFile(_Edit):
    """Delete ``path`` (5004 if it does not exist)."""

    kind: Literal["delete"] = "delete"


class MoveFile(_Edit):
    """Move ``path`` to ``to`` byte for byte, mode bits kept (5005 if ``to`` exists, unless ``overwrite``).

    For a clean tracked file git's index is updated like ``git mv`` (§8.10); otherwise it is a plain
    filesystem move and the delta says ``git_mv: false``.
    """

    kind: Literal["move"] = "move"
    to: str = Field(min_length=1)
    overwrite: bool = False


Edit = CreateFile | UpdateSpan | ReplaceText | DeleteFile | MoveFile
