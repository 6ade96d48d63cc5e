"""Telling a user exactly where their config is wrong: line and column of a key, and a did-you-mean.

Config errors are user errors (issue 24): a message names the file, the line and column of the offending
key, the key itself and, for an unknown key, the known key it most likely meant (``port`` at the top level
-> ``server.port``). Pure functions over text and the config model; no I/O.
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml
from pydantic import BaseModel


def known_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """Every dotted key the model accepts, sections and leaves, in declaration order."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        dotted = f"{prefix}.{name}" if prefix else name
        keys.append(dotted)
        annotation: Any = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += known_keys(annotation, dotted)
    return keys


def suggest(dotted: str, known: list[str]) -> str | None:
    """The known key an unknown ``dotted`` key most likely meant, or ``None``.

    Preference: the key itself in another case, the same name in another section (``port`` ->
    ``server.port``), then a close spelling among its siblings (``server.prot`` -> ``server.port``), then a close
    spelling of the whole dotted key.
    """
    folded = [k for k in known if k.lower() == dotted.lower()]
    if folded:  # ``tasks.MAX_MUTATIONS``: keys are lower case
        return folded[0]
    parent, _, name = dotted.rpartition(".")
    same_name = [k for k in known if k.rpartition(".")[2] == name and k != dotted]
    if same_name:
        return min(same_name, key=lambda k: (k.count("."), k))
    siblings = [k.rpartition(".")[2] for k in known if k.rpartition(".")[0] == parent]
    close = difflib.get_close_matches(name, siblings, n=1, cutoff=0.6)
    if close:
        return f"{parent}.{close[0]}" if parent else close[0]
    whole = difflib.get_close_matches(dotted, known, n=1, cutoff=0.7)
    return whole[0] if whole else None


def locate(text: str, dotted: str) -> tuple[int, int] | None:
    """1-based (line, column) of the deepest key of ``dotted`` present in the YAML ``text``."""
    try:
        node: Any = yaml.compose(text)
    except yaml.YAMLError:
        return None
    found: tuple[int, int] | None = None
    for part in dotted.split("."):
        if not isinstance(node, yaml.MappingNode):
            break
        match = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
        if match is None:
            break
        key, node = match
        found = (key.start_mark.line + 1, key.start_mark.column + 1)
    return found
