"""How files and imports name each other: module keys (§7.3.5 ``source_literal`` → file).

A file gets zero or more keys (``py:pkg.mod``, ``js:src/app/index`` and ``js:src/app``, ``jvm:a.b.C``); an
import gets the key its source names. Linking joins the two; a key held by several files resolves only if
one of them has the strictly best rank (the documented resolution order, e.g. ``.ts`` before ``.js``),
never by guessing. ``path:`` keys name a file by its repository path (C includes, ``require_relative``).

Python module names follow the import system (``python_names``): walk up while the directory holds
``__init__.py``, and through directories without one that sit inside a regular package (PEP 420 namespace
portions such as flask's ``src/flask/sansio/``). Where that walk stops, an import root decides the rest:
the deepest root containing the stop directory (a directory named ``src``, or a root from the repository's
``pyproject.toml``: pytest ``pythonpath``, setuptools ``package-dir``/``packages.find.where``, poetry and
hatch package sources) names the namespace directories below it (``src/acme/plugins/foo`` is
``acme.plugins.foo``). The repository root is a root too, but only for secondary keys: pytest imports a
test file as its package-less name (``test_x``), while ``python -m pytest`` also makes ``tests.test_x``
importable. Secondary keys rank after every primary one, so they never win a resolution against a real name.
"""

from __future__ import annotations

import posixpath
import tomllib
from collections.abc import Callable, Iterable, Mapping

from codeplane.index.structural import jspackages, tspaths

_JS_EXT_RANK = {".ts": 0, ".tsx": 1, ".mts": 2, ".cts": 3, ".js": 4, ".jsx": 5, ".mjs": 6, ".cjs": 7}
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
_JVM_LANGUAGES = frozenset({"java", "kotlin"})
_PY_SUFFIXES = (".py", ".pyi", ".pyw")


def _inside_package(directory: str, init_dirs: set[str]) -> bool:
    """Whether a proper ancestor of ``directory`` (not the repository root) is a regular package."""
    parent = directory.rpartition("/")[0]
    while parent:
        if parent in init_dirs:
            return True
        parent = parent.rpartition("/")[0]
    return False


def _package_walk(path: str, init_dirs: set[str]) -> tuple[str, list[str]] | None:
    """(directory where the package walk stops, reversed module parts); None if a part is no identifier."""
    directory, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0]
    parts = [] if stem == "__init__" else [stem]
    while directory and (directory in init_dirs or _inside_package(directory, init_dirs)):
        directory, _, package = directory.rpartition("/")
        parts.append(package)
    if not all(p.isidentifier() for p in parts):
        return None
    return directory, parts


def _rooted(stop: str, parts: list[str], root: str, prefix: str) -> str | None:
    """The module name of ``parts`` (walk stopped at ``stop``) when ``root`` is on ``sys.path`` as ``prefix``."""
    if root and stop != root and not stop.startswith(root + "/"):
        return None
    between = stop[len(root):].strip("/")
    segments = [s for s in (*prefix.split("."), *(between.split("/") if between else ())) if s]
    if not all(s.isidentifier() for s in segments):
        return None
    dotted = ".".join([*segments, *reversed(parts)])
    return dotted or None


def python_names(path: str, init_dirs: set[str], roots: Mapping[str, str] | None = None) -> list[str]:
    """Every dotted name ``path`` is importable as, the primary one first (see the module docstring).

    ``roots`` maps configured import roots (directories, ``""`` excluded) to the package prefix they stand for
    (``""`` for a plain ``sys.path`` entry, ``"mypkg"`` for setuptools ``package-dir = {mypkg = "lib"}``).
    """
    if not path.endswith(_PY_SUFFIXES):
        return []
    walked = _package_walk(path, init_dirs)
    if walked is None:
        return []
    stop, parts = walked
    candidates: dict[str, str] = {}
    ancestor = stop
    while ancestor:  # conventional ``src`` roots, deepest first
        if ancestor.rsplit("/", 1)[-1] == "src":
            candidates.setdefault(ancestor, "")
        ancestor = ancestor.rpartition("/")[0]
    for root, prefix in (roots or {}).items():
        if root:
            candidates.setdefault(root, prefix)
    primary: str | None = None
    for root in sorted(candidates, key=lambda r: (-r.count("/"), -len(r), r)):
        primary = _rooted(stop, parts, root, candidates[root])
        if primary is not None:
            break
    names = [primary] if primary else []
    for name in (".".join(reversed(parts)) if parts else None, _rooted(stop, parts, "", "")):
        if name and name not in names:
            names.append(name)
    return names


def python_module(path: str, init_dirs: set[str], roots: Mapping[str, str] | None = None) -> str | None:
    """The primary dotted module of a Python file (what qualified names and relative imports start from)."""
    names = python_names(path, init_dirs, roots)
    return names[0] if names else None


