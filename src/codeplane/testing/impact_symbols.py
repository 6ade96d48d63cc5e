"""Symbol-level impact: from changed definitions to the test cases that reach them (issue 22).

The seeds are the innermost definitions (``st_def``) containing each changed line. A reached definition
spreads to the innermost definition around every use of it, transitively:

- references resolved to it (``target_uid``: PROVEN same-file bindings, STRONG import → export chains,
  re-exports included) — ``high``;
- references spelled like it that resolve to nothing (ANCHORED member accesses such as ``obj.m()``,
  UNKNOWN names under a star import) and dynamic-access sites naming it as a literal — ``low``: the receiver
  is unknown, so every such use counts (never narrower than is safe), except those Python's name rules rule
  out: a bare name in another file is no class member, and a module-level definition only where a star
  import, an import of the name, or ``exec``/``eval`` may bind it (else it is a builtin: ``set()``); ``x.f``
  is a module-level ``f`` only where ``x`` can be its module (the file imports it, a parent package, a module
  re-exporting ``f``, or a dynamic importer); ``os.path.join`` (a plain dotted name rooted at another
  distribution's import) is no repository definition; a lambda assigned at import time does not run then.
  ``x.m`` on an unknown receiver is walked once per method name; ``self.x.m`` where ``self.x`` is certainly an
  instance of one class (``impact_attrs.py``) only for that class and its bases. What every walk of an index epoch reads
  alike (definitions per file, these uses, query answers) is kept in ``WalkFacts`` until the next epoch;
- a dunder method spreads to its class (``__init__``/``__eq__``... run without being named); a class spreads
  through its uses, subclass headers included (a class header lies inside the subclass's span); a class whose
  construction is unchanged (only its instances behave differently) does not make a function that only
  returns a new instance (``return K(...)``) run changed code; a class attribute spreads to its class where
  unseen code makes instances (decorated classes, metaclasses, other libraries' bases: attrs, dataclasses);
- reading a property (``obj.prop``) calls its getter; ``@prop.setter`` does not;
- a decorator line belongs to the definition it decorates (a ``parametrize`` table of any length included);
- pytest fixtures spread to every function of their scope (the ``conftest.py`` directory, the test file, or
  everywhere for a plugin module) that takes a parameter of the fixture's name, and to what names it in a
  string in a test file of the scope (``usefixtures`` on a test or class, ``getfixturevalue`` in a function;
  elsewhere the whole file); an ``autouse`` fixture or a ``pytest_*`` hook selects every test of its scope;
  a fixture spreads no further (pytest refuses a direct call of one: ``ctx.invoke()`` is no use of it);
- a test that writes code importing a changed package into a string (and imports what it wrote) is selected.

A reached test function (``test*`` at module level or in a class) is a selected case (``file::Class::test``);
a reached non-test member of a test class selects the class, and the class's subclasses in test files too
(pytest runs inherited tests under them). What the graph cannot follow falls back to the module-level
selection for that file, with the reason: module-level code (a changed line outside any definition, or a
use at module level of a non-test file), a non-Python file, a file the index does not know.
"""

from __future__ import annotations

import re
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence

from codeplane.testing.impact_attrs import AttributeTypes
from codeplane.testing.impact_code import PythonCode, ReadLines
from codeplane.testing.impact_fixtures import fixture_requests
from codeplane.testing.impact_names import (
    bare_visible,
    external_receiver,
    literal_receiver,
    member_visible,
    pytest_receiver,
)
from codeplane.testing.impact_reach import Confidence, Def, Reach, SymbolSelection
from codeplane.testing.impact_text import (
    callee_at,
    calls_at,
    in_assigned_lambda,
    member_at,
    passive_at,
    restored_at,
    returns_call,
    signature_annotations,
)
from codeplane.testing.impact_walkfacts import WalkFacts

#: Reached definitions beyond this are not walked: every change falls back to module-level selection.
MAX_DEFS = 4_000
#: Changed lines looked at per file (a bigger rewrite is a module-level change).
MAX_LINES = 5_000
_SERVED = re.compile(r"""["']([A-Za-z_]\w*)["']""")
_FIXTURE_NAME = re.compile(r"""name\s*=\s*["']([A-Za-z_]\w*)["']""")
#: ``@pytest.fixture``, ``@fixture(...)``, ``@pytest_asyncio.fixture``: a decorator that is plainly pytest's.
_FIXTURE_DECORATOR = re.compile(r"@\s*(?:pytest(?:_asyncio)?\s*\.\s*)?fixture\b")

