"""The globs of ``scope.paths`` and ``list_files``' ``pattern``, read as ``rg -g`` reads its globs.

They are gitignore-style patterns over repo-relative paths (``*.py`` at any depth, ``src/`` a directory, ``/x``
anchored at the root; later globs win), with ``rg``'s additions, each of which answered a silent "no hits":

- a list of negations only (``!big.txt``) selects everything but what they name (``rg -g '!x'``);
- braces expand (``*.{py,txt}`` is ``*.py`` and ``*.txt``, nesting allowed; ``\\{`` is a literal brace);
- a leading ``./`` names the root, as ``/`` does (``./src/m.py``: ``read_source`` accepts that spelling too).

A glob that can match no repo-relative path (``../x``, ``//host``, ``C:``) is 1003, as is a brace left open.

Matching takes time linear in the path, as ``rg``'s automata do: ``pathspec``'s translation of a glob is a
backtracking regex (``*a*a*b`` is ``[^/]*a[^/]*a[^/]*b``), whose cost grows as the path's length to the power of its
stars, and ``re`` holds the GIL throughout: one ``list_files`` of ``*a*a*a*a*a*a*a*a*b`` over a 60-character name
took 174 s, and no other call (``/health``, a stop) was answered meanwhile. :func:`path_matcher` asks ``re`` only
where that cost is provably small, and otherwise runs the same regex as a set of states (:class:`_Automaton`).
"""

from __future__ import annotations

import itertools
import math
import re
import re._compiler as sre_compile  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import pathspec

from codeplane.core.errors import CodePlaneError, ErrorCode

#: Most globs one list may expand to (``{a,b}{c,d}...`` multiplies).
MAX_EXPANDED = 1000


def _refused(index: int, glob: str, why: str) -> CodePlaneError:
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"scope.paths: {glob!r} {why}",
                          details={"field": f"scope.paths.{index}", "glob": glob})


