"""Ground truth for the Python adapter, computed with the standard library (``ast`` + ``symtable``).

Used by ``tests/test_structural_python_truth.py`` on a generated corpus and by
``benchmarks/structural_groundtruth.py`` on the Django sdist. It is an independent implementation: the
scope of every name comes from CPython's own symbol table, never from our tree-sitter walk.
"""

from __future__ import annotations

import ast
import symtable
from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TypeVar

from codeplane.index.structural.facts import PROVEN, FileFacts

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
           ast.DictComp, ast.GeneratorExp)


def ast_defs(tree: ast.AST) -> Counter[tuple[str, str, int]]:
    """(name, kind, line) of every def/async def/class; a def whose scope is a class is a method."""
    out: Counter[tuple[str, str, int]] = Counter()

    def visit(node: ast.AST, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                out[(child.name, "class", child.lineno)] += 1
                visit(child, True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                out[(child.name, "method" if in_class else "function", child.lineno)] += 1
                visit(child, False)
            elif isinstance(child, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
                visit(child, False)
            else:
                visit(child, in_class)

    visit(tree, False)
    return out


def ast_imports(tree: ast.AST) -> Counter[tuple[str, str, str | None]]:
    """(source, name, alias) of every import, as ``ImportFact`` spells them."""
    out: Counter[tuple[str, str, str | None]] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[(alias.name, alias.name, alias.asname)] += 1
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                out[(source, alias.name, alias.asname)] += 1
    return out


def fact_defs(facts: FileFacts) -> Counter[tuple[str, str, int]]:
    return Counter((d.name, d.kind, d.start_line) for d in facts.defs if d.kind in ("function", "method", "class"))


def fact_imports(facts: FileFacts) -> Counter[tuple[str, str, str | None]]:
    return Counter((i.source_literal or "", i.imported_name, i.alias) for i in facts.imports)


_Item = TypeVar("_Item", bound=Hashable)


@dataclass
class Score:
    expected: int = 0
    found: int = 0
    matched: int = 0
    misses: list[str] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)

    def add(self, path: str, expected: Counter[_Item], found: Counter[_Item], keep: int = 20) -> None:
        self.expected += sum(expected.values())
        self.found += sum(found.values())
        self.matched += sum((expected & found).values())
        for item in (expected - found).elements():
            if len(self.misses) < keep:
                self.misses.append(f"{path}: {item}")
        for item in (found - expected).elements():
            if len(self.extras) < keep:
                self.extras.append(f"{path}: {item}")

    @property
    def precision(self) -> float:
        return self.matched / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 1.0


# -- PROVEN references versus the compiler's symbol table --------------------------------------------


@dataclass(frozen=True)
class Binding:
    """Where an occurrence binds: the scope node's kind and first line, and the name."""

    kind: str  # file | class | function | lambda | comprehension
    line: int
    name: str


def _kind(node: ast.AST) -> str:
    if isinstance(node, ast.Module):
        return "file"
    if isinstance(node, ast.ClassDef):
        return "class"
    if isinstance(node, ast.Lambda):
        return "lambda"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return "function"
    return "comprehension"


class _Tables:
    """Pairs every ast scope node with its ``symtable`` table.

    Tables nest by where code is *evaluated* (a comprehension in another one's first iterable is a child
    of the outer scope), so pairing follows ``_Occurrences``' evaluation parents, in visiting order.
    """

    def __init__(self, source: str, tree: ast.Module, walker: _Occurrences) -> None:
        top = symtable.symtable(source, "<corpus>", "exec")
        self.by_node: dict[int, symtable.SymbolTable] = {id(tree): top}
        unpaired: dict[int, list[symtable.SymbolTable]] = {}
        for node in walker.scope_order:
            parent_table = self.by_node.get(id(walker.parents[id(node)]))
            if parent_table is None:
                continue
            children = unpaired.setdefault(id(parent_table), list(parent_table.get_children()))
            line = getattr(node, "lineno", 0)
            match = next((t for t in children if t.get_lineno() == line and _compatible(node, t)), None)
            if match is not None:
                children.remove(match)
                self.by_node[id(node)] = match
        #: Names bound at module level: assigned/imported there, or through ``global`` in any scope.
        self.module_bound: set[str] = set()
        pending = [top]
        while pending:
            table = pending.pop()
            pending.extend(table.get_children())
            for sym in table.get_symbols():
                bound = sym.is_assigned() or sym.is_imported() or sym.is_annotated()
                if bound and (table is top or sym.is_declared_global()):
                    self.module_bound.add(sym.get_name())


def _compatible(node: ast.AST, table: symtable.SymbolTable) -> bool:
    kind = table.get_type()
    kind_name = kind.name.lower() if hasattr(kind, "name") else str(kind)
    if isinstance(node, ast.ClassDef):
        return kind_name == "class" and table.get_name() == node.name
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return kind_name == "function" and table.get_name() == node.name
    if isinstance(node, ast.Lambda):
        return table.get_name() == "lambda"
    return table.get_name() in ("listcomp", "setcomp", "dictcomp", "genexpr")


class _Occurrences(ast.NodeVisitor):
    """Every Name/arg occurrence with the ast scope node it is evaluated in."""

    def __init__(self) -> None:
        self.stack: list[ast.AST] = []
        self.found: list[tuple[int, int, str, ast.AST]] = []  # (line, byte col, name, scope node)
        self.parents: dict[int, ast.AST] = {}
        self.scope_order: list[ast.AST] = []

    def run(self, tree: ast.Module) -> None:
        # Under ``from __future__ import annotations`` the compiler never resolves annotation names
        # (symtable has no entry for them), so they cannot be compared.
        self.skip: set[int] = set()
        future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                     and any(a.name == "annotations" for a in n.names) for n in tree.body)
        if future:
            for node in ast.walk(tree):
                notes = [getattr(node, "annotation", None), getattr(node, "returns", None)]
                for note in notes:
                    if isinstance(note, ast.AST):
                        self.skip.update(id(n) for n in ast.walk(note))
        self.stack.append(tree)
        self.generic_visit(tree)

    def _scoped(self, node: ast.AST, inner: list[ast.AST], outer: list[ast.AST | None]) -> None:
        for item in outer:
            if item is not None:
                self.visit(item)
        self.parents[id(node)] = self.stack[-1]
        self.scope_order.append(node)
        self.stack.append(node)
        for item in inner:
            self.visit(item)
        self.stack.pop()

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                 *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else [])]
        outer: list[ast.AST | None] = [*args.defaults, *[d for d in args.kw_defaults if d is not None]]
        if not isinstance(node, ast.Lambda):
            outer += [*node.decorator_list, node.returns, *[a.annotation for a in every]]
            inner: list[ast.AST] = [*every, *node.body]
        else:
            inner = [*every, node.body]
        self._scoped(node, inner, outer)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scoped(node, list(node.body), [*node.decorator_list, *node.bases, *node.keywords])

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        first = node.generators[0]
        inner: list[ast.AST] = [first.target, *first.ifs]
        for gen in node.generators[1:]:
            inner += [gen.target, gen.iter, *gen.ifs]
        inner += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        self._scoped(node, inner, [first.iter])

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension

    def visit_Name(self, node: ast.Name) -> None:
        if id(node) in self.skip:
            return
        self.found.append((node.lineno, node.col_offset, node.id, self.stack[-1]))

    def visit_arg(self, node: ast.arg) -> None:
        self.found.append((node.lineno, node.col_offset, node.arg, self.stack[-1]))


