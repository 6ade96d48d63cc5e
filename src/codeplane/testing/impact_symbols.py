"""Symbol-level impact: from changed definitions to the test cases that reach them (issue 22).

The seeds are the innermost definitions (``st_def``) containing each changed line. A reached definition
spreads to the innermost definition around every use of it, transitively (what one use reaches, at import
time or in a function, and what its line rules out: ``impact_uses.py``):

- references resolved to it (``target_uid``: PROVEN same-file bindings, STRONG import → export chains,
  re-exports included) — ``high``;
- references spelled like it that resolve to nothing (ANCHORED member accesses such as ``obj.m()``,
  UNKNOWN names under a star import) and dynamic-access sites naming it as a literal — ``low``: the receiver
  is unknown, so every such use counts (never narrower than is safe), except those Python's name rules rule
  out: a bare name in another file is no class member, and a module-level definition only where a star
  import, an import of the name, or ``exec``/``eval`` may bind it (else it is a builtin: ``set()``); ``x.f``
  is a module-level ``f`` only where ``x`` can be its module (the file imports it, a parent package, a module
  re-exporting ``f``, or a dynamic importer; ``from m import name`` binds ``name``, not ``m``);
  ``os.path.join`` (a plain dotted name rooted at another distribution's import) is no repository definition.
  ``x.m`` on an unknown receiver is walked once per method name; ``self.x.m`` where ``self.x`` is certainly an
  instance of one class (``impact_attrs.py``), and ``x.m`` where the function's local ``x`` is only ever
  assigned ``K(...)`` (``impact_locals.py``), only for that class and its bases (``high`` when ``m`` has one
  definition in ``K``'s classes), and not for a base whose method ``K`` defines again. What every walk of an
  index epoch reads alike (definitions per file, these uses, query answers) is kept in ``WalkFacts`` until the
  next epoch;
- a dunder method spreads to its class (``__init__``/``__eq__``... run without being named; constructing the
  class runs changed code only if its ``__init__``/``__new__``... does); a class spreads
  through its uses; a class attribute spreads to its class where unseen code makes instances (decorated
  classes, metaclasses, other libraries' bases: attrs, dataclasses);
- a decorator line belongs to the definition it decorates (a ``parametrize`` table of any length included);
- pytest fixtures and hooks spread to what pytest runs them for (``impact_pytest.py``);
- a test that writes code importing a changed package into a string (and imports or runs what it wrote) is
  selected (a multi-line string's ``import pkg`` line that is no import statement of the file counts).

A reached test function is a selected case, a reached member of a test class may select the class
(``impact_pytest.py``). What the graph cannot follow falls back to the module-level selection for that file,
with the reason: module-level code (a changed line outside any definition, or a use at module level of a
non-test file), a non-Python file, a file the index does not know, a changed definition no resolved reference
leads anywhere from (code may read it by a computed name or a string: ``getattr(obj, "since_created")``).

:class:`SymbolWalk` is the driver (seeds, the queue, how a reached definition spreads); what it reached and
selected is its :class:`~codeplane.testing.impact_walkstate.WalkState`, and it is mixed from the rule families
:class:`~codeplane.testing.impact_uses.UseRules` and :class:`~codeplane.testing.impact_pytest.PytestRules`.
"""

from __future__ import annotations

import builtins
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from codeplane.testing.impact_attrs import AttributeTypes
from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_computed import ComputedSelfSites
from codeplane.testing.impact_history import earlier_declarations
from codeplane.testing.impact_locals import LocalTypes
from codeplane.testing.impact_names import (
    bare_visible,
    external_receiver,
    literal_receiver,
    member_visible,
    pytest_receiver,
)
from codeplane.testing.impact_pytest import PytestRules, is_conftest
from codeplane.testing.impact_reach import Def, Reach, SymbolSelection
from codeplane.testing.impact_text import dotted_root
from codeplane.testing.impact_uses import UseRules
from codeplane.testing.impact_walkfacts import WalkFacts
from codeplane.testing.impact_walkstate import is_dunder

