"""The repository's types of one class-based language (``javalink``, ``cslink``, ``phplink``) with their members
and supertypes, and member lookup through the part of a hierarchy the repository declares.

A member is found only where the syntax settles it (§7.3.2 STRONG, never a guess):
- a type's own declaration of the name wins (fields and nested types hide inherited ones);
- methods are grouped by their parameter types as written (``add(Item)``/``add(String)`` are overloads,
  a subclass's ``add(Item)`` overrides its base's): the call links when exactly one method remains;
- a supertype outside the repository whose members are not known here (``open``), or a known one that declares
  the name (``java.lang.Exception.getMessage``), leaves the member unsettled (``UNSETTLED``), as do two different
  answers through two supertypes.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

#: A lookup that cannot be settled from the repository's syntax (ambiguous, or open to outside types).
UNSETTLED = "?"
_MAX_DEPTH = 16
_ANNOTATION = re.compile(r"@[\w.]+(?:\s*\([^()]*\))?")
_GENERIC = re.compile(r"<[^<>]*>")


@dataclass
class TypeInfo:
    uid: str
    name: str
    kind: str
    file_id: int
    #: The language's full name of the type (``a.b.Outer.Inner``, ``A\\B\\C``).
    full: str
    #: The enclosing type's uid (a nested type), if any.
    outer: str | None
    span: tuple[int, int, int, int]
    #: Scope in which the type's name is bound (its header's references live there).
    scope: int | None
    #: name -> [(def uid, kind, parameter key of a method)]
    members: dict[str, list[tuple[str, str, str | None]]] = field(default_factory=lambda: defaultdict(list))
    #: Supertypes as written in the header: (written name, file, scope of the header reference).
    written: list[tuple[str, int, int | None]] = field(default_factory=list)


class Lookup(NamedTuple):
    """Resolved supertypes of one type: repository types, whether any is unknown, and known outside names."""

    supers: tuple[TypeInfo, ...]
    open: bool
    external: frozenset[str]


def parameter_key(display: str, name: str) -> str | None:
    """The parameter types of a method header as written, erased (``add(final List<X> a, int b)`` → ``List,int``);
    None when the header is cut off or does not show them."""
    text = _ANNOTATION.sub("", display)
    at = text.find(name + "(")
    if at < 0:
        at = text.find(name + " (")
    start = text.find("(", at) if at >= 0 else -1
    if start < 0:
        return None
    depth, end = 0, -1
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                end = index
                break
    if end < 0:
        return None
    inner = text[start + 1:end]
    while _GENERIC.search(inner):
        inner = _GENERIC.sub("", inner)
    types = []
    for param in (p.strip() for p in inner.split(",") if p.strip()):
        words = [w for w in param.replace("...", "[] ").split() if w not in {
            "final", "ref", "out", "in", "params", "this", "scoped", "readonly"}]
        if param.lstrip().startswith("$") or (words and words[-1].startswith("$")):
            words = words[:-1]  # PHP: ``Type $name``
        elif len(words) > 1:
            words = words[:-1]  # drop the parameter's name
        written = "".join(words).split("=")[0]
        types.append(written.rsplit(".", 1)[-1].rsplit("\\", 1)[-1])
    return ",".join(types)


class Hierarchy:
    """Types of one language by uid and full name; supertypes are resolved lazily through ``resolve_super``
    (written name, file, scope) → TypeInfo uid, ``UNSETTLED`` or None (outside the repository), and
    ``external(written, file)`` → member names of a known outside type, or None when it is not known."""

    def __init__(self, types: Iterable[TypeInfo], resolve_super: Callable[[str, int, int | None], str | None],
                 external: Callable[[str, int], frozenset[str] | None], implicit: Callable[[TypeInfo], str | None],
                 *, partial: bool = False, overloads: bool = True) -> None:
        self.types = {t.uid: t for t in types}
        self.partial = partial
        #: Without overloading (PHP) a type's own method is the one called, whatever its parents declare.
        self.overloads = overloads
        self.by_full: dict[str, list[TypeInfo]] = defaultdict(list)
        for t in self.types.values():
            self.by_full[t.full].append(t)
        self._resolve_super = resolve_super
        self._external = external
        self._implicit = implicit
        self._lookups: dict[str, Lookup] = {}
        self._busy: set[str] = set()
        #: Answers of one linking pass (the model does not change during it).
        self._members: dict[tuple[str, str, frozenset[str], bool], str | None] = {}

    def full(self, name: str) -> str | None:
        """The uid of the one type with this full name. Partial declarations (C#) are one type, named by the
        smallest uid of its parts (uids do not depend on the order files were indexed in)."""
        found = self.by_full.get(name, [])
        if not found:
            return None
        if self.partial:
            return min(t.uid for t in found)
        return found[0].uid if len(found) == 1 else UNSETTLED

    def parts(self, info: TypeInfo) -> list[TypeInfo]:
        """Every declaration of the type (C# ``partial``): they share members and supertypes."""
        found = self.by_full.get(info.full, [info])
        return found if info in found else [info]

    def lookup(self, info: TypeInfo) -> Lookup:
        known = self._lookups.get(info.uid)
        if known is not None:
            return known
        if info.uid in self._busy:  # a cycle in the supertypes: nothing to settle there
            return Lookup((), True, frozenset())
        self._busy.add(info.uid)
        supers: dict[str, TypeInfo] = {}
        is_open = False
        external: set[str] = set()
        written = [w for part in self.parts(info) for w in part.written]
        root = self._implicit(info)
        for name, file_id, scope in written:
            uid = self._resolve_super(name, file_id, scope)
            if uid is not None and uid != UNSETTLED and uid in self.types:
                supers.setdefault(uid, self.types[uid])
                continue
            names = self._external(name, file_id) if uid is None else None
            if names is None:
                is_open = True
            else:
                external |= names
        if root is not None:
            names = self._external(root, info.file_id)
            if names is None:
                is_open = True
            else:
                external |= names
        self._busy.discard(info.uid)
        found = Lookup(tuple(sorted(supers.values(), key=lambda t: t.uid)), is_open, frozenset(external))
        self._lookups[info.uid] = found
        return found

    def _own(self, info: TypeInfo, name: str, kinds: frozenset[str]) -> list[tuple[str, str, str | None]]:
        return [m for part in self.parts(info) for m in part.members.get(name, ()) if m[1] in kinds]

    def member(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool = True,
               depth: int = 0) -> str | None:
        """A field/type/constant ``name`` of ``info`` (own first, else inherited): uid, None or ``UNSETTLED``."""
        key = (info.uid, name, kinds, own)
        if key not in self._members:
            self._members[key] = self._member(info, name, kinds, own=own, depth=depth)
        return self._members[key]

    def _member(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return UNSETTLED
        if own:
            found = self._own(info, name, kinds)
            if found:
                return found[0][0] if len(found) == 1 else UNSETTLED
        inherited = self.lookup(info)
        if inherited.open or name in inherited.external:
            return UNSETTLED
        answers = {self.member(s, name, kinds, depth=depth + 1) for s in inherited.supers}
        answers.discard(None)
        if not answers:
            return None
        return answers.pop() if len(answers) == 1 else UNSETTLED

    def visible_methods(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool = True,
                        depth: int = 0) -> dict[str | None, set[str]] | None:
        """Methods ``name`` of ``info`` by parameter key, overridden ones removed; None when unsettled."""
        if depth > _MAX_DEPTH:
            return None
        found: dict[str | None, set[str]] = defaultdict(set)
        if own:
            for uid, _, key in self._own(info, name, kinds):
                found[key].add(uid)
        mine = set(found)
        inherited = self.lookup(info)
        if inherited.open or name in inherited.external:
            return None
        for sup in inherited.supers:
            theirs = self.visible_methods(sup, name, kinds, depth=depth + 1)
            if theirs is None:
                return None
            for key, uids in theirs.items():
                if key in mine:
                    continue  # overridden here
                if key is None or None in mine:
                    return None  # a header cut short: an override cannot be told from an overload
                found[key] |= uids  # two supertypes declaring one signature: two uids, so unsettled
        return found

    def method(self, info: TypeInfo, name: str, kinds: frozenset[str], *, own: bool = True) -> str | None:
        """The one method ``name`` a call on ``info`` can reach: uid, None (none declared) or ``UNSETTLED``."""
        if not self.overloads:
            mine = self._own(info, name, kinds) if own else []
            if mine:
                return mine[0][0] if len(mine) == 1 else UNSETTLED
            inherited = self.lookup(info)
            if inherited.open or name in inherited.external:
                return UNSETTLED
            return either(*(self.method(s, name, kinds) for s in inherited.supers))
        found = self.visible_methods(info, name, kinds, own=own)
        if found is None:
            return UNSETTLED
        if not found:
            return None
        if len(found) != 1:
            return UNSETTLED
        uids = next(iter(found.values()))
        return next(iter(uids)) if len(uids) == 1 else UNSETTLED

    def named(self, info: TypeInfo, name: str, data: frozenset[str], methods: frozenset[str], *,
              own: bool = True, depth: int = 0) -> str | None:
        """A member of a language where fields, properties and methods share one namespace (C#): the nearest
        type declaring ``name`` decides; its methods are resolved with their inherited overloads."""
        if depth > _MAX_DEPTH:
            return UNSETTLED
        if own:
            found = self._own(info, name, data | methods)
            if found:
                if all(kind in methods for _, kind, _ in found):
                    return self.method(info, name, methods)
                return found[0][0] if len(found) == 1 else UNSETTLED
        inherited = self.lookup(info)
        if inherited.open or name in inherited.external:
            return UNSETTLED
        return either(*(self.named(s, name, data, methods, depth=depth + 1) for s in inherited.supers))


def either(*answers: str | None) -> str | None:
    """One answer from lookups in separate namespaces (a field and a method of one name: unsettled)."""
    if UNSETTLED in answers:
        return UNSETTLED
    found = {a for a in answers if a is not None}
    if not found:
        return None
    return found.pop() if len(found) == 1 else UNSETTLED
