"""Go embedded fields, for renaming a type: ``struct { cart.Cart }`` embeds ``Cart`` as a field named ``Cart``,
so renaming the type renames that field too (``s.Cart.Items``, ``Store{Cart: ...}``). The index holds the
embedding as the field's definition (its name is the type's name token), not as a reference to the type, so a
rename of the type alone left ``cart.Cart`` in the struct: ``Cart not declared by package cart``.

A field is the type's when its line spells only the embedding (``T``, ``*T``, ``T[X]``, ``pkg.T``, with a tag or
a comment after it), and ``T`` names the target: unqualified in the target's own package (directory), or
qualified by a name an import of the file binds to the target's package.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.gopackage import package_names
from codeplane.refactor.spans import SourceText

_LIMIT = 100_000
_TYPE_KINDS = frozenset({"struct", "interface", "type"})


def embedded_fields(reader: FactReader, text: Callable[[str], SourceText | None], target: Def) -> list[Def]:
    """The repository's struct fields embedding the Go type ``target`` (sorted by place)."""
    if not target.path.endswith(".go") or target.kind not in _TYPE_KINDS or target.parent_uid is not None:
        return []
    package_dir = target.path.rpartition("/")[0]
    spelled = re.compile(r"\s*\*?(?:([A-Za-z_]\w*)\s*\.\s*)?" + re.escape(target.name)
                         + r"(?:\[[^\]]*\])?\s*(?:`[^`]*`|\"[^\"]*\")?\s*(?://.*)?$")
    found: list[Def] = []
    for field in reader.defs_named(target.name, _LIMIT):
        if field.kind != "field" or not field.path.endswith(".go"):
            continue
        source = text(field.path)
        line = source.line_text(field.name_line) if source is not None else ""
        match = spelled.match(line)
        if match is None:
            continue
        qualifier = match.group(1)
        if qualifier is None:
            if field.path.rpartition("/")[0] == package_dir:
                found.append(field)
        elif qualifier in package_names(reader.imports_in_file(field.path, _LIMIT), package_dir):
            found.append(field)
    return sorted(found, key=lambda d: (d.path, d.name_line, d.name_column))
