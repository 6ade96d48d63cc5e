"""Go test selection at test-function level (issue 22): the cases for ``go test -run '^(TestA|TestB)$'``.

The walk is Python's (``impact_symbols.SymbolWalk``) over the structural index's Go facts: same-package names
PROVEN, imported package members STRONG, a receiver's own members STRONG when one type declares them; the
rest (promoted members, ``a.Push()`` on a local) is matched by name, ``low``, so nothing is dropped for want of
a resolved receiver, unless the receiver's declared type shows it cannot hold the changed method's type
(``f.Close()`` on ``f *os.File``: ``impact_goreceivers``). The index resolves a call on an interface value
(``s.Area()``) to the interface's method spec, not by name: a reached concrete method therefore reaches every
interface method of its name (any type with the method may satisfy any such interface), ``low``, and through it
those calls. A method the standard library calls through its own interfaces (``STD_CALLED``), or, where the
repository imports text/template or html/template, any exported method with a result (``{{.Heading}}`` calls it
by reflection), reaches its type, ``low``; a reached type reaches the structs holding a value of it (a field of
it, embedded, in a slice, array or map: fmt, json and templates walk into every field), transitively, and their
users. A value stored in an ``interface{}`` field was made by code naming its type, which the walk reaches. A
case is kept only when its package's test binary links a changed package (Go's import graph, ``go list -deps
-test``): a use by name elsewhere cannot run the change. A reached top-level ``Test*``/``Fuzz*`` function of a
``_test.go`` file, or an ``Example*`` with an output comment, is a case of its package's target; a benchmark or
an example without output is not (``go test`` never runs them).

What runs when a package loads cannot be followed by uses: a changed line outside any function, a changed
definition called by a package-level initializer or reached by an ``init`` function, ``TestMain`` or
package-level code of a test file. Nor can a changed declaration line (``func (q Square) Area() int``,
``type Rect struct``, a struct field, an interface's method, ``const Rate = 3``): it may rename or retype what it
declares, and the users of the old name, which the index no longer links to anything, stop compiling, as do
conversions to an interface a changed method set no longer satisfies. Such a change selects whole every test
package that imports the changed file's package, directly or through other packages (import paths from the
nearest ``go.mod``), and the answer says so. A ``go.mod`` that cannot be read makes that every Go test package.
A function or method that an earlier recorded state of its package did not declare at all (added in the session,
or committed after the index was first built) is an addition there, not a changed declaration: no user knew an
older form of it, a package-level name cannot shadow another of its package or an import, and what the addition
changes is reached through its uses, the interface methods of its name, and for a method the standard library or a
template may call, its type. A method added where a repository interface declares one of its name reaches its type
too (a type switch or assertion to that interface may now match it). Not an addition: a name of Go's universe block
(``func min`` hides the builtin from the whole package), an interface's method, a method of a type some struct
embeds (promoted, it may shadow a deeper method of its name or make a selector ambiguous), a type, field, constant
(a new one in an ``iota`` block renumbers those after it) or variable.
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_goreceivers import GoReceivers, package_dir
from codeplane.testing.impact_history import declared, earlier_declarations, verdict
from codeplane.testing.impact_reach import Def, Reach, SymbolSelection
from codeplane.testing.impact_symbols import SymbolWalk

#: ``go test`` runs these top-level functions of a ``_test.go`` file: the name goes on with a non-lower-case
#: character or ends (``Testify`` is no test). Benchmarks run only under ``-bench``, which neither ``go test``
#: nor a selected run passes: one asked for by ``-run`` never runs, and the run would report it missing.
_CASE = re.compile(r"^(?:Test|Example|Fuzz)(?:[^a-z].*)?$")
_BENCHMARK = re.compile(r"^Benchmark(?:[^a-z].*)?$")
#: An example runs only when its body ends with an output comment; without one it is compiled, never run.
_OUTPUT = re.compile(r"^\s*//\s*(?:Unordered output|Output):")
#: A method header whose signature ends on its line with no result: ``func (p *P) Reset() {``.
_NO_RESULT = re.compile(r"^\s*func\s*\([^()]*\)\s*[A-Za-z_]\w*\s*(?:\[[^\]]*\])?\s*\([^()]*\)\s*\{")
#: A ``replace`` directive's body replacing a module path by a local directory: ``example.com/x [v1] => ../x``.
_REPLACE = re.compile(r"^(\S+)(?:\s+\S+)?\s*=>\s*(\.{1,2}(?:/\S*)?|/\S*)\s*$")
_MODULE = re.compile(r"^\s*module\s+(\S+)")
#: A package variable's value that is a function literal: ``var check = func(`` / ``check = func(`` in a block.
_FUNC_VALUE = re.compile(r"=\s*func\s*\(")
#: Methods the standard library calls through its interfaces on values handed to it, where no code of the
#: repository names the call: ``fmt.Sprint(c)`` runs ``c.String()``, ``sort.Sort(b)`` runs ``b.Less``,
#: ``json.Marshal(v)`` runs ``v.MarshalJSON()``, ``heap.Push`` runs ``Push``, ``flag.Var`` runs ``Set``. A changed
#: one reaches whatever uses its type, and the structs holding one (``low``). Another library's interfaces are not
#: known here.
STD_CALLED = frozenset({
    "String", "GoString", "Format", "Error", "Unwrap", "Is", "As", "ServeHTTP", "RoundTrip", "Read", "Write",
    "ReadAt", "WriteAt", "Close", "Seek", "ReadFrom", "WriteTo", "ReadByte", "WriteByte", "ReadRune",
    "UnreadByte", "UnreadRune", "WriteString", "Len", "Less", "Swap", "Push", "Pop", "MarshalJSON",
    "UnmarshalJSON", "MarshalText", "UnmarshalText", "MarshalBinary", "UnmarshalBinary", "MarshalXML",
    "UnmarshalXML", "Scan", "Value", "Set", "Get", "IsBoolFlag", "Deadline", "Done", "Err", "Lock", "Unlock",
})

#: Go's universe block: a package-level function so named hides the predeclared one from every file of its package.
PREDECLARED = frozenset({
    "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32", "float64", "int", "int8",
    "int16", "int32", "int64", "rune", "string", "uint", "uint8", "uint16", "uint32", "uint64", "uintptr", "true",
    "false", "iota", "nil", "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make",
    "max", "min", "new", "panic", "print", "println", "real", "recover",
})


def is_go_test(path: str) -> bool:
    return path.endswith("_test.go")


@dataclass
class GoSelection:
    #: Package directory (``""``: the root) → case name (``""``: the whole package) → how it was reached.
    cases: dict[str, dict[str, Reach]] = field(default_factory=dict)
    #: (path, why) for every change selected by package imports instead.
    fallbacks: list[tuple[str, str]] = field(default_factory=list)
    seeds: list[str] = field(default_factory=list)


class GoWalk(SymbolWalk):
    suffixes = (".go",)
    language = "Go"

    def __init__(self, conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
                 tests: Sequence[str], read_lines: ReadLines) -> None:
        super().__init__(conn, id_of, path_of, tests, read_lines)
        #: (path, line, definition) of each changed file's first changed declaration (``_declaration``).
        self._redeclared: list[tuple[str, int, Def]] = []
        self._history: tuple[str, list[frozenset[tuple[str, str, str]]]] | None = None
        self._displays: dict[str, str] = {}
        self._receivers = GoReceivers(conn, path_of, read_lines)
        #: Whether the repository imports text/template or html/template (``_template_callable``); asked once.
        self._templates: bool | None = None
        #: Definition uid → whether it is an addition against an earlier recorded state (``_added``).
        self._additions: dict[str, bool] = {}

    def _test_side(self, d: Def, path: str, reach: Reach) -> bool:
        if d.parent is None and d.kind == "function" and d.name == "TestMain":
            self.select(path, "", reach.then(f"{path}::TestMain (runs every test of the package)", "high"))
            return True
        if d.parent is None and d.kind == "function" and _CASE.match(d.name):
            if not d.name.startswith("Example") or self._has_output(path, d):
                self.select(path, d.name, reach)
            return True
        return d.parent is None and d.kind == "function" and bool(_BENCHMARK.match(d.name))

    def _has_output(self, path: str, d: Def) -> bool:
        lines = self.read_lines(path)
        return any(_OUTPUT.match(line) for line in lines[max(0, d.start - 1):d.end])

    def _spread(self, d: Def, reach: Reach) -> None:
        if d.name == "_":
            return  # the blank identifier: nothing can use it (a ``_`` elsewhere is another blank, not a use)
        if d.parent is None and d.kind == "function" and d.name == "init":
            path = self.path_of.get(d.file_id, "")
            self._module_level(path, d.start, reach.then(f"{path}:{d.start} (init runs when the package loads)",
                                                         "high"), "an init function reaches it")
            return
        super()._spread(d, reach)
        if d.kind == "method" and not self._in_interface(d):
            specs = self._interface_methods(d.name)
            for spec in specs:
                self.enqueue(spec, reach.then(f"{spec.qualified_name} (an interface call may run "
                                              f"{d.qualified_name})", "low"))
            called_by = "the standard library" if d.name in STD_CALLED else (
                "a text/template or html/template template" if self._template_callable(d) else
                "a type switch or assertion to a repository interface it now satisfies" if specs
                and d.uid in self._seeds and self._added(d) else None)
            owner = self._receiver_type(d) if called_by is not None else None
            if owner is not None:
                self.enqueue(owner, reach.then(f"{owner.qualified_name} ({called_by} may call {d.name} on any "
                                               "value of it)", "low", runs=False))
        elif d.kind == "field":
            # fmt, encoding/json, encoding/xml, text/template and reflect.DeepEqual walk into every field of a
            # value, named or not: a value of the struct holds one of the field's type, whose behaviour changed
            # (``fmt.Sprint(cfg.Flags{})`` runs ``Mode.String`` on the zero ``Verbose`` it never names). The
            # field is reached through its type's use on its line; its struct's users are reached too.
            holder = self.get(d.parent)
            if holder is not None and holder.kind != "interface":
                why = f"{holder.qualified_name} (its field {d.name}: fmt, json, templates... walk into every field)"
                self.enqueue(holder, reach.then(why, "low", runs=False))
        if d.kind in ("struct", "type", "class"):
            # An embedded field (``struct{ Tag; N int }``) is spelled by its type's name alone: no use of the type
            # links it, so the fields embedding a reached type are found by that name.
            for embedded in self._embedding(d):
                self.enqueue(embedded, reach.then(f"{embedded.qualified_name} (embeds {d.name})", "low",
                                                  runs=False))

    def _receiver_type(self, d: Def) -> Def | None:
        """The repository type a method is declared on (``Cents`` of ``Cents.String``), in the method's package."""
        owner, _, _ = d.lexical_path.rpartition(".")
        directory = package_dir(self.path_of.get(d.file_id, ""))
        for (uid, path) in self.rows(
                # name_lc first: st_def's index (``d.name`` alone scanned every definition, per walked method)
                "SELECT d.def_uid, f.path FROM st_def d JOIN st_file f ON f.file_id = d.file_id WHERE d.name_lc = ? "
                "AND d.name = ? AND d.lexical_path = d.name AND d.kind IN ('struct', 'type', 'class', 'interface') "
                "AND f.path LIKE '%.go' ORDER BY f.path", (owner.lower(), owner)):
            if package_dir(str(path)) == directory:
                return self.get(str(uid))
        return None

    def _embedding(self, d: Def) -> list[Def]:
        """The embedded fields named ``d``'s name whose declared type is ``d``: ``Name``/``*Name`` in ``d``'s package,
        ``pkg.Name``/``*pkg.Name`` anywhere (whichever package ``pkg`` is: wider, never narrower)."""
        directory = package_dir(self.path_of.get(d.file_id, ""))
        found = []
        for uid, path, shape in self.rows(
                "SELECT e.def_uid, f.path, r.receiver_shape FROM st_def e JOIN st_file f ON f.file_id = e.file_id "
                "JOIN st_ref r ON r.file_id = e.file_id AND r.start_line = e.name_line AND r.start_col = e.name_col "
                "WHERE e.name_lc = ? AND e.name = ? AND e.kind = 'field' AND r.role = 'DEFINITION' "
                "AND r.receiver_shape LIKE 'ftype:%' AND f.path LIKE '%.go'", (d.name.lower(), d.name)):
            spelled = str(shape)[len("ftype:"):].lstrip("*")
            if spelled.endswith(f".{d.name}") or (spelled == d.name and package_dir(str(path)) == directory):
                field_def = self.get(str(uid))
                if field_def is not None:
                    found.append(field_def)
        return found

    def _template_callable(self, d: Def) -> bool:
        """Whether a template may call method ``d`` by reflection (``{{.Heading}}``), where no Go code names the
        call: the repository imports text/template or html/template, and ``d`` is exported and returns a value
        (a template calls only methods with one result, or a result and an error). A method whose signature spans
        lines counts (not read)."""
        if not d.name[:1].isupper():
            return False
        if self._templates is None:
            self._templates = bool(self.rows(
                "SELECT 1 FROM st_import WHERE import_kind = 'go_import' AND source_literal IN "
                "('text/template', 'html/template') LIMIT 1", ()))
        if not self._templates:
            return False
        lines = self.read_lines(self.path_of.get(d.file_id, ""))
        header = lines[d.start - 1] if 0 < d.start <= len(lines) else ""
        return _NO_RESULT.match(header) is None

    def _in_interface(self, d: Def) -> bool:
        owner = self.get(d.parent)
        return owner is not None and owner.kind == "interface"

    def _interface_methods(self, name: str) -> list[Def]:
        """Every interface method spec named ``name``: Go's interfaces are satisfied implicitly, so a type with a
        method of that name may be called through any of them."""
        found = [self.get(str(uid)) for (uid,) in self.rows(
            "SELECT d.def_uid FROM st_def d JOIN st_def p ON p.def_uid = d.parent_uid JOIN st_file f "
            "ON f.file_id = d.file_id WHERE d.name_lc = ? AND d.name = ? AND d.kind = 'method' "
            "AND p.kind = 'interface' AND f.path LIKE '%.go'", (name.lower(), name))]
        return [d for d in found if d is not None]

    def _declaration(self, d: Def, path: str, line: int) -> bool:
        """Whether ``line`` declares ``d``'s name or type rather than only its body or value: a function's or
        method's header (up to the line opening its body), a type's ``type X`` line, any line of a struct field or
        of an interface's method (its method set), a constant's or variable's first line. A test file's
        ``Test*``/``Example*``/``Benchmark*`` functions are run by name only, by ``go test``: theirs is not."""
        if d.kind in ("field",) or (d.kind == "method" and self._in_interface(d)):
            return True
        if d.kind in ("function", "method"):
            if is_go_test(path) and d.parent is None and (_CASE.match(d.name) or _BENCHMARK.match(d.name)):
                return False
            lines = self.read_lines(path)
            header = d.start
            while header < min(d.end, len(lines)) and "{" not in lines[header - 1]:
                header += 1  # a signature over several lines
            return d.start <= line <= header
        return line == d.start

    def _seed(self, path: str, ranges: Sequence[tuple[int, int]]) -> None:
        """A changed package-level initializer that calls anything runs when the package loads (a panic there
        fails every test that loads it): package imports decide, not the variable's uses."""
        file_id = self.id_of.get(path)
        lines = self.read_lines(path)
        for first, last in ranges if file_id is not None else ():
            for line in range(max(1, first), min(last, len(lines), first + 5_000) + 1):
                d = self.innermost(file_id, line) if file_id is not None else None
                if d is not None and d.kind not in ("function", "method") and self._import_time(d, line) \
                        and "(" in lines[line - 1]:
                    self._module_level(path, line, Reach("high", (f"{path}:{line} (package-level initializer)",)),
                                       "a package-level initializer changed")
                    return
        super()._seed(path, ranges)
        if file_id is None or not path.endswith(".go"):
            return
        now = {d.lexical_path for d in self.defs_of(file_id)}
        gone = sorted({lexical for state in self._earlier(path) for _, lexical, _ in state} - now)
        used = next((g for g in gone if self._spelled(g.rpartition(".")[2])), None)
        if used is not None and ranges:
            # A removed line leaves no declaration to find around it (a struct field, a method of an interface).
            # Names no code spells any more (gone long before the change) select nothing.
            line = max(1, ranges[0][0])
            self._redeclared.append((path, line, Def("", file_id, "removed", used, used, used, line, line, None)))
            return
        for first, last in ranges:
            for line in range(max(1, first), min(last, len(lines), first + 5_000) + 1):
                inner = self.innermost(file_id, line)
                # A one-line ``type Rect struct{ W, H int }``: the field innermost, the type around it.
                changed = next((d for d in (self.ancestors(inner) if inner is not None else ())
                                if self._declaration(d, path, line) and not self._kept(path, d)), None)
                if changed is not None:
                    self._redeclared.append((path, line, changed))
                    return

    def run(self, changes: Mapping[str, Sequence[tuple[int, int]]]) -> SymbolSelection:
        out = super().run(changes)
        # After the walk, so that a reason it found for the same file (an import-time call) is the one told.
        for path, line, d in self._redeclared:
            self._module_level(path, line, Reach("high", (f"{d.qualified_name} (declaration changed)",)),
                               f"the declaration of {d.qualified_name} changed or was removed (a renamed, retyped "
                               "or removed name breaks users the index no longer links to it)")
        return out

    def _kept(self, path: str, d: Def) -> bool:
        """Whether ``d`` is declared as it was in every earlier state of its file the index recorded
        (``st_def_snapshot``): then a changed line that holds its declaration changed only its body or value (a
        one-line ``func (q Square) Area() int { return q.S * q.S }``). No earlier state (the index was built
        after the change, or the change is committed): unknown, so not kept."""
        found = verdict(self._earlier(path), declared(d.kind, d.lexical_path, self._display(d)))
        return found == "kept" or (found == "added" and self._added(d))

    def _added(self, d: Def) -> bool:
        """Whether ``d`` is a function or method added since an earlier recorded state of its package, whose effect
        its uses carry (module docstring): its file's states declare it as now or not at all, and no other file of
        the package ever recorded its name (moved from there with another signature, a build-tagged twin)."""
        if d.uid not in self._additions:
            path = self.path_of.get(d.file_id, "")
            self._additions[d.uid] = d.kind in ("function", "method") and not self._in_interface(d) and not (
                d.parent is None and d.name in PREDECLARED) and verdict(
                self._earlier(path), declared(d.kind, d.lexical_path, self._display(d))) == "added" and not (
                self._declared_elsewhere(path, d.lexical_path)) and not (d.kind == "method" and self._promoted(d))
        return self._additions[d.uid]

    def _promoted(self, d: Def) -> bool:
        """Whether method ``d``'s type is embedded anywhere (or its type is unknown): there a new method is promoted
        into the embedding types, where it may shadow a deeper method of that name or make a selector ambiguous,
        and the uses it changes are linked to the other method, not to it."""
        owner = self._receiver_type(d)
        return owner is None or bool(self._embedding(owner))

    def _declared_elsewhere(self, path: str, lexical_path: str) -> bool:
        """Whether a recorded state of another ``.go`` file of ``path``'s package declares ``lexical_path``."""
        directory = package_dir(path)
        # The primary key's range: ``dir/`` up to ``dir0`` (``0`` follows ``/``); the root package reads every path.
        bounds = (f"{directory}/", f"{directory}0") if directory else ("", "\U0010ffff")
        others = [str(p) for (p,) in self.rows(
            "SELECT DISTINCT file_path FROM st_snapshot_file WHERE file_path >= ? AND file_path < ?", bounds)
                  if str(p) != path and str(p).endswith(".go") and package_dir(str(p)) == directory]
        for start in range(0, len(others), 500):
            part = others[start:start + 500]
            if self.rows(f"SELECT 1 FROM st_def_snapshot WHERE file_path IN ({','.join('?' * len(part))}) AND "
                         "lexical_path = ? LIMIT 1", (*part, lexical_path)):
                return True
        return False

    def _spelled(self, name: str) -> bool:
        """Whether Go code uses ``name`` (resolved or not) or an interface requires a method so named."""
        return bool(self.rows(
            "SELECT 1 FROM st_ref r JOIN st_file f ON f.file_id = r.file_id WHERE r.token_text = ? AND r.role NOT IN "
            "('DEFINITION', 'EXPORT') AND f.path LIKE '%.go' LIMIT 1", (name,))) or bool(self._interface_methods(name))

    def _earlier(self, path: str) -> list[frozenset[tuple[str, str, str]]]:
        if self._history is None or self._history[0] != path:
            self._history = (path, earlier_declarations(self.conn, path))
        return self._history[1]

    def _display(self, d: Def) -> str:
        if d.uid not in self._displays:
            row = self.conn.execute("SELECT display_name FROM st_def WHERE def_uid = ?", (d.uid,)).fetchone()
            self._displays[d.uid] = str(row[0]) if row else ""
        return self._displays[d.uid]

    def _import_time(self, user: Def | None, line: int) -> bool:
        """Go evaluates no default values: a function's header line holds only its body's code (``func (t T)
        String() string { return f(t) }``, common in Go), where Python's may hold defaults. A package variable
        whose value is a function literal (``var _ = func(a A) { a.Equal(a) }``, a compile-time check) runs its
        body only when called, unless the literal is called right there (``}()``)."""
        if user is None:
            return True
        if any(a.kind in ("function", "method") and a.start <= line for a in self.ancestors(user)):
            return False
        return not (user.kind == "variable" and user.start < line <= user.end and self._uncalled_literal(user))

    def _uncalled_literal(self, d: Def) -> bool:
        lines = self.read_lines(self.path_of.get(d.file_id, ""))
        if d.end > len(lines):
            return False
        return bool(_FUNC_VALUE.search(lines[d.start - 1])) and lines[d.end - 1].rstrip().endswith("}")

    def _typed(self, site: tuple[int, int, int], receiver: str | None, d: Def,
               owner: Def | None) -> Literal["out", "exact"] | None:
        """A member use by name whose receiver's declared type cannot hold ``d``'s, or is ``d``'s own
        (``impact_goreceivers``)."""
        return self._receivers.classify(site, d) if receiver is not None else None

    def _is_keyword(self, path: str, line: int, col: int) -> bool:
        return False  # Go has no keyword arguments: ``name = ...`` is an assignment, a use

    def bare_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        return True  # a package's names are bare in every file of the package

    def member_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        return True  # ``pkg.Name``: Python's module rules do not apply

    def external_receiver(self, file_id: int, line: int, col: int, *, foreign: bool) -> bool:
        return False

    def definition_receiver(self, file_id: int, line: int, col: int) -> bool:
        return False  # ``T.Method`` is a method expression: Go's names are not Python's


