"""Go interface implementations, for renaming an interface's method (as gopls does): a type implements an
interface implicitly, by having every method the interface requires with the same name and signature. Renaming
``Shape.Area`` alone leaves ``func (q Sq) Area()``, so ``Sq`` no longer implements ``Shape`` and every assignment
of an ``Sq`` to a ``Shape`` (and every type switch case) stops compiling.

An implementation is a repository type whose method set (its own methods, pointer receivers included, and those
promoted from its embedded fields) has every method of the interface, each with the signature the interface
spells: parameter and result types in order, whitespace and parameter names aside, package qualifiers aside
(``p.T`` in another package is the interface package's ``T``). An interface embedding another interface requires
that one's methods too; an embedded interface from outside the repository (``io.Reader``) is not read, and only
the methods the repository spells are required (renaming such a type's method with its uses never breaks it).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from typing import Any

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.gocollisions import embedded_types, type_in
from codeplane.refactor.lexical import syntax_root
from codeplane.refactor.spans import SourceText

_LIMIT = 100_000
_DEPTH = 4
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*\.(?=[A-Za-z_])")
_SPACE = re.compile(r"\s+")

Text = Callable[[str], SourceText | None]


def implementations(reader: FactReader, text: Text, interface: Def, method: Def) -> list[tuple[Def, Def]]:
    """``(type, its method)`` for each repository type implementing ``interface`` (``method``: the interface's)."""
    if not method.path.endswith(".go") or interface.kind != "interface":
        return []
    signatures = _Signatures(text)
    required = _required(reader, signatures, interface, 0)
    if required is None or method.name not in required:
        return []
    found: list[tuple[Def, Def]] = []
    for candidate in reader.defs_named(method.name, _LIMIT):
        if candidate.language != "go" or candidate.kind != "method" or candidate.parent_uid is not None \
                or candidate.lexical_path.count(".") != 1:
            continue
        owner = type_in(reader, candidate.lexical_path.split(".", 1)[0], posixpath.dirname(candidate.path))
        if owner is None or owner.kind == "interface":
            continue
        have = _method_set(reader, signatures, owner)
        if all(have.get(name) == signature for name, signature in required.items()):
            found.append((owner, candidate))
    return sorted(found, key=lambda pair: (pair[1].path, pair[1].name_line))


def _required(reader: FactReader, signatures: _Signatures, interface: Def, depth: int) -> dict[str, str] | None:
    """Method name → signature of what ``interface`` requires (as far as the repository spells it)."""
    node = signatures.type_node(interface)
    if node is None or depth > _DEPTH:
        return None
    required: dict[str, str] = {}
    for element in node.named_children:
        if element.type == "method_elem":
            name = element.child_by_field_name("name")
            if name is None:
                return None
            required[_text(name)] = _signature(element)
        elif element.type != "comment":
            embedded = _embedded_interface(reader, interface, element)
            # Another package's interface (``io.Reader``): its methods are not known here, so a type with all the
            # methods the repository spells is taken as implementing it (renamed along, its build stays whole).
            inner = _required(reader, signatures, embedded, depth + 1) if embedded is not None else None
            required.update(inner or {})
    return required


def _embedded_interface(reader: FactReader, interface: Def, element: Any) -> Def | None:
    """The repository interface an element of ``interface``'s body embeds (``Reader``), resolved in its package."""
    spelled = element.named_children[0] if element.type == "type_elem" and len(element.named_children) == 1 \
        else None
    if spelled is None or spelled.type != "type_identifier":
        return None  # a qualified or constrained element: another package's, or a type set
    found = type_in(reader, _text(spelled), posixpath.dirname(interface.path))
    return found if found is not None and found.kind == "interface" else None


def _method_set(reader: FactReader, signatures: _Signatures, owner: Def) -> dict[str, str]:
    """Method name → signature of ``owner``'s own methods, then those its embedded fields promote (shallowest
    wins)."""
    have: dict[str, str] = {}
    level, seen = [owner], set()
    for _ in range(_DEPTH):
        for declared in level:
            seen.add(declared.def_uid)
            for d in signatures.methods(reader, posixpath.dirname(declared.path)).get(declared.name, []):
                signature = signatures.of_method(d)
                if signature is not None:
                    have.setdefault(d.name, signature)
        level = [e for d in level for e in embedded_types(reader, d) if e.def_uid not in seen]
        if not level:
            break
    return have


class _Signatures:
    """Syntax trees of the files read, and the nodes of definitions in them."""

    def __init__(self, text: Text) -> None:
        self._text = text
        self._roots: dict[str, Any] = {}
        self._dirs: dict[str, list[str]] | None = None
        self._methods: dict[str, dict[str, list[Def]]] = {}

    def methods(self, reader: FactReader, package_dir: str) -> dict[str, list[Def]]:
        """Type name → the methods declared on it in the package of ``package_dir`` (read once per package)."""
        if self._dirs is None:
            self._dirs = {}
            for info in reader.files():
                if info.path.endswith(".go"):
                    self._dirs.setdefault(posixpath.dirname(info.path), []).append(info.path)
        if package_dir not in self._methods:
            found: dict[str, list[Def]] = {}
            for path in self._dirs.get(package_dir, []):
                for d in reader.defs_in_file(path, _LIMIT):
                    if d.kind == "method" and d.parent_uid is None and d.lexical_path.count(".") == 1:
                        found.setdefault(d.lexical_path.split(".", 1)[0], []).append(d)
            self._methods[package_dir] = found
        return self._methods[package_dir]

    def _root(self, path: str) -> tuple[SourceText, Any] | None:
        src = self._text(path)
        if src is None:
            return None
        if path not in self._roots:
            self._roots[path] = syntax_root(src.data, path)
        return (src, self._roots[path]) if self._roots[path] is not None else None

    def _named(self, d: Def, kinds: tuple[str, ...]) -> Any | None:
        """The node of kind ``kinds`` whose name is ``d``'s name token."""
        parsed = self._root(d.path)
        if parsed is None:
            return None
        src, root = parsed
        stack = [root]
        while stack:
            node = stack.pop()
            if node.start_point[0] > d.name_line - 1 or node.end_point[0] < d.name_line - 1:
                continue
            name = node.child_by_field_name("name") if node.type in kinds else None
            if name is not None and name.start_point[0] == d.name_line - 1 \
                    and src.char_column(name.start_point[0], name.start_point[1]) == d.name_column:
                return node
            stack.extend(node.named_children)
        return None

    def type_node(self, d: Def) -> Any | None:
        spec = self._named(d, ("type_spec",))
        node = spec.child_by_field_name("type") if spec is not None else None
        return node if node is not None and node.type == "interface_type" else None

    def of_method(self, d: Def) -> str | None:
        node = self._named(d, ("method_declaration",))
        return _signature(node) if node is not None else None


def _signature(node: Any) -> str:
    """``(int,...string)(int,error)``: the parameter and result types a method spells, names and qualifiers aside."""
    result = node.child_by_field_name("result")
    results = _types(result) if result is not None and result.type == "parameter_list" else \
        [_type(result)] if result is not None else []
    return f"({','.join(_types(node.child_by_field_name('parameters')))})({','.join(results)})"


def _types(parameters: Any | None) -> list[str]:
    out: list[str] = []
    for declaration in parameters.named_children if parameters is not None else []:
        spelled = declaration.child_by_field_name("type")
        if spelled is None:
            continue
        names = len(declaration.children_by_field_name("name"))
        prefix = "..." if declaration.type == "variadic_parameter_declaration" else ""
        out += [prefix + _type(spelled)] * max(names, 1)
    return out


def _type(node: Any) -> str:
    return _QUALIFIER.sub("", _SPACE.sub("", _text(node)))


def _text(node: Any) -> str:
    return bytes(node.text).decode("utf-8", errors="replace")
