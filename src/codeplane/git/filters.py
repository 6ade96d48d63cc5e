"""Conversions git runs between the work tree and a blob that libgit2 does not: ``.gitattributes`` filter drivers
(``filter=<name>`` with ``filter.<name>.clean``/``smudge``/``process`` configured; git-lfs is one) and
``working-tree-encoding=<charset>`` (the blob is UTF-8, the work-tree file UTF-16 or another charset, with git's BOM
rules). libgit2 runs neither, so staging would store the raw file (an LFS repository would commit whole binaries
instead of pointers; a UTF-16 file would go in as a binary blob that git itself then fails to check out) and a
checkout would write the raw blob (a pointer file; UTF-8 where git writes UTF-16), while ``git status`` says clean.

CodePlane converts nothing: every operation that would read such a file into a blob or write one from a blob
(staging, checkout, merge, cherry-pick, revert, hard reset, stash, rebase) refuses (8005) before anything changes,
naming the paths and the conversion, and the git CLI does the work. A driver git would not run (an attribute without
configuration) does not count, nor does ``working-tree-encoding=UTF-8`` (git skips its own default encoding), as git
then stores and writes the bytes unchanged too. Restoring a recovery point is not refused: the point holds the work
tree's bytes as they were, and puts them back unchanged.
"""

from __future__ import annotations

import os
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


def _encoding(repo: pygit2.Repository, path: str) -> str | None:
    """The ``working-tree-encoding`` git would convert ``path`` through, as git's ``git_path_check_encoding``
    decides: only a value counts (set, unset or unspecified do not; an empty one git refuses, so it counts),
    and git's default encoding, UTF-8 in any case, is no conversion."""
    value = repo.get_attr(os.fsencode(path), "working-tree-encoding")
    if isinstance(value, str) and value.upper() != "UTF-8":
        return value
    return None


def filtered_paths(repo: pygit2.Repository, paths: Iterable[str]) -> dict[str, str]:
    """The paths git would convert, each with what converts it: ``filter=<driver>`` or
    ``working-tree-encoding=<charset>`` (the driver first, as git applies it last on staging)."""
    drivers = _drivers(repo)
    out: dict[str, str] = {}
    for path in paths:
        # As bytes: a non-UTF-8 name (pygit2's surrogateescape) cannot be encoded back to UTF-8 by pygit2.
        name = repo.get_attr(os.fsencode(path), "filter") if drivers else None
        if isinstance(name, str) and name in drivers:
            out[path] = f"filter={name}"
        elif (encoding := _encoding(repo, path)) is not None:
            out[path] = f"working-tree-encoding={encoding}"
    return out


def refuse_filtered(repo: pygit2.Repository, paths: Iterable[str], what: str) -> None:
    """8005 when git would run a filter driver on any of ``paths`` for ``what`` (``"staging"``, ``"checkout"``);
    nothing has been changed when it is raised."""
    found = filtered_paths(repo, paths)
    if not found:
        return
    hit = sorted(found)
    listed = ", ".join(f"{shown(p)} ({found[p]})" for p in hit[:10])
    more = f" and {len(hit) - 10} more" if len(hit) > 10 else ""
    raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"{what} refused: .gitattributes gives {listed}{more} a "
                         "conversion git runs and CodePlane cannot (its result would differ from git's); nothing "
                         "changed. Use the git CLI for these paths (git add / git checkout)", details={
                             "field": "paths", "paths": [shown(p) for p in hit[:200]], "count": len(hit),
                             "filters": sorted({found[p].removeprefix("filter=") for p in hit})})
