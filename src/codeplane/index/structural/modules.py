"""How files and imports name each other: module keys (§7.3.5 ``source_literal`` → file).

A file gets zero or more keys (``py:pkg.mod``, ``js:src/app/index`` and ``js:src/app``, ``jvm:a.b.C``); an
import gets the key its source names. Linking joins the two; a key held by several files resolves only if
one of them has the strictly best rank (the documented resolution order, e.g. ``.ts`` before ``.js``),
never by guessing. ``path:`` keys name a file by its repository path (C includes, ``require_relative``).

Python module names follow the package rule: walk up while the directory holds ``__init__.py``; the first
directory without one is the import root. Namespace packages (no ``__init__.py``) are therefore not
linked — such imports stay unresolved rather than being guessed.
"""

from __future__ import annotations

import posixpath

_JS_EXT_RANK = {".ts": 0, ".tsx": 1, ".mts": 2, ".cts": 3, ".js": 4, ".jsx": 5, ".mjs": 6, ".cjs": 7}
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
_JVM_LANGUAGES = frozenset({"java", "kotlin"})
_PY_SUFFIXES = (".py", ".pyi", ".pyw")


def python_module(path: str, init_dirs: set[str]) -> str | None:
    """Dotted module of a Python file given the directories that contain ``__init__.py``."""
    if not path.endswith(_PY_SUFFIXES):
        return None
    directory, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0]
    parts = [] if stem == "__init__" else [stem]
    while directory and directory in init_dirs:
        directory, _, package = directory.rpartition("/")
        parts.append(package)
    if not parts:
        return None  # a top-level __init__.py outside any package
    return ".".join(reversed(parts))


def _stem(path: str) -> str:
    base = posixpath.basename(path)
    return path[: len(path) - len(base)] + base.split(".", 1)[0] if "." in base else path


def file_keys(path: str, language: str | None, package: str | None, init_dirs: set[str]) -> list[tuple[str, int]]:
    """(key, rank) pairs naming ``path``; lower rank wins when several files share a key."""
    if language == "python":
        module = python_module(path, init_dirs)
        return [(f"py:{module}", 1 if path.endswith(".pyi") else 0)] if module else []
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


def module_name(path: str, language: str | None, package: str | None, init_dirs: set[str]) -> str:
    """The prefix of qualified names: the Python module, the JVM/C#/Go package, else the path stem."""
    if language == "python":
        return python_module(path, init_dirs) or _stem(path).replace("/", ".")
    if language == "csharp":
        return ""  # namespaces are already containers in the lexical path
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


def js_import_key(importer: str, source: str) -> str | None:
    """Relative specifiers only; bare specifiers (packages) stay external."""
    if not source.startswith(("./", "../")) and source not in (".", ".."):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), source))
    if joined.startswith("../") or joined == "..":
        return None
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
                source: str | None, name: str, kind: str) -> tuple[str | None, str | None]:
    """(target_key, alt_key) for any language; ``(None, None)`` when the source is external or dynamic."""
    if source is None:
        return None, None
    if language == "python":
        return python_import_keys(importer_module, is_package, source, name, kind)
    if language in _JS_LANGUAGES:
        return js_import_key(importer, source), None
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
