"""Which linters a repository uses: configured ones (a config file or section enables them) and
conventional ones (ruff for any Python code, ``go vet`` for a Go module, clippy for a Cargo crate).

Discovery reads the repository's file list (the index's, or a walk of the universe) and a handful of
config files; it never runs a linter. tsc runs per ``tsconfig.json`` directory, except where a ``tsconfig.json``
above builds that project through its ``references`` (a root solution config): its run checks it, as ``tsc -b``.
A linter whose executable is missing is still listed, with ``found: false`` and how to install it: a missing
linter never fails a call.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import tomllib
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from codeplane.lint.catalog import KINDS, PYTHON
from codeplane.lint.models import LinterInfo
from codeplane.lint.toolchain import find_executable

RUFF_FILES = ("ruff.toml", ".ruff.toml")
MYPY_FILES = ("mypy.ini", ".mypy.ini")
ESLINT_FILES = tuple(f"eslint.config.{ext}" for ext in ("js", "mjs", "cjs", "ts", "mts", "cts")) + tuple(
    f".eslintrc{ext}" for ext in ("", ".js", ".cjs", ".json", ".yml", ".yaml"))
BIOME_FILES = ("biome.json", "biome.jsonc")
GOLANGCI_FILES = tuple(f".golangci.{ext}" for ext in ("yml", "yaml", "toml", "json"))
#: Every file name discovery looks at; the rest of the tree only matters for "is there Python code".
MARKERS = frozenset({*RUFF_FILES, *MYPY_FILES, *ESLINT_FILES, *BIOME_FILES, *GOLANGCI_FILES, "pyproject.toml",
                     "setup.cfg", "setup.py", "package.json", "tsconfig.json", "go.mod", "Cargo.toml"})


def _dir(rel: str) -> str:
    parent = str(PurePosixPath(rel).parent)
    return "." if parent in ("", ".") else parent


def _join(directory: str, name: str) -> str:
    return name if directory == "." else f"{directory}/{name}"


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _tool_table(pyproject: dict[str, Any], name: str) -> dict[str, Any] | None:
    tool = pyproject.get("tool")
    table = tool.get(name) if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def _setup_cfg_has(path: Path, section: str) -> bool:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return False
    return parser.has_section(section)


def _package_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


#: tsconfig files are JSON with comments and trailing commas (what tsc reads): strings, then comments.
_JSONC = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _tsconfig(path: Path) -> dict[str, Any]:
    try:
        text = _JSONC.sub(lambda m: m[0] if m[0].startswith('"') else "", path.read_text(encoding="utf-8"))
        data = json.loads(_TRAILING_COMMA.sub(r"\1", text))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _references(config: Path) -> list[Path]:
    """The config files ``config``'s ``references`` name, as tsc resolves them: a ``.json`` path is the file, any
    other path a directory whose ``tsconfig.json`` it is."""
    refs = _tsconfig(config).get("references")
    found: list[Path] = []
    for ref in refs if isinstance(refs, list) else []:
        target = ref.get("path") if isinstance(ref, dict) else None
        if isinstance(target, str) and target:
            path = Path(os.path.normpath(config.parent / target))
            found.append(path if path.suffix == ".json" else path / "tsconfig.json")
    return found


def _built_by_ancestor(root: Path, tsc_dirs: Iterable[str]) -> set[str]:
    """The tsc project directories whose ``tsconfig.json`` the ``tsconfig.json`` of a directory above them builds
    through its ``references`` (transitively), with a tsc found there. tsc checks a config with references as
    ``tsc -b`` does (``tsc_check.cjs``): every referenced project, from its sources, with the diagnostics its own
    build gives, so their own runs would only repeat that work (a root solution config builds every package)."""
    def config(directory: str) -> Path:
        return Path(os.path.normpath(root / _join(directory, "tsconfig.json")))

    projects = {config(d): d for d in tsc_dirs}
    covered: set[str] = set()
    for top, directory in projects.items():
        if find_executable(KINDS["tsc"].executable, root, directory) is None:
            continue  # a missing tsc checks nothing below it
        seen: set[Path] = set()
        todo = [top]
        while todo:  # `seen` ends a reference cycle (tsc -b reports it)
            for ref in _references(todo.pop()):
                if ref not in seen:
                    seen.add(ref)
                    todo.append(ref)
        covered |= {d for c, d in projects.items() if c in seen and d != directory
                    and (directory == "." or d.startswith(f"{directory}/"))}
    return covered


class _Found:
    """Linter instances collected while scanning config files, at most one per (name, directory)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.items: dict[tuple[str, str], LinterInfo] = {}

    def add(self, name: str, directory: str, config_file: str | None) -> None:
        if (name, directory) in self.items:
            return
        kind = KINDS[name]
        exe = find_executable(kind.executable, self.root, directory)
        if exe is not None and name == "clippy" and find_executable("cargo-clippy", self.root, directory) is None:
            exe = None  # cargo without the clippy component
        self.items[(name, directory)] = LinterInfo(
            name=name, root=directory, config_file=config_file, extensions=kind.extensions, executable=exe,
            found=exe is not None, can_fix=kind.can_fix and kind.runnable,
            install_hint=None if exe is not None else kind.install_hint, runnable=kind.runnable)


