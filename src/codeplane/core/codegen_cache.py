"""Code the standard library generates while modules import, compiled once and kept between processes (issue 19).

Three stdlib modules compile source text they write at run time, every time a module that uses them is imported:
``dataclasses`` ``exec``s each method it generates (``__init__``, ``__repr__``, ``__eq__``, a frozen class's
``__setattr__``/``__delattr__``: ~1,400 for the ~300 dataclasses ``cpl up`` creates before it serves), ``typing``
compiles each string annotation it resolves (``ForwardRef``: ~3,900, every annotation being a string under
``from __future__ import annotations``) and ``collections.namedtuple`` ``eval``s a ``__new__`` per class. Together
about 0.17 s of a warm restart's ~1 s of CPU. The text fully determines the code, so :func:`install` gives each of
those modules an ``exec``/``compile``/``eval`` of its own (a module global, found before the builtin) that looks the
text up in a table and compiles only what it misses, as the builtin would (file name ``<string>``, no
``__future__`` flag: none of the three imports one); anything else they are called with goes to the builtin
unchanged. :meth:`CodegenCache.save` writes the table back when it grew; a hit runs the very code the text compiles
to, since the table is keyed by the whole text.

The table lives beside CodePlane's own bytecode (``<venv>/codeplane-pycache``, see ``own_bytecode``), one file per
interpreter (its bytecode magic number heads the file); a missing, damaged or foreign file is an empty table, and a
failed write leaves the old one (written by rename, never half a file). Installed inside a virtual environment
only, like that cache, by the CLI before its first import of a dependency.
"""

from __future__ import annotations

import atexit
import builtins
import collections
import dataclasses
import importlib.util
import marshal
import os
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any, Literal

from codeplane.core.own_bytecode import cache_root

#: Past this many entries a save keeps only what this process used (definitions that changed leave old texts).
MAX_ENTRIES = 50_000
_FORMAT = b"cpl-codegen-1\n"
_Mode = Literal["exec", "eval"]


def _header() -> bytes:
    return importlib.util.MAGIC_NUMBER + _FORMAT


class CodegenCache:
    """The table of compiled texts, loaded from and saved to ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._codes = self._load()
        self._used: set[tuple[str, str]] = set()
        self._saved = len(self._codes)
        #: Texts found in the table / compiled here (tests and traces).
        self.hits = 0
        self.misses = 0

    def _load(self) -> dict[tuple[str, str], CodeType]:
        header = _header()
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
            if data[:len(header)] != header:
                return {}
            table = marshal.loads(data[len(header):])
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if not isinstance(table, dict):
            return {}
        return {k: v for k, v in table.items() if isinstance(k, tuple) and isinstance(v, CodeType)}

    def code(self, source: str, mode: _Mode) -> CodeType:
        """``compile(source, "<string>", mode)`` without inherited flags, from the table when it holds it."""
        key = (mode, source)
        found = self._codes.get(key)
        if found is None:
            found = builtins.compile(source, "<string>", mode, dont_inherit=True)  # a SyntaxError raises as before
            self._codes[key] = found
            self.misses += 1
        else:
            self.hits += 1
        self._used.add(key)
        return found

    def exec(self, source: Any, globals: dict[str, Any] | None = None,
             locals: dict[str, Any] | None = None) -> None:
        """``exec`` for ``dataclasses``."""
        builtins.exec(self.code(source, "exec") if isinstance(source, str) else source, globals, locals)

    def eval(self, source: Any, globals: dict[str, Any] | None = None,
             locals: dict[str, Any] | None = None) -> Any:
        """``eval`` for ``collections``."""
        return builtins.eval(self.code(source, "eval") if isinstance(source, str) else source, globals, locals)

    def compile(self, source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        """``compile`` for ``typing``: its ``ForwardRef`` asks ``(text, "<string>", "eval")``, nothing else."""
        if args or kwargs or not isinstance(source, str) or filename != "<string>" or mode != "eval":
            return builtins.compile(source, filename, mode, *args, **kwargs)
        return self.code(source, "eval")

    def save(self) -> None:
        """Write the table if it grew since it was loaded or last saved; never raises."""
        codes = dict(self._codes)
        if len(codes) == self._saved:
            return
        if len(codes) > MAX_ENTRIES:
            codes = {k: v for k, v in codes.items() if k in self._used}
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(_header() + marshal.dumps(codes))
            os.replace(tmp, self.path)  # readers see the old table or the whole new one
            self._saved = len(codes)
        except (OSError, ValueError):
            try:
                os.unlink(tmp)
            except OSError:
                pass


_installed: CodegenCache | None = None


def cache_file() -> Path:
    return cache_root() / f"codegen.{sys.implementation.cache_tag}.marshal"


def hook(cache: CodegenCache) -> Callable[[], None]:
    """Route the three modules' compiles through ``cache``; returns what puts back the previous routing."""
    routes = {(dataclasses, "exec"): cache.exec, (typing, "compile"): cache.compile, (collections, "eval"): cache.eval}
    previous = {(module, name): module.__dict__.get(name) for module, name in routes}
    for (module, name), function in routes.items():
        setattr(module, name, function)

    def restore() -> None:
        for (module, name), function in previous.items():
            if function is None:
                module.__dict__.pop(name, None)  # the builtin again
            else:
                setattr(module, name, function)

    return restore


def install() -> CodegenCache | None:
    """Install the table (idempotent), saved at exit; ``None`` outside a virtual environment."""
    global _installed
    if _installed is not None:
        return _installed
    if sys.prefix == sys.base_prefix or sys.implementation.cache_tag is None:
        return None
    _installed = CodegenCache(cache_file())
    hook(_installed)
    atexit.register(_installed.save)
    return _installed


def save() -> None:
    """Save the installed table now (the server calls it once it serves, rather than only at exit)."""
    if _installed is not None:
        _installed.save()
