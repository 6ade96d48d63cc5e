"""A file move keeps the ``package.json`` paths naming it (s55): ``"exports": {"./math": "./src/math.ts"}``,
``"types"``, ``"main"``, ``"imports"``, ``"bin"``, ``"files"``.

Those paths are how other packages (and the package itself, and ``#imports``) reach the file: moved without them,
``import { double } from '@acme/a/math'`` stops resolving though no importer changed. Each such string naming a
moved file (or a directory, or a ``*`` pattern's directory, every file of which moves together) is rewritten to
the new path, relative to where the ``package.json`` then lies, in the style written (``./`` or not). Other
fields (``scripts``, ``dependencies``) and paths naming files the repository does not hold (``./dist/index.js``,
build output) are left alone: the importers' side of the move (:mod:`jsspecifiers`) says where that breaks one.
"""

from __future__ import annotations

import json
import posixpath
import re
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Set
from typing import Any

from codeplane.index.structural.jspackages import PACKAGE_JSON
from codeplane.refactor.lexical import line_starts
from codeplane.refactor.spans import SourceText, SpanEdit

#: Top-level fields whose strings are paths inside the package.
_PATH_FIELDS = frozenset({"main", "types", "typings", "module", "browser", "exports", "imports", "bin", "files"})
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
REASON = "package_json_path"


class _Object(list[tuple[str, Any]]):
    """A JSON object as its pairs in the file's order (so strings line up with their places in the text)."""


class Files:
    """The repository's files, sorted: a directory's files are one range (a monorepo has many package.json
    strings to check against a hundred thousand files)."""

    def __init__(self, files: Set[str]) -> None:
        self.held = files
        self.ordered = sorted(files)

    def under(self, directory: str) -> list[str]:
        if not directory:
            return self.ordered
        prefix = directory + "/"
        start = bisect_left(self.ordered, prefix)
        return self.ordered[start:bisect_left(self.ordered, prefix + "\U0010ffff", start)]


def manifest_edits(manifests: Mapping[str, SourceText], moved: Mapping[str, str], files: Files
                   ) -> tuple[list[SpanEdit], dict[str, str]]:
    """Edits to the ``package.json`` paths naming moved files (``files``: the repository before the move), and
    every manifest's text after the move, by its new path."""
    edits: list[SpanEdit] = []
    after: dict[str, str] = {}
    for path, src in sorted(manifests.items()):
        mine = _edits(src, moved, files) if posixpath.basename(path) == PACKAGE_JSON else []
        edits += mine
        text = src.text
        starts = line_starts(text)
        for edit in sorted(mine, key=lambda e: (e.line, e.column), reverse=True):  # one line each
            start = starts[edit.line - 1] + edit.column
            text = text[:start] + edit.new_text + text[start + len(edit.old_text):]
        after[moved.get(path, path)] = text
    return edits, after


def _edits(src: SourceText, moved: Mapping[str, str], files: Files) -> list[SpanEdit]:
    try:
        data = json.loads(src.text, object_pairs_hook=_Object)
    except (ValueError, RecursionError):
        return []
    matches = list(_STRING.finditer(src.text))
    places = list(_walk(data, None))
    if len(matches) != len(places):  # not plain JSON text (never expected): no guessing at positions
        return []
    old_dir = posixpath.dirname(src.path)
    new_dir = posixpath.dirname(moved.get(src.path, src.path))
    out: list[SpanEdit] = []
    for match, (field, value) in zip(matches, places, strict=True):
        if field not in _PATH_FIELDS or "\\" in match.group(1):
            continue
        new_value = _moved_value(value, old_dir, new_dir, moved, files)
        if new_value is not None and new_value != value:
            line, col = src.position(match.start(1))
            out.append(SpanEdit(src.path, line, col, line, col + len(value), value, new_value, REASON))
    return out


def _walk(value: Any, field: str | None) -> Iterator[tuple[str | None, str]]:
    """``(top-level field, string)`` for every string of the document in text order; a key has field ``None``."""
    if isinstance(value, _Object):
        for key, item in value:
            yield None, key
            yield from _walk(item, key if field is None else field)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, field)
    elif isinstance(value, str) and field is not None:
        yield field, value


def _moved_value(value: str, old_dir: str, new_dir: str, moved: Mapping[str, str], files: Files) -> str | None:
    """``value`` (a path relative to the package directory) after the move, or ``None`` when it names nothing
    the move relocates (nor does the package.json itself move)."""
    if not value or "://" in value or value.startswith("/"):
        return None
    head, star, tail = value.partition("*")
    if star and not head.endswith("/"):
        return None  # ``./src/util-*.ts``: not a directory of files that moves as one
    written = head if star else value
    absolute = join(old_dir, written)
    if absolute is None:
        return None
    target = moved.get(absolute, absolute) if not star and absolute in files.held else \
        moved_directory(absolute, moved, files)
    if target is None:
        return None
    if target == absolute and new_dir == old_dir:
        return None
    relative = posixpath.relpath(target, new_dir or ".")
    if written.startswith("./") and not relative.startswith("../"):
        relative = "./" + relative
    if written.endswith("/") and not relative.endswith("/"):
        relative += "/"
    return relative + (star + tail if star else "")


def moved_directory(directory: str, moved: Mapping[str, str], files: Files) -> str | None:
    """Where ``directory`` goes: itself when none of its files move, its new place when all move under it
    together into a new directory; ``None`` when it holds no file, or its files scatter or join others."""
    inside = files.under(directory)
    if not inside:
        return None
    targets = {_strip(moved[f], f[len(directory):]) if f in moved else None for f in inside}
    if targets == {None}:
        return directory
    if None in targets or len(targets) != 1:
        return None
    target = next(iter(targets))
    # Into a directory that holds other files, it is not the same directory any more: ``./src/util/*.ts`` made
    # ``./src/*.ts`` would export every file of ``src``.
    if target is None or any(f not in moved for f in files.under(target)):
        return None
    return target


def _strip(path: str, suffix: str) -> str | None:
    return path[:-len(suffix)] if path.endswith(suffix) else None


def join(directory: str, relative: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(directory, relative)) if directory else posixpath.normpath(relative)
    if joined == ".." or joined.startswith("../"):
        return None
    return "" if joined == "." else joined


def relocate(path: str, moved: Mapping[str, str], files: Files) -> str | None:
    """Where the repository path ``path`` lies after the move: a file's new place, a directory's (as
    :func:`moved_directory` decides), or for a path holding no file (build output such as ``packages/a/dist``) its
    nearest ancestor's place with the rest appended; ``None`` when that directory's files scatter."""
    if path in files.held:
        return moved.get(path, path)
    probe = path
    while probe:
        if files.under(probe):
            target = moved_directory(probe, moved, files)
            return None if target is None else target + path[len(probe):]
        probe = posixpath.dirname(probe)
    return path  # under the root only: the root never moves