def _as_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def pyproject_roots(path: str, text: str) -> dict[str, str]:
    """Import roots (directory → package prefix) a ``pyproject.toml`` declares; {} if it is not valid TOML."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeError):
        return {}
    base = path.rpartition("/")[0]

    def at(relative: str) -> str:
        joined = posixpath.normpath(posixpath.join(base, relative)) if relative else (base or ".")
        return "" if joined == "." else joined

    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    assert isinstance(tool, dict)
    roots: dict[str, str] = {}
    pytest_opts = tool.get("pytest", {}).get("ini_options", {}) if isinstance(tool.get("pytest"), dict) else {}
    for entry in _as_list(pytest_opts.get("pythonpath") if isinstance(pytest_opts, dict) else None):
        roots.setdefault(at(entry), "")
    setuptools = tool.get("setuptools") if isinstance(tool.get("setuptools"), dict) else {}
    assert isinstance(setuptools, dict)
    package_dir = setuptools.get("package-dir")
    if isinstance(package_dir, dict):
        # Only the root mapping (``"" = "lib"``): a package mapped to a differently named directory is rare
        # and is left to the package walk.
        directory = package_dir.get("")
        if isinstance(directory, str):
            roots.setdefault(at(directory), "")
    packages = setuptools.get("packages")
    if isinstance(packages, dict) and isinstance(packages.get("find"), dict):
        for entry in _as_list(packages["find"].get("where")):
            roots.setdefault(at(entry), "")
    poetry = tool.get("poetry") if isinstance(tool.get("poetry"), dict) else {}
    assert isinstance(poetry, dict)
    for item in poetry.get("packages", []) if isinstance(poetry.get("packages"), list) else []:
        if isinstance(item, dict) and isinstance(item.get("from"), str):
            roots.setdefault(at(item["from"]), "")
    hatch = tool.get("hatch") if isinstance(tool.get("hatch"), dict) else {}
    wheel = hatch.get("build", {}).get("targets", {}).get("wheel", {}) if isinstance(hatch, dict) else {}
    for entry in _as_list(wheel.get("packages") if isinstance(wheel, dict) else None):
        parent = entry.rstrip("/").rpartition("/")[0]
        roots.setdefault(at(parent), "")
    roots.pop("", None)  # the repository root is always a (secondary) root
    return {r: p for r, p in roots.items() if not r.startswith("../") and r != ".."}


def merge_roots(declared: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Roots from several pyproject files; the first declaration of a directory wins (sorted by path)."""
    merged: dict[str, str] = {}
    for path, text in sorted(declared):
        for root, prefix in pyproject_roots(path, text).items():
            merged.setdefault(root, prefix)
    return dict(sorted(merged.items()))


def _stem(path: str) -> str:
    base = posixpath.basename(path)
    return path[: len(path) - len(base)] + base.split(".", 1)[0] if "." in base else path


def file_keys(path: str, language: str | None, package: str | None, init_dirs: set[str],
              roots: Mapping[str, str] | None = None) -> list[tuple[str, int]]:
    """(key, rank) pairs naming ``path``; lower rank wins when several files share a key."""
    if language == "python":
        stub = 1 if path.endswith(".pyi") else 0
        return [(f"py:{name}", stub + (2 if i else 0)) for i, name in enumerate(python_names(path, init_dirs, roots))]
    if language in _JS_LANGUAGES:
        ext = "." + path.rsplit(".", 1)[-1] if "." in posixpath.basename(path) else ""
        rank = _JS_EXT_RANK.get(ext, 9)
        stem = path[: len(path) - len(ext)] if ext else path
        keys = [(f"js:{stem}", rank)]
        if posixpath.basename(stem) == "index":
            keys.append((f"js:{posixpath.dirname(stem)}", 10 + rank))
        return keys
    if language in _JVM_LANGUAGES:
        name = posixpath.basename(path).rsplit(".", 1)[0]
        return [(f"jvm:{package}.{name}" if package else f"jvm:{name}", 0)]
    return []


def module_name(path: str, language: str | None, package: str | None, init_dirs: set[str],
                roots: Mapping[str, str] | None = None) -> str:
    """The prefix of qualified names: the Python module, the JVM/C#/Go package, else the path stem."""
    if language == "python":
        return python_module(path, init_dirs, roots) or _stem(path).replace("/", ".")
    if language == "csharp":
        return package or ""  # a file-scoped namespace; block namespaces are containers in the lexical path
    if package:
        return package
    return _stem(path)


def python_import_keys(importer_module: str | None, is_package: bool, source: str, name: str,
                       kind: str) -> tuple[str | None, str | None]:
    """(target_key, alt_key) of one Python import row.

    ``target_key`` is the module the statement depends on. ``alt_key`` is, for ``from m import x``, the
    submodule ``m.x``; for ``import a.b`` without alias, the package ``a`` that the name ``a`` binds.
    """
    if kind == "python_import":
        top = source.split(".", 1)[0]
        return f"py:{source}", (f"py:{top}" if top != source else None)
    dots = len(source) - len(source.lstrip("."))
    rest = source[dots:]
    if dots:
        if importer_module is None:
            return None, None
        base = importer_module.split(".") if is_package else importer_module.split(".")[:-1]
        if dots - 1 >= len(base):
            return None, None  # beyond the top-level package: an ImportError at run time
        base = base[: len(base) - (dots - 1)]
        absolute = ".".join([*base, rest] if rest else base)
    else:
        absolute = rest
    if not absolute:
        return None, None
    alt = f"py:{absolute}.{name}" if name != "*" else None
    return f"py:{absolute}", alt


