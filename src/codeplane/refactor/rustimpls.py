"""Rust trait implementations, for renaming a trait's method: ``impl Counted for Stock { fn count(&self) ... }``
implements ``Counted::count``, so renaming one without the other no longer compiles (E0407: not a member of the
trait; E0046: the trait's method missing). The index keeps an ``impl`` block as a scope, not a definition: the
block's methods have no owning definition, and its header's two references (the trait before ``for``, the type
after it) are what say whose method it is. Read here from the index's facts and the header's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from codeplane.refactor.facts import Def, FactReader, Ref, Scope
from codeplane.refactor.spans import SourceText

_LIMIT = 100_000
_FOR = re.compile(r"\bfor\b")
#: The type after ``for`` in an impl header: its path's last segment (``Vec`` of ``for std::vec::Vec<u8> {``).
_IMPLEMENTOR = re.compile(r"\bfor\s+&?\s*(?:mut\s+)?(?:[A-Za-z_]\w*\s*::\s*)*([A-Za-z_]\w*)\s*(?:<|\{|where\b|$)")
_TYPE_KINDS = frozenset({"struct", "enum", "union", "type", "class"})


@dataclass(frozen=True)
class ImplBlock:
    scope: Scope
    trait: Def | None
    implementor: Def | None


def _header(reader: FactReader, text: Callable[[str], SourceText | None], scope: Scope) -> ImplBlock:
    """The trait and the type of ``impl<..> Trait<..> for Type<..> {`` (a trait before ``for``, the type after)."""
    src = text(scope.path)
    line = src.line_text(scope.line) if src is not None else ""
    split = _FOR.search(line)
    trait: Def | None = None
    implementor: Def | None = None
    for ref in sorted(reader.refs_on_line(scope.path, scope.line), key=lambda r: r.column):
        target = reader.get_def(ref.target_uid) if ref.scope_id == scope.scope_id and ref.target_uid else None
        if target is None:
            continue
        if target.kind == "trait" and split is not None and ref.column < split.start() and trait is None:
            trait = target
        elif target.kind in _TYPE_KINDS and (split is None or ref.column > split.start()) and implementor is None:
            implementor = target
    return ImplBlock(scope, trait, implementor)


def _blocks(reader: FactReader, text: Callable[[str], SourceText | None], trait: Def) -> dict[int, ImplBlock]:
    """The repository's ``impl trait for type`` blocks, by scope id."""
    blocks: dict[int, ImplBlock] = {}
    for ref in reader.refs_to(trait.def_uid, _LIMIT):
        scope = reader.scope(ref.scope_id) if ref.scope_id is not None else None
        if scope is not None and scope.kind == "impl" and ref.line == scope.line and scope.scope_id not in blocks:
            block = _header(reader, text, scope)
            if block.trait is not None and block.trait.def_uid == trait.def_uid:
                blocks[scope.scope_id] = block
    return blocks


def implementations(reader: FactReader, text: Callable[[str], SourceText | None], trait: Def,
                    name: str) -> list[tuple[Def | None, Def]]:
    """``(type, method)`` for each ``impl trait for type`` block of the repository defining a method ``name``."""
    blocks = _blocks(reader, text, trait)
    found = [(blocks[d.scope_id].implementor, d) for d in reader.defs_named(name, _LIMIT)
             if d.scope_id in blocks and d.path == blocks[d.scope_id].scope.path]
    return sorted(found, key=lambda pair: (pair[1].path, pair[1].line))


def implemented(reader: FactReader, text: Callable[[str], SourceText | None], method: Def) -> Def | None:
    """The trait method a method of an ``impl Trait for Type`` block implements, if the trait is the repository's."""
    if not method.path.endswith(".rs") or method.parent_uid is not None or method.scope_id is None:
        return None
    scope = reader.scope(method.scope_id)
    if scope is None or scope.kind != "impl":
        return None
    trait = _header(reader, text, scope).trait
    if trait is None:
        return None
    return next((d for d in reader.defs_named(method.name, _LIMIT) if d.parent_uid == trait.def_uid), None)


def implementor_calls(reader: FactReader, text: Callable[[str], SourceText | None], trait: Def,
                      name: str) -> list[Ref]:
    """``Vec::from_hex(..)`` in a macro's tokens (``assert_eq!(Vec::from_hex("ab").unwrap(), ..)``) where the
    repository writes ``impl FromHex for Vec<u8>``: the call names the trait's method through a type implementing
    it, one from outside the repository (``std``'s ``Vec``) that the index cannot link. Outside a macro the same
    path is a member the planner rates by itself; here the adapter leaves the token a plain name (``mpath:Vec``)."""
    implementors = set()
    for block in _blocks(reader, text, trait).values():
        src = text(block.scope.path)
        match = _IMPLEMENTOR.search(src.line_text(block.scope.line)) if src is not None else None
        if match is not None and block.implementor is None:
            implementors.add(match[1])
    found = []
    for ref in reader.refs_named(name, None, _LIMIT) if implementors else []:
        shape = ref.receiver_shape or ""
        if ref.is_member or ref.target_uid is not None or not shape.startswith("mpath:"):
            continue
        segments = [s for s in shape[6:].split("::") if s and not s.startswith("<")]
        if segments and segments[-1].partition("<")[0] in implementors:
            found.append(ref)
    return found
