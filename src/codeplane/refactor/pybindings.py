"""Module-level bindings of a Python file, read from its syntax (for moving a symbol, issue 20).

A symbol move has to know, for every name the moved definition uses, *how* the old module binds it: an
import it can copy (re-rendered for the destination), a ``TYPE_CHECKING`` import it can copy under the same
guard, or a definition/assignment/conditional import that only the old module itself can provide. The
statements are tree-sitter nodes so later edits are exact spans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from codeplane.refactor.lexical import _parser
from codeplane.refactor.pymodules import PyModules, relative_form

BindingKind = Literal["import", "future", "definition"]
_COMPOUND = ("if_statement", "try_statement", "with_statement", "for_statement", "while_statement")


def text_of(node: Any) -> str:
    return bytes(node.text).decode("utf-8", errors="replace")


def parse_python(data: bytes) -> Any | None:
    """The tree-sitter root of ``data`` (``None`` without the Python grammar)."""
    parser = _parser("python")
    return None if parser is None else parser.parse(data).root_node


@dataclass(frozen=True)
class ImportSpec:
    """One imported binding, absolute: ``import module [as alias]`` or ``from module import name [as alias]``."""

    module: str
    name: str | None = None
    alias: str | None = None

    @property
    def local(self) -> str:
        if self.alias:
            return self.alias
        return self.name if self.name is not None else self.module.split(".")[0]

    def render(self, mods: PyModules, importer: str, importer_module: str, relative: bool) -> str:
        """The statement in ``importer`` (whose dotted module is ``importer_module``)."""
        suffix = f" as {self.alias}" if self.alias and self.alias != (self.name or self.module) else ""
        if self.name is None:
            return f"import {self.module}{suffix}"
        module = self.module
        if relative and self.module != "__future__":
            package = importer_module if mods.is_package_init(importer) else importer_module.rpartition(".")[0]
            form = relative_form(package, self.module)
            if form is not None:
                module = "." * form[0] + form[1]
        return f"from {module} import {self.name}{suffix}"


@dataclass(frozen=True)
class Binding:
    """How a module-level name is bound: by which statement, and whether under a guard."""

    name: str
    kind: BindingKind
    statement: Any
    #: The imported binding (for ``import``/``future`` kinds), absolute.
    spec: ImportSpec | None = None
    #: Under ``if``/``try``/``with``/loops at module level (not for a ``TYPE_CHECKING`` guard).
    conditional: bool = False
    #: The condition text of an enclosing ``if ...TYPE_CHECKING:`` (the import exists for type checkers only).
    type_checking: str | None = None


def import_specs(mods: PyModules, path: str, node: Any) -> list[ImportSpec]:
    if node.type == "import_statement":
        out = []
        for child in node.named_children:
            aliased = child.type == "aliased_import"
            name = child.child_by_field_name("name") if aliased else child
            alias = child.child_by_field_name("alias") if aliased else None
            if name is not None:
                out.append(ImportSpec(text_of(name), None, text_of(alias) if alias is not None else None))
        return out
    if node.type == "future_import_statement":
        return [ImportSpec("__future__", text_of(n)) for n in node.children_by_field_name("name")]
    module_node = node.child_by_field_name("module_name")
    if module_node is None:
        return []
    level, dotted = module_part(module_node)
    module = dotted if level == 0 else mods.absolute_relative(path, level, dotted)
    if module is None:
        return []
    out = []
    for child in node.children_by_field_name("name"):
        aliased = child.type == "aliased_import"
        name = child.child_by_field_name("name") if aliased else child
        alias = child.child_by_field_name("alias") if aliased else None
        if name is not None:
            out.append(ImportSpec(module, text_of(name), text_of(alias) if alias is not None else None))
    return out


def module_part(node: Any) -> tuple[int, str]:
    """``(level, dotted)`` of a ``from`` statement's module node (level 0 = absolute)."""
    if node.type == "relative_import":
        level, dotted = 0, ""
        for child in node.children:
            if child.type == "import_prefix":
                level = text_of(child).count(".")
            elif child.type == "dotted_name":
                dotted = text_of(child)
        return level, dotted
    return 0, text_of(node)


def _targets(node: Any) -> list[str]:
    """Names an assignment target binds (identifiers in tuples/lists; attributes and subscripts bind none)."""
    if node.type == "identifier":
        return [text_of(node)]
    if node.type in ("pattern_list", "tuple_pattern", "list_pattern", "tuple", "list", "list_splat_pattern"):
        return [n for c in node.named_children for n in _targets(c)]
    return []


