"""A file move keeps the ``tsconfig*.json``/``jsconfig*.json`` paths naming it (s56, QA59 F4).

``tsc -b`` reaches a project through ``references[].path``, a base through ``extends``, an alias's files through
``compilerOptions.paths``, and the sources through ``include``/``files``/``rootDir``: moved without them,
``packages/a`` -> ``packages/core`` left ``{"path": "../a"}`` naming nothing (TS5083, TS6053) while the plan
said it covered everything. Each such string naming a moved file or directory (or a path under one that holds no
file, such as ``outDir``'s build output) is rewritten to the new place, relative to where the config then lies
(``paths`` targets: to its ``baseUrl``), in the style written (``./``, a trailing ``/``, ``extends`` without
``.json``). A glob is rewritten only up to its first wildcard (``packages/a/src/**/*.ts``); one whose wildcard
spans the move (``packages/*/src`` after ``packages/a`` -> ``libs/a``) is left as written and, when a moved
source no longer matches its config's ``include``/``files``, said in a warning. Configs are JSONC: only the
string literals' spans are edited, so comments and trailing commas stay. A base named by package
(``@tsconfig/node20``) is outside the repository and left alone.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from codeplane.index.structural import tspaths
from codeplane.refactor.jsimports import is_js
from codeplane.refactor.jsmanifests import Files, join, relocate
from codeplane.refactor.spans import SourceText, SpanEdit

REASON = "tsconfig_path"
#: A JSONC token: a string literal (its text in group 1) or a comment, whose quotes are no string's.
_TOKEN = re.compile(r'"((?:\\.|[^"\\])*)"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_GLOB = re.compile(r"[*?{\[]")
#: ``compilerOptions`` whose strings are paths relative to the config's directory.
_OPTION_PATHS = frozenset({"rootDir", "rootDirs", "outDir", "outFile", "baseUrl", "declarationDir",
                           "tsBuildInfoFile", "typeRoots"})
#: Warnings listed per config; the rest are counted.
_LISTED = 3


@dataclass
class ConfigEdits:
    """The edits to the configs' paths, the warnings about globs left as written, and every config's text after
    the move (by its new path: what resolves aliases then)."""

    edits: list[SpanEdit] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    after: dict[str, str] = field(default_factory=dict)


def config_edits(configs: Mapping[str, SourceText], moved: Mapping[str, str], files: Files) -> ConfigEdits:
    """The edits keeping ``configs`` (``tspaths.is_config_text`` files) naming what they named before the move."""
    out = ConfigEdits()
    texts = {path: src.text for path, src in configs.items()}
    for path, src in sorted(configs.items()):
        mine, warnings = _config(src, texts, moved, files)
        out.edits += mine
        out.warnings += warnings
        out.after[moved.get(path, path)] = apply_edits(src.text, mine)
    return out


def apply_edits(text: str, edits: list[SpanEdit]) -> str:
    """``text`` with single-line ``edits`` made (the config's text after the move)."""
    for edit in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        lines = text.split("\n")
        line = lines[edit.line - 1]
        lines[edit.line - 1] = line[:edit.column] + edit.new_text + line[edit.end_column:]
        text = "\n".join(lines)
    return text


def strings(text: str) -> Iterator[tuple[int, str]]:
    """``(offset of the contents, contents)`` of every string literal of a JSONC text, comments skipped."""
    for match in _TOKEN.finditer(text):
        if match.group(1) is not None:
            yield match.start(1), match.group(1)


def _walk(value: Any, keys: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...] | None, str]]:
    """``(keys leading to it, string)`` for every string of the document in text order; a key has ``None``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield None, key
            yield from _walk(item, (*keys, key))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, keys)
    elif isinstance(value, str):
        yield keys, value


def _config(src: SourceText, texts: Mapping[str, str], moved: Mapping[str, str], files: Files
            ) -> tuple[list[SpanEdit], list[str]]:
    try:
        data = tspaths.loads(src.text)
    except (ValueError, RecursionError):
        return [], []
    if not isinstance(data, dict):
        return [], []
    tokens = list(strings(src.text))
    places = list(_walk(data, ()))
    if len(tokens) != len(places):  # a duplicate key, an escape JSON reads otherwise: no guessing at positions
        return [], []
    old_dir = posixpath.dirname(src.path)
    new_dir = posixpath.dirname(moved.get(src.path, src.path))
    old_base, new_base = _paths_base(src.path, texts, moved, files)
    out: list[SpanEdit] = []
    after: dict[str, list[str]] = {"include": [], "files": []}
    for (offset, written), (keys, value) in zip(tokens, places, strict=True):
        new_value = None
        if keys is not None and written == value and "\\" not in written:
            if keys == ("extends",):
                new_value = _extends(value, old_dir, new_dir, moved, files)
            elif keys[:2] == ("compilerOptions", "paths") and len(keys) == 3:
                new_value = follow(value, old_base, new_base, moved, files)
            elif keys in (("references", "path"), ("files",), ("include",), ("exclude",)) or (
                    len(keys) == 2 and keys[0] == "compilerOptions" and keys[1] in _OPTION_PATHS):
                new_value = follow(value, old_dir, new_dir, moved, files)
        if new_value is not None and new_value != value:
            line, col = src.position(offset)
            out.append(SpanEdit(src.path, line, col, line, col + len(value), value, new_value, REASON))
        if keys in (("include",), ("files",)):
            after[keys[0]].append(value if new_value is None else new_value)
    return out, _unmatched(src.path, data, after, new_dir, moved)


def follow(value: str, old_dir: str, new_dir: str, moved: Mapping[str, str], files: Files) -> str | None:
    """``value`` (a path or glob relative to ``old_dir``) naming the same place from ``new_dir`` after the move;
    ``None`` when it names nothing that moves (nor does ``old_dir``) or its place scatters. Only the part before
    the first wildcard is read: the rest is kept as written."""
    if not value or "://" in value or value.startswith("/"):
        return None
    wild = _GLOB.search(value)
    lead = value if wild is None else value[:value.rfind("/", 0, wild.start()) + 1]
    rest = value[len(lead):]
    absolute = join(old_dir, lead or ".")
    if absolute is None:
        return None
    target = relocate(absolute, moved, files)
    if target is None or (target == absolute and new_dir == old_dir):
        return None
    relative = posixpath.relpath(target or ".", new_dir or ".")
    if relative == ".":
        return value if not lead or lead in (".", "./") else ("./" + rest if rest else ".")
    if lead.startswith("./") and not relative.startswith("../"):
        relative = "./" + relative
    if lead.endswith("/"):
        relative += "/"
    return relative + rest


def _extends(value: str, old_dir: str, new_dir: str, moved: Mapping[str, str], files: Files) -> str | None:
    """An ``extends`` entry after the move: a repository config, named with or without ``.json`` as TypeScript
    allows; a package's config is left alone."""
    if not value.startswith(("./", "../")):
        return None
    absolute = join(old_dir, value)
    if absolute is not None and absolute not in files.held and f"{absolute}.json" in files.held:
        followed = follow(f"{value}.json", old_dir, new_dir, moved, files)
        return followed.removesuffix(".json") if followed is not None else None
    return follow(value, old_dir, new_dir, moved, files)