def _binding(tables: _Tables, parents: dict[int, ast.AST], scope: ast.AST, name: str, module: ast.Module,
             ) -> Binding | None:
    table = tables.by_node.get(id(scope))
    if table is None:
        return None
    name = _mangled(parents, scope, name)
    try:
        symbol = table.lookup(name)
    except KeyError:
        return None
    if symbol.is_global() or scope is module:
        return Binding("file", 1, name) if name in tables.module_bound else None
    if symbol.is_local() and not symbol.is_free():
        return Binding(_kind(scope), getattr(scope, "lineno", 1), name)
    # Free (or nonlocal): the nearest enclosing function-like scope that binds it, classes skipped.
    current = parents.get(id(scope))
    while current is not None and current is not module:
        if not isinstance(current, ast.ClassDef):
            outer = tables.by_node.get(id(current))
            if outer is not None and name in _names(tables, current):
                sym = outer.lookup(name)
                if sym.is_local() and not sym.is_global():
                    return Binding(_kind(current), getattr(current, "lineno", 1), name)
        current = parents.get(id(current))
    return None


def _mangled(parents: dict[int, ast.AST], scope: ast.AST, name: str) -> str:
    if not name.startswith("__") or name.endswith("__"):
        return name
    current: ast.AST | None = scope
    while current is not None and not isinstance(current, ast.ClassDef):
        current = parents.get(id(current))
    if current is None or not current.name.lstrip("_"):
        return name
    return f"_{current.name.lstrip('_')}{name}"


def _names(tables: _Tables, node: ast.AST) -> set[str]:
    return set(tables.by_node[id(node)].get_identifiers())


def check_proven(source: str, facts: FileFacts) -> tuple[int, list[str]]:
    """(PROVEN refs checked, disagreements). Only occurrences ``ast`` records as Name/arg are compared."""
    tree = ast.parse(source)
    walker = _Occurrences()
    walker.run(tree)
    tables = _Tables(source, tree, walker)
    lines = source.split("\n")
    truth: dict[tuple[int, int], Binding | None] = {}
    for line, byte_col, name, scope in walker.found:
        col = len(lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))
        truth[(line, col)] = _binding(tables, walker.parents, scope, name, tree)
    checked = 0
    wrong: list[str] = []
    for ref in facts.refs:
        if ref.ref_tier != PROVEN or (ref.start_line, ref.start_col) not in truth:
            continue
        checked += 1
        expected = truth[(ref.start_line, ref.start_col)]
        bind = facts.binds[ref.bind]
        owner = facts.scopes[bind.scope]
        got = Binding(owner.kind, owner.start_line if owner.kind != "file" else 1, bind.name)
        if expected != got:
            wrong.append(f"{facts.path}:{ref.start_line}:{ref.start_col} {ref.token_text}: "
                         f"facts say {got}, symtable says {expected}")
    return checked, wrong

