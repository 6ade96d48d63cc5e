"""The module a receiver denotes: ``mod`` in ``mod.name``, ``pkg.mod`` in ``pkg.mod.name`` (Python).

The index links ``mod.name`` through a single import; a name bound by several imports of one package (``import
pkg.a`` and ``import pkg.b`` both bind ``pkg``) or a dotted module chain is settled here, from the file's imports.
A rename uses it both ways: a module-level definition is renamed where such a receiver is its module, and a class
member is not renamed where the receiver is a module (``pkg.core.TIMEOUT`` is the module's constant, not
``Widget.TIMEOUT``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeplane.refactor.facts import FactReader, Ref
from codeplane.refactor.receivers import CHAIN

if TYPE_CHECKING:
    from codeplane.refactor.members import ClassGraph

_LIMIT = 100_000


def bound_module(reader: FactReader, graph: ClassGraph, recv: Ref) -> str | None:
    """The module a plain name is bound to when every binding of it is an import of that same module."""
    if recv.bind_id is None:
        return None
    sites = sum(1 for r in graph.refs(recv.path)
                if r.bind_id == recv.bind_id and r.role in ("DEFINITION", "IMPORT") and not r.is_member)
    modules: set[str] = set()
    matched = 0
    for fact in reader.imports_in_file(recv.path, _LIMIT):
        local = fact.alias or (fact.imported_name.split(".")[0] if fact.kind == "python_import" else fact.imported_name)
        if local != recv.token or fact.source_literal is None:
            continue
        matched += 1
        if fact.kind == "python_import":
            modules.add(fact.source_literal if fact.alias else fact.source_literal.split(".")[0])
        elif fact.source_literal.startswith("."):
            # ``from . import shapes``: the index links the name itself unless a star import in the file might bind
            # it too; the module is the resolved file's, by its dotted key
            base = _module_of(reader, fact.resolved_path)
            modules.add(f"{base}.{fact.imported_name}" if base is not None else fact.source_literal)
        else:
            modules.add(f"{fact.source_literal}.{fact.imported_name}")
    return next(iter(modules)) if len(modules) == 1 and matched == sites else None


def _module_of(reader: FactReader, path: str | None) -> str | None:
    """The dotted module name whose file is ``path`` (the shortest suffix of its directories the index keys it by:
    ``src/pkg/__init__.py`` is ``pkg``)."""
    if path is None or not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    for start in range(len(parts) - 1, -1, -1):
        dotted = ".".join(parts[start:])
        if dotted and reader.module_file(dotted) == path:
            return dotted
    return None


def receiver_module(reader: FactReader, graph: ClassGraph, ref: Ref) -> str | None:
    """The dotted module the receiver of the member reference ``ref`` denotes, or ``None``."""
    if ref.receiver_shape == "obj.":
        recv = graph.receiver(ref)
        return bound_module(reader, graph, recv) if recv is not None and recv.target_uid is None else None
    if ref.receiver_shape == "expr.":
        src = graph.text(ref.path)
        match = CHAIN.search(src.line_text(ref.line)[: max(0, ref.column - 1)]) if src is not None else None
        chain = "".join(match.group(1).split()) if match is not None else ""
        head = next((r for r in graph.refs_on(ref.path, ref.line) if match is not None
                     and r.column == match.start(1) and not r.is_member), None)
        bound = bound_module(reader, graph, head) if head is not None and "." in chain else None
        # ``import attr as _attr`` then ``_attr.converters.x``: the alias stands for its module.
        return bound + chain[len(head.token):] if bound is not None and head is not None else None
    return None
