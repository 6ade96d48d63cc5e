"""The statement a Python symbol move carries, and the module-level names it needs (issue 20).

The block is the whole top-level statement that defines the symbol — decorators, the ``def``/``class``
or the assignment — plus the comment lines directly above it. What it needs from its module is read with
CPython's own :mod:`symtable` over the block alone: names it references that it does not bind itself.
"""

from __future__ import annotations

import builtins
import symtable
from dataclasses import dataclass
from typing import Any

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.pybindings import assigned_names, defined_name, text_of
from codeplane.refactor.spans import SourceText

#: Names every module has without binding them.
_MODULE_NAMES = frozenset({"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__",
                           "__builtins__", "__path__", "__annotations__", "__dict__", "__cached__"})
_BUILTINS = frozenset(dir(builtins)) | _MODULE_NAMES


@dataclass(frozen=True)
class Block:
    """The moved statement: its line range (leading comments included) and text."""

    statement: Any
    #: First line (a leading comment, a decorator or the statement) and last line, 1-based inclusive.
    start_line: int
    end_line: int
    text: str
    #: ``True`` for ``def``/``class``; ``False`` for an assignment (a constant or variable).
    is_definition: bool


def find_block(src: SourceText, root: Any, name: str, line: int) -> Block:
    """The top-level statement binding ``name`` that contains ``line``; 4008 when the symbol is not one."""
    for stmt in root.named_children:
        first, last = stmt.start_point[0] + 1, stmt.end_point[0] + 1
        if not first <= line <= last:
            continue
        if defined_name(stmt) == name:
            return _block(src, stmt, True)
        names = assigned_names(stmt)
        if name in names:
            if names != [name]:
                raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED,
                                     f"{name} is assigned together with {', '.join(n for n in names if n != name)}; "
                                     "split the assignment before moving it",
                                     details={"symbol": name, "reason": "shared assignment", "line": first})
            return _block(src, stmt, False)
        raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED,
                             f"{name} is defined inside a {stmt.type.replace('_', ' ')} (line {first}); only "
                             "module-level definitions and assignments can move",
                             details={"symbol": name, "reason": "not a top-level statement", "line": first})
    raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, f"{name} is not defined at module level",
                         details={"symbol": name, "reason": "not a top-level statement", "line": line})


def _block(src: SourceText, stmt: Any, is_definition: bool) -> Block:
    start = stmt.start_point[0] + 1
    end = stmt.end_point[0] + 1
    # Comment lines directly above travel with the definition (they document it).
    while start > 1 and src.line_text(start - 1).lstrip().startswith("#") and \
            not src.line_text(start - 1).startswith("#!"):
        start -= 1
    text = "\n".join(src.line_text(n) for n in range(start, end + 1))
    return Block(stmt, start, end, text, is_definition)


def free_names(block: Block) -> list[str]:
    """Module-level names the block reads but does not bind (builtins excluded), sorted."""
    try:
        top = symtable.symtable(block.text + "\n", "<moved>", "exec")
    except SyntaxError:
        return _free_names_syntactic(block)
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}
    used = {s.get_name() for s in top.get_symbols() if s.is_referenced() and s.get_name() not in bound}
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        used |= {s.get_name() for s in table.get_symbols()
                 if (s.is_global() or s.is_declared_global()) and s.get_name() not in bound}
        stack.extend(table.get_children())
    return sorted(n for n in used if n not in _BUILTINS)


def _free_names_syntactic(block: Block) -> list[str]:
    """Fallback for syntax this interpreter cannot compile: every plain identifier the block reads."""
    names: set[str] = set()
    stack = [block.statement]
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            parent = node.parent
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
                continue
            names.add(text_of(node))
        stack.extend(node.children)
    own = defined_name(block.statement)
    return sorted(n for n in names if n not in _BUILTINS and n != own)


def global_writes(block: Block) -> list[str]:
    """Names the block declares ``global`` (after the move they would be the destination's globals)."""
    try:
        top = symtable.symtable(block.text + "\n", "<moved>", "exec")
    except SyntaxError:
        return []
    out: set[str] = set()
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        out |= {s.get_name() for s in table.get_symbols() if s.is_declared_global() and s.is_assigned()}
        stack.extend(table.get_children())
    return sorted(out)