def js_import_key(importer: str, source: str, ts_configs: tspaths.Configs | None = None,
                  packages: jspackages.Packages | None = None, held: Callable[[str], bool] | None = None) -> str | None:
    """The key of the first candidate (``js_candidate_keys``) a file holds (``held``), else of the first one."""
    keys = js_candidate_keys(importer, source, ts_configs, packages)
    return next((k for k in keys if held(k)), keys[0]) if keys and held is not None else \
        (keys[0] if keys else None)


def js_candidate_keys(importer: str, source: str, ts_configs: tspaths.Configs | None = None,
                      packages: jspackages.Packages | None = None) -> list[str]:
    """Keys an import may resolve to, in the order TypeScript and Node try them: a relative specifier (a
    directory's ``package.json`` ``types``/``main`` before its ``index``); for a bare one, what a tsconfig's
    ``paths``/``baseUrl`` maps it to (``tspaths.py``), then what the repository's ``package.json`` files make of it
    (``jspackages.py``: ``#imports``, workspace members and self-references through ``exports``/``main``). None:
    another package, external."""
    if not source.startswith(("./", "../")) and source not in (".", ".."):
        mapped = tspaths.specifier_path(importer, source, ts_configs) if ts_configs else None
        found = packages.resolve(importer, source) if packages is not None else None
        paths = [*([mapped] if mapped is not None else []), *(found.paths if found is not None else ())]
        return list(dict.fromkeys(_js_key(p) for p in paths))
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), source))
    if joined.startswith("../") or joined == "..":
        return []
    joined = "" if joined == "." else joined
    entries = packages.directory_entries(joined) if packages is not None else ()
    return list(dict.fromkeys(_js_key(p) for p in (*entries, joined)))


def _js_key(joined: str) -> str:
    joined = joined or "."
    base = posixpath.basename(joined)
    for ext in _JS_EXT_RANK:
        if base.endswith(ext):
            joined = joined[: -len(ext)]
            break
    return f"js:{'' if joined == '.' else joined}"


def relative_path_key(importer: str, source: str, default_ext: str = "") -> str | None:
    """``path:`` key for includes/requires written relative to the importing file."""
    if not source or source.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), source))
    if joined.startswith("../") or joined == "..":
        return None
    if default_ext and not posixpath.basename(joined).count("."):
        joined += default_ext
    return f"path:{joined}"


def import_keys(importer: str, importer_module: str | None, is_package: bool, language: str | None, *,
                source: str | None, name: str, kind: str, ts_configs: tspaths.Configs | None = None,
                packages: jspackages.Packages | None = None,
                held: Callable[[str], bool] | None = None) -> tuple[str | None, str | None]:
    """(target_key, alt_key) for any language; ``(None, None)`` when the source is external or dynamic."""
    if source is None:
        return None, None
    if language == "python":
        return python_import_keys(importer_module, is_package, source, name, kind)
    if language in _JS_LANGUAGES:
        return js_import_key(importer, source, ts_configs, packages, held), None
    if language in _JVM_LANGUAGES:
        if source.endswith(".*"):
            return None, None
        parent = source.rsplit(".", 1)[0] if "." in source else None
        return f"jvm:{source}", (f"jvm:{parent}" if parent else None)
    if kind in ("c_include", "ruby_require_relative", "php_require"):
        return relative_path_key(importer, source, ".rb" if kind == "ruby_require_relative" else ""), None
    return None, None


def is_external(language: str | None, source: str | None, kind: str) -> bool:
    """Whether an import names something outside the repository by syntax alone (map_repo dependencies)."""
    if not source:
        return False
    if language == "python":
        return not source.startswith(".")
    if language in _JS_LANGUAGES:
        return not source.startswith((".", "/"))
    if kind in ("c_include", "ruby_require_relative", "php_require"):
        return False
    return kind not in ("rust_mod",)


def external_name(language: str | None, source: str) -> str:
    """The package part of an external source (``@scope/pkg/sub`` → ``@scope/pkg``, ``a.b.c`` → ``a``)."""
    if language in _JS_LANGUAGES:
        parts = source.split("/")
        return "/".join(parts[:2]) if source.startswith("@") and len(parts) > 1 else parts[0]
    if language == "python":
        return source.split(".", 1)[0]
    if language == "rust":
        return source.split("::", 1)[0]
    if language == "go":
        return source
    return source.split(".", 1)[0] if language in _JVM_LANGUAGES | {"csharp"} else source
