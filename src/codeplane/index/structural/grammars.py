"""Bundled tree-sitter grammars (DECISIONS D2): loaded from ``tree-sitter-language-pack`` 0.13, never downloaded.

A grammar that fails to load is remembered as missing, logged once, and its files are skipped and counted
(§7.5, §18 item 3); indexing never aborts because of it. Parsers are not thread-safe, so each thread
keeps its own.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import metadata

from tree_sitter import Language, Parser

_local = threading.local()
_missing: dict[str, str] = {}
_missing_lock = threading.Lock()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


@cache
def language(grammar: str) -> Language | None:
    """The bundled grammar, or ``None`` (logged once) when the pack does not provide it."""
    try:
        from tree_sitter_language_pack import get_language

        return get_language(grammar)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - any loader failure means "grammar missing", never fatal
        with _missing_lock:
            _missing[grammar] = f"{type(exc).__name__}: {exc}"
        # Imported here: worker processes must not pay for the logging stack at start-up.
        from codeplane.core.logging import get_logger

        get_logger("index.structural.grammars").warning("grammar_missing", grammar=grammar, error=str(exc))
        return None


def parser(grammar: str) -> Parser | None:
    """A parser for ``grammar`` owned by the calling thread, or ``None`` if the grammar is missing."""
    cached: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if cached is None:
        cached = {}
        _local.parsers = cached
    found = cached.get(grammar)
    if found is None:
        lang = language(grammar)
        if lang is None:
            return None
        found = Parser(lang)
        cached[grammar] = found
    return found


def missing_grammars() -> dict[str, str]:
    """Grammars that failed to load in this process, with the loader's error."""
    with _missing_lock:
        return dict(sorted(_missing.items()))


def versions(grammars: list[str]) -> dict[str, object]:
    """Versions for status: the pinned packages and each loaded grammar's ABI version."""
    abi: dict[str, int | None] = {}
    for name in sorted(set(grammars)):
        lang = language(name)
        abi[name] = int(lang.abi_version) if lang is not None else None
    return {
        "tree_sitter": _version("tree-sitter"),
        "tree_sitter_language_pack": _version("tree-sitter-language-pack"),
        "grammar_abi": abi,
    }
