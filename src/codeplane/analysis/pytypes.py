"""Whether two Python signatures differ only in how their annotations spell the same types.

``Optional[bool]``, ``Union[bool, None]``, ``bool | None``, ``None | bool``, ``typing.Optional[bool]`` and the
string ``"bool | None"`` are one type; ``List[int]`` is ``list[int]`` (PEP 585), ``t.Any`` is ``Any``. A
``def f(x: Optional[bool])`` that becomes ``def f(x: bool | None)`` changes no call and no type: the semantic diff
calls it ``annotation_spelling``, not a breaking signature change.
"""

from __future__ import annotations

import ast

#: PEP 585: ``typing`` aliases of builtins, spelled either way for one type.
_BUILTIN_ALIASES = {"List": "list", "Dict": "dict", "Set": "set", "FrozenSet": "frozenset", "Tuple": "tuple",
                    "Type": "type"}
#: Modules whose attribute is the type of that name (``typing.Any``, ``t.Any``, ``typing_extensions.Literal``).
_TYPING_MODULES = frozenset({"typing", "t", "typing_extensions", "collections.abc"})


def same_types(old_header: str, new_header: str) -> bool:
    """Whether two ``def`` headers (``def f(a: int) -> str``, the name and the ``def`` included) are the same
    signature once each annotation is reduced to the type it names. An unreadable header is not the same."""
    old, new = _function(old_header), _function(new_header)
    if old is None or new is None:
        return False
    return _dump(old) == _dump(new)


def _function(header: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    text = header.strip().rstrip(":")
    try:
        tree = ast.parse(f"{text}:\n    pass")
    except (SyntaxError, ValueError, RecursionError):
        return None
    node = tree.body[0] if tree.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _dump(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    arguments = node.args
    parts: list[str] = [type(node).__name__, node.name]
    for arg in [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]:
        if arg is not None:
            parts.append(f"{arg.arg}:{_type(arg.annotation)}")
    parts += [len(arguments.posonlyargs).__str__(), len(arguments.args).__str__()]
    parts += [ast.dump(d) for d in arguments.defaults]
    parts += [ast.dump(d) if d is not None else "-" for d in arguments.kw_defaults]
    parts += [ast.dump(d) for d in node.decorator_list]
    parts.append(_type(node.returns))
    return "\n".join(parts)


def _type(node: ast.expr | None) -> str:
    """A canonical text of the type ``node`` names (unions as sorted sets of members)."""
    if node is None:
        return ""
    members = _union_members(node)
    if len(members) > 1:
        return "|".join(sorted({_type(m) for m in members}))
    return ast.dump(_Canonical().visit(node))


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        parsed = _parse(node.value)
        return _union_members(parsed) if parsed is not None else [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*_union_members(node.left), *_union_members(node.right)]
    if isinstance(node, ast.Subscript):
        name = _typing_name(node.value)
        if name == "Optional":
            return [*_union_members(node.slice), ast.Constant(None)]
        if name == "Union":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return [m for item in items for m in _union_members(item)]
    return [node]


def _parse(text: str) -> ast.expr | None:
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None


def _typing_name(node: ast.expr) -> str | None:
    """``Optional`` for ``Optional``, ``typing.Optional`` or ``t.Optional``; None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and ast.unparse(node.value) in _TYPING_MODULES:
        return node.attr
    return None


class _Canonical(ast.NodeTransformer):
    """``typing.X`` → ``X``, PEP 585 aliases → builtins, string annotations parsed."""

    def visit(self, node: ast.AST) -> ast.AST:
        visited: ast.AST = super().visit(node)
        return visited

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if ast.unparse(node.value) in _TYPING_MODULES:
            return self.visit(ast.Name(_BUILTIN_ALIASES.get(node.attr, node.attr), ast.Load()))
        return self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(_BUILTIN_ALIASES.get(node.id, node.id), ast.Load())

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and (parsed := _parse(node.value)) is not None:
            return ast.Name(_type(parsed), ast.Load()) if len(_union_members(parsed)) > 1 else self.visit(parsed)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        if isinstance(node.op, ast.BitOr):  # a union inside a subscript (``list[int | None]``)
            return ast.Name(_type(node), ast.Load())
        return self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if _typing_name(node.value) in ("Optional", "Union"):
            return ast.Name(_type(node), ast.Load())
        return self.generic_visit(node)
