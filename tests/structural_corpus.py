"""A deterministic generator of Python modules that stress scoping: closures, ``global``/``nonlocal``,
class bodies, comprehensions, lambdas, ``:=``, ``match``, ``try``/``with``/``for`` targets, decorators,
defaults and annotations evaluated outside their function, conditional definitions, star imports.

Names come from a small pool so shadowing and collisions happen often.
"""

from __future__ import annotations

import random

NAMES = ("a", "b", "x", "y", "item", "value", "helper", "config", "data", "count", "Base", "Widget")
FUNCS = ("helper", "build", "run", "compute", "wrap", "load")
CLASSES = ("Widget", "Base", "Model", "Config", "Node")


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.lines: list[str] = []

    def name(self) -> str:
        return self.r.choice(NAMES)

    def expr(self, depth: int = 0) -> str:
        r = self.r
        choice = r.randrange(12 if depth < 2 else 4)
        if choice <= 2:
            return self.name()
        if choice == 3:
            return str(r.randrange(100))
        if choice == 4:
            return f"{self.name()}.{r.choice(('attr', 'value', 'run', 'items'))}"
        if choice == 5:
            return f"{r.choice(FUNCS)}({self.expr(depth + 1)}, key={self.expr(depth + 1)})"
        if choice == 6:
            v = self.name()
            return f"[{v} for {v} in {self.expr(depth + 1)} if {self.expr(depth + 1)}]"
        if choice == 7:
            k, v = self.name(), self.name()
            return f"{{{k}: {v} for {k}, {v} in {self.expr(depth + 1)}.items()}}"
        if choice == 8:
            p = self.name()
            return f"(lambda {p}, q={self.name()}: {p} + q + {self.name()})"
        if choice == 9:
            return f"({self.name()} := {self.expr(depth + 1)})"
        if choice == 10:
            return f'f"{{{self.name()}}} and {{{self.expr(depth + 1)}!r}}"'
        v = self.name()
        return f"sum({v} for {v} in {self.expr(depth + 1)})"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def stmt(self, indent: int, depth: int, in_function: bool, in_class: bool) -> None:
        r = self.r
        choice = r.randrange(16)
        if choice <= 3:
            self.emit(indent, f"{self.name()} = {self.expr()}")
        elif choice == 4:
            self.emit(indent, f"{self.name()}, ({self.name()}, {self.name()}) = {self.expr()}")
        elif choice == 5 and depth < 3:
            self.function(indent, depth + 1, in_class)
        elif choice == 6 and depth < 3:
            self.klass(indent, depth + 1)
        elif choice == 7:
            self.emit(indent, f"for {self.name()}, {self.name()} in {self.expr()}:")
            self.emit(indent + 1, f"print({self.expr()})")
        elif choice == 8:
            self.emit(indent, "try:")
            self.emit(indent + 1, f"{self.name()} = {self.expr()}")
            self.emit(indent, f"except (ValueError, KeyError) as {self.name()}:")
            self.emit(indent + 1, f"print({self.expr()})")
        elif choice == 9:
            self.emit(indent, f"with open({self.expr()}) as {self.name()}, open('x') as ({self.name()}):")
            self.emit(indent + 1, f"{self.name()} += {self.expr()}")
        elif choice == 11:
            self.emit(indent, f"match {self.expr()}:")
            self.emit(indent + 1, f"case {{'k': {self.name()}, **{self.name()}}}:")
            self.emit(indent + 2, f"print({self.expr()})")
            self.emit(indent + 1, f"case [{self.name()}, *{self.name()}] | ({self.name()}, *{self.name()}):")
            self.emit(indent + 2, "pass")
            self.emit(indent + 1, f"case Point(x={self.name()}) as {self.name()}:")
            self.emit(indent + 2, f"print({self.expr()})")
            self.emit(indent + 1, "case _:")
            self.emit(indent + 2, "pass")
        elif choice == 12:
            self.emit(indent, f"if {self.expr()}:")
            self.emit(indent + 1, f"def {r.choice(FUNCS)}({self.name()}): return {self.expr()}")
            self.emit(indent, "else:")
            self.emit(indent + 1, f"{r.choice(FUNCS)} = {self.expr()}")
        elif choice == 13:
            self.emit(indent, f"del {self.name()}")
        elif choice == 14:
            self.emit(indent, f"{self.name()}: int = {self.expr()}")
        else:
            self.emit(indent, f"print({self.expr()}, {self.expr()})")

    def function(self, indent: int, depth: int, in_class: bool) -> None:
        r = self.r
        name = r.choice(FUNCS)
        params = [self.name() for _ in range(r.randrange(3))]
        params = list(dict.fromkeys(params))
        if in_class:
            params.insert(0, "self")
        extra = f", *{self.name()}s, flag: {r.choice(CLASSES)} = {self.name()}, **kw"
        prefix = "async " if r.random() < 0.2 else ""
        if r.random() < 0.4:
            self.emit(indent, f"@{r.choice(FUNCS)}({self.name()})")
        self.emit(indent, f"{prefix}def {name}({', '.join(params)}{extra}) -> {r.choice(CLASSES)}:")
        body = indent + 1
        if r.random() < 0.3:
            declared = r.choice([n for n in NAMES if n not in params])
            self.emit(body, f"global {declared}")
            self.emit(body, f"{declared} = {self.expr()}")
        bound = r.choice([n for n in NAMES if n not in params])
        self.emit(body, f"{bound} = {self.expr()}")
        if depth < 3 and r.random() < 0.6:
            inner = r.choice(FUNCS)
            self.emit(body, f"def {inner}({r.choice([n for n in NAMES if n != bound])}={bound}):")
            self.emit(body + 1, f"nonlocal {bound}")
            self.emit(body + 1, f"{bound} = {self.expr()}")
            for _ in range(r.randrange(1, 3)):
                self.stmt(body + 1, depth + 1, True, False)
            self.emit(body + 1, f"return {self.expr()}")
        for _ in range(r.randrange(1, 5)):
            self.stmt(body, depth, True, False)
        self.emit(body, f"return {self.expr()}")

    def klass(self, indent: int, depth: int) -> None:
        r = self.r
        self.emit(indent, f"class {r.choice(CLASSES)}({self.name()}, metaclass={self.name()}):")
        body = indent + 1
        self.emit(body, f"{self.name()} = {self.expr()}")
        self.emit(body, f"items = [{self.name()} for _ in range(3)]")
        for _ in range(r.randrange(1, 4)):
            if r.random() < 0.6 and depth < 3:
                self.function(body, depth + 1, True)
            else:
                self.stmt(body, depth, False, True)

    def module(self, index: int, count: int) -> str:
        r = self.r
        self.lines = ['"""Generated module."""', "import os", "import os.path as osp",
                      "from collections import OrderedDict as OD, defaultdict"]
        if index:
            self.lines.append(f"from pkg.mod{r.randrange(index)} import {r.choice(FUNCS)}, "
                              f"{r.choice(CLASSES)} as Alias")
            self.lines.append("from . import sibling")
            self.lines.append(f"from .mod{r.randrange(index)} import {r.choice(NAMES)} as imported")
        if r.random() < 0.15:
            self.lines.append("from shared import *")
        self.lines.append(f"__all__ = [{', '.join(repr(n) for n in r.sample(FUNCS, 2))}]")
        target = r.randrange(6, 14)
        attempts = 0
        while target and attempts < 200:
            attempts += 1
            mark = len(self.lines)
            roll = r.random()
            if roll < 0.35:
                self.function(0, 1, False)
            elif roll < 0.55:
                self.klass(0, 1)
            else:
                self.stmt(0, 0, False, False)
            try:
                # Random programs can break compile-time rules (nonlocal of a parameter, ``:=`` in a
                # comprehension iterable, ...); such a statement is dropped and another drawn.
                compile("\n".join(self.lines) + "\n", "<generated>", "exec")
            except SyntaxError:
                del self.lines[mark:]
                continue
            target -= 1
        return "\n".join(self.lines) + "\n"


def generate(count: int = 60, seed: int = 20250101) -> dict[str, str]:
    """``count`` modules under ``pkg/`` (plus ``pkg/__init__.py``), identical for identical arguments."""
    gen = _Gen(seed)
    files = {"pkg/__init__.py": "from .mod0 import *\n"}
    for index in range(count):
        files[f"pkg/mod{index}.py"] = gen.module(index, count)
    return files
