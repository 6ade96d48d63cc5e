"""``require()``, dynamic ``import()`` and ``import x = require()`` of the module a JS/TS symbol leaves (issue 20).

A symbol move rewrites static imports only: a module loaded at run time is used through property access
(``require('./old').f``, ``const { f } = await import('./old')``) that it cannot follow, so each such load is a
warning. A string or substitution-free template argument is resolved like a static specifier
(:func:`jsimports.resolve_specifier`); any other argument (``require(name)``, escapes, ``${}``) is not resolved,
and is reported only in a file that also names the moved symbol, as a possible load. The files looked at are
the move's lexical candidates (spelling the symbol or the old module's file stem), so ``require('.')`` of an
``index`` module in a file that spells neither is not seen.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Any

from codeplane.refactor.jsimports import Specifiers, render_specifier, resolve_specifier
from codeplane.refactor.jsstatements import NAME_NODES, node_text
from codeplane.refactor.spans import SourceText

#: Listed loads per move; the rest are counted in one line, as a preview's other lists are bounded.
MAX_LOAD_WARNINGS = 20
_SHOWN_ARGUMENT = 60
_NAMES = (*NAME_NODES, "property_identifier", "shorthand_property_identifier_pattern", "string_fragment")


@dataclass(frozen=True)
class Load:
    path: str
    line: int
    text: str


def _loads(root: Any) -> list[tuple[Any, str, Any]]:
    """``(node, kind, argument)`` for each run-time load in the file, in source order."""
    out: list[tuple[Any, str, Any]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "call_expression":
            func, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            kind = "import" if func is not None and func.type == "import" else \
                "require" if func is not None and func.type == "identifier" and node_text(func) == "require" else None
            if kind is not None and args is not None and args.named_child_count:
                out.append((node, kind, args.named_children[0]))
        elif node.type == "import_require_clause":  # TS ``import x = require('./old')``: no static import
            arg = next((c for c in node.named_children if c.type in ("string", "template_string")), None)
            if arg is not None:
                out.append((node, "import = require", arg))
        if node.type != "comment":
            stack.extend(reversed(node.children))
    return out


def _literal(arg: Any) -> str | None:
    """The argument's text when it is a plain string (one fragment, no escapes, no ``${}``)."""
    if arg.type not in ("string", "template_string"):
        return None
    parts = arg.named_children
    if not parts:
        return ""
    return node_text(parts[0]) if len(parts) == 1 and parts[0].type == "string_fragment" else None


def _names(root: Any, name: str) -> bool:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _NAMES and node_text(node) == name:
            return True
        stack.extend(node.children)
    return False


def file_loads(src: SourceText, root: Any, files: Set[str], *, old: str, dest: str, name: str,
               specifiers: Specifiers | None = None) -> list[Load]:
    """The loads of ``old`` in one file (``name`` moving from ``old`` to ``dest``), in source order; a package
    specifier (``import('@acme/a')``) is resolved and rendered by ``specifiers``."""
    found: list[Load] = []
    unresolved: list[tuple[Any, str, Any]] = []
    for node, kind, arg in _loads(root):
        spec = _literal(arg)
        if spec is None:
            unresolved.append((node, kind, arg))
        elif (specifiers.resolve(src.path, spec, files) if specifiers is not None
              else resolve_specifier(src.path, spec, files)) == old:
            new_spec = specifiers.render(src.path, spec, old, dest, files) if specifiers is not None else \
                render_specifier(src.path, old, dest, spec)
            where = dest if new_spec is None else f"'{new_spec}'"
            found.append(Load(src.path, node.start_point[0] + 1,
                              f"{kind}({node_text(arg)}) not rewritten: {name} moves to {where}"))
    if unresolved and _names(root, name):
        for node, kind, arg in unresolved:
            shown = node_text(arg).replace("\n", " ")
            shown = shown if len(shown) <= _SHOWN_ARGUMENT else shown[:_SHOWN_ARGUMENT] + "…"
            found.append(Load(src.path, node.start_point[0] + 1,
                              f"{kind}({shown}) not resolved and the file names {name}: it may load {old}"))
    return found


def load_warnings(loads: list[Load], old: str) -> list[str]:
    """Warning lines, by path and line, at most :data:`MAX_LOAD_WARNINGS` plus a count of the rest."""
    ordered = sorted(loads, key=lambda w: (w.path, w.line, w.text))
    lines = [f"{w.path}:{w.line}: {w.text}" for w in ordered[:MAX_LOAD_WARNINGS]]
    if len(ordered) > MAX_LOAD_WARNINGS:
        lines.append(f"{len(ordered) - MAX_LOAD_WARNINGS} more require()/import() of {old} not listed")
    return lines
