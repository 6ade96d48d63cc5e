"""Whether a Jest/Vitest config script loads at all, judged from its text without running it.

``js_files`` reads a config's test patterns from its literal text; a config that cannot load (a syntax error, a
``throw`` at load time, a relative ``require``/``import`` of a file that is not there) makes the runner fail
before any test, and its patterns are then no evidence of which files are tests. :func:`load_problem` says why
such a text would not load, or ``""``. It is a scanner, not a parser: brackets must pair up, strings, template
literals, comments and regex literals must close, and a ``throw`` must stand inside a function body (a
conditional ``if (...) throw`` at load time counts: it may throw). It errs towards ``""`` where JavaScript's
grammar is ambiguous to a scanner (a ``/`` after ``)`` is a division), never towards a false alarm on a
well-formed config.
"""

from __future__ import annotations

import re
from pathlib import Path

_PAIRS = {")": "(", "]": "[", "}": "{"}
#: Keywords after which ``/`` starts a regex literal, and ``(`` opens no function's parameters.
_BEFORE_REGEX = frozenset({"return", "typeof", "case", "in", "of", "new", "delete", "void", "throw", "instanceof",
                           "yield", "await", "else", "do"})
_CONTROL = frozenset({"if", "for", "while", "switch", "catch", "with"})
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"\d[\w.]*")
#: A relative module a config loads: ``require('./x')``, ``import ... from '../x'``, ``import './x'`` (an
#: ``import type`` loads nothing).
_RELATIVE = re.compile(r"""\brequire\(\s*(['"])(\.{1,2}/[^'"?*]*)\1\s*\)"""
                       r"""|\bimport(?!\s+type\b)\s*(?:[^'";]*?\bfrom\s*)?(['"])(\.{1,2}/[^'"?*]*)\3""")
_MODULE_SUFFIXES = ("", ".js", ".ts", ".mjs", ".cjs", ".mts", ".cts", ".jsx", ".tsx", ".json", ".d.ts", "/index.js",
                    "/index.ts", "/index.mjs", "/index.cjs")
#: Comments, taken out before looking for imports (a commented-out ``require`` loads nothing); taking out more than a
#: comment (``'src/**/*.js'`` holds ``/*``) can only hide an import, never invent one.
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


class _Broken(Exception):
    """Why the text would not load."""


def load_problem(text: str, directory: Path | None = None) -> str:
    """Why the config script ``text`` would fail to load (``""``: nothing seen). ``directory`` (the config's) lets
    a relative import of a missing file count."""
    try:
        _Scan(text).run()
    except _Broken as exc:
        return str(exc)
    if directory is not None:
        code = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for match in _RELATIVE.finditer(code):
            spec = match.group(2) or match.group(4)
            if not any((directory / f"{spec}{suffix}").is_file() for suffix in _MODULE_SUFFIXES):
                line = code.count("\n", 0, match.start()) + 1
                return f"it throws when loaded ({spec}, loaded at line {line}, does not exist)"
    return ""


