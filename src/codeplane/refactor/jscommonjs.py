"""CommonJS modules (``require`` / ``module.exports``) as a JS symbol move reads and writes them.

A ``.js`` file with no ``import``/``export`` statement that calls ``require`` or assigns ``module.exports`` or
``exports.x`` is CommonJS, and so is every ``.cjs`` file; TypeScript and ``.mjs`` files are ES modules. A move
writes each module in its own system: an ES ``import`` in a CommonJS file is a syntax error under Node, which is
what moving out of one used to write. What this module knows: which top-level names a file binds by ``require``
(``const x = require('m')``, ``const { a, b: c } = require('m')``, ``var y = require('m').y``) with the statement
and the specifier's string, the ``'use strict'`` directive, and where a new ``require`` line goes (after the
directive and the file's leading ``require`` statements).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from codeplane.refactor.jsstatements import fragment, fragment_node, insert_below, node_text
from codeplane.refactor.pyimporters import Insertions
from codeplane.refactor.spans import SourceText

_USES_COMMONJS = re.compile(r"\brequire\s*\(|\bmodule\.exports\b|\bexports\.[A-Za-z_$]")
_ESM_ONLY = (".mjs", ".ts", ".tsx", ".mts", ".cts")


@dataclass(frozen=True)
class RequireBinding:
    """A top-level name bound by a ``require`` call: its statement and the specifier string node."""

    local: str
    statement: Any
    specifier: Any


def is_commonjs(src: SourceText, root: Any) -> bool:
    """Whether the file is a CommonJS module (above)."""
    if src.path.endswith(".cjs"):
        return True
    if src.path.endswith(_ESM_ONLY):
        return False
    if any(node.type in ("import_statement", "export_statement") for node in root.named_children):
        return False
    return _USES_COMMONJS.search(src.text) is not None


def _required(value: Any) -> Any | None:
    """The specifier string of ``require('m')`` or ``require('m').x`` (``value``), else None."""
    while value is not None and value.type == "member_expression":
        value = value.child_by_field_name("object")
    if value is None or value.type != "call_expression":
        return None
    callee = value.child_by_field_name("function")
    args = value.child_by_field_name("arguments")
    if callee is None or node_text(callee) != "require" or args is None or args.named_child_count != 1:
        return None
    spec = args.named_children[0]
    return spec if fragment(spec) is not None else None


def require_bindings(root: Any) -> dict[str, RequireBinding]:
    """Top-level names bound by ``require`` declarations, by local name."""
    found: dict[str, RequireBinding] = {}
    for stmt in root.named_children:
        if stmt.type not in ("lexical_declaration", "variable_declaration"):
            continue
        for declarator in stmt.named_children:
            if declarator.type != "variable_declarator":
                continue
            spec = _required(declarator.child_by_field_name("value"))
            name = declarator.child_by_field_name("name")
            if spec is None or name is None:
                continue
            for local in _pattern_names(name):
                found[local] = RequireBinding(local, stmt, spec)
    return found


def destructured_keys(root: Any, name: str) -> list[tuple[Any, Any]]:
    """Keys spelled ``name`` of patterns that destructure a whole ``require`` (``const { name, name: x } =
    require('m')``, at any depth of the file), each with the ``require`` call's specifier string node."""
    found: list[tuple[Any, Any]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type != "variable_declarator":
            continue
        pattern, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if pattern is None or pattern.type != "object_pattern" or value is None or value.type != "call_expression":
            continue  # ``require('m').x`` destructures the export ``x``, not the module
        spec = _required(value)
        if spec is None:
            continue
        for child in pattern.named_children:
            key = child.child_by_field_name("left") if child.type == "object_assignment_pattern" else \
                child.child_by_field_name("key") if child.type == "pair_pattern" else child
            if key is not None and key.type in ("shorthand_property_identifier_pattern", "property_identifier") \
                    and node_text(key) == name:
                found.append((key, spec))
    return found


def _pattern_names(node: Any) -> list[str]:
    if node.type == "identifier":
        return [node_text(node)]
    out: list[str] = []
    for child in node.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            out.append(node_text(child))
        elif child.type == "pair_pattern":
            value = child.child_by_field_name("value")
            if value is not None:
                out += _pattern_names(value)
        elif child.type in ("object_pattern", "array_pattern", "identifier"):
            out += _pattern_names(child)
    return out


def rendered_with(src: SourceText, binding: RequireBinding, specifier: str) -> str:
    """The binding's whole statement with its specifier's text replaced."""
    stmt, frag = binding.statement, fragment_node(binding.specifier)
    text = node_text(stmt)
    if frag is None:
        return text
    start, end = frag.start_byte - stmt.start_byte, frag.end_byte - stmt.start_byte
    data = bytes(stmt.text)
    return (data[:start] + specifier.encode("utf-8") + data[end:]).decode("utf-8")


def legacy_style(root: Any) -> bool:
    """Whether the file declares its ``require`` bindings with ``var`` (code kept to ES5, as much of npm is):
    what a move writes there is ``var f = require('./m').f`` and ``{ f: f }``, not ``const { f }`` and ``{ f }``."""
    keywords = [b.statement.children[0].type for b in require_bindings(root).values() if b.statement.children]
    return bool(keywords) and keywords[0] == "var"


def require_line(name: str, specifier: str, *, legacy: bool) -> str:
    return f"var {name} = require('{specifier}').{name};" if legacy else \
        f"const {{ {name} }} = require('{specifier}');"


def exports_line(name: str, *, legacy: bool) -> str:
    return f"module.exports = {{ {name}: {name} }};" if legacy else f"module.exports = {{ {name} }};"


def strict_directive(root: Any) -> str | None:
    """The file's ``'use strict'`` directive statement as written, if it opens the file."""
    for node in root.named_children:
        if node.type == "comment":
            continue
        if node.type == "expression_statement" and node.named_child_count == 1 and \
                node.named_children[0].type == "string" and fragment(node.named_children[0]) == "use strict":
            return node_text(node)
        return None
    return None


def insert_after_requires(inserts: Insertions, src: SourceText, root: Any, line: str,
                          reason: str = "import") -> None:
    """Insert ``line`` after the directive and the leading ``require`` statements (at the top without them)."""
    requires = {b.statement.start_byte for b in require_bindings(root).values()}
    directive = strict_directive(root)
    last = None
    for node in root.named_children:
        if node.type == "comment":
            continue
        if node.start_byte in requires or (last is None and directive is not None and node_text(node) == directive):
            last = node
            continue
        break
    insert_below(inserts, src, last, line, reason)
