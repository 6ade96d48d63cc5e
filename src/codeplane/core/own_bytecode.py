"""Compiled bytecode for CodePlane's own modules where the environment forbids ``__pycache__``.

Under ``PYTHONDONTWRITEBYTECODE`` (containers, sandboxes, this project's own CI) a source checkout, which is an
editable install, has no bytecode for ``codeplane``: every ``cpl`` process compiled its ~300 modules again, about
a sixth of a warm ``cpl up``'s CPU (issue 19). The dependencies are compiled when they are installed
(``[tool.uv] compile-bytecode``), and so is a wheel install of CodePlane; a checkout is not.

:func:`install` puts a finder for ``codeplane.*`` in front of the import system. Its loader reads the ``.pyc``
CPython would use (magic number, source mtime in whole seconds and size, the same checks), first beside the source
and then under the virtual environment that runs CodePlane (``<venv>/codeplane-pycache``, mirroring the source's
absolute directory like ``PYTHONPYCACHEPREFIX``); on a miss it compiles and writes the latter. That is where an
install puts compiled bytecode, and it goes when the environment is rebuilt; nothing is written beside the
sources, which is what the setting protects (``core.bytecode`` gives test processes the same treatment), nor in
the repositories CodePlane serves. It is not installed where Python writes bytecode itself, where a prefix is set,
or outside a virtual environment; any failure to read or write the cache only means compiling, as before.
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder, SourceFileLoader
from pathlib import Path
from types import CodeType, ModuleType

_PACKAGE = "codeplane"


def cache_root() -> Path:
    return Path(sys.prefix) / "codeplane-pycache"


def _header(source_path: str) -> bytes:
    st = os.stat(source_path)
    return (importlib.util.MAGIC_NUMBER + b"\0\0\0\0" + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
            + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))


def _read(path: str, header: bytes) -> CodeType | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if data[:16] != header:
        return None
    try:
        code = marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)  # readers see the old file or the whole new one, never half of it
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


class _CachingLoader(SourceFileLoader):
    def __init__(self, fullname: str, path: str, root: Path, tag: str) -> None:
        super().__init__(fullname, path)
        self._root = root
        self._tag = tag

    def own_cache(self, source_path: str) -> str:
        directory, name = os.path.split(os.path.abspath(source_path))
        return os.path.join(self._root, directory.lstrip(os.sep), f"{name.rsplit('.', 1)[0]}.{self._tag}.pyc")

    def get_code(self, fullname: str) -> CodeType:
        source_path = self.get_filename(fullname)
        try:
            header = _header(source_path)
        except OSError:
            return super().get_code(fullname)  # type: ignore[return-value]  # typeshed: CodeType | None
        own = self.own_cache(source_path)
        for candidate in (importlib.util.cache_from_source(source_path), own):
            code = _read(candidate, header)
            if code is not None:
                return code
        code = self.source_to_code(self.get_data(source_path), source_path)
        _write(own, header + marshal.dumps(code))
        return code


class CachingFinder:
    """A meta path finder for ``package``'s submodules only; everything else goes to the usual finders."""

    def __init__(self, root: Path, tag: str, package: str = _PACKAGE) -> None:
        self._root = root
        self._tag = tag
        self._prefix = package + "."

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if not fullname.startswith(self._prefix):
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not SourceFileLoader or spec.origin is None:
            return spec
        loader = _CachingLoader(fullname, spec.origin, self._root, self._tag)
        spec.loader = loader
        spec.cached = loader.own_cache(spec.origin)  # the module's __cached__: where its bytecode now lives
        return spec

    def invalidate_caches(self) -> None:
        return None


def install() -> bool:
    """Cache ``codeplane``'s bytecode where Python would not; True when the finder is (already) in place."""
    if any(isinstance(finder, CachingFinder) for finder in sys.meta_path):
        return True
    tag = sys.implementation.cache_tag
    if (not sys.dont_write_bytecode or sys.pycache_prefix is not None or tag is None
            or sys.prefix == sys.base_prefix):
        return False
    sys.meta_path.insert(0, CachingFinder(cache_root(), tag))
    return True
