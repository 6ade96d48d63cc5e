"""What coverage evidence is about: the *units* of one version of a Python file.

A test's run is a function of the code it executes. Code that runs when a module is imported — module-level
statements, class bodies, decorators, a function's header (defaults, annotations) — is one *import-time*
part of the file; each function body (``st_def`` functions and methods of the structural index, keyed by
qualified name) is a unit of its own, minus the bodies of functions nested in it (their headers stay: the
enclosing body evaluates them). Each part gets a hash of its own lines (blank and comment-only lines left
out, so moving code or editing a comment elsewhere changes nothing).

Between the version evidence was recorded against and the file now, then: the import-time hashes differ
(anything may have changed for every test that imported the file), or a set of function units changed —
and a test that ran none of them runs as it did.

A code object the pytest plugin reports (first line, name) maps to the function whose decorators or
``def`` start at that line; lambdas and comprehensions to the function whose body holds them; module and
class-body code to the import-time part.
"""

from __future__ import annotations

import bisect
import hashlib
import io
import json
import sqlite3
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.repo.content import decode

FUNCTION_KINDS = frozenset({"function", "method"})
#: Lines a decorator block may span above its ``def``.
_DECORATOR_LINES = 60


@dataclass(frozen=True)
class FunctionSpan:
    qualified_name: str
    name: str
    #: The ``def`` line (decorators lie above it), the first line of the body, the last line.
    start: int
    body_start: int
    end: int


@dataclass(frozen=True)
class FileUnits:
    import_hash: str
    #: Function unit (qualified name) → hash of its body's own lines.
    bodies: Mapping[str, str]
    functions: tuple[FunctionSpan, ...] = ()

    def owner(self, line: int) -> str | None:
        """The function whose body holds ``line`` (the innermost), or None: the line runs at import."""
        best: FunctionSpan | None = None
        for span in self.functions:
            if span.start > line:
                break
            if span.body_start <= line <= span.end and (best is None or span.body_start >= best.body_start):
                best = span
        return best.qualified_name if best else None

    def unit_of_code(self, first_line: int, name: str, function: bool) -> str | None:
        """The unit a code object (``co_firstlineno``, ``co_name``) belongs to; None for import-time code."""
        if not function:
            return None
        starts = [s.start for s in self.functions]
        index = bisect.bisect_left(starts, first_line)
        for span in self.functions[index:]:
            if span.start > first_line + _DECORATOR_LINES:
                break
            if span.name == name:
                return span.qualified_name
        return self.owner(first_line)  # a lambda, a comprehension, a generator expression

    def encode(self) -> str:
        return json.dumps({"i": self.import_hash, "b": dict(sorted(self.bodies.items()))}, separators=(",", ":"))

    @staticmethod
    def decode(text: str) -> FileUnits | None:
        try:
            raw = json.loads(text)
            return FileUnits(str(raw["i"]), {str(k): str(v) for k, v in raw["b"].items()})
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


@dataclass(frozen=True)
class Change:
    """What changed in one file between two versions: everything (``import_time``), or these function units."""

    import_time: bool
    functions: frozenset[str] = frozenset()
    why: str = ""


def compare(before: FileUnits, after: FileUnits | None) -> Change:
    if after is None:
        return Change(True, why="its current definitions are not known")
    if before.import_hash != after.import_hash:
        return Change(True, why="code that runs at import changed")
    # A function gone or new changes its parent's body or the import-time part: those decide; a body whose
    # hash differs is a changed unit.
    changed = {name for name, digest in before.bodies.items() if after.bodies.get(name, digest) != digest}
    changed |= {name for name in before.bodies if name not in after.bodies}
    return Change(False, frozenset(changed))


def _digest(lines: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode("utf-8", errors="replace")).hexdigest()[:20]


def _meaningful(text: str) -> str | None:
    stripped = text.strip()
    return None if not stripped or stripped.startswith("#") else text.rstrip()


