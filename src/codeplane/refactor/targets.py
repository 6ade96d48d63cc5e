"""Which definition a refactor is about (issue 9 item 1): by qualified name, def_uid or position.

Resolution never widens: a qualified name matches a definition whose ``qualified_name`` equals it or ends
with it on a dot boundary; several matches are an ambiguity the agent decides (§8.5a), never a rename of
every definition sharing the name. A position resolves to the definition named there, or to the
definition the reference there is bound to.

A Java method is one overload, renamed alone as Java IDEs do (QA45 F4): ``rename.py`` leaves its overloads out and
splits the calls by arity (:func:`java_signature`, :func:`call_arity`). A qualified name naming several overloads
is a decision between them; an overload that overrides a method from outside the repository (``toString()``
beside ``toString(int)``: renamed, it no longer overrides ``Object.toString``) is no candidate, and picking it
alone is refused (4008).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.languages import C_FAMILY_SUFFIXES
from codeplane.refactor.attributes import attribute_at, instance_attributes
from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.spans import SourceText
from codeplane.refactor.stubtwins import runtime_member

#: Definitions offered as decision candidates at most (the rest are counted, not listed).
MAX_CANDIDATES = 8
_LOOKUP_LIMIT = 500
_UID = re.compile(r"[0-9a-f]{16}\Z")
POSITION = re.compile(r"(?P<path>[^:]+):(?P<line>\d+)(?::(?P<col>\d+))?\Z")
#: The largest line or column of a ``path:line[:col]`` position, as the tools bound a ``line`` argument
#: (``server/tooling.py`` LINE_MAX): a larger one reached SQLite and came back 9001 OverflowError.
POSITION_MAX = 2**31 - 1


def _numbers(match: re.Match[str]) -> tuple[int, int | None]:
    """The line and column of a :data:`POSITION` match; 1003 when one is past :data:`POSITION_MAX`."""
    for field in ("line", "col"):
        digits = match[field]
        if digits is not None and (len(digits) > 10 or int(digits) > POSITION_MAX):
            name = "line" if field == "line" else "column"
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"the {name} of a path:line[:column] position is at most {POSITION_MAX:,}",
                                 details={"field": name, "maximum": POSITION_MAX})
    return int(match["line"]), int(match["col"]) if match["col"] is not None else None


def _not_found(symbol: str, suggestions: Sequence[Def]) -> CodePlaneError:
    return CodePlaneError(
        ErrorCode.SYMBOL_NOT_FOUND, f"no definition matches {symbol!r}",
        details={"symbol": symbol, "suggestions": [
            {"qualified_name": d.qualified_name, "path": d.path, "line": d.name_line, "def_uid": d.def_uid}
            for d in suggestions[:10]]},
    )


def _matches_qualified(d: Def, symbol: str) -> bool:
    return d.qualified_name == symbol or d.qualified_name.endswith("." + symbol) \
        or d.lexical_path == symbol


def _at_position(reader: FactReader, path: str, line: int, column: int | None, name: str | None) -> list[Def]:
    defs = list(reader.defs_at(path, line)) + [d for d in reader.defs_in_file(path, _LOOKUP_LIMIT)
                                               if d.name_line == line]
    named_here = [d for d in defs if d.name_line == line
                  and (column is None or d.name_column <= column < d.name_column + len(d.name))
                  and (name is None or d.name == name)]
    if named_here:  # a line defining something means it (several: a decision between them)
        return sorted({d.def_uid: d for d in named_here}.values(), key=lambda d: d.name_column)
    if column is None and name is None:
        _one_name_on(reader, path, line)
    for ref in reader.refs_on_line(path, line):
        if ref.target_uid is None:
            continue
        if column is not None and not ref.column <= column < ref.end_column:
            continue
        if name is not None and ref.token != name:
            continue
        target = reader.get_def(ref.target_uid)
        if target is not None:
            return [target]
    return []


def _one_name_on(reader: FactReader, path: str, line: int) -> None:
    """A line that defines nothing, given with neither a column nor a name, must hold one name: on
    ``out = make_help(value)`` the first name found was renamed (QA33: the local ``out``, where the agent meant the
    function). 1003 naming each."""
    names: dict[str, int] = {}
    for ref in reader.refs_on_line(path, line):
        names.setdefault(ref.token, ref.column)
    if len(names) > 1:
        shown = sorted(names.items(), key=lambda item: (item[1], item[0]))[:20]
        raise CodePlaneError(
            ErrorCode.INVALID_ARGUMENTS,
            f"{path}:{line} holds several names: " + ", ".join(f"{n} (column {c + 1})" for n, c in shown)
            + "; give column or symbol (the name)",
            details={"field": "column", "names": [{"name": n, "column": c + 1} for n, c in shown]})


def parse_position(symbol: str | None, path: str | None, line: int | None,
                   column: int | None) -> tuple[str, int, int | None] | None:
    """``(path, line, column)`` from explicit arguments or a ``path:line[:col]`` symbol."""
    if path is not None and line is not None:
        return path, line, column
    match = POSITION.match(symbol or "")
    if match is None:
        return None
    return match["path"], *_numbers(match)


def resolve_targets(reader: FactReader, symbol: str | None, *, path: str | None = None, line: int | None = None,
                    column: int | None = None, rename: bool = False) -> tuple[list[Def], int]:
    """Candidate definitions (sorted, at most :data:`MAX_CANDIDATES`) and how many matched in total.

    A symbol with a path and no line is that name defined in that file. Raises 3007 (with suggestions) when
    nothing matches and 1003 when neither a symbol nor a position was given; for a ``rename``, 4008 for a Java
    overload the planner cannot rename alone (the module docstring).
    """
    def checked(defs: list[Def]) -> list[Def]:
        return _java_overloads(reader, defs) if rename else defs

    if path is None and symbol:
        position = POSITION.match(symbol)
        # ``src/a.py:12:4`` is a position; a dotted name never contains ``:``.
        if position is not None:
            path = position["path"]
            line, column = _numbers(position)
            symbol = None
    if path is not None and line is None and symbol:
        # ``symbol`` + ``path``: the definition of that name in that file (an agent names the file it read).
        named = sorted(reader.defs_named(symbol.rpartition(".")[2], _LOOKUP_LIMIT),
                       key=lambda d: (d.path, d.name_line, d.name_column))
        matches = _one_per_symbol([d for d in named if _matches_qualified(d, symbol)
                                   and stub_base(d.path) == stub_base(path)], overloads_apart=rename)
        if not matches:
            matches = [d for d in _attributes(reader, symbol) if stub_base(d.path) == stub_base(path)]
        if not matches:
            raise _not_found(f"{symbol} in {path}", [d for d in named if _matches_qualified(d, symbol)])
        matches = checked(_declarations(reader, matches))
        return matches[:MAX_CANDIDATES], len(matches)
    if path is not None:
        if line is None:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "a position needs path and line",
                                 details={"field": "line"})
        name = symbol.rpartition(".")[2] if symbol else None
        found = _at_position(reader, path, line, column, name) or attribute_at(reader, path, line, column)
        if not found:
            raise _not_found(f"{path}:{line}" + (f":{column}" if column is not None else "")
                             + (f" ({symbol})" if symbol else ""), [])
        found = checked(_declarations(reader, list(found)))
        return found[:MAX_CANDIDATES], len(found)
    if not symbol:
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "give symbol (qualified name or def_uid) or path+line",
                             details={"field": "symbol"})
    if symbol.startswith("#") and _UID.match(symbol[1:]):  # the ``#uid`` form answers print
        symbol = symbol[1:]
    if _UID.match(symbol):
        found_def = reader.get_def(symbol)
        if found_def is not None:
            return checked(_declarations(reader, [found_def])), 1
    name = symbol.rpartition(".")[2]
    named = sorted(reader.defs_named(name, _LOOKUP_LIMIT), key=lambda d: (d.path, d.name_line, d.name_column))
    matches = _one_per_symbol([d for d in named if _matches_qualified(d, symbol)], overloads_apart=rename) \
        or _attributes(reader, symbol)
    if not matches:
        raise _not_found(symbol, named)
    matches = checked(_declarations(reader, matches))
    return matches[:MAX_CANDIDATES], len(matches)


def _declarations(reader: FactReader, defs: list[Def]) -> list[Def]:
    """A C++ member defined apart from its class (``int K::size() {...}``) is the member its class declares, and a
    constructor is its class: linking makes its name a use of that declaration or class, which is the symbol (one
    rename for both; ``DepsLog`` names the class, not also its constructor). So is a Java method of an anonymous
    class (``new Priced() { public int price() ... }``): the method it overrides (``javalink``). A ``.pyi`` stub's
    member is the runtime member it describes (``stubtwins.py``), whose plan renames the stub too."""
    out: list[Def] = []
    for d in defs:
        symbol = runtime_member(reader, d) or d
        if d.kind == "method" and d.path.endswith((*C_FAMILY_SUFFIXES, ".java")):
            own = next((r for r in reader.refs_on_line(d.path, d.name_line)
                        if r.column == d.name_column and r.role == "DEFINITION"), None)
            if own is not None and own.target_uid not in (None, d.def_uid):
                symbol = reader.get_def(str(own.target_uid)) or d
        if symbol not in out:
            out.append(symbol)
    return out


#: ``java.lang.Object``'s overridable methods: (name, parameter count, the one parameter's declared class).
_OBJECT_METHODS = {("toString", 0, None), ("hashCode", 0, None), ("equals", 1, "Object"), ("clone", 0, None),
                   ("finalize", 0, None)}
_JAVA_TYPES = frozenset({"class", "interface", "enum", "record"})


def java_overloaded(d: Def) -> bool:
    """``d`` is a Java method: one overload, renamed alone (the module docstring)."""
    return d.kind == "method" and d.path.endswith(".java")


def _java_overloads(reader: FactReader, targets: list[Def]) -> list[Def]:
    """``targets`` without the Java overloads that override a method from outside the repository (a rename would
    break the override); 4008 when that leaves none."""
    kept: list[Def] = []
    refused: CodePlaneError | None = None
    for d in targets:
        owner = reader.get_def(d.parent_uid) if java_overloaded(d) and d.parent_uid else None
        if owner is None or owner.kind not in _JAVA_TYPES:
            kept.append(d)
            continue
        overloads = sorted({o.def_uid: o for o in reader.defs_in_file(d.path, _LOOKUP_LIMIT)
                            if o.kind == "method" and o.qualified_name == d.qualified_name}.values(),
                           key=lambda o: (o.name_line, o.name_column))
        outside = _outside_override(reader, d) if len(overloads) > 1 else None
        if outside is None:
            kept.append(d)
            continue
        others = ", ".join(str(o.name_line) for o in overloads if o.def_uid != d.def_uid)
        refused = refused or CodePlaneError(
            ErrorCode.REFACTOR_UNSUPPORTED,
            f"{d.qualified_name} at {d.path}:{d.name_line} overrides {outside}, outside the repository, which the "
            f"rename would break; its overloads (lines {others}) are renamed one at a time: give the path and line "
            "of the one you mean", details={"symbol": d.qualified_name, "path": d.path, "overrides": outside,
                                            "overloads": [{"line": o.name_line, "def_uid": o.def_uid}
                                                          for o in overloads]})
    if refused is not None and not kept:
        raise refused
    return kept


def _outside_override(reader: FactReader, method: Def) -> str | None:
    """What a Java method overrides outside the repository: an ``Object`` method by its signature, or, when it is
    marked ``@Override``, the method no other type of the repository declares with its name and arity."""
    params = _parameters(reader, method)
    declared = params[0].receiver_shape if len(params) == 1 else None
    one = declared[5:].rpartition(".")[2] if declared and declared.startswith("type:") else None
    if (method.name, len(params), one) in _OBJECT_METHODS:
        return f"java.lang.Object.{method.name}"
    header = [r for line in range(method.line, method.name_line + 1) for r in reader.refs_on_line(method.path, line)]
    annotated = any(r.token == "Override" and not r.is_member
                    and (method.line, method.column) <= (r.line, r.column) < (method.name_line, method.name_column)
                    for r in header)
    if not annotated:
        return None
    bases = [d for d in reader.defs_named(method.name, _LOOKUP_LIMIT) if d.kind == "method" and d.path.endswith(".java")
             and d.parent_uid != method.parent_uid and len(_parameters(reader, d)) == len(params)]
    return None if bases else f"a method {method.name} (@Override)"


def _parameters(reader: FactReader, method: Def) -> list[Ref]:
    """The parameters' names of a Java method: definitions in the method's own scope on its header lines."""
    own = next((r for r in reader.refs_on_line(method.path, method.name_line)
                if r.column == method.name_column and r.role == "DEFINITION"), None)
    if own is None or own.scope_id is None:
        return []
    return [r for r in reader.refs_in_file(method.path, _LOOKUP_LIMIT * 20)
            if r.scope_id == own.scope_id and r.role == "DEFINITION" and not r.is_member
            and r.bind_id is not None and (r.line, r.column) > (own.line, own.column)]


def _attributes(reader: FactReader, symbol: str) -> list[Def]:
    """``Class.attr`` naming an attribute a method assigns on ``self`` (``attributes.py``), when no definition
    row matches."""
    owner, _, name = symbol.rpartition(".")
    if not owner:
        return []
    classes = [d for d in reader.defs_named(owner.rpartition(".")[2], _LOOKUP_LIMIT) if _matches_qualified(d, owner)]
    return instance_attributes(reader, name, classes)


def _one_per_symbol(defs: Sequence[Def], *, overloads_apart: bool = False) -> list[Def]:
    """Overloads and conditional redefinitions (same file, same qualified name) are one symbol: keep the
    last definition (the implementation); the planner renames its siblings with it. For a rename
    (``overloads_apart``) a Java overload is a symbol of its own: several are a decision."""
    last: dict[tuple[str, str, int], Def] = {}
    # ``mod.pyi`` sorts after ``mod.py``: the runtime definition wins over its stub.
    for d in sorted(defs, key=lambda d: (d.path.endswith(".pyi"), d.path, d.name_line, d.name_column)):
        key = (stub_base(d.path), d.qualified_name, d.name_line * 10_000 + d.name_column
               if overloads_apart and java_overloaded(d) else 0)
        if key not in last or not d.path.endswith(".pyi"):
            last[key] = d
    return sorted(last.values(), key=lambda d: (d.path, d.name_line, d.name_column))


def stub_base(path: str) -> str:
    """``pkg/mod.pyi`` and ``pkg/mod.py`` name one module."""
    return path[:-1] if path.endswith(".pyi") else path


#: How far past a name the parenthesised list after it is read (a call's arguments, a method's parameters).
_ARGUMENTS_WINDOW = 4000


def java_signature(text: SourceText | None, method: Def) -> tuple[int, bool] | None:
    """A Java method's parameter count and whether its last is varargs (``String... parts``), read from the source
    after its name (type arguments' commas do not count); ``None`` when unreadable."""
    if text is None:
        return None
    return _count(text, method.name_line, method.name_column + len(method.name), declaration=True)


def call_arity(text: SourceText | None, ref: Ref) -> int | None:
    """The number of arguments of the call named by ``ref``; ``None`` when it is no call (``Cart::add``) or a ``<``
    at the top level of its arguments leaves the commas unclear (``f(new HashMap<K, V>())``, ``f(a < b, c)``)."""
    if text is None:
        return None
    counted = _count(text, ref.end_line, ref.end_column, declaration=False)
    return counted[0] if counted is not None else None


def accepts(signature: tuple[int, bool], arity: int) -> bool:
    count, varargs = signature
    return arity >= count - 1 if varargs else arity == count


def _count(text: SourceText, line: int, column: int, *, declaration: bool) -> tuple[int, bool] | None:
    if not 0 < line <= len(text.lines):
        return None
    start = text.offset(line, column)
    src = text.text[start:start + _ARGUMENTS_WINDOW]
    at = len(src) - len(src.lstrip())
    if src[at:at + 1] != "(":
        return None
    depth, commas, content, varargs = 0, 0, False, False
    opening, closing = ("([{<", ")]}>") if declaration else ("([{", ")]}")
    while at < len(src):
        ch = src[at]
        if ch in "\"'":
            end = _literal_end(src, at)
            if end < 0:
                return None
            content, at = True, end + 1
            continue
        if src.startswith(("//", "/*"), at):
            end = src.find("\n" if src[at + 1] == "/" else "*/", at + 2)
            if end < 0:
                return None
            at = end + (1 if src[at + 1] == "/" else 2)
            continue
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
            if depth == 0:
                return (commas + 1 if content else 0), varargs
        elif depth == 1 and ch == ",":
            commas += 1
        elif depth == 1 and ch == "<":
            return None  # a call's type arguments or a comparison: the commas are not sure
        elif depth == 1 and src.startswith("...", at):
            varargs = True
        if depth >= 1 and not ch.isspace() and not (depth == 1 and ch == "(" and not content and not commas):
            content = True
        at += 1
    return None


def _literal_end(src: str, at: int) -> int:
    """The offset of the quote closing the string or character literal opened at ``at`` (-1: none on its line)."""
    quote, at = src[at], at + 1
    while at < len(src) and src[at] != "\n":
        if src[at] == "\\":
            at += 2
            continue
        if src[at] == quote:
            return at
        at += 1
    return -1
