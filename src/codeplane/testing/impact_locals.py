"""Locals of one certain class: ``x.m()`` calls ``K.m`` when every assignment of ``x`` is ``x = K(...)``.

The symbol-level impact walk (``impact_symbols.py``) follows ``x.m()`` on a receiver it cannot type to every
method named ``m``: a test's ``runner = CliRunner()`` then ``runner.invoke(...)`` reached every ``invoke`` of
the package. A function's local variable is often plain from the source: the name is bound in a function scope
(no other code can rebind it unless the file says ``global``/``nonlocal`` for it), and every assignment of it
in that scope is ``x = K(...)`` (``x: T = mod.K(...)``) of one repository class ``K`` whose construction the
source shows whole (``impact_attrs.AttributeTypes.constructed_class``). Then ``x`` is exactly a ``K`` (or
unbound), and ``x.m()`` is ``m`` as ``K`` or a repository base of ``K`` defines it, never a method of an
unrelated class; the remaining rules are the instance attributes' (``AttributeTypes.excludes_instance``: no
code stores an attribute ``m`` on some object, nor ``__class__``, nor writes attributes by computed names in
``K``'s files).

Everything not certain leaves the local untyped, so the use counts as before: a parameter, a ``for``/``with``
target, a tuple target, an augmented assignment, an assignment of anything but such a call, two classes, a
module-level variable (another module may rebind it).
"""

from __future__ import annotations

import re
from typing import Literal

from codeplane.index.structural.facts import REFERENCE
from codeplane.index.structural.schema import ROLE_CODE
from codeplane.testing.impact_attrs import AttributeTypes, assigned_call
from codeplane.testing.impact_code import PythonCode
from codeplane.testing.impact_descriptors import instance_stores_only, plain_descriptor
from codeplane.testing.impact_names import rebound_names, receiver_start
from codeplane.testing.impact_reach import Def

#: An assignment to a plain name of a call of a capitalized dotted name (``w = mod.Writer(``): the cheap first look,
#: before the index and ``ast`` are asked. Only a look: leaving out a class named otherwise only leaves its
#: locals untyped, matched by name as before.
_CONSTRUCTION = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*(?:[A-Za-z_]\w*\s*\.\s*)*[A-Z]\w*\s*\(")


class LocalTypes:
    """Answers for one walk; what a file's locals are assigned is carried in ``WalkFacts`` while the file is
    unchanged, and which class those calls construct is kept per index epoch."""

    def __init__(self, code: PythonCode, attributes: AttributeTypes) -> None:
        self.code = code
        self.facts = code.facts
        self.attributes = attributes

    def classify(self, site: tuple[int, int, int], used: Def, owner: Def | None) -> Literal["out", "exact"] | None:
        """For the member use at ``site`` (``x.<name>`` there, ``x`` a plain name) of ``used``'s name: ``out`` when
        it certainly cannot denote ``used`` (a method of class ``owner``, or a module-level function when
        ``owner`` is None), ``exact`` when it can only denote ``used``, None when ``x``'s class is not certain."""
        k = self._receiver_class(site)
        if k is None:
            return None
        # A class attribute holding a plain descriptor runs only through its own classes' lookup: what instances
        # store under its name cannot be it (``impact_descriptors``).
        ignored = plain_descriptor(self.attributes, used) and instance_stores_only(self.attributes, used.name)
        if self.attributes.excludes_instance(k, owner, used.name, stores_ignored=ignored):
            return "out"
        return "exact" if owner is not None and self.attributes.denotes(k, used) else None

    def _receiver_class(self, site: tuple[int, int, int]) -> Def | None:
        file_id, line, col = site
        lines = self.code.read_lines(self.code.path_of.get(file_id, ""))
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        start = receiver_start(text, col)
        if start is None:
            return None
        return self._local_class(file_id, line, start)

    def _local_class(self, file_id: int, line: int, start: int) -> Def | None:
        facts = self.facts
        constructions = facts.local_constructions.get(file_id)
        if constructions is None:
            constructions = facts.local_constructions[file_id] = self._constructions(file_id)
        callees = constructions.get((line, start))
        if not callees:
            return None
        key = (file_id, callees)
        if key not in facts.local_classes:
            classes = {k.uid if (k := self.attributes.constructed_class(file_id, callee)) is not None else None
                       for callee in callees}
            facts.local_classes[key] = classes.pop() if len(classes) == 1 else None
        return self.code.get(facts.local_classes[key])

    def _constructions(self, file_id: int) -> dict[tuple[int, int], tuple[tuple[int, int], ...]]:
        """(line, column) of each use of a function's local in ``file_id`` → the (line, column) of the callee of
        each of its assignments, when every one is ``x = Callee(...)`` (uses of other locals are left out). From
        the file's own text and facts: one query per file, carried to the next epoch while it is unchanged."""
        lines = self.code.read_lines(self.code.path_of.get(file_id, ""))
        named = frozenset(m.group(1) for t in lines if (m := _CONSTRUCTION.match(t)) is not None)
        wanted = sorted(named - rebound_names(self.facts, file_id, lines))
        if not wanted:
            return {}
        uses: dict[int, list[tuple[int, int]]] = {}
        stores: dict[int, list[tuple[int, int]]] = {}
        names: dict[int, str] = {}
        for line, col, bind, role, name in self.code.conn.execute(
                "SELECT r.start_line, r.start_col, r.bind_id, r.role_code, b.name FROM st_bind b JOIN st_scope s "
                "ON s.scope_id = b.scope_id JOIN st_ref r ON r.bind_id = b.bind_id AND r.file_id = b.file_id "
                f"WHERE b.file_id = ? AND b.name IN ({','.join('?' * len(wanted))}) "
                "AND b.reason_code = 'LOCAL_ASSIGN' AND s.kind = 'function'", (file_id, *wanted)):
            names[int(bind)] = str(name)
            # Whatever binds the name and is not a plain reading of it (an import, a definition) counts as a store.
            (uses if role == ROLE_CODE[REFERENCE] else stores).setdefault(int(bind), []).append((int(line), int(col)))
        found: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}
        for bind, sites in stores.items():
            callees = []
            for line, col in sites:
                looks = _CONSTRUCTION.match(lines[line - 1]) if 0 < line <= len(lines) else None
                callee = assigned_call(lines, line, col, names[bind], local=True) if (
                    looks is not None and looks.start(1) == col) else None
                if callee is None:
                    break
                callees.append(callee)
            else:
                for use in uses.get(bind, ()):
                    found[use] = tuple(sorted(set(callees)))
        return found