def logical_line_ends(text: str) -> list[int] | None:
    """Lines where a logical line ends (a statement's last line), sorted; None when the text does not
    tokenize."""
    ends: list[int] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NEWLINE:
                ends.append(token.start[0])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return ends


def file_units(defs: Sequence[tuple[str, str, str, int, int]], text: str) -> FileUnits | None:
    """Units of ``text`` from its definitions ``(qualified_name, name, kind, start_line, end_line)`` (the
    index's rows for exactly this text); None when the text does not tokenize."""
    ends = logical_line_ends(text)
    if ends is None:
        return None
    lines = text.splitlines()
    spans = []
    for qualified, name, kind, start, end in defs:
        if kind not in FUNCTION_KINDS:
            continue
        at = bisect.bisect_left(ends, start)
        header_end = ends[at] if at < len(ends) else end
        spans.append(FunctionSpan(qualified, name, start, header_end + 1, end))
    spans.sort(key=lambda s: (s.start, -s.end))
    owner: list[str | None] = [None] * (len(lines) + 2)
    # Outer bodies first (sorted by start, longest first on ties), inner ones overwrite their own lines.
    for span in sorted(spans, key=lambda s: (s.body_start, -s.end)):
        for line in range(span.body_start, min(span.end, len(lines)) + 1):
            owner[line] = span.qualified_name
    import_part: list[str] = []
    bodies: dict[str, list[str]] = {s.qualified_name: [] for s in spans}
    for number, raw in enumerate(lines, start=1):
        kept = _meaningful(raw)
        if kept is None:
            continue
        unit = owner[number]
        (import_part if unit is None else bodies[unit]).append(kept)
    return FileUnits(_digest(import_part), {k: _digest(v) for k, v in bodies.items()}, tuple(spans))


def index_defs(conn: sqlite3.Connection, path: str) -> tuple[str, list[tuple[str, str, str, int, int]]] | None:
    """(the file's SHA-256 as indexed, its definitions) from the structural index; None when not indexed."""
    row = conn.execute("SELECT file_id, file_sha256 FROM st_file WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    defs = [(str(q), str(n), str(k), int(s), int(e)) for q, n, k, s, e in conn.execute(
        "SELECT qualified_name, name, kind, start_line, end_line FROM st_def WHERE file_id = ? "
        "ORDER BY start_line, -end_line", (int(row[0]),))]
    return str(row[1]), defs


def indexed_shas(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, str]:
    """Path → SHA-256 of the indexed content, for the given paths the index knows."""
    wanted = sorted(set(paths))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        found.update((str(p), str(s)) for p, s in conn.execute(
            f"SELECT path, file_sha256 FROM st_file WHERE path IN ({','.join('?' * len(chunk))})", chunk))
    return found


class CurrentUnits:
    """Files as they are now, each read once: their SHA-256 on disk and their units. Units need the index to
    hold exactly the text on disk (it has caught up with the last edit), else they are unknown (None)."""

    def __init__(self, conn: sqlite3.Connection, root: Path) -> None:
        self.conn = conn
        self.root = root
        self._read: dict[str, tuple[str, bytes] | None] = {}
        self._units: dict[str, FileUnits | None] = {}

    def content(self, path: str) -> tuple[str, bytes] | None:
        if path not in self._read:
            try:
                data = (self.root / path).read_bytes()
                self._read[path] = (hashlib.sha256(data).hexdigest(), data)
            except OSError:
                self._read[path] = None
        return self._read[path]

    def sha(self, path: str) -> str | None:
        found = self.content(path)
        return found[0] if found else None

    def units(self, path: str) -> FileUnits | None:
        if path not in self._units:
            current = self.content(path)
            indexed = index_defs(self.conn, path)
            self._units[path] = None if current is None or indexed is None or indexed[0] != current[0] else (
                file_units(indexed[1], decode(current[1])))
        return self._units[path]
