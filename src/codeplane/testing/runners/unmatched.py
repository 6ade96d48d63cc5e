"""A case id its target does not hold (a typo, a rename): the error names the cases it holds nearest the name asked
for, and how many more it holds, so the next call can be right (README, ``run_test_targets``).

Every runner that runs cases alone answers the same way: pytest (``file::Class::test``), go (``pkg::TestX/sub``),
jest and vitest (``file::describe > test``). ``sep`` is the runner's scope separator in a case name: a case of the
scope asked for (the same class, test or describe block) is nearest.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

#: Cases an unknown case's message names of those its target holds (the nearest); the rest are counted.
HELD_SHOWN = 10
#: How alike (difflib's ratio) a case's name must be to the one asked for to be listed as near it.
_ALIKE = 0.6


def unmatched_message(path: str, missing: Sequence[str], held: Sequence[str], held_total: int, *,
                      sep: str = "::") -> str:
    """``no test case TestEvolve::nope in t.py; it holds TestEvolve::test_a, ... (+41 more)``: the cases nearest
    the names asked for first (see :func:`nearest_cases`), and how many more the target holds (``held_total``;
    ``held`` may be fewer)."""
    shown = nearest_cases(missing, held, sep=sep)[:HELD_SHOWN]
    more = max(held_total, len(held)) - len(shown)
    asked = ", ".join(missing[:HELD_SHOWN]) + (f" (+{len(missing) - HELD_SHOWN} more)"
                                               if len(missing) > HELD_SHOWN else "")
    return (f"no test case {asked} in {path}"
            + (f"; it holds {', '.join(shown)}" + (f" (+{more} more)" if more > 0 else "") if shown else ""))


def nearest_cases(missing: Sequence[str], held: Sequence[str], *, sep: str = "::") -> list[str]:
    """The cases of ``held`` near a name in ``missing``, nearest first: those of the scope asked for
    (``TestEvolve::nope``: ``TestEvolve::*``, the deepest shared scope first), then those named alike (a typo,
    a rename, ``test_evolve`` for ``TestEvolve::*``), each in the target's order; when none is near, the target's
    first cases."""
    def rank(index: int, name: str) -> tuple[int, float, int]:
        parts = name.split(sep)
        # A case that is the scope asked for (go's ``TestTable`` for ``TestTable/nope``) is as near as its own.
        depth = max((max(_shared_depth(parts[:-1], m.split(sep)[:-1]),
                         len(parts) if m.split(sep)[:len(parts)] == parts and m != name else 0) for m in missing),
                    default=0)
        alike = max((difflib.SequenceMatcher(None, _plain(m.rsplit(sep, 1)[-1]), _plain(part)).ratio()
                     for m in missing for part in parts), default=0.0)
        return -depth, -round(alike, 2), index

    ranked = sorted((rank(i, name), name) for i, name in enumerate(held))
    near = [name for (depth, alike, _), name in ranked if depth or -alike >= _ALIKE]
    return near or list(held)


def _plain(name: str) -> str:
    """A case name compared for likeness: without parameters, case, underscores and the ``test`` every name
    starts with (``TestEvolve``, ``test_evolve[x]`` → ``evolve``)."""
    return name.partition("[")[0].replace("_", "").lower().removeprefix("test")


def _shared_depth(scope: list[str], asked: list[str]) -> int:
    depth = 0
    for have, want in zip(scope, asked, strict=False):
        if have != want:
            break
        depth += 1
    return depth
