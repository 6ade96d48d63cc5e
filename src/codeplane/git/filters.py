"""``.gitattributes`` filter drivers (``filter=<name>`` with ``filter.<name>.clean``/``smudge``/``process``
configured; git-lfs is one): git runs the driver when it stages a file (clean) and when it writes one (smudge).
libgit2 runs no external driver, so staging would store the raw file (an LFS repository would commit whole binaries
instead of pointers) and a checkout would write the raw blob (a pointer file), while ``git status`` says clean.

CodePlane does not run drivers: every operation that would read such a file into a blob or write one from a blob
(staging, checkout, merge, cherry-pick, revert, hard reset, stash, rebase) refuses (8005) before anything changes,
naming the paths and the driver, and the git CLI does the work. A driver git would not run (an attribute without
configuration) does not count, as git then stores and writes the bytes unchanged too. Restoring a recovery point is
not refused: the point holds the work tree's bytes as they were, and puts them back unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.git.pathspecs import shown

_DRIVER_KEYS = ("clean", "smudge", "process")


def _drivers(repo: pygit2.Repository) -> frozenset[str]:
    """Names of the filter drivers the configuration (repository, global, system) defines."""
    names: set[str] = set()
    for entry in repo.config:
        key = entry.name
        if key.startswith("filter.") and key.rsplit(".", 1)[-1] in _DRIVER_KEYS and entry.value:
            names.add(key[len("filter."):].rsplit(".", 1)[0])
    return frozenset(names)


def filtered_paths(repo: pygit2.Repository, paths: Iterable[str]) -> dict[str, str]:
    """The paths git would pass through a configured filter driver, with the driver's name."""
    drivers = _drivers(repo)
    if not drivers:  # the common case: no attribute lookups at all
        return {}
    out: dict[str, str] = {}
    for path in paths:
        name = repo.get_attr(path, "filter")
        if isinstance(name, str) and name in drivers:
            out[path] = name
    return out


def refuse_filtered(repo: pygit2.Repository, paths: Iterable[str], what: str) -> None:
    """8005 when git would run a filter driver on any of ``paths`` for ``what`` (``"staging"``, ``"checkout"``);
    nothing has been changed when it is raised."""
    found = filtered_paths(repo, paths)
    if not found:
        return
    hit = sorted(found)
    listed = ", ".join(f"{shown(p)} (filter={found[p]})" for p in hit[:10])
    more = f" and {len(hit) - 10} more" if len(hit) > 10 else ""
    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"{what} refused: .gitattributes gives {listed}{more} a filter "
                         "driver, which git runs and CodePlane cannot (its result would differ from git's); nothing "
                         "changed. Use the git CLI for these paths (git add / git checkout)", details={
                             "field": "paths", "paths": [shown(p) for p in hit[:200]], "count": len(hit),
                             "filters": sorted(set(found.values()))})