def _mypy_options(root: Path, info: LinterInfo) -> dict[str, Any]:
    """The global ``[mypy]`` options of ``info``'s config file (TOML values, or ini strings)."""
    if info.config_file is None:
        return {}
    path = root / info.config_file
    if path.name == "pyproject.toml":
        return _tool_table(_toml(path), "mypy") or {}
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error):
        return {}
    return dict(parser["mypy"]) if parser.has_section("mypy") else {}


def mypy_has_targets(root: Path, info: LinterInfo) -> bool:
    """Whether mypy's config names what to check (``files``/``packages``/``modules``); else run it on ``.``."""
    options = _mypy_options(root, info)
    return any(k in options for k in ("files", "packages", "modules"))


def mypy_excluded(root: Path, info: LinterInfo) -> Callable[[str, bool], bool]:
    """Whether mypy's ``exclude`` covers a path relative to its project directory (``is_dir``: a directory),
    tested as mypy tests the paths its directory walk finds (``re.search`` on the POSIX path, a directory's
    with a trailing ``/``), on the path and each directory above it. A path named on mypy's command line
    skips that test, so CodePlane applies it, as ``--force-exclude`` makes ruff do."""
    raw = _mypy_options(root, info).get("exclude")
    patterns: list[re.Pattern[str]] = []
    for text in ([raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []):
        try:
            patterns.append(re.compile(str(text).strip()))
        except re.error:
            continue  # mypy reports its own config errors

    def excluded(rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        tested = [*("/".join(parts[:i]) + "/" for i in range(1, len(parts))), rel + ("/" if is_dir else "")]
        return rel not in ("", ".") and any(p.search(t) for p in patterns for t in tested)
    return excluded


def discover_linters(root: Path, files: Iterable[str]) -> list[LinterInfo]:
    """The linters for the repository at ``root`` whose universe is ``files`` (repo-relative), sorted by
    name then directory."""
    found = _Found(root)
    markers: dict[str, set[str]] = {}
    has_python = False
    for rel in files:
        name = rel.rpartition("/")[2]
        if name in MARKERS:
            markers.setdefault(_dir(rel), set()).add(name)
        if not has_python and rel.endswith(PYTHON):
            has_python = True
    ruff_configs: list[str] = []
    cargo_dirs: list[str] = []
    tsc_dirs: list[str] = []
    for directory in sorted(markers, key=lambda d: (d.count("/") if d != "." else -1, d)):
        names = markers[directory]
        base = root if directory == "." else root / directory
        pyproject = _toml(base / "pyproject.toml") if "pyproject.toml" in names else {}
        ruff_configs += [_join(directory, f) for f in RUFF_FILES if f in names]
        if _tool_table(pyproject, "ruff") is not None:
            ruff_configs.append(_join(directory, "pyproject.toml"))
        if {"pyproject.toml", "setup.cfg", "setup.py"} & names:
            has_python = True
        mypy_config = next((f for f in MYPY_FILES if f in names), None)
        if mypy_config is None and _tool_table(pyproject, "mypy") is not None:
            mypy_config = "pyproject.toml"
        if mypy_config is None and "setup.cfg" in names and _setup_cfg_has(base / "setup.cfg", "mypy"):
            mypy_config = "setup.cfg"
        if mypy_config is not None:
            found.add("mypy", directory, _join(directory, mypy_config))
        package = _package_json(base / "package.json") if "package.json" in names else {}
        eslint_config = next((f for f in ESLINT_FILES if f in names), None)
        if eslint_config is None and "eslintConfig" in package:
            eslint_config = "package.json"
        if eslint_config is not None:
            found.add("eslint", directory, _join(directory, eslint_config))
        biome_config = next((f for f in BIOME_FILES if f in names), None)
        if biome_config is not None:
            found.add("biome", directory, _join(directory, biome_config))
        if "tsconfig.json" in names:
            tsc_dirs.append(directory)
        if "go.mod" in names:
            found.add("go vet", directory, None)
            golangci = next((f for f in GOLANGCI_FILES if f in names), None)
            if golangci is not None:
                found.add("golangci-lint", directory, _join(directory, golangci))
        if "Cargo.toml" in names and not any(directory.startswith(f"{d}/") or d == "." for d in cargo_dirs):
            cargo_dirs.append(directory)
            found.add("clippy", directory, None)
    # A project a solution config above it builds is checked by that config's run (QA59 F2): one `tsc -b`, as the
    # repository's own typecheck runs it, not one more per package.
    built = _built_by_ancestor(root, tsc_dirs) if len(tsc_dirs) > 1 else set()
    for directory in tsc_dirs:
        if directory not in built:
            found.add("tsc", directory, _join(directory, "tsconfig.json"))
    if has_python or ruff_configs:
        # One ruff at the root: ruff itself picks the closest config for every file it checks.
        found.add("ruff", ".", ruff_configs[0] if ruff_configs else None)
    return sorted(found.items.values(), key=lambda i: (i.name, i.root))
