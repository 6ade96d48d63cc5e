"""Language adapters by grammar name (see ``base``). Loaded lazily: a worker imports only what it parses."""

from __future__ import annotations

import importlib
from functools import cache, partial

from codeplane.index.structural.adapters.base import Adapter

#: grammar -> (module, LanguageSpec attribute) for query-driven languages.
_GENERIC: dict[str, tuple[str, str]] = {
    "javascript": ("javascript", "JAVASCRIPT"),
    "typescript": ("javascript", "TYPESCRIPT"),
    "tsx": ("javascript", "TYPESCRIPT"),
    "go": ("go", "GO"),
    "rust": ("rust", "RUST"),
    "java": ("jvm", "JAVA"),
    "kotlin": ("jvm", "KOTLIN"),
    "csharp": ("csharp", "CSHARP"),
    "ruby": ("scripting", "RUBY"),
    "php": ("scripting", "PHP"),
    "c": ("c_family", "C"),
    "cpp": ("c_family", "CPP"),
    "markdown": ("data", "MARKDOWN"),
    "sql": ("data", "SQL"),
    "dockerfile": ("data", "DOCKERFILE"),
    "proto": ("data", "PROTO"),
    "toml": ("data", "TOML"),
}


@cache
def adapter_for(grammar: str) -> Adapter | None:
    """The adapter for a tree-sitter grammar, or ``None`` when the language is parsed but not extracted."""
    if grammar == "python":
        from codeplane.index.structural.adapters.python import extract_python

        return extract_python
    target = _GENERIC.get(grammar)
    if target is None:
        return None
    from codeplane.index.structural.adapters.generic import extract_generic

    module = importlib.import_module(f"codeplane.index.structural.adapters.{target[0]}")
    return partial(extract_generic, getattr(module, target[1]), grammar)


def supported_grammars() -> list[str]:
    return sorted(["python", *_GENERIC])
