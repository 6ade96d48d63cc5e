"""Python bytecode caches: where test processes keep them, and keeping them honest.

CPython's ``.pyc`` files and pytest's rewritten test modules record the source's mtime in whole seconds and
its size, and are trusted while both match. They live in ``__pycache__`` beside the source, or, under
``PYTHONPYCACHEPREFIX``, in a tree mirroring the source's absolute directory below that prefix.

Where the environment forbids writing bytecode (``PYTHONDONTWRITEBYTECODE``, common in containers and
sandboxes), every interpreter recompiles every module it imports — pytest, its plugins, the code under
test — about a second per process, paid again by each parallel worker. :func:`redirected_environment`
gives test processes a cache under ``.codeplane/pycache`` instead: nothing is written beside the sources,
which is what that setting protects. :func:`prune_sourceless` keeps that tree to what is still importable.

A rewrite to the same size within the same second as the version it replaces is invisible to those caches,
and the next test run would import the replaced version. Every writer of repository files (the mutation
engine, git's checkouts and resets) deletes those caches after such a rewrite, in both places, and the index
pipeline does for a same-size rewrite another program made (an editor's save), when it reindexes the file. Deleting,
not moving the mtime: a stamp pushed to the next second would open the same window for the next writer in
that second.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from codeplane.core.layout import RepoLayout
from codeplane.core.logging import get_logger

log = get_logger(__name__)

_NS = 1_000_000_000
DONT_WRITE_ENV = "PYTHONDONTWRITEBYTECODE"
PREFIX_ENV = "PYTHONPYCACHEPREFIX"


def indistinct(old_size: int, old_mtime_ns: int, new_size: int, new_mtime_ns: int) -> bool:
    """Whether a (whole-second mtime, size) cache cannot tell the new version from the old."""
    return new_size == old_size and new_mtime_ns // _NS == old_mtime_ns // _NS


def redirected_environment(env: Mapping[str, str], cache_dir: Path) -> dict[str, str] | None:
    """``env`` made to cache bytecode under ``cache_dir``, or None when it needs no redirect: bytecode is
    written anyway, or the user already chose a prefix (Python reads it; CodePlane does not override it).
    An empty ``PYTHONDONTWRITEBYTECODE`` counts as unset for Python, so the variable stays, emptied."""
    if not env.get(DONT_WRITE_ENV) or env.get(PREFIX_ENV):
        return None
    return {**env, DONT_WRITE_ENV: "", PREFIX_ENV: str(cache_dir)}


def cache_prefixes(root: Path) -> tuple[Path, ...]:
    """The prefix trees that may hold bytecode of ``root``'s sources: CodePlane's own, and the
    environment's absolute ``PYTHONPYCACHEPREFIX`` (test processes inherit it)."""
    prefixes = [RepoLayout(root).pycache_dir]
    configured = os.environ.get(PREFIX_ENV, "")
    if os.path.isabs(configured):
        prefixes.append(Path(configured))
    return tuple(prefixes)


def _cache_dirs(source: Path, prefixes: Iterable[Path]) -> list[Path]:
    found = [source.parent / "__pycache__"]
    parents = dict.fromkeys((os.path.abspath(source.parent), os.path.realpath(source.parent)))
    for prefix in prefixes:
        # CPython and pytest both mirror the absolute directory below the prefix, minus its root.
        found += [prefix / parent.lstrip(os.sep) for parent in parents]
    return found


def drop_cached_bytecode(source: Path, prefixes: Iterable[Path] = ()) -> None:
    """Delete the cached bytecode of ``source`` (``<stem>.*.pyc``: CPython's for each interpreter and
    optimisation level, pytest's rewritten module) in ``__pycache__`` and below each of ``prefixes``. Module
    names hold no dot, so the pattern matches this module's caches only."""
    if source.suffix != ".py":
        return
    stem = source.stem + "."
    for cache in _cache_dirs(source, prefixes):
        try:
            names = os.listdir(cache)
        except OSError:
            continue
        for name in names:
            if name.startswith(stem) and name.endswith(".pyc"):
                try:
                    os.unlink(cache / name)
                except FileNotFoundError:
                    pass
                except OSError as exc:  # a cache it cannot delete must not fail the write that made it stale
                    log.warning("cannot delete stale bytecode", path=str(cache / name), error=str(exc))


def prune_sourceless(prefix: Path) -> int:
    """Delete the bytecode below the prefix tree ``prefix`` whose source is gone (a deleted or moved
    module), and the directories that leaves empty; returns how many files went. Keeps the cache as large
    as what is still importable. A file standing where the tree belongs is damage and is removed (the
    next run recreates the tree)."""
    if os.path.lexists(prefix) and not os.path.isdir(prefix):
        log.warning("a file stood where the bytecode cache belongs; removed", path=str(prefix))
        with contextlib.suppress(OSError):
            os.unlink(prefix)
        return 0
    removed = 0
    for directory, _, names in os.walk(prefix, topdown=False):
        source_dir = os.path.join(os.sep, os.path.relpath(directory, prefix))
        for name in names:
            if name.endswith(".pyc") and not os.path.exists(os.path.join(source_dir, name.split(".", 1)[0] + ".py")):
                try:
                    os.unlink(os.path.join(directory, name))
                    removed += 1
                except OSError:
                    pass
        if directory != str(prefix):
            try:
                os.rmdir(directory)
            except OSError:
                pass  # not empty: the usual case
    return removed
