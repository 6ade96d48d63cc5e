"""Ground truth for the rename benchmark: which occurrences of a name denote the renamed definition.

Independent of both tools under test: Python's own ``ast`` plus a small scope model (function locals,
class bodies, module bindings, imports, re-exports through ``from x import name`` and ``*``) and, for class
members, the class family (the owner and its subclasses by base-class name) versus same-named twins.
Each occurrence gets ``target``, ``other`` or ``unknown`` (an attribute on a receiver nobody can type).
Results are compared token by token (``tokenize``): a renamed ``other`` token is a wrong-binding edit, a kept
``target`` token is a remaining reference. Strings and comments are not identifiers and never count.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

Verdict = str  # "target" | "other" | "unknown"
#: A function scope: its local names, and whether it imports the target's name from a binding module.
Scope = tuple[set[str], bool]


def py_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py")
                  if not any(part.startswith(".") for part in p.relative_to(root).parts))


def module_names(root: Path, files: list[Path]) -> dict[str, str]:
    """rel path -> dotted module, by the package rule (walk up while ``__init__.py`` exists)."""
    out: dict[str, str] = {}
    for path in files:
        parts = [path.stem] if path.stem != "__init__" else []
        parent = path.parent
        while parent != root and (parent / "__init__.py").exists():
            parts.insert(0, parent.name)
            parent = parent.parent
        out[path.relative_to(root).as_posix()] = ".".join(parts)
    return out


def _char_col(line: str, byte_col: int) -> int:
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))


@dataclass
class _File:
    rel: str
    module: str
    text: str
    tree: ast.Module
    lines: list[str] = field(default_factory=list)

    def pos(self, lineno: int, byte_col: int) -> tuple[int, int]:
        return lineno, _char_col(self.lines[lineno - 1], byte_col)


def _locals(fn: ast.AST) -> set[str]:
    """Names local to a function (params, stores, nested defs, imports) minus global/nonlocal ones."""
    names: set[str] = set()
    declared: set[str] = set()
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        a = fn.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None:
                names.add(arg.arg)
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            stack.extend(node.decorator_list)
            continue
        elif isinstance(node, ast.Lambda):
            continue
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names - declared


@dataclass(frozen=True)
class Located:
    module: str
    classes: tuple[str, ...]
    name: str
    rel: str


class Oracle:
    def __init__(self, root: Path) -> None:
        self.root = root
        files = py_files(root)
        mods = module_names(root, files)
        self.files: dict[str, _File] = {}
        for path in files:
            rel = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            self.files[rel] = _File(rel, mods[rel], text, tree, text.split("\n"))
        self.by_module = {f.module: f for f in self.files.values()}

    def locate(self, symbol: str) -> Located:
        parts = symbol.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            if module in self.by_module:
                rest = parts[cut:]
                return Located(module, tuple(rest[:-1]), rest[-1], self.by_module[module].rel)
        raise KeyError(symbol)

    # -- module structure ---------------------------------------------------------------------------
    def _resolve_from(self, f: _File, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = f.module.split(".") if f.rel.endswith("__init__.py") else f.module.split(".")[:-1]
        base = package[: len(package) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _all(self, f: _File) -> set[str] | None:
        for node in f.tree.body:
            names_all = isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                             for t in node.targets)
            if names_all and isinstance(node, ast.Assign) and isinstance(node.value, ast.List | ast.Tuple):
                return {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
        return None

    def binders(self, loc: Located) -> set[str]:
        """Modules whose module scope binds ``loc.name`` to the target (its module and re-exporters)."""
        found = {loc.module}
        changed = True
        while changed:
            changed = False
            for f in self.files.values():
                if f.module in found:
                    continue
                for node in f.tree.body:
                    if not isinstance(node, ast.ImportFrom):
                        continue
                    source = self._resolve_from(f, node)
                    if source not in found:
                        continue
                    for alias in node.names:
                        star_ok = alias.name == "*" and not loc.name.startswith("_") and (
                            (exported := self._all(self.by_module[source])) is None or loc.name in exported)
                        if (alias.name == loc.name and alias.asname in (None, loc.name)) or star_ok:
                            found.add(f.module)
                            changed = True
        return found

    def family(self, loc: Located) -> tuple[set[str], set[str]]:
        """(family class names, twin class names) for a member target, by simple class name."""
        members: dict[str, list[ast.ClassDef]] = {}
        bases: dict[str, set[str]] = {}
        for f in self.files.values():
            for node in ast.walk(f.tree):
                if isinstance(node, ast.ClassDef):
                    members.setdefault(node.name, []).append(node)
                    bases.setdefault(node.name, set()).update(
                        b.id if isinstance(b, ast.Name) else b.attr for b in node.bases
                        if isinstance(b, ast.Name | ast.Attribute))
        fam = {loc.classes[-1]}
        changed = True
        while changed:
            changed = False
            for cls, parents in bases.items():
                if cls not in fam and parents & fam:
                    fam.add(cls)
                    changed = True
        twins = set()
        for cls, nodes in members.items():
            if cls in fam:
                continue
            for node in nodes:
                for item in ast.walk(node):
                    defines = isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == loc.name
                    stores = isinstance(item, ast.Attribute) and item.attr == loc.name \
                        and isinstance(item.ctx, ast.Store)
                    if defines or stores:
                        twins.add(cls)
        return fam, twins

    # -- classification -----------------------------------------------------------------------------
    def classify(self, symbol: str) -> dict[tuple[str, int, int], Verdict]:
        loc = self.locate(symbol)
        member = bool(loc.classes)
        binders = set() if member else self.binders(loc)
        fam, twins = self.family(loc) if member else (set(), set())
        out: dict[tuple[str, int, int], Verdict] = {}
        for f in self.files.values():
            _Walker(self, f, loc, _Context(binders, fam, twins), out).run()
        return out


def _local_types(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """Locals whose every binding names one class: annotated parameters and ``x = Cls(...)``."""
    seen: dict[str, set[str]] = {}
    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
        if isinstance(arg.annotation, ast.Name):
            seen.setdefault(arg.arg, set()).add(arg.annotation.id)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            func = value.func if isinstance(value, ast.Call) else None
            cls = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            seen.setdefault(node.targets[0].id, set()).add(cls or "?")
    return {k: next(iter(v)) for k, v in seen.items() if len(v) == 1 and "?" not in v}


def _binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)


_DEF = re.compile(r"\b(?:def|class)\s+(\w+)")


@dataclass(frozen=True)
class _Context:
    binders: set[str]
    fam: set[str]
    twins: set[str]


class _Walker:
    def __init__(self, oracle: Oracle, f: _File, loc: Located, ctx: _Context,
                 out: dict[tuple[str, int, int], Verdict]) -> None:
        self.o, self.f, self.loc, self.out = oracle, f, loc, out
        self.binders, self.fam, self.twins = ctx.binders, ctx.fam, ctx.twins
        self.member = bool(loc.classes)
        self.modules: dict[str, str] = {}  # module-scope name -> module it is bound to
        #: Per function: local name -> class name, from ``x: Cls`` parameters and ``x = Cls(...)``.
        self.typed: list[dict[str, str]] = []
        self.module_binding: Verdict = "none"

    def mark(self, pos: tuple[int, int], verdict: Verdict) -> None:
        self.out[(self.f.rel, *pos)] = verdict

    def run(self) -> None:
        name = self.loc.name
        for node in self.f.tree.body:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    self.modules[local] = alias.name if alias.asname else alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                source = self.o._resolve_from(self.f, node)
                for alias in node.names:
                    if f"{source}.{alias.name}" in self.o.by_module:
                        self.modules[alias.asname or alias.name] = f"{source}.{alias.name}"
        if not self.member:
            if self.f.module in self.binders:
                self.module_binding = "target"
            elif any((isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name)
                     or (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets))
                     for n in self.f.tree.body):
                self.module_binding = "other"
        self.visit(self.f.tree, [], None)

    def _name_verdict(self, scopes: list[Scope], klass: ast.ClassDef | None, in_class_body: bool) -> Verdict:
        name = self.loc.name
        for names, imports_target in reversed(scopes):
            if name in names:
                return "target" if imports_target else "other"
        if in_class_body and klass is not None and any(_binds(n, name) for n in klass.body):
            return "target" if self.member and klass.name in self.fam else "other"
        if self.member:
            return "other" if self.module_binding != "none" or name in dir(__builtins__) else "unknown"
        return self.module_binding if self.module_binding != "none" else "unknown"

    def _receiver(self, value: ast.expr, klass: ast.ClassDef | None) -> Verdict:
        if self.member:
            if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                if klass is not None and klass.name in self.fam:
                    return "target"
                return "other" if klass is not None and klass.name in self.twins else "unknown"
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name | ast.Attribute):
                callee = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
                if callee == "super":
                    return "target" if klass is not None and klass.name in self.fam else "unknown"
                value = ast.Name(id=callee)
            if isinstance(value, ast.Name):
                cls = self.typed[-1].get(value.id) if self.typed else None
                cls = cls or value.id
                if cls in self.fam:
                    return "target"
                if cls in self.twins:
                    return "other"
            return "unknown"
        dotted = ast.unparse(value)
        head = dotted.split(".")[0]
        if head in self.modules:
            module = self.modules[head] + dotted[len(head):]
            return "target" if module in self.binders else ("other" if module in self.o.by_module else "unknown")
        return "unknown"

    def _imports_target(self, fn: ast.AST) -> bool:
        """The function binds the name with ``from <binder> import name`` (a function-level import)."""
        if self.member:
            return False
        return any(isinstance(node, ast.ImportFrom) and self.o._resolve_from(self.f, node) in self.binders
                   and any(a.name == self.loc.name and a.asname in (None, self.loc.name) for a in node.names)
                   for node in ast.walk(fn))

    def visit(self, node: ast.AST, scopes: list[Scope], klass: ast.ClassDef | None,
              in_class_body: bool = False) -> None:
        name = self.loc.name
        f = self.f
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in node.decorator_list:
                self.visit(deco, scopes, klass, in_class_body)
            if node.name == name:
                match = _DEF.search(f.lines[node.lineno - 1])
                if match and match.group(1) == name:
                    verdict = "other"
                    own_member = self.member and in_class_body and klass is not None and klass.name in self.fam
                    own_function = not self.member and klass is None and f.module == self.loc.module
                    if own_member or (own_function and not scopes):
                        verdict = "target"
                    self.mark((node.lineno, match.start(1)), verdict)
            if isinstance(node, ast.ClassDef):
                for base in [*node.bases, *node.keywords]:
                    self.visit(base, scopes, klass, in_class_body)
                for child in node.body:
                    self.visit(child, scopes, node, True)
                return
            args = node.args
            for default in [*args.defaults, *args.kw_defaults]:
                if default is not None:
                    self.visit(default, scopes, klass, in_class_body)
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None:
                    if arg.arg == name:
                        self.mark(f.pos(arg.lineno, arg.col_offset), "other")
                    if arg.annotation is not None:
                        self.visit(arg.annotation, scopes, klass, in_class_body)
            if node.returns is not None:
                self.visit(node.returns, scopes, klass, in_class_body)
            inner = [*scopes, (_locals(node), self._imports_target(node))]
            self.typed.append(_local_types(node))
            for child in node.body:
                self.visit(child, inner, klass, False)
            self.typed.pop()
            return
        if isinstance(node, ast.Lambda):
            inner = [*scopes, (_locals(node), False)]
            self.visit(node.body, inner, klass, False)
            return
        if isinstance(node, ast.Name) and node.id == name:
            self.mark(f.pos(node.lineno, node.col_offset), self._name_verdict(scopes, klass, in_class_body))
        elif isinstance(node, ast.Attribute) and node.attr == name and node.end_lineno is not None:
            line = f.lines[node.end_lineno - 1]
            col = _char_col(line, node.end_col_offset or 0) - len(name)
            self.mark((node.end_lineno, col), self._receiver(node.value, klass))
        elif isinstance(node, ast.ImportFrom):
            source = self.o._resolve_from(f, node)
            for alias in node.names:
                if alias.name != name:
                    continue
                verdict = "target" if (not self.member and source in self.binders) else "other"
                line = f.lines[alias.lineno - 1]
                start = _char_col(line, alias.col_offset)
                self.mark((alias.lineno, start), verdict)
                if alias.asname == name:
                    self.mark((alias.lineno, line.index(name, start + len(name))), verdict)
            return
        elif isinstance(node, ast.keyword) and node.arg == name:
            self.mark(f.pos(node.lineno, node.col_offset), "other")
        for child in ast.iter_child_nodes(node):
            self.visit(child, scopes, klass, in_class_body)


@dataclass
class Score:
    target: int = 0
    renamed_target: int = 0
    wrong: int = 0
    unknown_renamed: int = 0
    unknown_kept: int = 0
    string_edits: int = 0
    unalignable_files: int = 0

    @property
    def remaining(self) -> int:
        return self.target - self.renamed_target


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return [t for t in tokens if t.type in (tokenize.NAME, tokenize.STRING)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def score(pristine: Path, result: Path, verdicts: dict[tuple[str, int, int], Verdict], old: str, new: str) -> Score:
    """Compare the result tree with the pristine tree token by token, judged by ``verdicts``."""
    s = Score()
    for (_, _, _), verdict in verdicts.items():
        s.target += verdict == "target"
    for path in py_files(pristine):
        rel = path.relative_to(pristine).as_posix()
        after_path = result / rel
        before_text = path.read_text(encoding="utf-8")
        after_text = after_path.read_text(encoding="utf-8") if after_path.exists() else ""
        if before_text == after_text:
            continue
        before, after = _tokens(before_text), _tokens(after_text)
        if len(before) != len(after):
            s.unalignable_files += 1
            continue
        for b, a in zip(before, after, strict=True):
            if b.string == a.string:
                continue
            if b.type == tokenize.STRING:
                s.string_edits += 1
                continue
            verdict = verdicts.get((rel, b.start[0], b.start[1]), "unknown") if b.string == old else "other"
            if verdict == "target":
                s.renamed_target += a.string == new
            elif verdict == "other":
                s.wrong += 1
            else:
                s.unknown_renamed += 1
    return s