def select_go(conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
              changes: Mapping[str, Sequence[tuple[int, int]]], read_lines: ReadLines) -> GoSelection:
    """The Go test cases ``changes`` (``.go`` path → changed lines, 1-based, in the file as it is now; empty:
    the whole file) reach."""
    tests = [p for p in id_of if is_go_test(p)]
    walk = GoWalk(conn, id_of, path_of, tests, read_lines)
    sharp = {p: r for p, r in changes.items() if r}
    out = walk.run(sharp) if sharp else walk.out
    selection = GoSelection(seeds=list(out.seeds))
    imports = _PackageImports(conn, path_of, read_lines)
    # The walk follows uses by name across packages (a ``String`` of any type): a test binary that links none of
    # the changed packages cannot run the change, whatever chain led to it.
    linked = imports.linking(_by_package(p for p in sharp if p.endswith(".go"))) if sharp else None
    for test_file, cases in sorted(out.cases.items()):
        if linked is not None and package_dir(test_file) not in linked:
            continue
        package = selection.cases.setdefault(package_dir(test_file), {})
        for case, reach in cases.items():
            if reach.better_than(package.get(case)):
                package[case] = reach
    blunt = {p: "no changed lines given" for p, r in changes.items() if not r}
    blunt.update(out.fallbacks)
    selection.fallbacks = sorted(blunt.items())
    if blunt:
        for directory, why in imports.dependents(_by_package(blunt)).items():
            selection.cases.setdefault(directory, {})[""] = Reach("high", (why,))
    return selection


