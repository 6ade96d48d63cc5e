"""Which kind of member a use names, from its syntax alone: a field or a method (Rust and Java).

Both languages let a type have a field and a method of one name (``len`` and ``len()``, the getter idiom), two
symbols (``members.apart_by_kind``). Where the receiver's type is unknown (a call's result, a generic, an index
expression), the syntax of the use still decides, and the adapters record it in the reference's shape:

- Rust: ``x.f(..)`` / ``x.f::<T>(..)``, a call whose function is the field expression itself, can only call a
  method (calling a field that holds a closure or ``fn`` is written ``(x.f)(..)``); ``x.f`` anywhere else
  (``(x.f)(..)``, ``x.f += 1``, ``&x.f``; shape ``obj.$``, ``self.$``, ``expr.$``) can only read a field, as Rust
  has no bound-method values; ``T::f`` (``path:T``) names an associated item, never a field; a struct literal's or
  pattern's key (``struct:T``, ``short:T``) always a field.
- Java: ``x.f(..)`` and ``f(..)`` call a method; ``x.f`` (shape ending ``$``) reads a field or names a nested type.

A use of the other kind is set aside by the rename (counted ``other_symbol``, proposed to no one). Tokens inside a
Rust macro's token tree (``println!("{}", x.len())``, shapes ``mobj.``/``mself.``) are not expressions until the
macro expands: undecided. Not decided this way: Go (``x.f()`` may call a func-typed field), Kotlin (``x.f()`` may
invoke a property of a function type), C# and C++ (a delegate or function-object member is called like a method).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from codeplane.refactor.facts import Def, Ref

Kind = Literal["field", "method"]

#: Def kinds per decided language suffix: which are fields (values read without a call) and which methods.
_KINDS: dict[str, dict[str, Kind]] = {
    ".rs": {"field": "field", "method": "method"},
    ".java": {"field": "field", "constant": "field", "method": "method"},
}
_RUST_CALLS = frozenset({"self.", "obj.", "expr."})


def _suffix(path: str) -> str:
    dot = path.rfind(".")
    return path[dot:] if dot >= 0 else ""


def use_kind(ref: Ref) -> Kind | None:
    """``method`` or ``field`` for a use whose syntax says which (its shape, see the module docstring)."""
    shape = ref.receiver_shape or ""
    suffix = _suffix(ref.path)
    if suffix == ".rs":
        if ref.is_member:
            if shape.endswith("$") or shape.startswith("struct:"):
                return "field"
            return "method" if shape in _RUST_CALLS or shape.startswith("path:") else None
        return "field" if shape.startswith("short:") else None
    if suffix == ".java" and ref.is_member:
        return "field" if shape.endswith("$") else "method"
    return None


def target_kind(target: Def) -> Kind | None:
    """The kind of a Rust or Java member target; ``None`` for anything else (a free function, a type, a Go
    member...)."""
    kinds = _KINDS.get(_suffix(target.path))
    return kinds.get(target.kind) if kinds is not None else None


#: ``(path, line, 0-based column, the index's reference there if known)`` → whether the use is of the other kind.
OtherKind = Callable[[str, int, int, Ref | None], bool]


def other_kind(refs_on: Callable[[str, int], Sequence[Ref]], target: Def) -> OtherKind | None:
    """For a Rust or Java field or method ``target``: whether the use of its name at a position is certainly of the
    other kind (a method call when ``target`` is a field, a field read when it is a method). A use the index linked
    to another definition is not judged here (it stays that definition's, ``other_binding``). ``None`` when
    ``target`` is no such member; ``refs_on(path, line)`` finds the reference when it is not given."""
    kind = target_kind(target)
    if kind is None:
        return None
    suffix = _suffix(target.path)

    def judge(path: str, line: int, column: int, ref: Ref | None) -> bool:
        if _suffix(path) != suffix:
            return False
        if ref is None:
            ref = next((r for r in refs_on(path, line) if r.column == column and r.token == target.name), None)
        if ref is None or ref.bind_id is not None or ref.target_uid not in (None, target.def_uid):
            return False
        found = use_kind(ref)
        return found is not None and found != kind
    return judge
