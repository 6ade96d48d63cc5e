"""TypeScript's non-relative imports that name repository files: ``compilerOptions.paths`` and ``baseUrl`` of
the nearest ``tsconfig.json``/``jsconfig.json`` above the importing file.

Deliberately small: ``extends`` is not followed, a ``paths`` entry uses its first target only (TypeScript tries
them in order; the first is the one a project means in nearly every case), and the key is only a candidate —
linking resolves it if a repository file holds it, else the import stays external. A specifier that matches
no ``paths`` pattern resolves against ``baseUrl`` only if a file is there (the key simply resolves or not).
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

#: config directory -> (base directory, whether ``baseUrl`` set it, [(pattern, first target)])
Config = tuple[str, bool, list[tuple[str, str]]]
Configs = Mapping[str, Config]


def loads(text: str) -> Any:
    plain = _JSONC.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return json.loads(_TRAILING_COMMA.sub(r"\1", plain))


def parse(path: str, text: str) -> Config | None:
    """(base directory, path patterns) of one config; None without ``baseUrl``/``paths`` or if unreadable."""
    try:
        data = loads(text)
    except (ValueError, RecursionError):
        return None
    options = data.get("compilerOptions") if isinstance(data, dict) else None
    if not isinstance(options, dict):
        return None
    base_url, paths = options.get("baseUrl"), options.get("paths")
    if not isinstance(base_url, str) and not isinstance(paths, dict):
        return None
    directory = path.rpartition("/")[0] or "."
    base = posixpath.normpath(posixpath.join(directory, base_url)) if isinstance(base_url, str) else directory
    if base.startswith("../") or base == "..":
        return None  # outside the repository
    patterns = [(p, t[0]) for p, t in (paths if isinstance(paths, dict) else {}).items()
                if isinstance(p, str) and isinstance(t, list) and t and isinstance(t[0], str) and p.count("*") <= 1]
    # the longest prefix wins, as in TypeScript
    ordered = sorted(patterns, key=lambda e: (-len(e[0].split("*", 1)[0]), e[0]))
    return ("" if base == "." else base), isinstance(base_url, str), ordered


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
