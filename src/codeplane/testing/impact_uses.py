"""What a use of a reached definition reaches, in a symbol-level impact walk (``impact_symbols.py``).

Inside a function body the function is reached. Code that runs at import time (module level, class bodies,
variable definitions, decorators, default values) that *calls* it changes the import of the whole module: the
module-level selection of that file (a test file's own module-level code selects the file). An import-time use
that only names it reaches what it is stored in. The use's line says more (``impact_text.py``):

- a class spreads through its uses, subclass headers included (a class header lies inside the subclass's span);
  a class whose construction is unchanged (only its instances behave differently) does not make a function
  that only returns a new instance (``return K(...)``), or stores one into a name or attribute it reads nowhere
  else and then calls nothing (``self.type = K()`` closing an ``__init__``), run changed code; nor does returning
  an object untouched (``return BOOL``); an
  annotation, ``isinstance`` or ``except`` names a class and runs none of it;
- reading a property (``obj.prop``) calls its getter; ``@prop.setter`` does not;
- at import time, ``K.attr = v`` and ``del K.attr`` run nothing of ``K``; ``Holder.attr = K`` reaches ``Holder``'s
  member ``attr`` (else ``Holder``), not the module's import; a decorator whose call runs nothing changed (it only
  defines the closure it returns) reaches the function it decorates, not the one defining that function;
- a lambda assigned at import time does not run then; a method read and stored under its own name
  (``self.m = x.m``) runs nothing there; a keyword argument's name is no use; stubs (``.pyi``) never run.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping

from codeplane.testing.impact_code import ReadLines
from codeplane.testing.impact_reach import Confidence, Def, Reach
from codeplane.testing.impact_text import (
    attribute_store_at,
    attribute_target,
    callee_at,
    calls_at,
    grows_held_container,
    in_assigned_lambda,
    in_module_del,
    main_guard_spans,
    member_at,
    passive_at,
    restored_at,
    returns_call,
    returns_name,
    runs_nothing_after,
    signature_annotations,
    stored_call,
    top_of_body,
)
from codeplane.testing.impact_walkfacts import WalkFacts
from codeplane.testing.impact_walkstate import WalkState

#: Dunders that plain attribute access on an instance runs.
_ATTRIBUTE_DUNDERS = frozenset({"__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__get__",
                                "__set__", "__delete__"})


class UseRules(WalkState):
    """The walk's rules for one use site of a reached definition (mixed into ``SymbolWalk``)."""

    def __init__(self, conn: sqlite3.Connection, id_of: Mapping[str, int], path_of: Mapping[int, str],
                 tests: Iterable[str], read_lines: ReadLines, *, facts: WalkFacts | None = None) -> None:
        super().__init__(conn, id_of, path_of, tests, read_lines, facts=facts)
        self._property_memo: dict[str, bool] = {}
        self._guards: dict[str, list[tuple[int, int]]] = {}

    def _only_looked_up(self, d: Def) -> bool:
        """Whether looking ``d`` up as an attribute (``hasattr(x, "name")``, ``x.name`` not called) runs none of
        it: a plain function, no decorator at all (a property's getter, any descriptor a decorator makes, runs
        on a lookup); a body change leaves ``hasattr``'s answer the same."""
        return d.kind in ("function", "method") and bool(self.read_lines(self.path_of.get(d.file_id, ""))) and (
            not self.decorator_block(d)[1])

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
        if self._script_only(path, line, user):
            return  # under ``if __name__ == "__main__":``: runs as a script, never when a test imports the module
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
        if at_import and not called and used.kind in ("class", "function") and self._runs_none_of(
                path, line, col, user):
            return  # ``K.attr = v``, ``del K.attr``: stores into or deletes from the object, runs none of it
        if called and user is not None and not reach.runs and self._decorates_nested(
                (file_id, line), used, user, reach, confidence=confidence):
            return
        if at_import and reach.runs and called:
            self._module_level(path, line, reach.then(f"{path}:{line} (calls {used.name} at import time)",
                                                      confidence), f"calls {used.qualified_name} at import time")
            return
        if user is None:
            if used.kind in ("function", "method") and not called and self._grows_held(path, line, col):
                return  # ``run_command.params.insert(0, option)``: values go into the function's object, none runs
            stored = [d for d in self._named_on_line(file_id, line) if d.uid != used.uid]
            held = self._attribute_of(file_id, line, col) if not stored and path not in self.tests else None
            if held is not None:  # ``Environment.template_class = Template``: what holds it now, not the import
                self.enqueue(held, reach.then(f"{held.qualified_name} (stores {used.name})", confidence))
                return
            if not stored or path in self.tests:
                self._module_level(path, line, reach.then(f"{path}:{line} (module level)", confidence),
                                   f"module-level code uses {used.qualified_name}")
            for target in stored:
                self.enqueue(target, reach.then(f"{target.qualified_name} (stores {used.name})", confidence))
            return
        # A base class: the subclass's construction is the base's. A function that only makes and returns its
        # own closure (a decorator factory) runs nothing changed itself; whoever calls the closure does.
        closure = used.parent == user.uid and used.kind in ("function", "method") and not called
        # What a function does with something whose construction is unchanged (a class whose instances behave
        # differently, a factory of such instances) decides whether calling the function runs changed code:
        # - made and returned at once (``return _InstanceOfValidator(type)``: attrs' validator factories), or made
        #   and stored into a name or attribute the function reads nowhere else, calling nothing after it
        #   (``self.types = [convert_type(t) for t in types]`` closing ``Tuple.__init__``): it never touches the
        #   instance;
        # - a module-level object named, not called, as the whole of a ``return`` (``return BOOL``): it hands it back.
        # Whoever uses what it returns or stored is reached through its own uses of the function or the class;
        # an import-time call of the function imports as before. Not when the instance's attribute access itself
        # changed (``__getattr__``, a name a module ``__getattr__`` serves: using it runs the change) or another
        # library's base class may call the change while constructing.
        hooked = any(step.split(" ", 1)[0].rsplit(".", 1)[-1] in _ATTRIBUTE_DUNDERS or "external class" in step
                     or "(served by " in step for step in reach.chain[:2])
        handed_back = not reach.runs and called and not hooked and (self._returns_new(path, line, col) or (
            user.kind in ("function", "method") and not at_import and self._stored_unread(path, line, col, user)))
        # Only a module-level object: reading a class attribute through an instance may run a descriptor.
        returned = not called and not hooked and used.parent is None and self._returns_name(path, line, col)
        self.enqueue(user, reach.then(user.qualified_name if path not in self.tests else
                                      f"{path}::{user.lexical_path.replace('.', '::')}", confidence,
                                      runs=(reach.runs or not header) and not (closure or handed_back or returned)))

    def _runs_none_of(self, path: str, line: int, col: int, user: Def | None) -> bool:
        text = self._line(path, line)
        return text is not None and (attribute_store_at(text, col) or (
            user is None and in_module_del(self.read_lines(path), line - 1)))

    def _attribute_of(self, file_id: int, line: int, col: int) -> Def | None:
        """Where ``Holder.attr = <value naming the use at col>`` (module level) stores it: ``Holder``'s member
        ``attr`` when the class declares one (whose readers the walk follows), else the class ``Holder`` itself
        (reached as what changed, construction included); None when ``Holder`` resolves to no class."""
        text = self._line(self.path_of.get(file_id, ""), line)
        target = attribute_target(text, col) if text is not None else None
        if target is None:
            return None
        row = self.conn.execute("SELECT target_uid FROM st_ref WHERE file_id = ? AND start_line = ? AND start_col = ? "
                                "AND target_uid IS NOT NULL", (file_id, line, target[0])).fetchone()
        holder = self.get(str(row[0])) if row is not None else None
        if holder is None or holder.kind != "class":
            return None
        member = next((d for d in self.defs_of(holder.file_id) if d.parent == holder.uid and d.name == target[1]),
                      None)
        return member or holder

    def _decorates_nested(self, site: tuple[int, int], used: Def, user: Def, reach: Reach, *,
                          confidence: Confidence) -> bool:
        """``used`` decorates a function ``user`` defines (jinja2's ``@optimizeconst`` on ``_make_unop``'s inner
        ``visitor``) where calling ``used`` runs nothing changed, only what it returns does (a closure it
        defines): that is the decorated name's now, reached in ``user``'s stead (defining it runs nothing; whoever
        calls it does, a use of its own). True when it did so."""
        file_id, line = site
        nested = next((d for d in self.defs_of(file_id) if d.parent == user.uid and d.start > line
                       and d.kind in ("function", "method")), None)
        if nested is None or not self.decorator_block(nested)[0] <= line < nested.start:
            return False
        self.enqueue(nested, reach.then(f"{nested.qualified_name} (decorated by {used.name})", confidence))
        return True

    def _script_only(self, path: str, line: int, user: Def | None) -> bool:
        if user is not None and user.kind in ("function", "method", "class"):
            return False  # a definition's body runs when it is called, wherever the definition stands
        spans = self._guards.get(path)
        if spans is None:
            spans = self._guards[path] = main_guard_spans(self.read_lines(path)) if path.endswith(".py") else []
        return any(first <= line <= last for first, last in spans)

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

    def _returns_name(self, path: str, line: int, col: int) -> bool:
        text = self._line(path, line)
        return text is not None and returns_name(text, col)

    def _stored_unread(self, path: str, line: int, col: int, user: Def) -> bool:
        """Whether the call at the site is stored (``stored_call``) into a target that ``user``'s text names
        nowhere else (a nested function, a ``global``: any other mention counts as a read), by a statement at the
        top of its body (no loop around it, where code above runs after it) after which it calls nothing (a method
        of ``self`` could read the attribute and call what it holds)."""
        lines = self.read_lines(path)
        stored = stored_call(lines, line - 1, col) if 0 < line <= len(lines) else None
        if stored is None:
            return False
        target, last = stored
        body = lines[user.start - 1:user.end]
        mention = re.compile(rf"(?<![\w.]){re.escape(target)}\b")
        return (sum(len(mention.findall(text)) for text in body) == 1
                and top_of_body(lines, user.start - 1, user.end, line - 1)
                and runs_nothing_after(lines, last, user.end))

    def _grows_held(self, path: str, line: int, col: int) -> bool:
        text = self._line(path, line)
        return text is not None and grows_held_container(text, col)

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