#: Reached definitions beyond this are not walked: every change falls back to module-level selection.
MAX_DEFS = 4_000
#: A walk's deadline (``SymbolWalk.deadline``) is checked once it has reached this many definitions: a walk this
#: small is done in milliseconds, and a loaded machine's pause must not turn its answer into a fallback.
DEADLINE_AFTER_DEFS = 200
#: Changed lines looked at per file (a bigger rewrite is a module-level change).
MAX_LINES = 5_000
_SERVED = re.compile(r"""["']([A-Za-z_]\w*)["']""")
#: Names every module sees unbound: a bare use of one is no removed definition's.
_BUILTINS = frozenset(dir(builtins)) | {"__builtins__", "__file__", "__name__", "__path__", "__spec__"}


#: Dunders that run when a class is instantiated or subclassed: a change there changes what calling the class
#: does. Other dunders change how instances behave once made.
_CONSTRUCTION = frozenset({"__new__", "__init__", "__post_init__", "__attrs_pre_init__", "__attrs_post_init__",
                           "__init_subclass__", "__set_name__", "__class_getitem__",
                           # runs when a temporary instance is dropped: ``make()`` as a statement
                           "__del__"})


#: A decorator that keeps results between calls: ``functools.lru_cache``/``cache``, ``cached_property``, a
#: ``memoize`` of the repository's own.
_MEMOIZED = re.compile(r"^\s*@[\w.]*(?:cache|memo)", re.IGNORECASE | re.MULTILINE)
#: A function's first parameter, from its ``def`` line.
_PARAMETER = re.compile(r"(?:async\s+)?def\s+\w+\s*\(\s*\**([A-Za-z_]\w*)")
#: A name stored into: ``X[...] =``, ``X.append(`` (``add``, ``insert``, ``extend``, ``setdefault``, ``update``,
#: ``register``).
_STORE_INTO = re.compile(r"[A-Za-z_]\w*\s*(?:\[[^\]]*\]\s*=(?!=)|\.\s*(?:append|add|insert|extend|setdefault|update|"
                         r"register)\s*\()")
#: A decorator that is a method of a named object (``@name.attr``, ``@name.attr(...)``): the object may keep what it
#: decorates.
_REGISTERING = re.compile(r"@\s*[A-Za-z_]\w*\s*\.\s*[A-Za-z_]")