def _assignment(node: Any) -> Any | None:
    if node.type in ("assignment", "augmented_assignment"):
        return node
    if node.type == "expression_statement" and node.named_children and \
            node.named_children[0].type in ("assignment", "augmented_assignment"):
        return node.named_children[0]
    return None


def assigned_names(node: Any) -> list[str]:
    """Names a (possibly chained) assignment statement binds."""
    out: list[str] = []
    current = _assignment(node)
    while current is not None:
        left = current.child_by_field_name("left")
        if left is not None:
            out += _targets(left)
        right = current.child_by_field_name("right")
        current = right if right is not None and right.type == "assignment" else None
    return out


def defined_name(node: Any) -> str | None:
    inner = node.child_by_field_name("definition") if node.type == "decorated_definition" else node
    if inner is not None and inner.type in ("function_definition", "class_definition"):
        name = inner.child_by_field_name("name")
        return text_of(name) if name is not None else None
    return None


def module_bindings(mods: PyModules, path: str, root: Any) -> dict[str, list[Binding]]:
    """Every module-level binding in file order, by name (compound statements at module level included)."""
    found: dict[str, list[Binding]] = {}

    def add(b: Binding) -> None:
        found.setdefault(b.name, []).append(b)

    def visit(node: Any, conditional: bool, guard: str | None) -> None:
        for stmt in node.named_children:
            kind = stmt.type
            if kind in ("import_statement", "import_from_statement", "future_import_statement"):
                for spec in import_specs(mods, path, stmt):
                    if spec.name == "*":
                        continue
                    add(Binding(spec.local, "future" if kind == "future_import_statement" else "import", stmt, spec,
                                conditional, guard))
            elif (name := defined_name(stmt)) is not None:
                add(Binding(name, "definition", stmt, conditional=conditional or guard is not None))
            elif _assignment(stmt) is not None:
                for name in assigned_names(stmt):
                    add(Binding(name, "definition", stmt, conditional=conditional or guard is not None))
            elif kind == "if_statement":
                condition = stmt.child_by_field_name("condition")
                cond = text_of(condition) if condition is not None else ""
                is_tc = cond.split(".")[-1] == "TYPE_CHECKING" and len(stmt.named_children) == 2
                for child in stmt.named_children:
                    if child.type == "block":
                        visit(child, conditional or not is_tc, cond if is_tc and not conditional else guard)
                    elif child.type in ("elif_clause", "else_clause"):
                        for block in child.named_children:
                            if block.type == "block":
                                visit(block, True, guard)
            elif kind in _COMPOUND:
                for child in stmt.named_children:
                    if child.type == "block":
                        visit(child, True, guard)
                    elif child.type in ("except_clause", "else_clause", "finally_clause", "except_group_clause"):
                        for block in child.named_children:
                            if block.type == "block":
                                visit(block, True, guard)
                for target in stmt.children_by_field_name("left"):
                    for name in _targets(target):
                        add(Binding(name, "definition", stmt, conditional=True))

    visit(root, False, None)
    return found


def wildcard_sources(mods: PyModules, path: str, root: Any) -> list[str]:
    """Absolute modules the file star-imports at module level."""
    out = []
    for stmt in root.named_children:
        if stmt.type == "import_from_statement" and any(c.type == "wildcard_import" for c in stmt.children):
            module_node = stmt.child_by_field_name("module_name")
            if module_node is not None:
                level, dotted = module_part(module_node)
                module = dotted if level == 0 else mods.absolute_relative(path, level, dotted)
                if module:
                    out.append(module)
    return out


def import_style(root: Any) -> bool | None:
    """Whether the file's module-level ``from`` imports are relative (``None``: it has none to tell)."""
    kinds = [m.type == "relative_import" for stmt in root.named_children if stmt.type == "import_from_statement"
             and (m := stmt.child_by_field_name("module_name")) is not None]
    return any(kinds) if kinds else None


def uses_relative_imports(root: Any) -> bool:
    return bool(import_style(root))


def render_imports(specs: list[ImportSpec], render: Callable[[ImportSpec], str]) -> list[str]:
    """Statements for ``specs``, one ``from m import a, b`` per module (sorted, deterministic)."""
    plain: set[str] = set()
    grouped: dict[str, list[str]] = {}
    for spec in specs:
        line = render(spec)
        if spec.name is None or not line.startswith("from "):
            plain.add(line)
            continue
        head, _, names = line.partition(" import ")
        grouped.setdefault(head, [])
        if names not in grouped[head]:
            grouped[head].append(names)
    lines = sorted(plain) + [f"{head} import {', '.join(sorted(names))}" for head, names in sorted(grouped.items())]
    return sorted(lines, key=lambda s: (not s.startswith("import "), s))
