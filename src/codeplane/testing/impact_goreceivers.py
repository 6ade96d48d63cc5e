"""Which Go member uses by name run a changed method, by their receiver's declared type (``impact_go``).

The index links ``x.Close()`` to ``T.Close`` when ``x``'s declaration spells a repository type that has the method
(``golink``, ``gotypes``); what it leaves unlinked the walk matches by name, ``low``: every ``Close()`` of the
repository reached a change to ``(T) Close()``. Most of those calls are on another library's values
(``f.Close()`` with ``f *os.File``, ``rows.Close()``). For a changed method ``T.m`` (``T`` a repository type), the
receiver — a name, a field (``h.f.Close()``) or a call on one line (``res.NewA().Close()``: the function's first
result) — is looked up where it is declared, and the use is

- left out (``out``) when that declaration shows a type that cannot hold a ``T``: another library's type spelled as
  a pointer (``f *os.File``: a pointer to an interface has no methods, so the type is concrete and its method set
  is that library's), a composite literal (``x := pkg.X{}``, ``&pkg.X{}``), ``new(pkg.X)``, or a standard-library
  type that is no interface (``var sb strings.Builder``: read from the installed Go toolchain's sources,
  ``library_kind``); or a repository type
  other than ``T`` that is no interface and declares ``m`` itself (two platforms' files each declaring it leave
  the index's link out);
- ``high`` (``exact``) when the type is ``T`` itself.

Anything else is kept, ``low`` as before: another library's interface or plain ``pkg.X`` (``c io.Closer``,
``conn net.Conn`` may hold a ``*T``), another library's function's result (``os.Open(p)``'s), a call over several
lines, a ``range`` value, a type parameter, an import the file binds by a name other than its path's last element,
a repository type without ``m`` of its own (it may be promoted from an embedded field). The one case this gives
up: another library's struct type that embeds an interface and is handed a ``T`` to promote ``m`` from.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from codeplane.index.structural.golink import import_dir
from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_reach import Def


def package_dir(path: str) -> str:
    """``svc/calc/calc.go`` → ``svc/calc``; a file at the root → ``""``."""
    return path.rpartition("/")[0]


class GoReceivers:
    """Per walk: the declared receiver types of member uses, read on demand from ``st_ref`` and the source line."""

    def __init__(self, conn: sqlite3.Connection, path_of: Mapping[int, str], read_lines: ReadLines) -> None:
        self.conn = conn
        self.path_of = path_of
        self.read_lines = read_lines
        row = conn.execute("SELECT value FROM st_state WHERE key = 'go_modules'").fetchone()
        #: Directory → module path of each ``go.mod`` (what ``golink`` recorded); none: no import is known to be
        #: the repository's or another library's, so nothing is left out.
        self.modules: dict[str, str] | None = dict(json.loads(row[0])) if row is not None else None
        self._types: dict[tuple[str, str], tuple[str, frozenset[str]] | None] = {}
        #: Per file, the declarations of its bindings (bind id → rows), and per definition uid, its declaration's
        #: rows: a walk asks about thousands of member uses, mostly of a few receivers (one query each scanned a
        #: file's references: 13 s for a one-line write to golang.org/x/net's http2/frame.go).
        self._bound: dict[int, dict[int, list[tuple[int, int, int, str | None]]]] = {}
        self._declared: dict[str, list[tuple[int, int, int, str | None]]] = {}

    def classify(self, site: tuple[int, int, int], d: Def) -> Literal["out", "exact"] | None:
        """For the member use at ``site`` (file id, line, 0-based column of the member's name) of ``d``'s name (``d``
        a method ``T.m`` of a repository type): ``out`` when it certainly calls another type's method, ``exact``
        when its receiver is declared a ``T``, None when unknown."""
        if d.kind != "method" or self.modules is None or "." not in d.lexical_path:
            return None
        declared = self._receiver_declaration(site)
        if declared is None:
            return None
        decl_file, decl_line, decl_col, spelled = declared
        qualifier, _, name = spelled.rpartition(".")
        if not re.fullmatch(r"[A-Za-z_]\w*", name) or (qualifier and not re.fullmatch(r"[A-Za-z_]\w*", qualifier)):
            return None  # a call's result, a slice, a ``range`` value, a generic instantiation
        decl_path = self.path_of.get(decl_file, "")
        directory: str | None = package_dir(decl_path)
        if qualifier:
            found = self._import_of(decl_file, qualifier)
            if found is None:
                return None
            directory = found[1]
            if directory is None:  # another library's type
                return "out" if self._concrete(decl_path, decl_line, decl_col, spelled) or library_kind(
                    found[0], name) == "concrete" else None
        owner_type, _, method = d.lexical_path.rpartition(".")
        kind_methods = self._repository_type(str(directory), name)
        if kind_methods is None or kind_methods[0] == "interface" or method not in kind_methods[1]:
            return None  # not one type, an interface, or a method it may promote from an embedded field
        return "exact" if (directory, name) == (package_dir(self.path_of.get(d.file_id, "")), owner_type) else "out"

    def _binding_declarations(self, file_id: int, bind_id: int) -> list[tuple[int, int, int, str | None]]:
        """The declaring rows of a binding: a binding is its file's (``st_bind.file_id``), so its declarations are
        among that file's references, read once per file (``bind_id`` alone scanned every reference: 92 ms per
        member use on golang.org/x/net, inside a write holding its files' locks, QA48 F1)."""
        home = self.conn.execute("SELECT file_id FROM st_bind WHERE bind_id = ?", (bind_id,)).fetchone()
        owner = int(home[0]) if home is not None else file_id
        bound = self._bound.get(owner)
        if bound is None:
            bound = self._bound[owner] = {}
            for bid, *row in self.conn.execute(
                    "SELECT bind_id, file_id, start_line, start_col, receiver_shape FROM st_ref WHERE file_id = ? "
                    "AND bind_id IS NOT NULL AND role = 'DEFINITION'", (owner,)):
                bound.setdefault(int(bid), []).append((int(row[0]), int(row[1]), int(row[2]), row[3]))
        return bound.get(bind_id, [])

    def _declarations_of(self, target: str) -> list[tuple[int, int, int, str | None]]:
        """The declaring rows of a field or variable definition (its name's, and a field's type's line)."""
        found = self._declared.get(target)
        if found is None:
            rows = self.conn.execute(
                "SELECT r.file_id, r.start_line, r.start_col, r.receiver_shape FROM st_def d JOIN st_ref r ON "
                "r.file_id = d.file_id AND r.start_line = d.name_line AND r.start_col = d.name_col WHERE "
                "d.def_uid = ? AND d.kind IN ('field', 'variable') AND r.role = 'DEFINITION'", (target,)).fetchall()
            rows += self.conn.execute(
                "SELECT r.file_id, r.start_line, r.start_col, r.receiver_shape FROM st_def d JOIN st_ref r ON "
                "r.file_id = d.file_id AND r.start_line = d.name_line WHERE d.def_uid = ? AND d.kind = 'field' "
                "AND r.receiver_shape LIKE 'ftype:%'", (target,)).fetchall()
            found = self._declared[target] = [(int(a), int(b), int(c), e) for a, b, c, e in rows]
        return found

    def _receiver_declaration(self, site: tuple[int, int, int]) -> tuple[int, int, int, str] | None:
        """(file id, line, column, spelled type) of the declaration of the receiver before ``site``'s dot: a name's
        or a field's, or the function's whose call it is (its first result: ``res.NewA().Close()``)."""
        file_id, line, col = site
        if col >= 2:
            lines = self.read_lines(self.path_of.get(file_id, ""))
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            if text[col - 2:col] == ").":
                return self._result_declaration(file_id, line, text, col - 2)
        row = self.conn.execute(
            "SELECT bind_id, target_uid FROM st_ref WHERE file_id = ? AND start_line = ? AND end_line = ? "
            "AND end_col = ? AND role = 'REFERENCE'", (file_id, line, line, col - 1)).fetchone()
        if row is None:
            return None
        bind_id, target = row
        if bind_id is not None:
            shapes = self._binding_declarations(file_id, bind_id)
        elif target is not None:
            shapes = self._declarations_of(target)
        else:
            return None
        spelled = {str(s).split(":", 1)[1] for _, _, _, s in shapes if s and str(s).startswith(("type:", "ftype:"))}
        if len(spelled) != 1 or not shapes:
            return None  # no declared type, or a binding spelled two ways
        decl_file, decl_line, decl_col, _ = shapes[0]
        return int(decl_file), int(decl_line), int(decl_col), next(iter(spelled))

    def _result_declaration(self, file_id: int, line: int, text: str, close: int) -> tuple[int, int, int, str] | None:
        """The declaration of the function or method whose call's ``)`` is at ``close`` of ``text`` (one line)."""
        depth, i = 0, close
        while i >= 0:
            depth += {")": 1, "(": -1}.get(text[i], 0)
            if depth == 0:
                break
            i -= 1
        if i <= 0:
            return None
        row = self.conn.execute(
            "SELECT r.file_id, r.start_line, r.start_col, r.receiver_shape FROM st_ref u JOIN st_def d ON d.def_uid = "
            "u.target_uid JOIN st_ref r ON r.file_id = d.file_id AND r.start_line = d.name_line AND r.start_col = "
            "d.name_col AND r.role = 'DEFINITION' WHERE u.file_id = ? AND u.start_line = ? AND u.end_line = ? AND "
            "u.end_col = ? AND d.kind IN ('function', 'method')", (file_id, line, line, i)).fetchone()
        if row is None or not str(row[3] or "").startswith("type:"):
            return None
        return int(row[0]), int(row[1]), int(row[2]), str(row[3])[5:]

    def _import_of(self, file_id: int, local: str) -> tuple[str, str | None] | None:
        """(import path, repository directory or None for another library's) the file imports as ``local``; None
        when no import, or more than one, binds that name the way ``golink`` reads it for another library's."""
        assert self.modules is not None
        found = []
        for alias, source in self.conn.execute(
                "SELECT alias, source_literal FROM st_import WHERE file_id = ? AND import_kind = 'go_import' "
                "AND source_literal IS NOT NULL", (file_id,)):
            directory = import_dir(str(source), self.modules)
            name = alias if alias is not None else str(source).rsplit("/", 1)[-1]
            if name == local:
                found.append((str(source), directory))
        return found[0] if len(found) == 1 else None

    def _concrete(self, path: str, line: int, col: int, spelled: str) -> bool:
        """Whether the declaration at ``line``/``col`` spells ``spelled`` as a pointer, a composite literal or
        ``new(...)``: a concrete type (a pointer to an interface has no methods)."""
        lines = self.read_lines(path)
        text = lines[line - 1][col:] if 0 < line <= len(lines) else ""
        name = re.escape(spelled).replace(r"\.", r"\s*\.\s*")
        return bool(re.search(rf"\*\s*{name}\b|&?\s*{name}\s*\{{|\bnew\(\s*{name}\s*\)", text))

    def _repository_type(self, directory: str, name: str) -> tuple[str, frozenset[str]] | None:
        """(kind, names of its own methods) of the one type ``name`` declared in package ``directory``."""
        key = (directory, name)
        if key not in self._types:
            prefix = f"{directory}/" if directory else ""
            rows = self.conn.execute(
                "SELECT d.kind, d.lexical_path, f.path FROM st_def d JOIN st_file f ON f.file_id = d.file_id "
                "WHERE (d.lexical_path = ? OR d.lexical_path LIKE ? ESCAPE '\\') AND f.path LIKE ? ESCAPE '\\'",
                (name, _like(f"{name}.") + "%", _like(prefix) + "%.go")).fetchall()
            here = [(str(k), str(lexical)) for k, lexical, path in rows if package_dir(str(path)) == directory]
            kinds = [k for k, lexical in here if lexical == name and k in ("struct", "interface", "type")]
            methods = frozenset(lexical.rpartition(".")[2] for k, lexical in here if k == "method")
            self._types[key] = (kinds[0], methods) if len(kinds) == 1 else None
        return self._types[key]


#: Standard-library types known to be no interface, for when no Go toolchain's sources can be read.
_KNOWN_CONCRETE = frozenset({
    ("strings", "Builder"), ("strings", "Reader"), ("bytes", "Buffer"), ("bytes", "Reader"), ("sync", "Mutex"),
    ("sync", "RWMutex"), ("sync", "WaitGroup"), ("sync", "Once"), ("sync", "Map"), ("time", "Time"),
    ("time", "Duration"),
})
_TYPE_LINE = re.compile(r"^(?:type\s+|\t)([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)?(=)?\s*(\S*)")


def library_kind(import_path: str, name: str) -> Literal["interface", "concrete"] | None:
    """Whether the standard library's ``import_path.name`` is an interface or another type (a struct, a named
    basic, slice or func type), read from the installed Go toolchain's sources (``$GOROOT/src``); None when that
    is unknown: another library's package, an alias, no toolchain. A value declared with a concrete type is that
    type: its method set is the library's own (``var sb strings.Builder`` then ``sb.String()``)."""
    if (import_path, name) in _KNOWN_CONCRETE:
        return "concrete"
    if "." in import_path.split("/", 1)[0]:
        return None  # a module path (``github.com/...``): its source is not read here
    return _std_types(import_path).get(name)


@functools.lru_cache(maxsize=256)
def _std_types(import_path: str) -> dict[str, Literal["interface", "concrete"] | None]:
    """Name → kind of every type the standard-library package declares at top level (gofmt'ed sources: ``type X``
    lines and one-tab lines of a ``type (`` group); a name declared as an alias, or as both kinds under different
    build constraints, is unknown."""
    root = _goroot()
    directory = root / "src" / import_path if root is not None else None
    found: dict[str, Literal["interface", "concrete"] | None] = {}
    if directory is None or not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.go")):
        if path.name.endswith("_test.go"):
            continue
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        group = False
        for line in lines:
            if group and line.startswith(")"):
                group = False
                continue
            if line.startswith("type ("):
                group = True
                continue
            if not line.startswith("type ") and not (group and line.startswith("\t") and line[1:2] != "\t"):
                continue
            match = _TYPE_LINE.match(line)
            if match is None:
                continue
            kind: Literal["interface", "concrete"] | None = None if match.group(2) else (
                "interface" if match.group(3).startswith("interface") else "concrete")
            type_name = match.group(1)
            found[type_name] = kind if found.get(type_name, kind) == kind else None
    return found


@functools.lru_cache(maxsize=1)
def _goroot() -> Path | None:
    """The installed Go toolchain's root: ``$GOROOT``, else the directory above the ``go`` binary's ``bin``."""
    configured = os.environ.get("GOROOT")
    candidates = [Path(configured)] if configured else []
    found = shutil.which("go")
    if found is not None:
        candidates.append(Path(found).resolve().parent.parent)
    return next((c for c in candidates if (c / "src" / "builtin").is_dir()), None)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
