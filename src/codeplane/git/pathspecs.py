"""Path and ref arguments in, display paths out.

Every caller-supplied path goes through :func:`codeplane.core.paths.resolve_in_repo` (5001 on escape)
and may not start with ``-`` (it could be read as an option by the git CLI fallbacks). pygit2 decodes
non-UTF-8 file names with ``surrogateescape``; :func:`shown` turns those into ``\\xNN`` escapes so
every answer is valid JSON (the same bytes ``git -c core.quotepath=false`` would print, escaped). Ref, branch,
tag and worktree names that are not UTF-8 are shown the same way, and a ref argument may name one in that form
(:func:`raw_ref`): git refuses ``\\`` in a ref name, so ``\\xNN`` there can only be an escape.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import canonicalize, resolve_in_repo


def shown(path: str) -> str:
    """The display form of a pygit2 path or ref name (lossless for UTF-8, ``\\xNN`` for other bytes)."""
    if path.isascii():
        return path
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return path.encode("utf-8", "surrogateescape").decode("utf-8", errors="backslashreplace")
        except UnicodeEncodeError:  # a surrogate that stands for no byte (not from a decode): ``\\udNNN``
            return path.encode("utf-8", "backslashreplace").decode("utf-8")
    return path


_BYTE_ESCAPE = re.compile(rb"\\x([89a-fA-F][0-9a-fA-F])")


def raw_ref(value: str) -> str:
    """A ref argument with each ``\\xNN`` escape :func:`shown` writes (a byte 0x80-0xff) back to that byte, as
    pygit2 names it (``surrogateescape``): ``br\\xff`` from a listing names the branch ``git branch $'br\\xff'``
    made. A value without such an escape is returned unchanged."""
    if "\\x" not in value:
        return value
    data = _BYTE_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), value.encode("utf-8", "surrogateescape"))
    return data.decode("utf-8", "surrogateescape")


def git_name(name: str) -> str | bytes:
    """``name`` as pygit2's lookups take it: bytes when it is not UTF-8 (``lookup_branch`` and ``revparse_single``
    encode a ``str`` strictly, so a raw name was a UnicodeEncodeError, 8001)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape")
    return name


def refuse_option_like(value: str, field: str) -> None:
    """1003 for a value that a git command line could mistake for an option."""
    if value.startswith("-"):
        raise CodePlaneError(
            ErrorCode.INVALID_ARGUMENTS,
            f"{field} {value!r} is refused: values starting with '-' could be read as git options",
            details={"field": field, "value": value},
        )


def check_ref(value: str, field: str = "ref") -> str:
    """A ref/revision argument: non-empty, no NUL or newline, not option-like. Returns it unchanged."""
    if not value or not value.strip():
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{field} must not be empty", details={"field": field})
    if any(ch in value for ch in ("\x00", "\n", "\r")):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{field} contains a control character",
                             details={"field": field})
    refuse_option_like(value, field)
    return value


def repo_path(root: Path, path: str, field: str = "paths", *, link_itself: bool = False) -> str:
    """Canonical repo-relative path for a caller path ("" is the repository root). A name starting with ``-`` is a
    name: every git command line CodePlane runs puts paths after ``--`` (``-dash.txt`` was refused).

    ``link_itself``: a symlink pointing outside the repository (or into ``.git``) may be named when the directory
    holding it is inside: git reads, stages and restores the link itself, never what it points to (``git checkout
    -- host_link``). A path below such a link stays refused (5001), and a restore replaces a link standing where
    the source has a directory instead of writing through it (``_workdir.leading_links``)."""
    try:
        return resolve_in_repo(root, path).rel
    except CodePlaneError:
        if not link_itself or not _is_link_inside(root, path):
            raise
        return canonicalize(path).rel


def _is_link_inside(root: Path, path: str) -> bool:
    canonical = canonicalize(path)
    if canonical.protected_part is not None:  # ``.git`` itself, or a name in it, however it is linked
        return False
    parent, _, name = canonical.rel.rpartition("/")
    try:
        inside = resolve_in_repo(root, parent).rel if parent else ""
    except CodePlaneError:
        return False
    return bool(name) and os.path.islink(root.resolve() / inside / name)


def repo_paths(root: Path, paths: Sequence[str] | None, field: str = "paths", *, link_itself: bool = True,
               ) -> list[str]:
    """Canonical, de-duplicated, sorted paths; an empty result means "everything". A path filter names a symlink
    itself (``link_itself``, :func:`repo_path`) unless the caller creates something at the path."""
    if not paths:
        return []
    out = sorted({repo_path(root, p, field, link_itself=link_itself) for p in paths})
    return [] if "" in out else out


def under(path: str, scopes: Iterable[str]) -> bool:
    """Whether ``path`` equals or lies below one of ``scopes`` (empty scopes match everything)."""
    matched = False
    for scope in scopes:
        matched = True
        if path == scope or path.startswith(scope + "/"):
            return True
    return not matched


def _glob_part(spec: str, i: int) -> tuple[str, int]:
    """The regex of the glob item at ``spec[i]`` and where the next one starts."""
    ch = spec[i]
    if ch == "*":
        return ".*", i + 1
    if ch == "?":
        return ".", i + 1
    if ch == "\\" and i + 1 < len(spec):
        return re.escape(spec[i + 1]), i + 2
    if ch == "[":
        j = i + 1
        negate = j < len(spec) and spec[j] in "!^"
        start = j = j + 1 if negate else j
        if j < len(spec) and spec[j] == "]":  # a leading ``]`` is a member, not the end
            j += 1
        while j < len(spec) and spec[j] != "]":
            j += 2 if spec[j] == "\\" else 1
        if j < len(spec):
            return f"[{'^' if negate else ''}{_members(spec[start:j])}]", j + 1
    return re.escape(ch), i + 1


def _members(text: str) -> str:
    """A bracket expression's members as a regex set: ranges kept, ``\\`` escapes honoured, the rest literal."""
    out: list[str] = []
    k = 0
    while k < len(text):
        if text[k] == "\\" and k + 1 < len(text):
            out.append(re.escape(text[k + 1]))
            k += 2
            continue
        out.append("-" if text[k] == "-" else re.escape(text[k]))
        k += 1
    return "".join(out)


def is_glob(spec: str) -> bool:
    """Whether git reads ``spec`` as a glob (it holds ``*``, ``?``, ``[`` or ``\\``)."""
    return _glob(spec) is not None


@lru_cache(maxsize=256)
def _glob(spec: str) -> re.Pattern[str] | None:
    """git's default pathspec glob (wildmatch without ``WM_PATHNAME``: ``*`` and ``?`` match ``/`` too, ``[...]``
    with ``!`` or ``^``, ``\\`` escapes) as a regex over the whole path; ``None`` for a spec without glob
    characters."""
    if not any(ch in spec for ch in "*?[\\"):
        return None
    parts: list[str] = []
    i = 0
    while i < len(spec):
        part, i = _glob_part(spec, i)
        parts.append(part)
    return re.compile("".join(parts), re.DOTALL)


def matches(path: str, specs: Sequence[str]) -> bool:
    """Whether ``path`` is in the pathspecs ``specs`` as ``git status -- <specs>`` reads them (empty: everything):
    a spec matches the path itself and everything below it, and one with glob characters also every path it
    matches as a whole (``*.py`` covers ``dir/x.py``; ``[ab].py`` both ``a.py`` and a file named ``[ab].py``)."""
    if under(path, specs):
        return True
    return any((pattern := _glob(spec)) is not None and pattern.fullmatch(path) is not None for spec in specs)