class SymbolWalk(UseRules, PytestRules):
    """One walk over one read transaction. ``tests``: the discovered test files; ``read_lines``: a file's
    current lines (decorators and fixture names are read from the text, ``None`` when unreadable)."""

    def __init__(self, conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
                 tests: Iterable[str], read_lines: ReadLines, *, facts: WalkFacts | None = None) -> None:
        super().__init__(conn, id_of, path_of, tests, read_lines, facts=facts)
        #: (method name, reach.runs) whose uses on unknown receivers were walked.
        self._by_name: set[tuple[str, bool]] = set()
        #: (method name, reach.runs) → uses left out for the class of the method that walked them.
        self._typed_out: dict[tuple[str, bool], list[tuple[int, int, int, str | None]]] = {}
        self._computed = ComputedSelfSites(conn, path_of, read_lines)
        self._attributes = AttributeTypes(self)
        self._locals = LocalTypes(self, self._attributes)
        #: Local function uid → whether its function lets it be named outside (asked once per use otherwise).
        self._outside: dict[str, bool] = {}
        #: Told the files that fell back to module level since it was last asked; True when their module-level
        #: selection holds every test file already: the walk stops (``ImpactIndex`` sets it).
        self.saturated: Callable[[list[str]], bool] | None = None
        #: ``time.monotonic()`` past which the walk stops and every change falls back to module level (a
        #: caller that must answer quickly sets it: the mutation delta's selection).
        self.deadline: float | None = None
        #: The changed definitions' uids, and the files whose former names' users were reached (``_unreferenced``).
        self._seeds: set[str] = set()
        self._renamed: set[int] = set()

    # -- the walk --------------------------------------------------------------------------------------
    def run(self, changes: Mapping[str, Sequence[tuple[int, int]]]) -> SymbolSelection:
        for path, ranges in sorted(changes.items()):
            self._seed(path, ranges)
        told = 0
        unreferenced: list[Def] = []
        while self.queue:
            if len(self.best) > MAX_DEFS:
                for path in sorted(changes):
                    self.fallback(path, f"more than {MAX_DEFS} definitions reached")
                break
            if self.deadline is not None and len(self.best) > DEADLINE_AFTER_DEFS and time.monotonic() > self.deadline:
                for path in sorted(changes):
                    self.fallback(path, "the symbol walk ran out of its time (inspect_affected_tests walks without "
                                        "a limit)")
                break
            if self.saturated is not None and len(self.out.fallbacks) > told:
                fresh = [p for p, _ in self.out.fallbacks[told:]]
                told = len(self.out.fallbacks)
                if self.saturated(fresh):
                    self.out.stopped = True
                    break
            d = self.queue.popleft()
            before = self.effects
            self._spread(d, self.best[d.uid])
            if d.uid in self._seeds and self.effects == before and self.language == "Python" and (
                    not self._imported_by_name(d)):  # Go names no member by a string (its walk: impact_go.py)
                unreferenced.append(d)
        else:
            self._unreferenced(unreferenced)
        if not self.out.stopped:
            self._code_in_strings(changes)
        self.out.reached = len(self.best)
        # A cache on the way (``@lru_cache``, ``@cached_property``...) lets a test skip changed code that an earlier
        # test of its process ran and cached: packaging's ``_get_musl_version`` (reached through ``ELFFile(f)
        # .interpreter``, a use by name) made coverage evidence drop 5 of the tests a fault in ``interpreter``
        # failed. Then whatever leads there, by any use, counts (``coverage_select``'s "after").
        memoized = any(_MEMOIZED.search(self.decorator_block(hit)[1]) for uid in self.best
                       if (hit := self._by_uid.get(uid)) is not None and hit.kind in ("function", "method"))
        self.out.reached_defs = {(self.path_of.get(hit.file_id, ""), hit.qualified_name)
                                 for uid, reach in self.best.items()
                                 if (memoized or reach.confidence == "high") and (hit := self._by_uid.get(uid))
                                 is not None}
        return self.out

    def _seed(self, path: str, ranges: Sequence[tuple[int, int]]) -> None:
        file_id = self.id_of.get(path)
        if file_id is None:
            self.fallback(path, "not in the index (deleted, ignored or new)")
            return
        if not path.endswith(self.suffixes):
            self.fallback(path, f"not a {self.language} file")
            return
        before = self.effects
        self._dangling(file_id, path)
        self._vanished_members(file_id, path)
        if self.effects > before:
            self._renamed.add(file_id)
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
            self._seeds.add(d.uid)
            self.enqueue(d, Reach("high", (f"{d.qualified_name} (changed)",)))

    def _unreferenced(self, seeds: Sequence[Def]) -> None:
        """Changed definitions no resolved reference leads anywhere from (marshmallow's ``User.since_created``
        property, read only through a field's attribute name: ``getattr(obj, "since_created")``): code may still
        read them by a name it computes or spells in a string, so each one's file falls back to module-level
        selection (the tests importing it), never to no test at all (issue 22: what is unresolved widens)."""
        for d in seeds:
            path = self.path_of.get(d.file_id, "")
            if d.file_id in self._renamed and d.lexical_path not in {
                    lexical for state in earlier_declarations(self.conn, path) for _, lexical, _ in state}:
                continue  # a renamed definition: its old name's users, reached by ``_dangling``, are its readers
            self.fallback(path, f"no reference the index resolves reaches {d.qualified_name} (changed); code may "
                                "still read it by a name it computes or spells in a string (getattr, a field's "
                                "attribute name): selected by the imports of its module")

    def _imported_by_name(self, d: Def) -> bool:
        """Whether an import names ``d`` (``from m import d``, a re-export): a resolved reference, whose users'
        uses the walk followed."""
        return self.conn.execute("SELECT 1 FROM st_ref WHERE target_uid = ? AND role = 'IMPORT' LIMIT 1",
                                 (d.uid,)).fetchone() is not None

    def _code_in_strings(self, changes: Mapping[str, Sequence[tuple[int, int]]]) -> None:
        """Tests that write code importing a changed package into a string (``write_text("import flask\\n
        app = flask.Flask(__name__)")``, then import what they wrote; ``import click`` on a line of its own in a
        multi-line string run in a subprocess) run it where no reference shows: the test around each such string
        is selected, or the whole file outside a test. Not only what the code names: it may configure a framework
        that a process the test starts then runs whole (Django's ``admin_scripts`` settings)."""
        keys = self.facts.keys_of or {}
        tops = sorted({k[3:].split(".", 1)[0] for p in changes if (f := self.id_of.get(p)) is not None
                       for k in keys.get(f, ()) if k.startswith("py:")})
        for top in tops:
            for test, line in self.facts.code_strings(self.conn, top, sorted(self.tests), self.read_lines):
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
            "i.alias IS NULL AND i.resolved_alt_file_id IS NOT NULL AND i.resolved_alt_file_id != ?, "
            "i.resolved_file_id = ? AND r.token_text NOT IN (i.imported_name, coalesce(i.alias, '')), "
            "i.import_kind = 'python_from' AND r.token_text = i.alias "
            "FROM st_import i JOIN st_ref r ON r.via_import_uid = "
            "i.import_uid WHERE (i.resolved_file_id = ? OR i.resolved_alt_file_id = ?) AND (r.target_uid IS NULL "
            # ``from m import gone`` binds its import, which denotes no definition now: the import statement's own
            # token (the module fails to import) and each use of the name target the import itself
            "OR (r.target_uid = i.import_uid AND i.import_kind = 'python_from')) AND r.role != 'DEFINITION'",
            (file_id, file_id, file_id, file_id)).fetchall()
        origin = Def("", file_id, "module", "", "", path, 0, 0, None)
        # A name the module still binds (a def, an overload, an import, an assignment) is followed by name.
        defined = {d.name for d in self.defs_of(file_id)} | {str(n) for (n,) in self.conn.execute(
            "SELECT DISTINCT b.name FROM st_bind b JOIN st_scope s ON s.scope_id = b.scope_id "
            "WHERE b.file_id = ? AND s.parent_scope_id IS NULL", (file_id,))} | self._bound_submodules(file_id)
        for user_file, line, col, token, submodule, kind, imported, elsewhere, member_of_name, alias in rows:
            # __name__, __file__...: every module has them; ``from pkg import mod`` binds the module file itself.
            # ``import pkg.mod`` then ``pkg.mod``: importing ``pkg.mod`` sets ``mod`` on ``pkg`` before the name
            # the access goes through is bound, so no module ``__getattr__`` serves it.
            # ``import pkg.mod`` binds ``pkg``: ``pkg.name`` is the package's name, not the changed module's.
            # ``from m import CODES`` then ``CODES.get``: an attribute of the object the module still defines.
            # ``from m import getchar as f`` then ``f``: a use of ``getchar``, which ``m`` may still define (twice,
            # under ``if``/``else``: the import then resolves to no one definition, and each reaches ``f`` as a use
            # of its name, ``_spread``).
            if token in defined or (alias and str(imported) in defined) or is_dunder(token) or submodule or (
                    kind == "python_import" and (
                    token in str(imported).split(".")[1:] or ("." in str(imported) and elsewhere))) or (
                    kind == "python_from" and member_of_name and str(imported) in defined):
                continue
            why = f"{path}: {token} (resolves to no definition: removed or dynamic?)"
            self._use((int(user_file), int(line), int(col)), origin,
                      reach.then(why, "low") if reach is not None else Reach("low", (why,)), "low", call=True)
        if self.language != "Python":
            return
        # The module's own uses of a name it no longer binds (``f()`` in ``g`` after ``def f`` became ``def f2``)
        # raise NameError when they run: no import shows them. Under a star import or an ``exec`` an unbound name
        # may be bound after all: there only names the module declared before count.
        loose = file_id in self.facts.loose_files(self.conn)
        before = {lexical for state in earlier_declarations(self.conn, path) for _, lexical, _ in state} \
            if loose else set()
        for line, col, token in self.rows(
                "SELECT start_line, start_col, token_text FROM st_ref WHERE file_id = ? AND target_uid IS NULL AND "
                "bind_id IS NULL AND is_member = 0 AND role = 'REFERENCE' AND ref_tier = 'UNKNOWN'", (file_id,)):
            if str(token) in defined or str(token) in _BUILTINS or is_dunder(str(token)) or (
                    loose and str(token) not in before):
                continue
            why = f"{path}: {token} (bound nowhere in its module: removed or renamed?)"
            self._use((file_id, int(line), int(col)), origin,
                      reach.then(why, "low") if reach is not None else Reach("low", (why,)), "low", call=True)

    def _vanished_members(self, file_id: int, path: str) -> None:
        """Members the file declared before and no longer does (``def m`` became ``def m2``): their uses by name
        (``C().m()``, ``self.m()``) now fail and resolve to nothing, so no reached definition leads to them. A
        module-level name's users are ``_dangling``'s."""
        if self.language != "Python":
            return
        now = {d.lexical_path for d in self.defs_of(file_id)}
        gone = sorted({lexical.rpartition(".")[2] for state in earlier_declarations(self.conn, path)
                       for _, lexical, _ in state if "." in lexical and lexical not in now})
        origin = Def("", file_id, "module", "", "", path, 0, 0, None)
        for name in gone:
            why = f"{path}: {name} (no longer declared: renamed or removed?)"
            for file, line, col, _, member, _ in self.facts.uses_by_name(self.conn, name):
                if member:
                    self._use((file, line, col), origin, Reach("low", (why,)), "low", call=True)

    def _bound_submodules(self, file_id: int) -> set[str]:
        """The submodules a package's ``__init__`` imports in statements of its own at column 0 (no condition, no
        ``TYPE_CHECKING``, no function: they run whenever the package is imported). Importing ``pkg.sub`` binds
        ``sub`` in the package's namespace (``from .core import Argument`` in click's ``__init__`` makes
        ``click.core`` an attribute of ``click``), so ``pkg.sub`` elsewhere neither names something the package
        lost nor reaches its module ``__getattr__``."""
        keys = [k for k in (self.facts.keys_of or {}).get(file_id, ()) if k.startswith("py:")]
        found: set[str] = set()
        for (target,) in self.rows("SELECT DISTINCT target_key FROM st_import WHERE file_id = ? AND start_col = 0 "
                                   "AND resolved_file_id IS NOT NULL AND target_key IS NOT NULL", (file_id,)):
            found |= {str(target)[len(k) + 1:].split(".", 1)[0] for k in keys if str(target).startswith(f"{k}.")}
        return found

    def _spread(self, d: Def, reach: Reach) -> None:
        path = self.path_of.get(d.file_id, "")
        in_test = path in self.tests
        if in_test and self._test_side(d, path, reach):
            return
        if (in_test or is_conftest(path) or "/tests/" in f"/{path}") and d.kind in ("function", "method") and (
                self._fixture(d, path, reach)):
            self.effects += 1  # pytest runs a fixture by its name only: one no test takes runs nowhere
            return
        owner = self.get(d.parent)
        if d.kind == "variable" and owner is not None and owner.kind == "class" and self._generated(owner):
            # A class attribute takes part in making an instance where code the source does not show makes it
            # (attrs' ``x = attrib(validator=...)``, dataclass defaults, an Enum's members, a model metaclass):
            # the class is reached too, its construction running as the value does. Elsewhere construction is
            # the source's ``__new__``/``__init__``, which reach the class through their own uses of the name.
            # A dunder stored as an attribute (jinja2's ``__copy__ = copy``) runs at construction only if it is one
            # of construction's: ``LRUCache(50)`` runs no ``__copy__``.
            self.enqueue(owner, reach.then(f"{owner.qualified_name} (holds {d.name})", "high", runs=reach.runs and (
                not is_dunder(d.name) or d.name in _CONSTRUCTION)))
        if d.kind in ("function", "method", "class"):
            self._registered(d, reach)
        if d.name == "__getattr__" and (owner is None or owner.kind != "class"):
            self.effects += 1  # Python calls it for the names it serves, which are followed here
            self._module_getattr(d, path, reach)  # a module's (PEP 562), or one a factory makes for modules
            if d.kind != "variable":
                return
        elif is_dunder(d.name) and d.kind in ("function", "method"):
            if owner is not None and owner.kind == "class":
                # Construction runs changed code only if the dunder does (an ``__init__`` that stores a new
                # instance of a class whose instances changed makes one as before).
                self.enqueue(owner, reach.then(owner.qualified_name, "high",
                                               runs=d.name in _CONSTRUCTION and reach.runs))
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
        # Uses whose receiver is of one certain class (an attribute ``self.x.m()``, ``impact_attrs``; a local
        # ``x = K()`` then ``x.m()``, ``impact_locals``) are the same use of ``m`` only for that class and its
        # bases: those another method so named skipped are looked at again for this one, not left out with the
        # rest of a walked name.
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
            if member and owner is None and self.definition_receiver(file_id, line, col):
                continue
            typed = self._typed((file_id, line, col), receiver, d, owner) if member and (
                owner is None or owner.kind == "class") else None
            if typed == "out":
                if method:
                    typed_out.append((file_id, line, col, receiver))
                continue
            self._use((file_id, line, col), d, reach, "high" if typed == "exact" else "low", receiver=receiver)
        for file_id, line, col, receiver in retry:
            typed = self._typed((file_id, line, col), receiver, d, owner)
            if typed == "out":
                typed_out.append((file_id, line, col, receiver))
            else:
                self._use((file_id, line, col), d, reach, "high" if typed == "exact" else "low", receiver=receiver)
        for file_id, line, col, pattern in self.facts.dynamic_sites(self.conn, d.name):
            if pattern == "hasattr" and self._only_looked_up(d):
                continue
            self._use((int(file_id), int(line), int(col)), d, reach, "low", call=True)
        if method and owner is not None:
            self._computed_self(d, owner, reach)

    def _registered(self, d: Def, reach: Reach) -> None:
        """``@registry.register`` / ``@app.route("/")`` / ``@convert.register`` (singledispatch) above ``d``: a method
        of a repository object receives ``d`` and may keep it (packaging's ``@canonicalize_version.register def
        _``, never named again, was reached by nothing while 2,802 tests failed). The object then holds ``d``:
        whoever uses it may run it. A plain decorator of the repository (``@register``) may keep it in a module
        variable its body names (``REGISTRY[f.__name__] = f``): those are reached; what it returns is followed
        through the name's own uses. One rooted at another distribution (``@pytest.mark...``,
        ``@functools.wraps``) keeps nothing of the repository's."""
        top, text = self.decorator_block(d)
        if not text:
            return
        lines = self.read_lines(self.path_of.get(d.file_id, ""))
        for line in range(top, d.start):
            body = lines[line - 1].lstrip() if 0 < line <= len(lines) else ""
            if not body.startswith("@"):
                continue
            col = len(lines[line - 1]) - len(body) + 1
            for (target,) in self.rows("SELECT target_uid FROM st_ref WHERE file_id = ? AND start_line = ? AND "
                                       "start_col = ? AND target_uid IS NOT NULL", (d.file_id, line, col)):
                holder = self.get(str(target))
                if holder is None or holder.uid == d.uid:
                    continue
                if _REGISTERING.match(body):
                    self.enqueue(holder, reach.then(f"{holder.qualified_name} (registers {d.name})", "high"))
                elif holder.kind == "function":
                    for kept in self._module_variables_in(holder):
                        self._readers(kept, holder, reach.then(f"{kept.qualified_name} (kept by @{holder.name})",
                                                               "low"))

    def _readers(self, kept: Def, deco: Def, reach: Reach) -> None:
        """The uses of ``kept`` (which now holds a changed function) outside ``deco``, the decorator storing into it:
        the decorator's own store runs nothing it keeps (it runs at import time for every function it decorates)."""
        for file_id, line, col in self.rows(
                "SELECT file_id, start_line, start_col FROM st_ref WHERE target_uid = ? "
                "AND role NOT IN ('DEFINITION', 'IMPORT', 'EXPORT')", (kept.uid,)):
            if int(file_id) == deco.file_id and deco.start <= int(line) <= deco.end:
                continue
            self._use((int(file_id), int(line), int(col)), kept, reach, "low")

    def _module_variables_in(self, deco: Def) -> list[Def]:
        """Module-level variables a plain decorator of the repository stores its argument into
        (``REGISTRY[f.__name__] = f``, ``HOOKS.append(f)``): where it keeps what it decorates. Variables it only
        reads (attrs' decorators read their config globals) keep nothing."""
        lines = self.read_lines(self.path_of.get(deco.file_id, ""))
        header = _PARAMETER.match(lines[deco.start - 1].lstrip()) if 0 < deco.start <= len(lines) else None
        if header is None:
            return []
        param = re.compile(rf"\b{re.escape(header.group(1))}\b")
        found: dict[str, Def] = {}
        for target, line, col in self.rows(
                "SELECT target_uid, start_line, start_col FROM st_ref WHERE file_id = ? AND start_line BETWEEN ? "
                "AND ? AND target_uid IS NOT NULL AND role = 'REFERENCE'", (deco.file_id, deco.start + 1, deco.end)):
            text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
            store = _STORE_INTO.match(text, int(col))
            kept = self.get(str(target)) if store is not None and param.search(text, store.end()) else None
            if kept is not None and kept.kind == "variable" and kept.parent is None:
                found[kept.uid] = kept
        return [found[uid] for uid in sorted(found)]

    def _computed_self(self, d: Def, owner: Def, reach: Reach) -> None:
        """``getattr(self, <computed>)`` in a method of ``owner``'s hierarchy may be ``d`` (``impact_computed``)."""
        for file_id, line, col, prefix in self._computed.sites():
            if not d.name.startswith(prefix):
                continue
            user = self.innermost(file_id, line)
            holder = self.get(user.parent) if user is not None and user.parent else None
            if holder is None or holder.kind != "class" or not self._related(holder, owner):
                continue
            self._use((file_id, line, col), d, reach, "low", call=True)

    def _related(self, site_class: Def, owner: Def) -> bool:
        """Whether ``self`` in a method of ``site_class`` may hold ``owner``'s members: the same class, one of
        its bases, or one deriving from it (unknown bases: maybe)."""
        if site_class.uid == owner.uid:
            return True
        above, below = self._bases(site_class), self._bases(owner)
        return above is None or below is None or owner.uid in above or site_class.uid in below

    def _typed(self, site: tuple[int, int, int], receiver: str | None, d: Def,
               owner: Def | None) -> Literal["out", "exact"] | None:
        """For a member use at ``site`` of ``d``'s name whose receiver is of one certain class (an attribute
        ``self.x``, ``expr.``; a local, ``obj.``): ``out`` when it cannot be ``d``, ``exact`` when it can only be
        ``d``; None otherwise."""
        if receiver == "expr.":
            return self._attributes.classify(site, d, owner)
        return self._locals.classify(site, d, owner) if receiver == "obj." else None

    # -- Python's name rules (``impact_names.py``; the Go walk switches them off) ----------------------
    def bare_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        if owner is not None and owner.kind in ("function", "method") and file_id != d.file_id and not (
                self._named_outside(d, owner)):
            return False  # a function's local is named bare only inside it (a ``global`` one is the module's)
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
                                     or literal_receiver(self.facts, self.conn, lines, (file_id, line, col),
                                                         at_import=self._runs_at_import(file_id, line, col, text),
                                                         stored_elsewhere=self._attributes.rebindable_global)
                                     or ((path in self.tests or is_conftest(path)) and pytest_receiver(
                                         self.facts, self.conn, text, (file_id, line, col), self.read_lines)))

    def definition_receiver(self, file_id: int, line: int, col: int) -> bool:
        """Whether ``x.name`` at the site hangs off a name bound to a class or function (``from werkzeug.wrappers
        import Request`` then ``@Request.application``): an attribute of that object, never another module's
        module-level definition (a class attribute storing one is a definition of its own, reached by its uses)."""
        lines = self.read_lines(self.path_of.get(file_id, ""))
        found = dotted_root(lines[line - 1], col) if 0 < line <= len(lines) else None
        if found is None or found[1] != 1:
            return False
        row = self.conn.execute(
            "SELECT d.kind FROM st_ref r JOIN st_def d ON d.def_uid = r.target_uid WHERE r.file_id = ? "
            "AND r.start_line = ? AND r.start_col = ?", (file_id, line, found[0])).fetchone()
        return row is not None and row[0] in ("class", "function")

    def _named_outside(self, d: Def, owner: Def) -> bool:
        known = self._outside.get(d.uid)
        if known is None:
            lines = self.read_lines(self.path_of.get(owner.file_id, ""))
            name = re.escape(d.name)
            stored = re.compile(rf"\.\s*{name}\s*=(?!=)|setattr\(|^\s*(?:global|nonlocal)\b.*\b{name}\b")
            # Unreadable: the safe answer.
            known = self._outside[d.uid] = not lines or any(
                stored.search(text) for text in lines[max(0, owner.start - 1):owner.end])
        return known

    def _runs_at_import(self, file_id: int, line: int, col: int, text: str) -> bool:
        """Whether the code at the site runs while its module is imported: outside function bodies, and not in a
        lambda (which runs when called, maybe after another module rebound a global)."""
        return "lambda" not in text[:col] and self._import_time(self.innermost(file_id, line), line)

    def member_visible(self, file_id: int, d: Def, owner: Def | None) -> bool:
        if owner is not None and owner.kind in ("function", "method"):
            # A function's local (werkzeug's ``Request.application`` makes a closure ``application``) is no
            # attribute of anything unless the function stores it as one (``wrapper.inner = inner``, ``setattr``,
            # ``global inner``: the module's).
            return self._named_outside(d, owner)
        path = self.path_of.get(file_id, "")
        in_tests = path in self.tests or is_conftest(path)
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
