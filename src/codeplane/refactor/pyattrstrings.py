"""``monkeypatch.setattr(mod, "name", ...)``: a module object and an attribute name in a string, the object form of
``monkeypatch.setattr("pkg.mod.name", ...)``.

Both name one binding: where the module is one the index resolves and that binds the renamed definition (its own
module, or one importing it under its name), the string is that definition's name, ``medium`` like the dotted
string (``sweep.py``'s ``qualified_string``). Left alone, the patch raised ``AttributeError`` after the rename
(click's ``isatty``: 70 failed tests). Only the calls that take (object, name) do this: ``setattr``, ``getattr``,
``hasattr``, ``delattr`` (``monkeypatch.``'s too) and ``mock.patch.object``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.members import ClassGraph
from codeplane.refactor.modreceivers import bound_module
from codeplane.refactor.spans import SpanEdit

_CALL = r"(?<![\w])(?:setattr|getattr|hasattr|delattr|patch\.object)\s*\(\s*([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)" \
    r"\s*,\s*(['\"]){name}\2"


def module_attribute_strings(reader: FactReader, graph: ClassGraph, target: Def, new_name: str,
                             paths: Iterable[str], *, binds: Callable[[str], bool]) -> list[SpanEdit]:
    """The strings ``"name"`` passed with a module that binds ``target`` (``binds(path)``) in ``paths``."""
    if target.language != "python" or "." in target.lexical_path:
        return []
    pattern = re.compile(_CALL.format(name=re.escape(target.name)))
    edits: list[SpanEdit] = []
    for path in sorted(p for p in paths if p.endswith((".py", ".pyi"))):
        src = graph.text(path)
        if src is None or target.name not in src.text:
            continue
        for match in pattern.finditer(src.text):
            line, column = src.position(match.start(1))
            chain = "".join(match.group(1).split())
            head = next((r for r in graph.refs_on(path, line) if r.column == column and not r.is_member), None)
            bound = bound_module(reader, graph, head) if head is not None else None
            module = bound + chain[len(head.token):] if bound is not None and head is not None else None
            module_path = reader.module_file(module) if module else None
            if module_path is None or not binds(module_path):
                continue
            at_line, at_column = src.position(match.end(2))
            edits.append(SpanEdit(path, at_line, at_column, at_line, at_column + len(target.name), target.name,
                                  new_name, "module_attribute_string"))
    return edits