def _paths_base(path: str, texts: Mapping[str, str], moved: Mapping[str, str], files: Files) -> tuple[str, str]:
    """The directory ``path``'s own ``paths`` targets are relative to, before and after the move: the ``baseUrl``
    its ``extends`` chain states (which the edits keep naming the same place), else the config's directory."""
    stated = _base_url(path, texts, 0)
    if stated is None:
        return posixpath.dirname(path), posixpath.dirname(moved.get(path, path))
    base = join(posixpath.dirname(stated[1]), stated[0])
    if base is None:
        return posixpath.dirname(path), posixpath.dirname(moved.get(path, path))
    return base, relocate(base, moved, files) or base


def _base_url(path: str, texts: Mapping[str, str], depth: int) -> tuple[str, str] | None:
    """(``baseUrl``, the config stating it) through ``path``'s ``extends`` chain, later bases first."""
    if depth > 32 or path not in texts:  # tspaths' bound: a cycle ends where it closes
        return None
    try:
        data = tspaths.loads(texts[path])
    except (ValueError, RecursionError):
        return None
    options = data.get("compilerOptions") if isinstance(data, dict) else None
    if isinstance(options, dict) and isinstance(options.get("baseUrl"), str):
        return options["baseUrl"], path
    named = data.get("extends") if isinstance(data, dict) else None
    for base in reversed([named] if isinstance(named, str) else named if isinstance(named, list) else []):
        if isinstance(base, str) and base.startswith(("./", "../")):
            joined = join(posixpath.dirname(path), base)
            found = next((c for c in (joined, f"{joined}.json") if c is not None and c in texts), None)
            stated = _base_url(found, texts, depth + 1) if found is not None else None
            if stated is not None:
                return stated
    return None


def glob_regex(pattern: str, *, directory_matches: bool) -> re.Pattern[str]:
    """A repository-path glob as TypeScript and Vitest read one: ``**/`` any directories, ``*``/``?`` within a
    name, ``{a,b}`` either. ``directory_matches``: a pattern naming a directory matches every file under it."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
            continue
        char = pattern[i]
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            out.append("(?:" + "|".join(re.escape(p) for p in pattern[i + 1:end].split(",")) + ")")
            i = end + 1
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char)))
        i += 1
    return re.compile("".join(out) + ("(?:/.*)?" if directory_matches else ""))


def matches(pattern: str, path: str) -> bool:
    """Whether repository-relative ``pattern`` (a glob, a file, or a directory: a last name without a wildcard
    or an extension) takes in ``path``."""
    last = pattern.rsplit("/", 1)[-1]
    directory = _GLOB.search(last) is None and "." not in last
    return glob_regex(pattern, directory_matches=directory).fullmatch(path) is not None


def _unmatched(path: str, data: dict[str, Any], after: Mapping[str, list[str]], new_dir: str,
               moved: Mapping[str, str]) -> list[str]:
    """A warning when moved sources a config's own ``include``/``files`` took in are no longer taken in."""
    before = {key: [v for v in data.get(key, []) if isinstance(v, str)] if isinstance(data.get(key), list) else []
              for key in ("include", "files")}
    if not before["include"] and not before["files"]:
        return []
    old_dir = posixpath.dirname(path)

    def taken(entries: Mapping[str, list[str]], directory: str, file: str) -> bool:
        for key, values in entries.items():
            for value in values:
                absolute = join(directory, value)
                if absolute is not None and (file == absolute if key == "files" else matches(absolute, file)):
                    return True
        return False

    lost = sorted(new for old, new in moved.items() if is_js(old) and taken(before, old_dir, old)
                  and not taken(after, new_dir, new))
    if not lost:
        return []
    more = f" (+{len(lost) - _LISTED} more)" if len(lost) > _LISTED else ""
    written = "; ".join(f'"{key}" ' + ", ".join(values) for key, values in before.items() if values)
    return [f"{moved.get(path, path)}: {', '.join(lost[:_LISTED])}{more} no longer matched by its {written} after "
            "the move (a glob is not rewritten)"]
