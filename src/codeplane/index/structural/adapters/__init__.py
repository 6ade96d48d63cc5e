"""Language adapters by grammar name (see ``base``). Loaded lazily: a worker imports only what it parses."""

from __future__ import annotations

from codeplane.index.structural.adapters.base import Adapter


def adapter_for(grammar: str) -> Adapter | None:
    """The adapter for a tree-sitter grammar, or ``None`` when the language is parsed but not extracted."""
    if grammar == "python":
        from codeplane.index.structural.adapters.python import extract_python

        return extract_python
    return None