def _by_package(paths: Iterable[str]) -> dict[str, str]:
    """One file per package, a non-test one where there is one: only it is compiled into importers."""
    return {package_dir(p): p for p in sorted(paths, key=lambda p: (not is_go_test(p), p))}


class _PackageImports:
    """Which package directories import which: ``st_import`` literals against ``go.mod`` module paths."""

    def __init__(self, conn: sqlite3.Connection, path_of: Mapping[int, str], read_lines: ReadLines) -> None:
        self.read_lines = read_lines
        self.all_files = sorted(path_of.values())
        self.go_files = [p for p in self.all_files if p.endswith(".go")]
        self.importers: dict[str, set[tuple[str, bool]]] = {}  # import path → (importing dir, from a test file)
        for path, literal in conn.execute(
                "SELECT f.path, i.source_literal FROM st_import i JOIN st_file f ON f.file_id = i.file_id "
                "WHERE f.path LIKE '%.go' AND i.source_literal IS NOT NULL"):
            self.importers.setdefault(str(literal), set()).add((package_dir(str(path)), is_go_test(str(path))))
        self._modules: dict[str, tuple[str, str] | None] = {}

    def _module(self, directory: str) -> tuple[str, str] | None:
        """(module directory, module path) of the nearest ``go.mod`` at or above ``directory``."""
        if directory in self._modules:
            return self._modules[directory]
        found = None
        for line in self.read_lines(f"{directory}/go.mod" if directory else "go.mod"):
            match = _MODULE.match(line)
            if match:
                found = (directory, match.group(1).strip('"'))
                break
        else:
            if directory:
                found = self._module(package_dir(directory))
        self._modules[directory] = found
        return found

    def import_path(self, directory: str) -> str | None:
        module = self._module(directory)
        if module is None:
            return None
        root, name = module
        return name if directory == root else f"{name}/{directory[len(root) + 1:] if root else directory}"

    def linking(self, changed: Mapping[str, str]) -> set[str] | None:
        """Package directories whose test binaries link a changed package (``changed``: directory → a changed file
        in it); None when import paths cannot tell: nothing changed, a vendored package (imported by its upstream
        path), a ``replace`` of a module path by a local directory declaring another path."""
        if not changed or any("vendor" in d.split("/") for d in changed) or self._renamed_replace():
            return None
        return set(self.dependents(changed))

    def _renamed_replace(self) -> bool:
        """Whether a ``go.mod`` or ``go.work`` replaces a module path by a local directory that is not the module
        of that path (imports of the replaced path then name packages ``import_path`` does not give)."""
        manifests = {p for p in self.all_files if p.rpartition("/")[2] in ("go.mod", "go.work")}
        roots = {self._module(package_dir(p)) for p in self.go_files}
        manifests |= {f"{m[0]}/go.mod" if m[0] else "go.mod" for m in roots if m is not None}
        for manifest in sorted(manifests):
            block = False
            for line in self.read_lines(manifest):
                text = line.split("//", 1)[0].strip()
                if block and text.startswith(")"):
                    block = False
                    continue
                if text.startswith("replace"):
                    text = text[len("replace"):].strip()
                    if text.startswith("("):
                        block = True
                        continue
                elif not block:
                    continue
                match = _REPLACE.match(text)
                if match is None:
                    continue
                target = posixpath.normpath(posixpath.join(package_dir(manifest), match.group(2)))
                if target.startswith("..") or target.startswith("/"):
                    return True  # outside the repository: its packages are not these
                target = "" if target == "." else target
                if self._module(target) != (target, match.group(1)):
                    return True
        return False

    def dependents(self, changed: Mapping[str, str]) -> dict[str, str]:
        """Package directories whose tests load a changed package (changed directory → a changed file in it, a
        test file only when no other changed), each with why; every Go package directory when a changed package
        has no import path."""
        found: dict[str, str] = {}
        frontier: list[tuple[str, str]] = []
        for directory, path in sorted(changed.items()):
            found[directory] = f"{path} (a change the walk cannot follow: its package's tests run whole)"
            if is_go_test(path):
                continue  # a _test.go file is compiled into its own package's tests only, never into importers
            imported = self.import_path(directory)
            if imported is None:
                why = f"{path}: no go.mod names its package (every Go test package runs)"
                return {package_dir(p): why for p in self.go_files if is_go_test(p)}
            frontier.append((imported, path))
        seen = {p for p, _ in frontier}
        while frontier:
            imported, path = frontier.pop()
            for directory, from_test in sorted(self.importers.get(imported, ())):
                found.setdefault(directory, f"imports {imported} (changed: {path})")
                above = None if from_test else self.import_path(directory)
                if above is not None and above not in seen:
                    seen.add(above)
                    frontier.append((above, path))
        return found
