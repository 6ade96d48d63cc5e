"""Occurrences that cannot be a Go package-level definition, for the rename sweep (:mod:`sweep`).

Go names a package-level function, variable, constant or type unqualified inside its package and as
``pkg.Name`` elsewhere, where ``pkg`` is the name an ``import`` of that package binds in the file. So, renaming
``cmp.Equal``, no ``x.Equal`` is it where ``x`` is anything but such an import: ``s.result.Equal()``,
``f(p).Equal()``, a method ``func (r Result) Equal()``, ``bytes.Equal`` (another package's import). Those
occurrences are counted in the coverage as ``other_symbol`` and proposed to no one: on go-cmp they were 86 of
the 172 low candidates of ``Equal``. Kept as candidates: unqualified uses the index left unresolved, and
``x.Name`` where ``x`` may be an import of the target's package (by its alias, its path's last element, the
element before a major version or a ``.vN`` suffix). ``pkg.Name`` through an import the index resolved is in the
plan already, whatever the package's name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from codeplane.refactor.facts import Import, Ref

_RECEIVER = re.compile(r"(?<![\w.)\]])([A-Za-z_]\w*)\s*\.\s*$")
_MAJOR = re.compile(r"v\d+\Z")


@dataclass(frozen=True)
class GoPackageTarget:
    """A Go package-level definition being renamed, and per file the names an import binds there."""

    target_uid: str
    #: The target's package directory, repository-relative ("" at the root).
    package_dir: str
    #: Per swept ``.go`` file: the names its imports bind that may name the target's package.
    maybe_target: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def other_symbol(self, path: str, ref: Ref | None, before: str) -> bool:
        """Whether the occurrence (``before``: its line up to it) is certainly another symbol."""
        if not path.endswith(".go") or ref is None:
            return False
        if (ref.target_uid is not None and ref.target_uid != self.target_uid) or ref.bind_id is not None:
            return True  # Go resolves a name statically: bound to another definition, it is that one
        if not ref.is_member:
            return False
        if not before.rstrip().endswith("."):
            return False  # the receiver is on a line above: not read here
        receiver = _RECEIVER.search(before)
        if receiver is None:
            return True  # a call, a field chain, an index: a value, never a package
        # Not an import of the target's package: another package, or a variable (a value).
        return receiver.group(1) not in self.maybe_target.get(path, frozenset())


def package_names(imports: Iterable[Import], package_dir: str) -> frozenset[str]:
    """The names a file's imports bind that may name the package in ``package_dir``."""
    maybe: set[str] = set()
    for fact in imports:
        path = fact.source_literal or fact.imported_name
        if fact.alias in ("_", "."):
            continue
        if not package_dir or path == package_dir or path.endswith("/" + package_dir):
            maybe |= {fact.alias} if fact.alias else default_names(path)
    return frozenset(maybe)


def default_names(path: str) -> set[str]:
    """What an import without alias may bind: its path's last element, the one before a major version
    (``.../yaml/v3``), the element before ``.vN`` (``gopkg.in/yaml.v2``)."""
    parts = path.split("/")
    last = parts[-1]
    names = {last, last.split(".v")[0], last.replace("-", "_")}
    if _MAJOR.match(last) and len(parts) > 1:
        names.add(parts[-2])
    return names
