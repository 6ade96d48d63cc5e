"""TypeScript's non-relative imports that name repository files: ``compilerOptions.paths`` and ``baseUrl`` of
the nearest ``tsconfig.json``/``jsconfig.json`` above the importing file, as its ``extends`` chain sets them.

``extends`` is followed as TypeScript does through repository files (``"../../tsconfig.base.json"``, an array
whose later entries win, the own options over all): an option comes from the nearest config of the chain that
states it, ``baseUrl`` relative to that config's directory, and ``paths`` targets relative to ``baseUrl`` or else
to the directory of the config stating ``paths``. A base named by package (``"@tsconfig/node20"``) lies outside
the repository and is not read. Deliberately small otherwise: a ``paths`` entry uses its first target only
(TypeScript tries them in order; the first is the one a project means in nearly every case), and the key is only
a candidate — linking resolves it if a repository file holds it, else the import stays external. A specifier that
matches no ``paths`` pattern resolves against ``baseUrl`` only if a file is there (the key simply resolves or not).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from typing import Any

_JSONC = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")
#: Files an ``extends`` may name besides those (``tsconfig.base.json``, ``tsconfig.build.json``): their texts are kept.
_CONFIG_TEXT = re.compile(r"(?:ts|js)config(?:\.[^/]*)?\.json")
#: How long an ``extends`` chain is followed (real ones are two or three long; a cycle stops where it closes).
_MAX_EXTENDS = 32

#: config directory -> (base directory, whether ``baseUrl`` set it, [(pattern, first target)])
Config = tuple[str, bool, list[tuple[str, str]]]
Configs = Mapping[str, Config]


def loads(text: str) -> Any:
    plain = _JSONC.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return json.loads(_TRAILING_COMMA.sub(r"\1", plain))


def is_config_text(path: str) -> bool:
    """Whether ``path`` is a project config (or a base one extends) whose text resolution reads."""
    return _CONFIG_TEXT.fullmatch(posixpath.basename(path)) is not None


def parse(path: str, text: str) -> Config | None:
    """(base directory, path patterns) of one config read alone; None without ``baseUrl``/``paths``."""
    return configs({path: text}).get(path.rpartition("/")[0])


def configs(texts: Mapping[str, str]) -> dict[str, Config]:
    """The ``baseUrl``/``paths`` of every ``tsconfig.json``/``jsconfig.json`` among ``texts`` (by directory; a
    tsconfig wins over a jsconfig in one directory), each with what its ``extends`` chain among ``texts`` sets."""
    chains = _Chains(texts)
    found: dict[str, Config] = {}
    for path in sorted(texts, key=lambda p: (p.rpartition("/")[0], posixpath.basename(p) != "tsconfig.json")):
        if posixpath.basename(path) in CONFIG_NAMES:
            config = chains.config(path)
            if config is not None:
                found.setdefault(path.rpartition("/")[0], config)
    return found


def compiler_option(path: str, texts: Mapping[str, str], name: str) -> Any:
    """The value of compiler option ``name`` for config ``path`` through its ``extends`` chain, or None."""
    stated = _Chains(texts).option(path, name)
    return stated[0] if stated is not None else None


class _Chains:
    """Configs' own compiler options and ``extends`` targets, read once each."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self._texts = texts
        self._read: dict[str, tuple[dict[str, Any], list[str]] | None] = {}
        self._found: dict[tuple[str, str], tuple[Any, str] | None] = {}

    def config(self, path: str) -> Config | None:
        base_url, paths = self.option(path, "baseUrl"), self.option(path, "paths")
        if base_url is not None and not isinstance(base_url[0], str):
            base_url = None
        if paths is not None and not isinstance(paths[0], dict):
            paths = None
        if base_url is None and paths is None:
            return None
        if base_url is not None:
            base = posixpath.normpath(posixpath.join(base_url[1].rpartition("/")[0] or ".", base_url[0]))
        else:
            base = posixpath.normpath(paths[1].rpartition("/")[0] or ".") if paths is not None else "."
        if base.startswith("../") or base == "..":
            return None  # outside the repository
        table = paths[0] if paths is not None else {}
        patterns = [(p, t[0]) for p, t in table.items()
                    if isinstance(p, str) and isinstance(t, list) and t and isinstance(t[0], str) and p.count("*") <= 1]
        # the longest prefix wins, as in TypeScript
        ordered = sorted(patterns, key=lambda e: (-len(e[0].split("*", 1)[0]), e[0]))
        return ("" if base == "." else base), base_url is not None, ordered

    def option(self, path: str, name: str, depth: int = 0) -> tuple[Any, str] | None:
        """(value, the config stating it) of option ``name`` for ``path``: its own, else its bases' (last first)."""
        key = (path, name)
        if depth > _MAX_EXTENDS:
            return None
        if key not in self._found:
            self._found[key] = None  # in progress: a cycle reads as a base that says nothing
            read = self._options(path)
            if read is not None:
                own, bases = read
                if name in own:
                    self._found[key] = own[name], path
                else:
                    self._found[key] = next((found for base in reversed(bases)
                                             if (found := self.option(base, name, depth + 1)) is not None), None)
        return self._found[key]

    def _options(self, path: str) -> tuple[dict[str, Any], list[str]] | None:
        if path not in self._read:
            self._read[path] = _own(path, self._texts)
        return self._read[path]


def _own(path: str, texts: Mapping[str, str]) -> tuple[dict[str, Any], list[str]] | None:
    text = texts.get(path)
    if text is None:
        return None
    try:
        data = loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    options = data.get("compilerOptions")
    named = data.get("extends")
    listed = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    directory = path.rpartition("/")[0]
    bases = [b for b in (_extended(directory, n, texts) for n in listed if isinstance(n, str)) if b is not None]
    return (options if isinstance(options, dict) else {}), bases


def _extended(directory: str, named: str, texts: Mapping[str, str]) -> str | None:
    """The repository config an ``extends`` entry names (relative: TypeScript adds ``.json`` when missing)."""
    if not named.startswith(("./", "../")):
        return None  # a package's config (``@tsconfig/node20``): outside the repository
    joined = _inside(directory, named)
    if joined is None:
        return None
    for candidate in (joined, f"{joined}.json"):
        if candidate in texts:
            return candidate
    return None


def specifier_path(importer: str, source: str, configs: Configs) -> str | None:
    """The repository path (extension as written) a non-relative specifier names under the nearest config."""
    directory = importer.rpartition("/")[0]
    while True:
        config = configs.get(directory)
        if config is not None:
            break
        if not directory:
            return None
        directory = directory.rpartition("/")[0]
    base, has_base_url, patterns = config
    for pattern, target in patterns:
        prefix, star, suffix = pattern.partition("*")
        if star:
            if source.startswith(prefix) and source.endswith(suffix) and len(source) >= len(prefix) + len(suffix):
                middle = source[len(prefix):len(source) - len(suffix)]
                return _inside(base, target.replace("*", middle, 1))
        elif source == pattern:
            return _inside(base, target)
    return _inside(base, source) if has_base_url else None


def _inside(base: str, relative: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(base, relative)) if base else posixpath.normpath(relative)
    return None if joined.startswith("../") or joined in ("..", ".") or joined.startswith("/") else joined
