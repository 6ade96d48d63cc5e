"""A file move proposes the paths a Jest or Vitest config names it by (s56, QA59 F4).

``jest.config.*``/``vitest.config.*`` are code, so a string in one is a path only by how the runner reads it:
a string literal that is exactly a path to a moved file or directory, from the config's directory or from
``<rootDir>`` (Jest's default root is that directory), is proposed at ``medium`` (``"<rootDir>/../../scripts/
ts-jest-transform.js"`` in ``transform``; moved without it, Jest stops loading). A glob (Vitest's ``include``)
is rewritten up to its first wildcard as :mod:`tsconfigs` does, and a ``{core,ui}`` alternative naming a directory
renamed in place is renamed (``packages/{core,web}/test/**``); one whose wildcard spans the move otherwise is left
as written, with a warning when moved files it took in no longer match.
Strings naming nothing the repository holds (``node_modules``, a module name) are left alone.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Set

from codeplane.refactor.jsmanifests import Files, join, relocate
from codeplane.refactor.models import Certainty
from codeplane.refactor.spans import SourceText, SpanEdit
from codeplane.refactor.tsconfigs import follow, matches

REASON = "runner_config_path"
_NAME = re.compile(r"(?:jest|vitest)\.config\.[cm]?[jt]s")
#: A one-line string literal, escapes included so a regex key's ``"\\.tsx?$"`` ends where its quote does; or a
#: comment, whose apostrophes open no string.
_STRING = re.compile(r"""(["'`])((?:\\.|(?!\1)[^\\\n])*)\1|//[^\n]*|/\*.*?\*/""", re.DOTALL)
_ROOT_DIR = "<rootDir>/"
_WILD = re.compile(r"[*?{\[]")


def is_runner_config(path: str) -> bool:
    return _NAME.fullmatch(posixpath.basename(path)) is not None


def runner_edits(src: SourceText, moved: Mapping[str, str], files: Files, taken: Set[tuple[int, int]]
                 ) -> tuple[list[tuple[SpanEdit, Certainty]], list[str]]:
    """Proposed edits to the paths naming moved files in one runner config (``taken``: positions other planners
    already edit, its imports), and the warnings for globs that no longer take in moved files."""
    old_dir = posixpath.dirname(src.path)
    new_dir = posixpath.dirname(moved.get(src.path, src.path))
    out: list[tuple[SpanEdit, Certainty]] = []
    warnings: list[str] = []
    for match in _STRING.finditer(src.text):
        written = match.group(2)
        if written is None or "\\" in written or "${" in written:  # a path is written plainly
            continue
        prefix = _ROOT_DIR if written.startswith(_ROOT_DIR) else ""
        value = written[len(prefix):]
        if "/" not in value or not _names_repository_path(value, old_dir, files):
            continue
        line, col = src.position(match.start(2))
        if (line, col) in taken:
            continue
        new_value = follow(value, old_dir, new_dir, moved, files)
        if (new_value is None or new_value == value) and old_dir == new_dir:
            new_value = _renamed_alternative(value, old_dir, moved, files)
        if new_value is not None and new_value != value:
            out.append((SpanEdit(src.path, line, col, line, col + len(written), written, prefix + new_value,
                                 REASON), "medium"))
        elif _WILD.search(value):
            warnings += _lost(f"{src.path}:{line}", written, join(old_dir, value), join(new_dir, value), moved)
    return out, warnings


def _renamed_alternative(value: str, directory: str, moved: Mapping[str, str], files: Files) -> str | None:
    """``packages/{core,ui}/test/**`` after ``packages/ui`` -> ``packages/web``: ``packages/{core,web}/test/**``.
    A ``{a,b}`` alternative naming a whole directory that moves within the same parent is renamed; one moved
    elsewhere, or a wildcard before the braces, leaves the glob as written (``None``)."""
    braces = re.search(r"(?:^|(?<=/))\{([^{}/*?\[]*)\}(?=/|$)", value)
    if braces is None or _WILD.search(value, 0, braces.start()):
        return None
    parent = join(directory, value[:braces.start()] or ".")
    if parent is None:
        return None
    alternatives = braces.group(1).split(",")
    renamed: list[str] = []
    for alternative in alternatives:
        place = join(parent, alternative) if alternative else None
        if place is None or not files.under(place):
            renamed.append(alternative)  # names no directory of the repository: nothing of it moves
            continue
        target = relocate(place, moved, files)
        if target is None or posixpath.dirname(target) != parent:
            return None
        renamed.append(posixpath.basename(target))
    if renamed == alternatives:
        return None
    return f"{value[:braces.start()]}{{{','.join(renamed)}}}{value[braces.end():]}"


def _names_repository_path(value: str, directory: str, files: Files) -> bool:
    """Whether the part of ``value`` before its first wildcard names a file or directory of the repository."""
    wild = _WILD.search(value)
    lead = value if wild is None else value[:value.rfind("/", 0, wild.start()) + 1]
    absolute = join(directory, lead or ".")
    return absolute is not None and (absolute in files.held or bool(files.under(absolute)))


def _lost(where: str, written: str, before: str | None, after: str | None, moved: Mapping[str, str]) -> list[str]:
    if before is None or after is None:
        return []
    lost = sorted(new for old, new in moved.items() if matches(before, old) and not matches(after, new))
    if not lost:
        return []
    more = f" (+{len(lost) - 3} more)" if len(lost) > 3 else ""
    return [f"{where}: '{written}' no longer matches {', '.join(lost[:3])}{more} after the move (a glob is not "
            "rewritten)"]