class _Scan:
    def __init__(self, text: str) -> None:
        # A hashbang line is no JavaScript.
        self.text = re.sub(r"\A#![^\n]*", "", text)
        self.i = 0
        #: Open brackets: (character, its offset, whether a ``{`` is a function's body).
        self.stack: list[tuple[str, int, bool]] = []
        #: The word before each open ``(`` (``if``, ``function``, a callee), by stack depth.
        self.paren_words: dict[int, str] = {}
        self.previous = ""  # the last significant token: a word, a number, or one character
        #: A ``{`` now opens a function body: after ``=>``, ``function``, or a parameter list's ``)``.
        self.pending_body = False

    def line(self, at: int | None = None) -> int:
        return self.text.count("\n", 0, self.i if at is None else at) + 1

    def run(self) -> None:
        text = self.text
        while self.i < len(text):
            char = text[self.i]
            if char.isspace():
                self.i += 1
            elif text.startswith("//", self.i):
                end = text.find("\n", self.i)
                self.i = len(text) if end < 0 else end
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise _Broken(f"it has a syntax error (the comment on line {self.line()} is never closed)")
                self.i = end + 2
            elif char in "'\"":
                self.string(char)
            elif char == "`":
                self.template()
            elif char == "/" and self.regex_here():
                self.regex()
            else:
                self.token()
        if self.stack:
            opened, at, _ = self.stack[-1]
            raise _Broken(f"it has a syntax error ({opened!r} on line {self.line(at)} is never closed)")

    def regex_here(self) -> bool:
        return self.previous == "" or self.previous in _BEFORE_REGEX or (
            not _WORD.fullmatch(self.previous) and not _NUMBER.fullmatch(self.previous)
            and self.previous not in (")", "]", "}"))

    def string(self, quote: str) -> None:
        start, i = self.i, self.i + 1
        while i < len(self.text) and self.text[i] not in (quote, "\n"):
            i += 2 if self.text[i] == "\\" else 1
        if i >= len(self.text) or self.text[i] != quote:
            raise _Broken(f"it has a syntax error (the string on line {self.line(start)} is never closed)")
        self.i, self.previous = i + 1, "string"

    def template(self, start: int | None = None) -> None:
        """A template literal from ``self.i`` (its backtick, or a ``}`` ending one of its ``${...}`` parts) to its
        closing backtick or its next ``${``, whose code the main loop scans (its ``}`` comes back here)."""
        opened = self.i if start is None else start
        i, text = self.i + 1, self.text
        while i < len(text) and text[i] != "`":
            if text[i] == "\\":
                i += 2
                continue
            if text.startswith("${", i):
                self.stack.append(("${", opened, False))
                self.i, self.previous = i + 2, "("
                return
            i += 1
        if i >= len(text):
            raise _Broken(f"it has a syntax error (the template literal on line {self.line(opened)} is never closed)")
        self.i, self.previous = i + 1, "string"

    def regex(self) -> None:
        start, i, text, in_class = self.i, self.i + 1, self.text, False
        while i < len(text) and text[i] != "\n" and (in_class or text[i] != "/"):
            if text[i] == "\\":
                i += 1
            elif text[i] == "[":
                in_class = True
            elif text[i] == "]":
                in_class = False
            i += 1
        if i >= len(text) or text[i] != "/":
            raise _Broken(f"it has a syntax error (the regular expression on line {self.line(start)} is never closed)")
        flags = _WORD.match(text, i + 1)
        self.i, self.previous = flags.end() if flags else i + 1, "regex"

    def token(self) -> None:
        text = self.text
        word = _WORD.match(text, self.i) or _NUMBER.match(text, self.i)
        if word is not None:
            name = word.group(0)
            statement = self.previous != "." and not text[word.end():].lstrip().startswith(":")  # not ``{throw: 1}``
            if name == "throw" and statement and not any(body for _, _, body in self.stack):
                raise _Broken(f"it throws when loaded (a throw at line {self.line()})")
            if name == "function":
                self.pending_body = True
            self.i, self.previous = word.end(), name
            return
        char = text[self.i]
        if text.startswith("=>", self.i):
            self.pending_body = True
            self.i, self.previous = self.i + 2, "=>"
            return
        if char in "([{":
            if char == "(":
                self.paren_words[len(self.stack)] = self.previous
            body = char == "{" and self.pending_body
            self.pending_body = False
            self.stack.append((char, self.i, body))
        elif char == "}" and self.stack and self.stack[-1][0] == "${":
            self.stack.pop()
            self.template(start=self.i)
            return
        elif char in ")]}":
            if not self.stack or self.stack[-1][0] != _PAIRS[char]:
                raise _Broken(f"it has a syntax error ({char!r} on line {self.line()} closes nothing open)")
            self.stack.pop()
            if char == ")":
                # ``function f(a) {`` / a method's ``name(a) {`` open a body; ``if (x) {`` a block.
                opener = self.paren_words.pop(len(self.stack), "")
                self.pending_body = self.pending_body or (opener not in _CONTROL and opener not in _BEFORE_REGEX)
        elif char in ";,=":
            self.pending_body = False
        self.i, self.previous = self.i + 1, char