#: Dunders that run when a class is instantiated or subclassed: a change there changes what calling the class
#: does. Other dunders change how instances behave once made.
_CONSTRUCTION = frozenset({"__new__", "__init__", "__post_init__", "__attrs_pre_init__", "__attrs_post_init__",
                           "__init_subclass__", "__set_name__", "__class_getitem__",
                           # runs when a temporary instance is dropped: ``make()`` as a statement
                           "__del__"})


#: Dunders that plain attribute access on an instance runs.
_ATTRIBUTE_DUNDERS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__get__",
                                "__set__", "__delete__"})


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _is_conftest(path: str) -> bool:
    return path.rsplit("/", 1)[-1] == "conftest.py"


class SymbolWalk(PythonCode):
    """One walk over one read transaction. ``tests``: the discovered test files; ``read_lines``: a file's
    current lines (decorators and fixture names are read from the text, ``None`` when unreadable)."""

    #: The source files this walk seeds from (``impact_go.GoWalk``: Go).
    suffixes: tuple[str, ...] = (".py", ".pyi")
    language = "Python"

    def __init__(self, conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
                 tests: Iterable[str], read_lines: ReadLines, *, facts: WalkFacts | None = None) -> None:
        super().__init__(conn, path_of, read_lines, facts if facts is not None else WalkFacts())
        self.id_of = id_of
        self.tests = frozenset(tests)
        self.best: dict[str, Reach] = {}
        self.queue: deque[Def] = deque()
        self.out = SymbolSelection()
        self._fallen: set[str] = set()
        self._property_memo: dict[str, bool] = {}
        #: test file → fixture name → lines requesting it by a string (``impact_fixtures``; None: every string).
        self._requests: dict[str, dict[str, frozenset[int]] | None] = {}
        #: (method name, reach.runs) whose uses on unknown receivers were walked.
        self._by_name: set[tuple[str, bool]] = set()
        #: (method name, reach.runs) → uses left out for the class of the method that walked them.
        self._typed_out: dict[tuple[str, bool], list[tuple[int, int, int]]] = {}
        self._attributes = AttributeTypes(self)
        #: Told the files that fell back to module level since it was last asked; True when their module-level
        #: selection holds every test file already: the walk stops (``ImpactIndex`` sets it).
        self.saturated: Callable[[list[str]], bool] | None = None

    # -- results ---------------------------------------------------------------------------------------
    def select(self, test_file: str, case: str, reach: Reach) -> None:
        cases = self.out.cases.setdefault(test_file, {})
        if reach.better_than(cases.get(case)):
            cases[case] = reach

    def fallback(self, path: str, reason: str) -> None:
        if path not in self._fallen:
            self._fallen.add(path)
            self.out.fallbacks.append((path, reason))

    def enqueue(self, d: Def, reach: Reach) -> None:
        if reach.better_than(self.best.get(d.uid)):
            self.best[d.uid] = reach
            self.queue.append(d)

    # -- the walk --------------------------------------------------------------------------------------
    def run(self, changes: Mapping[str, Sequence[tuple[int, int]]]) -> SymbolSelection:
        for path, ranges in sorted(changes.items()):
            self._seed(path, ranges)
        told = 0
        while self.queue:
            if len(self.best) > MAX_DEFS:
                for path in sorted(changes):
                    self.fallback(path, f"more than {MAX_DEFS} definitions reached")
                break
            if self.saturated is not None and len(self.out.fallbacks) > told:
                fresh = [p for p, _ in self.out.fallbacks[told:]]
                told = len(self.out.fallbacks)
                if self.saturated(fresh):
                    self.out.stopped = True
                    break
            d = self.queue.popleft()
            self._spread(d, self.best[d.uid])
        if not self.out.stopped:
            self._code_in_strings(changes)
        self.out.reached = len(self.best)
        self.out.reached_defs = {(self.path_of.get(hit.file_id, ""), hit.qualified_name)
                                 for uid, reach in self.best.items()
                                 if reach.confidence == "high" and (hit := self._by_uid.get(uid)) is not None}
        return self.out

    def _seed(self, path: str, ranges: Sequence[tuple[int, int]]) -> None:
        file_id = self.id_of.get(path)
        if file_id is None:
            self.fallback(path, "not in the index (deleted, ignored or new)")
            return
        if not path.endswith(self.suffixes):
            self.fallback(path, f"not a {self.language} file")
            return
        self._dangling(file_id, path)
        lines = sorted({n for a, b in ranges for n in range(max(1, min(a, b)), max(a, b) + 1)})
        if len(lines) > MAX_LINES:
            self.fallback(path, f"more than {MAX_LINES} changed lines")
            return
        for line in lines:
            d = self.innermost(file_id, line)
            if d is None:
                if path in self.tests:
                    self.select(path, "", Reach("high", (f"{path}:{line} (module-level code of the test file)",)))
                else:
                    self.fallback(path, f"module-level code changed (line {line})")
                continue
            if d.qualified_name not in self.out.seeds:
                self.out.seeds.append(d.qualified_name)
            self.enqueue(d, Reach("high", (f"{d.qualified_name} (changed)",)))

    def _code_in_strings(self, changes: Mapping[str, Sequence[tuple[int, int]]]) -> None:
        """Tests that write code importing a changed package into a string (``write_text("import flask\\n
        app = flask.Flask(__name__)")``, then import what they wrote) run it where no reference shows: the test
        around each such string is selected, or the whole file outside a test."""
        keys = self.facts.keys_of or {}
        tops = sorted({k[3:].split(".", 1)[0] for p in changes if (f := self.id_of.get(p)) is not None
                       for k in keys.get(f, ()) if k.startswith("py:")})
        for top in tops:
            for test, line in self.facts.code_strings(top, sorted(self.tests), self.read_lines):
                why = f"{test}:{line} (writes code importing {top} in a string)"
                d = self.innermost(self.id_of[test], line) if test in self.id_of else None
                if d is None or not self._test_side(d, test, Reach("low", (why, "(dynamic code)"))):
                    self.select(test, "", Reach("low", (why, "(dynamic code)")))

    def _dangling(self, file_id: int, path: str, reach: Reach | None = None) -> None:
        """Uses of the changed module's names that it does not define (``from m import gone``, ``m.gone()``):
        a removed or renamed definition leaves exactly these, so they are reached too."""
        rows = self.conn.execute(
            "SELECT r.file_id, r.start_line, r.start_col, r.token_text, i.resolved_alt_file_id IS NOT NULL AND "
            "r.token_text IN (i.imported_name, coalesce(i.alias, '')), i.import_kind, i.imported_name, "
            "i.alias IS NULL AND i.resolved_alt_file_id IS NOT NULL AND i.resolved_alt_file_id != ? "
            "FROM st_import i JOIN st_ref r ON r.via_import_uid = "
            "i.import_uid WHERE (i.resolved_file_id = ? OR i.resolved_alt_file_id = ?) AND r.target_uid IS NULL "
            "AND r.role != 'DEFINITION'", (file_id, file_id, file_id)).fetchall()
        origin = Def("", file_id, "module", "", "", path, 0, 0, None)
        # A name the module still binds (a def, an overload, an import, an assignment) is followed by name.
        defined = {d.name for d in self.defs_of(file_id)} | {str(n) for (n,) in self.conn.execute(
            "SELECT DISTINCT b.name FROM st_bind b JOIN st_scope s ON s.scope_id = b.scope_id "
            "WHERE b.file_id = ? AND s.parent_scope_id IS NULL", (file_id,))}
        for user_file, line, col, token, submodule, kind, imported, elsewhere in rows:
            # __name__, __file__...: every module has them; ``from pkg import mod`` binds the module file itself.
            # ``import pkg.mod`` then ``pkg.mod``: importing ``pkg.mod`` sets ``mod`` on ``pkg`` before the name
            # the access goes through is bound, so no module ``__getattr__`` serves it.
            # ``import pkg.mod`` binds ``pkg``: ``pkg.name`` is the package's name, not the changed module's.
            if token in defined or _is_dunder(token) or submodule or (kind == "python_import" and (
                    token in str(imported).split(".")[1:] or ("." in str(imported) and elsewhere))):
                continue
            why = f"{path}: {token} (resolves to no definition: removed or dynamic?)"
            self._use((int(user_file), int(line), int(col)), origin,
                      reach.then(why, "low") if reach is not None else Reach("low", (why,)), "low", call=True)

    def _spread(self, d: Def, reach: Reach) -> None:
        path = self.path_of.get(d.file_id, "")
        in_test = path in self.tests
        if in_test and self._test_side(d, path, reach):
            return
        if (in_test or _is_conftest(path) or "/tests/" in f"/{path}") and d.kind in ("function", "method") and (
                self._fixture(d, path, reach)):
            return
        owner = self.get(d.parent)
        if d.kind == "variable" and owner is not None and owner.kind == "class" and self._generated(owner):
            # A class attribute takes part in making an instance where code the source does not show makes it
            # (attrs' ``x = attrib(validator=...)``, dataclass defaults, an Enum's members, a model metaclass):
            # the class is reached too, its construction running as the value does. Elsewhere construction is
            # the source's ``__new__``/``__init__``, which reach the class through their own uses of the name.
            self.enqueue(owner, reach.then(f"{owner.qualified_name} (holds {d.name})", "high", runs=reach.runs))
        if d.name == "__getattr__" and (owner is None or owner.kind != "class"):
            self._module_getattr(d, path, reach)  # a module's (PEP 562), or one a factory makes for modules
            if d.kind != "variable":
                return
        elif _is_dunder(d.name) and d.kind in ("function", "method"):
            if owner is not None and owner.kind == "class":
                self.enqueue(owner, reach.then(owner.qualified_name, "high", runs=d.name in _CONSTRUCTION))
            return
        elif owner is not None and owner.kind == "class" and self._external_base(owner):
            # A method of a class deriving from another library's class may be called by that library
            # (werkzeug calls flask's Request._load_form_data): whoever holds an instance is reached.
            self.enqueue(owner, reach.then(f"{owner.qualified_name} (derives from an external class)", "low",
                                           runs=False))
        for file_id, line, col in self.rows(
                "SELECT r.file_id, r.start_line, r.start_col FROM st_import i JOIN st_ref r ON r.target_uid = "
                "i.import_uid WHERE i.resolved_file_id = ? AND i.imported_name = ? AND r.role = 'REFERENCE'",
                (d.file_id, d.name)):
            # Uses of an import of the name that did not resolve to one definition (overloads, conditionals).
            self._use((int(file_id), int(line), int(col)), d, reach, "low")
        for file_id, line, col in self.rows(
                "SELECT file_id, start_line, start_col FROM st_ref WHERE target_uid = ? "
                "AND role NOT IN ('DEFINITION', 'IMPORT', 'EXPORT')", (d.uid,)):
            self._use((int(file_id), int(line), int(col)), d, reach, "high")
        # Unresolved uses by name; a PROVEN one without a target is bound to several definitions (overloads).
        # ``x.name`` on an unknown receiver is the same use of every method so named: walked once per name.
        method = owner is not None and owner.kind == "class"
        key = (d.name, reach.runs)
        walked = method and key in self._by_name
        if method:
            self._by_name.add(key)
        # Uses whose receiver is an attribute of one certain class (``self.x.m()``, ``impact_attrs``) are the
        # same use of ``m`` only for that class and its bases: those another method so named skipped are
        # looked at again for this one, not left out with the rest of a walked name.
        typed_out = self._typed_out.setdefault(key, []) if owner is not None and owner.kind == "class" else []
        retry = list(typed_out) if walked else []
        if walked:
            typed_out.clear()
        for file_id, line, col, receiver, member, foreign in self.facts.uses_by_name(self.conn, d.name):
            if walked and member and receiver not in ("self.", "cls."):
                continue
            if member and self.external_receiver(file_id, line, col, foreign=foreign):
                continue
            if not (self.bare_visible(file_id, d, owner) if not member else self.member_visible(file_id, d, owner)):
                continue
            if member and receiver == "expr." and (owner is None or owner.kind == "class") and (
                    self._attributes.excludes((file_id, line, col), owner, d.name)):
                if method:
                    typed_out.append((file_id, line, col))
                continue
            self._use((file_id, line, col), d, reach, "low", receiver=receiver)
        for site in retry:
            if owner is not None and self._attributes.excludes(site, owner, d.name):
                typed_out.append(site)
            else:
                self._use(site, d, reach, "low", receiver="expr.")
        literal = f'%"{d.name}"%'
        for file_id, line, col, pattern in self.rows(
                "SELECT file_id, start_line, start_col, pattern_type FROM st_dynamic_site "
                "WHERE extracted_literals LIKE ?", (literal,)):
            if pattern == "hasattr" and self._only_looked_up(d):
                continue
            self._use((int(file_id), int(line), int(col)), d, reach, "low", call=True)

    def _only_looked_up(self, d: Def) -> bool:
        """Whether looking ``d`` up as an attribute (``hasattr(x, "name")``, ``x.name`` not called) runs none of
        it: a plain function, no decorator at all (a property's getter, any descriptor a decorator makes, runs
        on a lookup); a body change leaves ``hasattr``'s answer the same."""
        return d.kind in ("function", "method") and bool(self.read_lines(self.path_of.get(d.file_id, ""))) and (
            not self.decorator_block(d)[1])

    # -- Python's name rules (``impact_names.py``; the Go walk switches them off) ----------------------
    def bare_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        return bare_visible(self.facts, self.conn, file_id, d, owner)

    def external_receiver(self, file_id: int, line: int, col: int, *, foreign: bool) -> bool:
        """Whether ``x.name`` at the site cannot be a repository definition: ``x`` is another distribution's
        module or class, a local bound only to literals (a builtin list, dict, string...), or in a test file one of
        pytest's own fixtures (``monkeypatch``, ``pytestconfig``...)."""
        path = self.path_of.get(file_id, "")
        lines = self.read_lines(path)
        text = lines[line - 1] if 0 < line <= len(lines) else None
        return text is not None and (external_receiver(self.facts, self.conn, text, (file_id, line, col),
                                                       foreign=foreign)
                                     or literal_receiver(self.facts, self.conn, lines, (file_id, line, col))
                                     or ((path in self.tests or _is_conftest(path)) and pytest_receiver(
                                         self.facts, self.conn, text, (file_id, line, col), self.read_lines)))

    def member_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        path = self.path_of.get(file_id, "")
        in_tests = path in self.tests or _is_conftest(path)
        return member_visible(self.facts, self.conn, file_id, d, owner, in_tests=in_tests)

    def _module_getattr(self, d: Def, path: str, reach: Reach) -> None:
        """A module ``__getattr__`` serves the names its module does not define: the imports of such names
        from its module, and every access by name (``mod.__version_info__`` on any receiver) of a name its
        text spells as a string. Without such strings, everything importing the module."""
        self._dangling(d.file_id, path, reach)
        if d.kind == "variable":  # ``__getattr__ = factory(...)``: the factory's function spells the names
            return
        lines = self.read_lines(path)
        served = {m.group(1) for line in lines[max(0, d.start - 1):d.end] for m in _SERVED.finditer(line)}
        if not served:
            self.fallback(path, f"{d.qualified_name} serves names it does not spell")
            return
        for name in sorted(served):
            for file_id, line, col in self.conn.execute(
                    "SELECT file_id, start_line, start_col FROM st_ref WHERE token_text = ? AND target_uid IS NULL "
                    "AND role = 'REFERENCE' AND is_member = 1", (name,)).fetchall():
                self._use((int(file_id), int(line), int(col)), d, reach.then(f"{name} (served by {d.qualified_name})",
                                                                            "low"), "low")

    def _use(self, site: tuple[int, int, int], used: Def, reach: Reach, confidence: Confidence, *,
             call: bool = False, receiver: str | None = None) -> None:
        """``used`` is used at ``line``: reach what runs that use.

        Inside a function body the function is reached. Code that runs at import time (module level, class
        bodies, variable definitions, decorators, default values) that *calls* it changes the import of the
        whole module (a failure there fails every importer): module-level selection for that file. An
        import-time use that only names it (``registry.add(handler)``) reaches the definitions it is stored
        in: the enclosing variable or class, or the module-level variables named on that line.
        """
        file_id, line, col = site
        path = self.path_of.get(file_id, "")
        if path.endswith(".pyi") or not path.endswith(self.suffixes) or (
                confidence == "low" and self._is_keyword(path, line, col)):
            # Stubs never run; another language's code cannot call this one's (a name in a vendored
            # jquery.js that spells a Python method's is no use of it); a keyword argument's name is no use.
            return
        user = self.innermost(file_id, line)
        if user is not None and user.uid == used.uid:
            return
        if receiver in ("self.", "cls.") and not self._may_dispatch(user, used):
            return
        called = (call or self._is_call(path, line, col, used.name) or self._reads_property(path, line, col, used)
                  ) and not self._in_lambda(path, line, col)
        if not called and self._restored(path, line, col) and self._only_looked_up(used):
            # ``self.request = self.response.request``: a method read (not called, no decorator) and stored under
            # its own name runs nothing here; whatever calls it later does so by that name, a use of its own.
            return
        header = user is not None and user.kind == "class" and line == user.start
        if used.kind == "class" and not called and self._passive(path, line, col, user):
            return  # an annotation, isinstance, except: the class is named, nothing of it runs
        at_import = self._import_time(user, line)
        if at_import and reach.runs and called:
            self._module_level(path, line, reach.then(f"{path}:{line} (calls {used.name} at import time)",
                                                      confidence), f"calls {used.qualified_name} at import time")
            return
        if user is None:
            stored = [d for d in self._named_on_line(file_id, line) if d.uid != used.uid]
            if not stored or path in self.tests:
                self._module_level(path, line, reach.then(f"{path}:{line} (module level)", confidence),
                                   f"module-level code uses {used.qualified_name}")
            for target in stored:
                self.enqueue(target, reach.then(f"{target.qualified_name} (stores {used.name})", confidence))
            return
        # A base class: the subclass's construction is the base's. A function that only makes and returns its
        # own closure (a decorator factory) runs nothing changed itself; whoever calls the closure does.
        closure = used.parent == user.uid and used.kind in ("function", "method") and not called
        # A class whose construction is unchanged (only its instances behave differently) that a function
        # makes and returns at once (``return _InstanceOfValidator(type)``: attrs' validator factories) runs
        # nothing changed in that function: it never touches the instance. Whoever uses what it returns is
        # reached through its own uses of the function; an import-time call of the factory imports as before.
        # Not when the instance's attribute access itself changed (``__getattr__``...: using what the factory
        # returns at import runs it) or another library's base class may call the change while constructing.
        handed_back = not reach.runs and used.kind == "class" and called and not any(
            step.split(" ", 1)[0].rsplit(".", 1)[-1] in _ATTRIBUTE_DUNDERS or "external class" in step
            for step in reach.chain[:2]) and self._returns_new(path, line, col)
        self.enqueue(user, reach.then(user.qualified_name if path not in self.tests else
                                      f"{path}::{user.lexical_path.replace('.', '::')}", confidence,
                                      runs=(reach.runs or not header) and not closure and not handed_back))

    def _module_level(self, path: str, line: int, reach: Reach, why: str) -> None:
        if path in self.tests:
            self.select(path, "", reach)
        else:
            self.fallback(path, f"{why} (line {line}; {' → '.join(reach.chain)})")

    def _import_time(self, user: Def | None, line: int) -> bool:
        """Whether code at ``line`` runs when its module is imported (not inside a function body)."""
        if user is None:
            return True
        return not any(a.kind in ("function", "method") and a.start < line for a in self.ancestors(user))

    def _is_call(self, path: str, line: int, col: int, name: str) -> bool:
        """``name(`` at ``line``/``col``, or a decorator line; True when the text is unreadable (the safe answer)."""
        text = self._line(path, line)
        return text is None or calls_at(text, col)

    def _reads_property(self, path: str, line: int, col: int, used: Def) -> bool:
        """``obj.name`` of a property (``@property``, ``@cached_property``...): reading it runs the getter, as a
        call would (an import-time ``site.urls`` runs ``urls``)."""
        if used.kind not in ("function", "method"):
            return False
        prop = self._property_memo.get(used.uid)
        if prop is None:
            prop = self._property_memo[used.uid] = "property" in self.decorator_block(used)[1]
        if not prop:
            return False
        text = self._line(path, line)
        return text is None or member_at(text, col)

    def _restored(self, path: str, line: int, col: int) -> bool:
        text = self._line(path, line)
        return text is not None and restored_at(text, col)

    def _returns_new(self, path: str, line: int, col: int) -> bool:
        lines = self.read_lines(path)
        return 0 < line <= len(lines) and returns_call(lines, line - 1, col)

    def _in_lambda(self, path: str, line: int, col: int) -> bool:
        text = self._line(path, line)
        return text is not None and in_assigned_lambda(text, col)

    def _passive(self, path: str, line: int, col: int, user: Def | None) -> bool:
        text = self._line(path, line)
        if text is None:
            return False
        if passive_at(text, col):
            return True
        # An annotation on a signature's continuation line, which the line's text alone does not show.
        if user is None or user.kind not in ("function", "method") or user.start >= line:
            return False
        key = (user.file_id, user.start)
        names = self.facts.signatures.get(key)
        if names is None:
            names = self.facts.signatures[key] = signature_annotations(self.read_lines(path), user.start)
        return (line, col) in names

    def _named_on_line(self, file_id: int, line: int) -> list[Def]:
        """Module-level variables referenced on ``line`` of ``file_id`` (what a statement there stores into).

        A variable named there only as the callee (``path(...)`` with ``path = partial(_path, ...)``) is not
        where the value goes: the call gets it as an argument for this one call, and its result is stored
        elsewhere (``urlpatterns``, on a line above) or dropped. Following the callee instead reached every
        caller of it (every URL conf of Django: the whole suite). Leaving it out is safe: with no other
        variable named, the statement falls back to module-level selection of its file."""
        path = self.path_of.get(file_id, "")
        stores: dict[str, bool] = {}
        for uid, col in self.rows("SELECT target_uid, start_col FROM st_ref WHERE file_id = ? AND start_line = ? "
                                  "AND target_uid IS NOT NULL", (file_id, line)):
            text = self._line(path, line)
            callee = text is not None and callee_at(text, int(col))
            stores[str(uid)] = stores.get(str(uid), False) or not callee
        found = []
        for uid, stored in sorted(stores.items()):
            d = self.get(uid) if stored else None
            if d is not None and d.kind == "variable" and d.parent is None:
                found.append(d)
        return found

    # -- tests and fixtures ------------------------------------------------------------------------------
    def _test_side(self, d: Def, path: str, reach: Reach) -> bool:
        """Select what ``d`` (in a test file) makes run; True when nothing else can reach further."""
        chain = self.ancestors(d)
        for i, node in enumerate(chain):
            if node.name.startswith("test") and node.kind in ("function", "method") and all(
                    a.kind == "class" for a in chain[i + 1:]):
                case = node.lexical_path.replace(".", "::")
                self.select(path, case, reach)
                self._imported(chain[-1], case, reach)
                owner = chain[i + 1] if i + 1 < len(chain) else None
                if owner is not None:
                    self._subclasses(owner, reach)
                return True
        classes = [a for a in chain if a.kind == "class"]
        if classes and self._class_wide(chain):
            outer = classes[-1]
            self.select(path, outer.lexical_path.replace(".", "::"), reach)
            self._imported(outer, outer.lexical_path.replace(".", "::"), reach)
            self._subclasses(outer, reach)
        return False

    def _class_wide(self, chain: list[Def]) -> bool:
        """Whether a reached member of a test class (``chain``: it and what encloses it, innermost first) may run
        for any test of the class: a fixture or any decorated method, ``setup_method``/``teardown_method`` and the
        like, a dunder, a class attribute or a nested class. A plain helper method runs where a test calls it (a
        use of its own, which selects that test): not for the others."""
        at = next(i for i, a in enumerate(chain) if a.kind == "class")
        member = chain[at - 1] if at > 0 else None
        if member is None or member.kind not in ("function", "method") or len(chain) > at + 1:
            return True  # the class itself, a class attribute, or a class nested in another or in a function
        name = member.name
        return _is_dunder(name) or name.lower().startswith(("setup", "teardown")) or bool(
            self.decorator_block(member)[1]) or not self.read_lines(self.path_of.get(member.file_id, ""))

    def _collected(self, d: Def) -> bool:
        """Whether pytest collects ``d`` as a test: ``test*`` at module level or in classes only."""
        chain = self.ancestors(d)
        return d.name.startswith("test") and d.kind in ("function", "method") and all(
            a.kind == "class" for a in chain[1:])

    def _imported(self, top: Def, case: str, reach: Reach) -> None:
        """pytest collects a test class or function again in every test file that imports it by name."""
        rows = self.rows("SELECT file_id, token_text FROM st_ref WHERE target_uid = ? AND role = 'IMPORT'",
                                 (top.uid,))
        for file_id, token in rows:
            path = self.path_of.get(int(file_id), "")
            if path in self.tests:
                again = str(token) + case[len(top.name):]
                self.select(path, again, reach.then(f"{path}::{again} (imports {top.name})", "high"))

    def _subclasses(self, cls: Def, reach: Reach) -> None:
        """Test classes deriving from ``cls`` run its tests too: select them whole."""
        rows = self.rows("SELECT file_id, start_line FROM st_ref WHERE target_uid = ? AND role = 'REFERENCE'",
                                 (cls.uid,))
        for file_id, line in rows:
            path = self.path_of.get(int(file_id), "")
            sub = self.innermost(int(file_id), int(line))
            if path in self.tests and sub is not None and sub.kind == "class" and sub.uid != cls.uid and (
                    int(line) == sub.start):
                case = sub.lexical_path.replace(".", "::")
                if case not in self.out.cases.get(path, {}):
                    self.select(path, case, reach.then(f"{path}::{case} (inherits {cls.name})", "high"))
                    self._imported(sub, case, reach)
                    self._subclasses(sub, reach)

    def _scope(self, path: str) -> Callable[[str], bool]:
        if _is_conftest(path):
            directory = path.rpartition("/")[0]
            return lambda p: not directory or p.startswith(directory + "/")
        if path in self.tests:
            return lambda p: p == path
        return lambda p: True

    def _fixture(self, d: Def, path: str, reach: Reach) -> bool:
        """Select what a fixture or hook ``d`` runs for; True when ``d`` is plainly a pytest fixture
        (``@pytest.fixture``...): pytest refuses a direct call of one, so it runs only through its name (a
        parameter, ``usefixtures``, ``getfixturevalue``, ``autouse``), never where code calls something so
        named (``ctx.invoke(...)`` in flask is no use of a test class's ``invoke`` fixture)."""
        _, decorators = self.decorator_block(d)
        in_scope = self._scope(path)
        if not self.read_lines(path):  # no text: it may be an autouse fixture
            for test in sorted(t for t in self.tests if in_scope(t)):
                self.select(test, "", reach.then(f"{test} (under {path}, whose text is unreadable)", "low"))
            return False
        hook = d.name.startswith("pytest_") and d.parent is None
        if not hook and "fixture" not in decorators:
            return False
        fixture = not hook and _FIXTURE_DECORATOR.search(decorators) is not None
        if hook or "autouse" in decorators:
            why = "pytest hook" if hook else "autouse fixture"
            for test in sorted(t for t in self.tests if in_scope(t)):
                self.select(test, "", reach.then(f"{test} (runs under {why} {d.name})", "high"))
            return fixture
        named = _FIXTURE_NAME.search(decorators)
        name = named.group(1) if named else d.name
        for file_id, line in self.rows(
                "SELECT r.file_id, r.start_line FROM st_ref r JOIN st_bind b ON b.bind_id = r.bind_id "
                "WHERE r.token_text = ? AND r.role = 'DEFINITION' AND b.reason_code = 'PARAM'", (name,)):
            user_path = self.path_of.get(int(file_id), "")
            if not in_scope(user_path):
                continue
            user = self.innermost(int(file_id), int(line))  # the function whose parameter it is
            if user is not None and self.read_lines(user_path) and "fixture" not in self.decorator_block(user)[1] and (
                    user_path not in self.tests or not self._collected(user)):
                # pytest hands fixtures to tests and to other fixtures only: a helper outside the test files
                # (``tests/strategies.py``'s ``simple_classes(slots=...)``) or in one (attrs' ``_add_init(cls,
                # frozen)`` in ``test_dunders.py``) gets what its caller passes.
                continue
            if user is not None and user.uid != d.uid and user.kind in ("function", "method"):
                step = (f"{user_path}::{user.lexical_path.replace('.', '::')}" if user_path in self.tests
                        else user.qualified_name)
                self.enqueue(user, reach.then(f"{step} (takes fixture {name})", "high"))
        quoted = (f'"{name}"', f"'{name}'")
        for test in sorted(t for t in self.tests if in_scope(t)):
            lines = self.read_lines(test)
            if not any(name in text for text in lines):
                continue
            if test not in self._requests:
                self._requests[test] = fixture_requests(lines)
            by_name = self._requests[test]
            requested = by_name.get(name, frozenset()) if by_name is not None else frozenset(
                n for n, text in enumerate(lines, 1) if any(q in text for q in quoted))
            why = f"{test} (names fixture {name} in a string)"
            file_id = self.id_of.get(test)
            for number in sorted(requested):
                # ``@pytest.mark.usefixtures("name")`` on a test or test class (a decorator line belongs to the
                # definition it decorates) or ``request.getfixturevalue("name")`` in a function: what that
                # definition runs. Anywhere else (``pytestmark = ...``, a class attribute, module code): the file.
                user = self.innermost(file_id, number) if file_id is not None else None
                if user is not None and user.kind in ("function", "method", "class"):
                    self.enqueue(user, reach.then(why, "low"))
                else:
                    self.select(test, "", reach.then(why, "low"))
        return fixture
