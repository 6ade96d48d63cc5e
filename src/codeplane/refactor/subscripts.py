"""C/C++ receivers reached through subscripts and wrappers, for ``receivers.py``.

- ``files[i]->m`` (LevelDB's ``std::vector<FileMetaData*>& files``), ``(*flist_)[i]->m`` through a pointer to the
  container, ``files_[level][i]->m`` through a C array of containers: an element of a standard container of a class
  is of that class when the subscripts are the declaration's array dimensions and one more; fewer reach the
  container itself, whose members (``files_[level].size()``) are the standard library's.
- ``keys[i].size()`` on ``const Slice* keys`` (or ``Slice keys[4]``): subscripts through every ``*`` and ``[N]`` the
  declaration writes reach a ``Slice`` (one fewer before ``->``); on ``Slice s``, ``s[i]`` is ``Slice``'s
  ``operator[]``, never a ``Slice``.
- ``p.reset()`` on a smart pointer, ``i.base()`` on an iterator: the wrapper's own member (``p->m`` reaches the class).

What a name is declared as comes from ``receivers.Receivers._bound`` (passed in): a class (evidence ``declared``), a
standard container of one (``contained``) or a smart pointer or iterator over one (``iterated``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.spans import SourceText

#: A name (or a pointer to it, ``(*flist_)``), then subscripts, then the member operator.
_SUBSCRIPTED = re.compile(r"(?:\(\s*\*\s*)?\b([A-Za-z_]\w*)\s*\)?\s*((?:\[[^\[\]]*\]\s*)+)(?:->|\.)\s*$")
_SUBSCRIPT = re.compile(r"\[[^\[\]]*\]")
_DIMENSIONS = re.compile(r"(?:\s*\[[^\[\]]*\])*")


class Declared(Protocol):
    """What a binding says of a name (``receivers.ReceiverType``)."""

    @property
    def cls(self) -> Def: ...

    @property
    def evidence(self) -> str: ...


@dataclass(frozen=True)
class Subscripts:
    reader: FactReader
    refs: Callable[[str], list[Ref]]
    text: Callable[[str], SourceText | None]
    bound: Callable[[SourceText, Ref], Declared | None]

    def element(self, src: SourceText, ref: Ref) -> Def | None:
        """The class ``ref``'s subscripted receiver is an element of, if the subscripts reach one."""
        found, subscripts, (pointers, dimensions) = self._subscripts(src, ref)
        if found is None:
            return None
        if found.evidence == "contained":
            return found.cls if subscripts == 1 + dimensions else None
        arrow = src.line_text(ref.line)[:ref.column].rstrip().endswith("->")
        needed = pointers + dimensions - (1 if arrow else 0)
        return found.cls if 1 <= subscripts == needed else None

    def container(self, ref: Ref) -> bool:
        """``files_[level].size()`` on ``std::vector<FileMetaData*> files_[N]``: the subscripts reach a standard
        container, whose own member this is (not the repository's)."""
        src = self.text(ref.path)
        found, subscripts, (_, dimensions) = self._subscripts(src, ref) if src is not None else (None, 0, (0, 0))
        return found is not None and found.evidence == "contained" and subscripts <= dimensions

    def wrapper_member(self, ref: Ref, receiver: Ref | None) -> bool:
        """``p.reset()``, ``i.base()``: a member of the smart pointer or iterator itself, the standard library's."""
        src = self.text(ref.path)
        if src is None or receiver is None or receiver.is_member:
            return False
        found = self.bound(src, receiver)
        return found is not None and found.evidence == "iterated" and src.line_text(ref.line)[
            receiver.end_column:ref.column].strip() == "."

    def _subscripts(self, src: SourceText, ref: Ref) -> tuple[Declared | None, int, tuple[int, int]]:
        """(what the subscripted name is declared as — a class or a standard container of one —, the subscripts
        written, the ``*`` before the name and the array dimensions after it in its declaration)."""
        match = _SUBSCRIPTED.search(src.line_text(ref.line)[:ref.column])
        if match is None:
            return None, 0, (0, 0)
        name = next((r for r in self.refs(ref.path) if r.line == ref.line and r.column == match.start(1)
                     and not r.is_member), None)
        found = self.bound(src, name) if name is not None else None
        if found is None or found.evidence not in ("contained", "declared") or name is None:
            return None, 0, (0, 0)
        return found, len(_SUBSCRIPT.findall(match.group(2))), self._declarator(name)

    def _declarator(self, name: Ref) -> tuple[int, int]:
        """The ``*`` right before the name and the array dimensions right after it in the declaration of ``name``
        (``const Slice* keys``: (1, 0); ``std::vector<FileMetaData*> files_[kNumLevels]``: (0, 1))."""
        if name.target_uid is not None:
            owner = self.reader.get_def(name.target_uid)
            path, line, column = (owner.path, owner.name_line, owner.name_column + len(owner.name)) \
                if owner is not None else (name.path, 0, 0)
        else:
            site = next((r for r in self.refs(name.path) if name.bind_id is not None and r.bind_id == name.bind_id
                         and r.role == "DEFINITION" and not r.is_member), None)
            path, line, column = (site.path, site.line, site.end_column) if site is not None else (name.path, 0, 0)
        src = self.text(path)
        if src is None or not line:
            return 0, 0
        text = src.line_text(line)
        dimensions = _DIMENSIONS.match(text[column:])
        before = text[:column - len(name.token)].rstrip()
        stars = len(before) - len(before.rstrip("*"))
        return stars, dimensions.group(0).count("[") if dimensions is not None else 0
