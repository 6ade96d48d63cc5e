"""Class attributes holding a plain descriptor: ``x.name`` on an object of another class never runs it (issue 22).

packaging's ``Metadata`` declares its fields as ``name: _Validator[str] = _Validator()``, a descriptor whose
``__get__`` runs the field's ``_process_*`` converter. A test's ``req = Requirement(s)`` then ``req.name`` was
matched by name to ``Metadata.name`` and selected 5,184 parametrized cases for a change in the license converter:
``req`` is certainly a ``Requirement`` (``impact_locals``), but ``Requirement.__init__`` stores ``self.name``,
and a stored attribute could hold anything (``impact_attrs``: ``self.write = out.write`` makes ``k.write`` another
object's method), so the receiver's class did not count.

For such a class attribute it does. Python runs a descriptor only when the lookup finds it in the accessed
object's class or a base (``type(x).__mro__``); a value in the instance's own ``__dict__`` is handed back as it
is, never through ``__get__``. So where ``x`` is certainly a ``K`` whose classes do not hold the attribute,
``x.name`` reaches ``Metadata.name`` only through what an instance store put there, which is the descriptor
object at most (``self.name = vars(Metadata)["name"]``) and runs nothing of it when
(``plain_descriptor``) its class ``C`` (the value is certainly ``C(...)``) defines no dunder but the descriptor
protocol's and construction's (no ``__call__``, ``__eq__``, ``__repr__``...: nothing Python runs on the object
itself); its other methods are uses by name of their own. What would put the descriptor on ``K``'s classes
still counts (``instance_stores_only``): every store of the attribute must be ``self.name = ...`` in a method
(its ``self`` an instance, ``AttributeTypes._instance_class``) or a literal (``obj.name = "x"``),
and a ``setattr``-like call may name it only on another distribution's object (``sys.implementation``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from codeplane.testing.impact_names import external_receiver
from codeplane.testing.impact_reach import Def
from codeplane.testing.impact_walkstate import is_dunder

if TYPE_CHECKING:
    from codeplane.testing.impact_attrs import AttributeTypes

#: Dunders an instance of the descriptor's class may define: the protocol's (run only through a class's lookup)
#: and construction's (run when the class body makes the value, an import-time call the walk follows).
_PROTOCOL = frozenset({"__get__", "__set__", "__delete__", "__set_name__", "__init__", "__init_subclass__",
                       "__class_getitem__"})
#: ``self.`` right before a stored attribute's column.
_SELF_STORE = re.compile(r"\bself\s*\.\s*$")
#: Calls that may set an attribute named by a string (the tokens ``impact_attrs._setter_strings`` reads).
_SETTERS = ("SELECT DISTINCT file_id, start_line, start_col FROM st_ref WHERE ((token_text IN ('__setattr__', "
            "'object', 'setitem') AND is_member = 1) OR token_text IN ('setattr', 'delattr', 'patch')) "
            "AND role = 'REFERENCE'")
#: Lines a call's arguments are looked at (``impact_attrs._SETTER_LINES``).
_SETTER_LINES = 4
#: ``setattr(target, "attr"``: the target a plain dotted name, the attribute a string, on the call's own line.
_SETTER_CALL = re.compile(r"""(?:setattr|delattr|__setattr__|object|setitem)\s*\(\s*(?P<target>[A-Za-z_][\w.]*)\s*,"""
                          r"""\s*(["'])(?P<attr>\w+)\2""")
#: ``name = <literal>`` after a stored attribute's column: a string, number, ``None``, ``True``, ``False``.
_LITERAL_STORE = re.compile(r"""\w+\s*(?::[^=]*)?=\s*(?:[rbuRBU]?(["'])[^"']*\1|-?\d[\w.]*|None|True|False)\s*"""
                            r"(?:#.*)?$")


def plain_descriptor(types: AttributeTypes, used: Def) -> bool:
    """Whether ``used`` is a class attribute whose value is certainly an instance of a repository class ``C``
    defining ``__get__`` and no dunder but ``_PROTOCOL``'s (on ``C`` or a base). Once per epoch."""
    memo = types.facts.plain_descriptors
    if used.uid not in memo:
        memo[used.uid] = _plain_descriptor(types, used)
    return memo[used.uid]


def _plain_descriptor(types: AttributeTypes, used: Def) -> bool:
    from codeplane.testing.impact_attrs import assigned_call  # impact_attrs imports this module's callers

    code = types.code
    owner = code.get(used.parent)
    if used.kind != "variable" or owner is None or owner.kind != "class":
        return False
    lines = code.read_lines(code.path_of.get(used.file_id, ""))
    text = lines[used.start - 1] if 0 < used.start <= len(lines) else ""
    col = len(text) - len(text.lstrip())
    callee = assigned_call(lines, used.start, col, used.name, local=True) if text[col:].startswith(used.name) else None
    value = types.constructed_class(used.file_id, callee) if callee is not None else None
    classes = types.mro(value) if value is not None else None
    if classes is None:
        return False
    members = code.rows(f"SELECT name FROM st_def WHERE parent_uid IN ({','.join('?' * len(classes))})",
                        tuple(sorted(classes)))
    dunders = {str(name) for (name,) in members if is_dunder(str(name))}
    return "__get__" in dunders and dunders <= _PROTOCOL


def instance_stores_only(types: AttributeTypes, name: str) -> bool:
    """Whether every store of attribute ``name`` is ``self.name = ...`` in a method (on an instance) or of a
    literal, and every ``setattr``-like call naming it sets another distribution's object: none can put a
    descriptor on a class of the repository. Once per epoch."""
    memo = types.facts.instance_stores
    if name not in memo:
        memo[name] = _setters_outside(types, name) and all(
            _instance_or_literal(types, int(file_id), int(line), int(col)) for file_id, line, col in types.code.rows(
                "SELECT file_id, start_line, start_col FROM st_ref WHERE token_text = ? AND role = 'DEFINITION' "
                "AND is_member = 1", (name,)))
    return memo[name]


def _setters_outside(types: AttributeTypes, name: str) -> bool:
    """Whether every ``setattr``-like call spelling ``name`` sets it on another distribution's object
    (``monkeypatch.setattr(sys.implementation, "name", ...)``: a plain dotted name rooted at its import, as
    ``impact_names.external_receiver`` decides for member accesses), never on a class of the repository."""
    code = types.code
    if any(pattern not in ("getattr", "hasattr", "setattr", "delattr")
           for *_, pattern in types.facts.dynamic_sites(code.conn, name)):
        return False  # ``vars(x)["name"] = ...`` and the like: on anything
    quoted = re.compile(rf"""["'](?:[\w.]*\.)?{re.escape(name)}["']""")
    for file_id, line, col in code.rows(_SETTERS, ()):
        lines = code.read_lines(code.path_of.get(int(file_id), ""))
        if not lines:
            return False
        text = lines[int(line) - 1] if 0 < int(line) <= len(lines) else ""
        window = "\n".join([text[int(col):], *lines[int(line):int(line) + _SETTER_LINES - 1]])
        if not quoted.search(window):
            continue
        call = _SETTER_CALL.match(text, int(col))
        if call is None or call["attr"] != name or "." not in call["target"]:
            return False
        # ``sys.implementation`` read as the member access ``sys.implementation.x``: the same root and column.
        probe = text[:call.end("target")] + ".x"
        if not external_receiver(types.facts, code.conn, probe, (int(file_id), int(line), call.end("target") + 1),
                                 foreign=False):
            return False
    return True


def _instance_or_literal(types: AttributeTypes, file_id: int, line: int, col: int) -> bool:
    text = types.code._line(types.code.path_of.get(file_id, ""), line)
    if text is None:
        return False
    if _LITERAL_STORE.match(text, col):
        return True
    found = _SELF_STORE.search(text, 0, col)
    return found is not None and not text[:found.start()].rstrip().endswith(".") and (
        types._instance_class(file_id, line, found.start()) is not None)
