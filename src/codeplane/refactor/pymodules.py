"""Python module names for repository files, and import resolution back to files (for moves, §8.10).

Syntactic only, following the import system as the index does: a file's module name is its path below the first
ancestor directory that is neither a package (``__init__.py``) nor a namespace portion inside one (PEP 420), or
below the deepest ``src`` directory above that, e.g. ``src/pkg/sub/mod.py`` -> root ``src``, module
``pkg.sub.mod``. An absolute import resolves against every such root; a relative import against the importer's
package.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

PY_SUFFIXES = (".py", ".pyi")


def is_python(path: str) -> bool:
    return path.endswith(PY_SUFFIXES)


def _strip_suffix(path: str) -> str:
    for suffix in PY_SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


class PyModules:
    """Module naming over a fixed set of Python file paths (repository-relative, POSIX)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files = {p for p in paths if is_python(p)}
        self.package_dirs = {posixpath.dirname(p) for p in self.files
                             if posixpath.basename(p) in ("__init__.py", "__init__.pyi")}
        self._roots: dict[str, str] = {}
        self.roots = sorted({self.root_of(p) for p in self.files})

    def root_of(self, path: str) -> str:
        directory = posixpath.dirname(path)
        if directory not in self._roots:
            self._roots[directory] = self._import_root(directory)
        return self._roots[directory]

    def _import_root(self, directory: str) -> str:
        """Where the import system names modules below ``directory`` from (``index/structural/modules.py``)."""
        stop = directory
        while stop and (stop in self.package_dirs or self._inside_package(stop)):
            stop = posixpath.dirname(stop)
        ancestor = stop
        while ancestor:
            between = stop[len(ancestor) + 1:]
            if posixpath.basename(ancestor) == "src" and all(p.isidentifier() for p in between.split("/") if p):
                return ancestor  # ``src/acme/plugins/foo``: ``acme.plugins.foo``, with ``src`` on ``sys.path``
            ancestor = posixpath.dirname(ancestor)
        return stop

    def _inside_package(self, directory: str) -> bool:
        """A directory without ``__init__.py`` inside a regular package is a namespace portion of it (flask's
        ``src/flask/sansio/``): Python imports it as ``flask.sansio``, not as a top-level package."""
        parent = posixpath.dirname(directory)
        while parent:
            if parent in self.package_dirs:
                return True
            parent = posixpath.dirname(parent)
        return False

    def module_of(self, path: str, root: str | None = None) -> str:
        """Dotted module name of ``path`` (a package's ``__init__`` names the package)."""
        base = self.root_of(path) if root is None else root
        rel = path[len(base) + 1:] if base else path
        parts = _strip_suffix(rel).split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        return ".".join(parts)

    def is_package_init(self, path: str) -> bool:
        return posixpath.basename(path) in ("__init__.py", "__init__.pyi")

    def package_of(self, path: str) -> str:
        """The package a relative import in ``path`` starts from."""
        module = self.module_of(path)
        if self.is_package_init(path):
            return module
        return module.rpartition(".")[0]

    def resolve_module(self, module: str, roots: Iterable[str] | None = None) -> str | None:
        """The file defining dotted ``module`` under any root (module file before package)."""
        rel = module.replace(".", "/")
        for root in (self.roots if roots is None else roots):
            base = f"{root}/{rel}" if root else rel
            for candidate in (base + ".py", base + ".pyi", base + "/__init__.py", base + "/__init__.pyi"):
                if candidate in self.files:
                    return candidate
        return None

    def resolve_relative(self, importer: str, level: int, module: str) -> str | None:
        """Resolve ``from <level dots><module> import ...`` written in ``importer``."""
        absolute = self.absolute_relative(importer, level, module)
        if absolute is None:
            return None
        return self.resolve_module(absolute, [self.root_of(importer)])

    def absolute_relative(self, importer: str, level: int, module: str) -> str | None:
        package = self.package_of(importer).split(".") if self.package_of(importer) else []
        if level - 1 > len(package):
            return None
        base = package[: len(package) - (level - 1)]
        parts = base + ([p for p in module.split(".") if p] if module else [])
        return ".".join(parts) if parts else None

    def module_for_new_path(self, old_path: str, new_path: str) -> str:
        """Module name a file will have at ``new_path``, keeping the old root when it still contains it."""
        old_root = self.root_of(old_path)
        if old_root == "" or new_path.startswith(old_root + "/"):
            # Under the old root the dotted name stays importable the way the old one was, even when
            # the target directory has no ``__init__.py`` (namespace package).
            return self.module_of(new_path, old_root)
        return self.module_of(new_path)


def relative_form(from_package: str, target_module: str) -> tuple[int, str] | None:
    """``(level, rest)`` to import ``target_module`` relatively from ``from_package``, or ``None``.

    ``None`` when the two share no top-level package (a relative import cannot cross that line).
    """
    here = from_package.split(".") if from_package else []
    there = target_module.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    if common == 0:
        return None
    level = len(here) - common + 1
    return level, ".".join(there[common:])
