"""Whose name a dotted doc mention is, by its qualifier (Python): ``attrs.evolve`` is not ``Attribute.evolve``.

A mention in a comment, docstring, doctest or documentation file is weighed by the name alone
(:mod:`docsweep`), but the path written before it can name an owner: a module (``attrs.evolve``, the module's
function) or a class (``Context.invoke``). When that owner is not the renamed definition's, the mention is
another symbol's and stays a ``low`` doc edit, which ``apply_docs`` leaves alone — as the sweep already does for
a Rust doctest's ``Other::name``. A qualifier the repository cannot resolve (an instance, ``self``, another
project's module) says nothing either way, and a bare mention is weighed as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from codeplane.refactor.facts import Def, FactReader
from codeplane.refactor.rename import reexports

_LIMIT = 500
_PYTHON = (".py", ".pyi")
_CLASS_KINDS = frozenset({"class"})


def other_owner(reader: FactReader, target: Def, *, member: bool,
                binders: Iterable[str]) -> Callable[[str], bool] | None:
    """``qualifier -> whether it names an owner other than ``target``'s``, for a Python class member
    (``member``) or module-level definition; ``None`` for anything else. ``binders``: the files whose module
    scope binds a module-level target (its own file, the re-exporting modules the plan edits)."""
    if not target.path.endswith(_PYTHON) or (not member and target.parent_uid is not None):
        return None
    bound = set(binders)
    answers: dict[str, bool] = {}

    def names_other(qualifier: str) -> bool:
        if qualifier not in answers:
            module = reader.module_file(qualifier)
            if module is not None:
                # A class member is never a module's attribute; a module-level target is the attribute of the
                # modules that bind it (its own, a re-exporting package), and of no other.
                answers[qualifier] = member or not reexports(reader, module, bound, 0)
            else:
                last = qualifier.rpartition(".")[2]
                # ``Attribute.evolve`` while renaming the function ``evolve``: a repository class's member.
                answers[qualifier] = not member and last[:1].isupper() and any(
                    d.kind in _CLASS_KINDS for d in reader.defs_named(last, _LIMIT))
        return answers[qualifier]
    return names_other