def _special(glob: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """``(index, character)`` of the characters of ``glob`` from ``start`` outside escapes and ``[...]`` sets."""
    at = start
    while at < len(glob):
        ch = glob[at]
        if ch == "\\":
            at += 2
            continue
        if ch == "[":
            first = at + 2 if glob[at + 1:at + 2] in ("!", "^") else at + 1
            close = glob.find("]", first + 1)  # a ``]`` first in the set is a member
            if close >= 0:
                at = close + 1
                continue
        yield at, ch
        at += 1


def _expand(glob: str) -> list[str] | None:
    """Every alternative of ``glob``'s braces; ``None`` for a brace left open."""
    opening = next((at for at, ch in _special(glob) if ch == "{"), None)
    if opening is None:
        return [glob]
    depth, bounds = 0, [opening]
    for at, ch in _special(glob, opening):
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 1:
            bounds.append(at)
        elif depth == 0:
            bounds.append(at)
            break
    else:
        return None
    found: list[str] = []
    for left, right in itertools.pairwise(bounds):
        expanded = _expand(glob[:opening] + glob[left + 1:right] + glob[bounds[-1] + 1:])
        if expanded is None:
            return None
        found += expanded
        if len(found) > MAX_EXPANDED:
            break
    return found


def rg_globs(globs: Sequence[str]) -> list[str]:
    """``globs`` as gitignore lines with ``rg``'s rules applied (see the module docstring); 1003 for a bad one."""
    lines: list[str] = []
    for index, glob in enumerate(globs):
        parts = glob.replace("\\", "/").split("/")
        if ".." in parts or glob.startswith("//") or (len(glob) > 1 and glob[1] == ":"):
            raise _refused(index, glob, "reaches outside the repository; globs match repo-relative paths")
        expanded = _expand(glob)
        if expanded is None:
            raise _refused(index, glob, "opens a brace it does not close (escape a literal one: \\{)")
        for line in expanded:
            negated = line.startswith("!")
            body = line[1:] if negated else line
            if body.startswith("./"):
                body = "/" + body[2:].lstrip("/") if body.strip("./") else "*"
            lines.append(("!" if negated else "") + body)
        if len(lines) > MAX_EXPANDED:
            raise _refused(index, glob, f"expands to over {MAX_EXPANDED} globs")
    if lines and all(line.startswith("!") for line in lines):
        lines.insert(0, "*")  # ``rg -g '!x'``: everything but x
    return lines


def scope_spec(globs: Sequence[str]) -> pathspec.PathSpec[Any] | None:
    """The matcher of ``globs`` (``None`` when there are none: every path)."""
    return pathspec.PathSpec.from_lines("gitignore", rg_globs(globs)) if globs else None


def path_matcher(globs: Sequence[str]) -> Callable[[str], bool] | None:
    """Whether a repo-relative path is selected by ``globs`` (``None`` when there are none: every path), as
    :func:`scope_spec` matches it, without ``pathspec``'s per-call normalisation (the paths asked about are already
    repo-relative with ``/``): a search's scope asks it of thousands of paths (6.5 ms for Django's, 1.4 here)."""
    spec = scope_spec(globs)
    if spec is None:
        return None
    # The last glob to match decides (gitignore's rule); a pattern with no ``include`` (a comment) decides nothing.
    deciding = [(bool(p.include), _linear_search(p.regex)) for p in reversed(spec.patterns)
                if p.include is not None and p.regex is not None]

    def selected(path: str) -> bool:
        for include, search in deciding:
            if search(path):
                return include
        return False

    return selected


#: Most ways to share a path among a glob's repeats that ``re`` may be left to try (measured: under 1 ms at worst).
_BACKTRACK_BOUND = 2_000_000
_CHARACTER = {sre_parse.LITERAL, sre_parse.NOT_LITERAL, sre_parse.ANY, sre_parse.IN, sre_parse.CATEGORY}
_REPEATS = (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT)
#: Most steps one automaton remembers (each a few hundred bytes).
_MAX_STEPS = 20_000


def _linear_search(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """``pattern.search(path) is not None``, in time linear in the path for any path.

    A backtracking match with ``k`` unbounded repeats tries at most about ``C(n + k, k)`` ways to share a path of
    ``n`` characters among them; ``re`` (fast, in C) answers the paths short enough for that to stay small (up to
    1,998 characters for ``*.py``, 226 for ``*test*``), the automaton the others."""
    parsed = sre_parse.parse(pattern.pattern, pattern.flags)
    automaton = _Automaton(parsed, pattern.flags)
    stars = _unbounded(parsed)
    # The longest path ``re`` is asked about (comb grows with the length): a binary search, each glob asks once.
    low, high = 0, 4096
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if math.comb(middle + stars, stars) <= _BACKTRACK_BOUND else (low, middle - 1)
    longest = low
    search = pattern.search

    def found(path: str) -> bool:
        return search(path) is not None if len(path) <= longest else automaton.matches(path)

    return found


def _unbounded(parsed: Iterable[tuple[Any, Any]]) -> int:
    count = 0
    for op, arg in parsed:
        if op in _REPEATS:
            count += (arg[1] == sre_parse.MAXREPEAT) + _unbounded(arg[2])
        elif op is sre_parse.SUBPATTERN:
            count += _unbounded(arg[-1])
        elif op is sre_parse.BRANCH:
            count += sum(_unbounded(alternative) for alternative in arg[1])
    return count


class _Automaton:
    """A regex of the constructs ``pathspec`` writes (characters, classes, repeats, alternatives, ``^``, ``$``) as a
    Thompson automaton: it follows every way to match at once, one character at a time, so it answers whether the
    regex matches with ``search``'s meaning in time linear in the text, where ``re`` backtracks. Each character
    test is the regex's own (compiled alone), so classes, ranges and flags mean exactly what they mean to ``re``.
    """

    def __init__(self, parsed: Any, flags: int) -> None:
        self._flags = flags
        #: Per state: a character test and the state after it, else the states it moves to without reading
        #: (an assertion's, ``"^"`` or ``"$"``, only where it holds).
        self._test: list[Callable[[str], bool] | None] = []
        self._next: list[list[int]] = []
        self._assert: list[str] = []
        self._accept = self._state(None, [], "")
        self._start = self._sequence(list(parsed), self._accept)
        #: Whether a match can begin only at the start (``^``): then no later start is tried.
        self._anchored = not self._closure([self._start], None, "")
        #: Steps met in the middle of a text (a lazily built deterministic automaton): most paths repeat them.
        self._steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _state(self, test: Callable[[str], bool] | None, after: list[int], assertion: str) -> int:
        self._test.append(test)
        self._next.append(after)
        self._assert.append(assertion)
        return len(self._test) - 1

    def _sequence(self, nodes: list[tuple[Any, Any]], after: int) -> int:
        for op, arg in reversed(nodes):
            after = self._node(op, arg, after)
        return after

    def _node(self, op: Any, arg: Any, after: int) -> int:
        if op in _CHARACTER:
            single = sre_parse.SubPattern(sre_parse.State(), [(op, arg)])
            match = sre_compile.compile(single, self._flags).match
            return self._state(lambda ch: match(ch) is not None, [after], "")
        if op is sre_parse.SUBPATTERN and not (arg[1] or arg[2]):
            return self._sequence(list(arg[3]), after)
        if op is sre_parse.BRANCH:
            return self._state(None, [self._sequence(list(branch), after) for branch in arg[1]], "")
        if op in _REPEATS:
            low, high, item = arg
            if high == sre_parse.MAXREPEAT:
                loop = self._state(None, [], "")
                self._next[loop] += [self._sequence(list(item), loop), after]
                tail = loop
            else:
                tail = after
                for _ in range(high - low):
                    tail = self._state(None, [self._sequence(list(item), tail), after], "")
            for _ in range(low):
                tail = self._sequence(list(item), tail)
            return tail
        if op is sre_parse.AT and arg in (sre_parse.AT_BEGINNING, sre_parse.AT_BEGINNING_STRING):
            return self._state(None, [after], "^")
        if op is sre_parse.AT and arg is sre_parse.AT_END:
            return self._state(None, [after], "$")
        if op is sre_parse.AT and arg is sre_parse.AT_END_STRING:
            return self._state(None, [after], "\\Z")
        # Unreachable for pathspec's translations; a glob must never reach ``re`` unbounded instead.
        raise ValueError(f"glob regex construct {op} not supported")

    def _closure(self, states: Iterable[int], at: int | None, text: str) -> set[int]:
        """The states reading a character (or accepting) reached from ``states`` without reading, at ``at`` in
        ``text`` (``None``: anywhere but its start, so ``^`` fails and ``$`` may hold)."""
        reached: set[int] = set()
        seen: set[int] = set()
        stack = list(states)
        while stack:
            state = stack.pop()
            if state in seen:
                continue
            seen.add(state)
            if self._test[state] is not None or state == self._accept:
                reached.add(state)
                continue
            assertion = self._assert[state]
            if assertion and not self._holds(assertion, at, text):
                continue
            stack += self._next[state]
        return reached

    @staticmethod
    def _holds(assertion: str, at: int | None, text: str) -> bool:
        if assertion == "^":
            return at == 0
        if at is None:
            return True
        # ``$`` also holds before a final line break, as in ``re`` without MULTILINE.
        return at == len(text) or (assertion == "$" and at == len(text) - 1 and text.endswith("\n"))

    def _reads(self, state: int, ch: str) -> bool:
        test = self._test[state]
        return test is not None and test(ch)

    def matches(self, text: str) -> bool:
        """Whether the regex's ``search`` finds a match in ``text``."""
        current = frozenset(self._closure([self._start], 0, text))
        middle = len(text) - 1  # before it no assertion holds, so a step depends only on the states and character
        for at, ch in enumerate(text, 1):
            if self._accept in current:
                return True
            known = self._steps.get((current, ch)) if at < middle else None
            if known is None:
                moved = [self._next[state][0] for state in current if self._reads(state, ch)]
                if not self._anchored:
                    moved.append(self._start)  # ``search``: a match may begin at any character
                known = frozenset(self._closure(moved, at, text))
                if at < middle and len(self._steps) < _MAX_STEPS:
                    self._steps[current, ch] = known
            if not known and self._anchored:
                return False
            current = known
        return self._accept in current
