"""Questions about one line of Python source that the symbol-level impact walk asks (``impact_symbols.py``).

The index records where a name is used, not the syntax around it; these read the line's text at the use's column.
Each is conservative in the walk's sense: when the text does not show it plainly, the answer keeps the test.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
from collections.abc import Sequence

WORD = re.compile(r"[A-Za-z_]\w*")
_LAST_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*$")
#: Text before a name that puts it in an annotation: ``name: ...`` or ``self.name: ...`` (no ``=`` yet) or
#: ``-> ...``. A keyword before the colon opens a block (``else: return K``), never an annotation.
_ANNOTATION = re.compile(r"(?:(?:^|[(,])\s*\*{0,2}(?!(?:else|try|finally|lambda|except|match|case)\b)"
                         r"[A-Za-z_][\w.]*\s*:[^=:]*|->[^:]*)$")
#: ``lambda args:`` (the parameters hold no colon unless annotated, which a lambda's cannot be).
_LAMBDA = re.compile(r"\blambda\b[^:]*:")
_ASSIGNED = re.compile(r"^\s*[A-Za-z_][\w.]*\s*(?::[^=]*)?=\s*$")
#: ``return `` and a plain dotted prefix (``return validators.``) before a name.
_RETURN = re.compile(r"^\s*return\s+(?:[A-Za-z_]\w*\s*\.\s*)*$")
#: Lines a returned call may span.
_CALL_LINES = 40
#: A decorator line applying one of pytest's marks, up to its opening parenthesis: ``@pytest.mark.name(``.
_PYTEST_MARK = re.compile(r"\s*@\s*(?:pytest\s*\.\s*)?mark\s*\.\s*[A-Za-z_]\w*\s*\(")


def dotted_root(text: str, col: int) -> tuple[int, int] | None:
    """(column of the root, number of dots) of the plain dotted name a member access at ``col`` hangs off
    (``os.path.`` before ``join``: ``os``, 2); None when a call, a subscript or a literal is in the chain."""
    dots = 0
    i = col
    while True:
        i -= 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        if i < 0 or text[i] != ".":
            return None
        dots += 1
        i -= 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        end = i + 1
        while i >= 0 and (text[i].isalnum() or text[i] == "_"):
            i -= 1
        start = i + 1
        if start == end or text[start].isdigit():
            return None
        j = i
        while j >= 0 and text[j] in " \t":
            j -= 1
        if j >= 0 and text[j] == ".":
            i = j + 1  # another link: the loop steps back over the dot
            continue
        if j >= 0 and (text[j].isalnum() or text[j] == "_"):
            # Only a keyword stands before a name with nothing but blanks between (``return os.environ``,
            # ``not os.path``, ``x or os.environ``); anything else is no plain dotted name we can read.
            before = _LAST_WORD.search(text, 0, j + 1)
            if before is None or not (keyword.iskeyword(before.group(0)) or keyword.issoftkeyword(before.group(0))):
                return None
            return start, dots
        if j >= 0 and text[j] in ")]}'\"":
            return None
        return start, dots


def calls_at(text: str, col: int) -> bool:
    """``name(`` at ``col``, or a decorator line (``@name``/``@x.name`` calls it; ``@name.setter`` calls an
    attribute of ``name``, not ``name``: a property's getter does not run when its setter is declared).

    A name among the arguments of one of pytest's marks (``@pytest.mark.parametrize("e", [InvalidURL])``) is
    called only where the line calls it: a mark stores its arguments for collection, it never calls them. Any
    other decorator may call what it is handed while decorating, so every name on its line counts as called."""
    word = WORD.match(text, col)
    if text.lstrip().startswith("@"):
        mark = _PYTEST_MARK.match(text)
        if word is None or mark is None or col < mark.end():
            return word is None or not text[word.end():].lstrip().startswith(".")
    if word is None:
        return True
    rest = text[word.end():].lstrip()
    if rest.startswith("["):  # ``Generic[T](...)`` calls it too (flask's ``ConfigAttribute[bool]("TESTING")``)
        closed = _closing([rest], 0, 0)
        return closed is None or rest[closed[1] + 1:].lstrip().startswith("(")
    return rest.startswith("(")


#: ``a.b.name = `` (an annotation allowed) before a read of ``x.y.name``, with the name captured.
_SAME_NAME_STORE = re.compile(r"^\s*[A-Za-z_][\w.]*\.\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*[A-Za-z_][\w.]*\.\s*$")


def restored_at(text: str, col: int) -> bool:
    """Whether the member read at ``col`` (``self.request = self.response.request``) is the whole right-hand side
    of a store into an attribute of the same name: what it reads goes nowhere else."""
    found = _SAME_NAME_STORE.match(text[:col])
    word = WORD.match(text, col)
    if found is None or word is None or word.group(0) != found.group(1):
        return False
    tail = text[word.end():].strip()
    return not tail or tail.startswith("#")


def member_at(text: str, col: int) -> bool:
    """Whether the name at ``col`` is an attribute access (``x.name``)."""
    return text[:col].rstrip().endswith(".")


#: ``.attr[.attr…].insert(`` after a name: a built-in container method called on something its object holds.
_GROWS_HELD = re.compile(r"(?:\s*\.\s*[A-Za-z_]\w*)+?\s*\.\s*(?:append|extend|insert|add|update|setdefault|remove|"
                         r"discard|clear)\s*\(")


def grows_held_container(text: str, col: int) -> bool:
    """Whether the name at ``col`` is only the head of a statement growing a container its object holds
    (``run_command.params.insert(0, option)``: a list the function object carries). Nothing of the named function
    runs there; a call through the object (``f.callback(x)``, ``f.__wrapped__(x)``) is no container method."""
    word = WORD.match(text, col)
    if word is None or member_at(text, col) or text[:col].strip():
        return False  # not at the start of the statement: its value may go somewhere
    return _GROWS_HELD.match(text, word.end()) is not None


#: ``.attr[.attr…] = `` after a name: a plain store into an attribute of the named object.
_ATTRIBUTE_STORE = re.compile(r"(?:\s*\.\s*[A-Za-z_]\w*)+\s*(?::[^=]*)?=(?!=)")
#: A module-level ``del`` statement's first line (``del (A.__slots__, B.__slots__)``, ``del x``).
_DEL = re.compile(r"del\b")


def attribute_store_at(text: str, col: int) -> bool:
    """Whether the name at ``col`` only opens a plain store into one of its attributes (jinja2's
    ``Environment.template_class = Template``): none of the named class's or function's code runs there (a
    class's ``__setattr__`` serves its instances, not the class)."""
    word = WORD.match(text, col)
    if word is None or text[:col].strip():
        return False
    return _ATTRIBUTE_STORE.match(text, word.end()) is not None


_STORED_INTO = re.compile(r"^(\s*)([A-Za-z_]\w*)\s*\.\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)")


def attribute_target(text: str, col: int) -> tuple[int, str] | None:
    """For a name at ``col`` on the right of ``Holder.attr = ...``: (``Holder``'s column, ``attr``); else None."""
    found = _STORED_INTO.match(text)
    if found is None or col < found.end():
        return None
    return found.start(2), found.group(3)


def in_module_del(lines: Sequence[str], index: int) -> bool:
    """Whether ``lines[index]`` (module-level code) belongs to a ``del`` statement: the nearest line at or above it
    that starts at column 0 (a module-level statement's first line; continuation lines are indented) is ``del``,
    alone on its line. Deleting a name or an attribute runs none of what it names."""
    for i in range(index, max(-1, index - 50), -1):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("#") or text[0] in " \t)]}":
            continue
        return _DEL.match(text) is not None and ";" not in text
    return False


def callee_at(text: str, col: int) -> bool:
    """Whether the name at ``col`` is plainly called there (``name(``) on a line that is no decorator."""
    word = WORD.match(text, col)
    return word is not None and not text.lstrip().startswith("@") and text[word.end():].lstrip().startswith("(")


def returns_call(lines: Sequence[str], index: int, col: int) -> bool:
    """Whether the name at ``col`` of ``lines[index]`` is called as the whole of a ``return`` statement
    (``return Name(...)``, the call's arguments on as many lines as it takes, nothing after its closing
    parenthesis but a comment). Strings and comments are skipped; anything unclear answers False."""
    text = lines[index]
    word = WORD.match(text, col)
    if word is None or not _RETURN.match(text[:col]):
        return False
    rest = text[word.end():].lstrip()
    return rest.startswith("(") and _ends_statement(lines, index, len(text) - len(rest))


def returns_name(text: str, col: int) -> bool:
    """Whether the name at ``col`` is the whole of a ``return`` statement, not called (``return BOOL``,
    ``return types.BOOL``): the function hands the object back and runs none of it."""
    word = WORD.match(text, col)
    if word is None or not _RETURN.match(text[:col]):
        return False
    tail = text[word.end():].strip()
    return not tail or tail.startswith("#")


#: ``target = `` or ``target: T = `` before a name (a plain dotted prefix allowed: ``= types.``), the
#: target captured, and ``[`` when the value is a list comprehension whose items are the call.
_STORE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=\s*(\[\s*)?(?:[A-Za-z_]\w*\s*\.\s*)*$")
_FOR = re.compile(r"for\s")
_DEF = re.compile(r"\s*(?:async\s+)?def\s")


def stored_call(lines: Sequence[str], index: int, col: int) -> tuple[str, int] | None:
    """The target (``self.types``, ``x``) that a call of the name at ``col`` of ``lines[index]`` is stored into,
    as the whole value (``self.type = BoolParamType()``) or as each item of a list comprehension (``self.types =
    [convert_type(t) for t in types]``), nothing else done with what it returns, and the index of the statement's
    last line; None otherwise (unclear text included)."""
    text = lines[index]
    found = _STORE.match(text[:col])
    word = WORD.match(text, col)
    if found is None or word is None or "==" in text[:col]:
        return None
    rest = text[word.end():].lstrip()
    if not rest.startswith("("):
        return None
    call = len(text) - len(rest)
    if found.group(2) is None:
        last = _statement_end(lines, index, call)
        return None if last is None else (found.group(1), last)
    closed = _closing(lines, index, call)
    if closed is None or not _FOR.match(lines[closed[0]][closed[1] + 1:].lstrip()):
        return None
    last = _statement_end(lines, index, found.start(2))
    return None if last is None else (found.group(1), last)


#: A call: a name, a closing bracket or a string's end, then an opening parenthesis.
_ANY_CALL = re.compile(r"""[\w)\]'"]\s*\(""")


def runs_nothing_after(lines: Sequence[str], last: int, end: int) -> bool:
    """Whether ``lines[last + 1:end]`` (the rest of a function after a statement) call nothing at all: no method
    of ``self`` that could read what the statement stored, nothing that could reach it. A parenthesis in a comment
    or a string counts too (the safe answer)."""
    return not any(_ANY_CALL.search(text) for text in lines[last + 1:end])


def top_of_body(lines: Sequence[str], start: int, end: int, index: int) -> bool:
    """Whether ``lines[index]`` is at the top level of the body of the function spanning ``lines[start:end]`` (no
    loop, ``if`` or ``with`` around it): its indentation is the least of the body's lines. A docstring line
    indented less makes the answer False (the safe one)."""
    header = next((i for i in range(start, min(end, index + 1)) if _DEF.match(lines[i])), None)
    if header is None:
        return False
    outer = len(lines[header]) - len(lines[header].lstrip())
    depths = [len(text) - len(text.lstrip()) for text in lines[header + 1:end] if text.strip()]
    inner = [d for d in depths if d > outer]
    own = len(lines[index]) - len(lines[index].lstrip())
    return bool(inner) and own == min(inner) and min(depths) > outer


def _ends_statement(lines: Sequence[str], index: int, col: int) -> bool:
    """Whether the bracket opened at ``lines[index][col]`` closes with nothing after it but a comment."""
    return _statement_end(lines, index, col) is not None


def _statement_end(lines: Sequence[str], index: int, col: int) -> int | None:
    """The index of the line where the bracket opened at ``lines[index][col]`` closes, if nothing but a comment
    follows it there; None otherwise."""
    closed = _closing(lines, index, col)
    if closed is None:
        return None
    row, i = closed
    tail = lines[row][i + 1:].strip()
    return row if not tail or tail.startswith("#") else None


def _closing(lines: Sequence[str], index: int, col: int) -> tuple[int, int] | None:
    """(line index, column) of the bracket closing the one at ``lines[index][col]``; strings and comments are
    skipped. None when it does not close within ``_CALL_LINES`` lines or the text is unclear."""
    depth = 0
    quote = ""
    row, i = index, col
    while row < len(lines) and row - index <= _CALL_LINES:
        text = lines[row]
        while i < len(text):
            ch = text[i]
            if quote:
                if ch == "\\":
                    i += 1
                elif text.startswith(quote, i):
                    i += len(quote) - 1
                    quote = ""
            elif ch in "\"'":
                quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
                i += len(quote) - 1
            elif ch == "#":
                break
            elif ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0:
                    return row, i
            i += 1
        if quote and len(quote) == 1:
            return None  # an unterminated one-line string: not Python we can read
        row, i = row + 1, 0
    return None


#: ``name =``, ``name: T =`` or an augmented ``name += ``, ``name |= `` at the start of what follows a binding.
_BINDING = re.compile(r"[A-Za-z_]\w*\s*(?::[^=]*)?(?P<op>[+|]?)=(?!=)\s*")
_SCALAR = re.compile(r"(?:-?\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?|True|False|None"
                     r"""|[rRbBuUfF]{0,2}(?:"[^"\\]*"|'[^'\\]*'))\s*(?:#.*)?$""")


def bound_literal(lines: Sequence[str], index: int, col: int) -> str | None:
    """What the binding of the name at ``col`` of ``lines[index]`` stores, when the whole right-hand side is a
    literal: ``display`` (a list, dict or set display or comprehension), ``scalar`` (a number, a one-line
    string, ``True``/``False``/``None``), ``augmented`` (``name += ...``/``name |= ...``); None otherwise."""
    text = lines[index]
    found = _BINDING.match(text, col)
    if found is None:
        return None
    if found.group("op"):
        return "augmented"
    start = found.end()
    if start < len(text) and text[start] in "[{":
        return "display" if _ends_statement(lines, index, start) else None
    return "scalar" if _SCALAR.match(text, start) else None


def in_assigned_lambda(text: str, col: int) -> bool:
    """Whether ``col`` lies in the body of a lambda assigned on the line (``name = lambda ...: ...``): the
    body runs when the lambda is called, not where it is written. A lambda handed to a call may run there
    (``sorted(key=lambda ...)``), so only an assignment's counts, and only a body that visibly still runs
    to ``col`` (no comma or closing bracket of the lambda's own level in between)."""
    before = text[:col]
    found = None
    for match in _LAMBDA.finditer(before):
        found = match  # the last lambda opened before ``col``
    if found is None or not _ASSIGNED.match(before[:found.start()]):
        return False
    depth = 0
    for ch in before[found.end():]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth < 0:
                return False
        elif ch == "," and depth == 0:
            return False
    return True


def passive_at(text: str, col: int) -> bool:
    """A class named where none of its code runs: an annotation (``x: K``, ``-> K``, ``list[K]`` there),
    an ``isinstance``/``issubclass`` argument, an ``except`` clause."""
    before = text[:col]
    if text.lstrip().startswith("except") or _ANNOTATION.search(before):
        return True
    opened = max(before.rfind("isinstance("), before.rfind("issubclass("))
    return opened >= 0 and "," in before[opened:]


def keyword_at(text: str, col: int) -> bool:
    """A keyword argument's name (``f(prompt=...)``), which the index records as an unresolved name."""
    word = WORD.match(text, col)
    rest = text[word.end():].lstrip() if word else ""
    return rest.startswith("=") and not rest.startswith("==")


def header_end(lines: Sequence[str], start: int) -> int:
    """The last line of a class header starting at line ``start`` (its ``:``), looking at most 10 lines on."""
    last = start
    while last <= len(lines) and last < start + 10 and not lines[last - 1].rstrip().endswith(":"):
        last += 1
    return last


def builtin_class(lines: Sequence[str], line: int, col: int) -> bool:
    """Whether the name at ``col`` of line ``line`` is a builtin class (``object``, ``Exception``, ``dict``...; not
    ``type``, whose instances are classes), not an attribute of it."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    word = WORD.match(text, col)
    if word is None or text[word.end():].lstrip().startswith("."):
        return False
    value = getattr(builtins, word.group(0), None)
    return isinstance(value, type) and value is not type


#: Lines a ``def`` signature may span, and parses tried to find where it ends.
_SIGNATURE_LINES = 60
_SIGNATURE_PARSES = 8


def signature_annotations(lines: Sequence[str], start: int) -> frozenset[tuple[int, int]]:
    """(line, column) of each name in a parameter or return annotation of the ``def`` (or ``async def``) at line
    ``start``, over all the lines its signature spans (``commands: Mapping[str, K]\n | Sequence[K]``): named
    there, nothing of it runs. Not a name the annotation subscripts (``K[int]`` runs ``K.__class_getitem__``).
    Empty when the signature does not parse as one."""
    if not 0 < start <= len(lines):
        return frozenset()
    first = lines[start - 1]
    indent = len(first) - len(first.lstrip())
    rows: list[str] = []
    tries = 0
    for text in lines[start - 1:start - 1 + _SIGNATURE_LINES]:
        rows.append(text[_shift(text, indent):])
        if not text.rstrip().endswith(":"):
            continue
        tries += 1
        try:
            tree = ast.parse("\n".join(rows) + "\n pass")
        except SyntaxError:
            if tries >= _SIGNATURE_PARSES:
                break
            continue
        node = tree.body[0] if len(tree.body) == 1 else None
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            break
        shifts = [_shift(t, indent) for t in lines[start - 1:start - 1 + len(rows)]]
        return frozenset((start + row - 1, col + shifts[row - 1]) for row, col in _annotated(node, rows))
    return frozenset()


def _shift(text: str, indent: int) -> int:
    """Columns a signature row loses: the ``def``'s indentation, or all of a row indented less."""
    return indent if text[:indent].isspace() or not indent else len(text) - len(text.lstrip())


def _annotated(node: ast.FunctionDef | ast.AsyncFunctionDef, rows: Sequence[str]) -> list[tuple[int, int]]:
    """(row, column) of each annotation name of the parsed signature ``node`` (``rows``: its text)."""
    args = node.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
    notes = [a.annotation for a in params if a.annotation is not None]
    if node.returns is not None:
        notes.append(node.returns)
    found = []
    for note in notes:
        subscripted = {id(s.value) for s in ast.walk(note) if isinstance(s, ast.Subscript)}
        for part in ast.walk(note):
            if isinstance(part, ast.Name) and id(part) not in subscripted:
                found.append((part.lineno, _char_col(rows, part.lineno, part.col_offset)))
            elif isinstance(part, ast.Attribute) and id(part) not in subscripted and part.end_col_offset is not None:
                end = part.end_lineno or part.lineno
                found.append((end, _char_col(rows, end, part.end_col_offset) - len(part.attr)))
    return found


def _char_col(rows: Sequence[str], row: int, offset: int) -> int:
    """``ast``'s UTF-8 byte offset on a row as a character column."""
    text = rows[row - 1] if 0 < row <= len(rows) else ""
    return len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace"))


_MAIN_GUARD = re.compile(r"""^if\s+__name__\s*==\s*(['"])__main__\1\s*:""")


def main_guard_spans(lines: Sequence[str]) -> list[tuple[int, int]]:
    """1-based (first, last) lines of the bodies of module-level ``if __name__ == "__main__":`` blocks: code that runs
    when the file is executed as a script, never when it is imported (as a test run imports it)."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    for number, text in enumerate(lines, start=1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#") or text[:1] in (" ", "\t"):
            continue
        if start is not None:
            spans.append((start, number - 1))
            start = None
        if _MAIN_GUARD.match(text):
            start = number + 1
    if start is not None:
        spans.append((start, len(lines)))
    return spans
