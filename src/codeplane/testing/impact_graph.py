"""The reverse import graph of one index epoch, read from ``st_import`` once and kept until the next epoch.

§11.9.7 allows the module index to be built lazily and cached; walking the graph level by level with one SQL
query per level cost 0.4–0.6 s on Django (≈70k import rows touched per query), the cached graph answers the
same walk in tens of milliseconds. Memory is a few bytes per import edge (≈10 MB for Django).

Every write makes a new epoch, and reading the whole graph again cost each selection after an edit ~40 ms on
Django. Epochs that only edited existing files (the ``epochs`` table counts no file added, deleted or renamed),
none of them a context marker (``pyproject.toml``, ``tsconfig.json``, ``go.mod``...: their text decides how other
files' imports resolve), each keeping its module keys, change only the edited files' own import rows: resolution
goes from module keys to files, and no key moved, so every other file's edges are what they were. ``build_graph``
then re-reads only those files' rows (``ImportGraph.changed``) and keeps the rest; any other epoch is read whole.
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from codeplane.index.structural.contexts.discovery import is_marker


def is_init(path: str) -> bool:
    return path.rsplit("/", 1)[-1].startswith("__init__.")


#: Edited files re-read one by one at most (``IN (…)`` chunks); more, and the whole graph is read again.
MAX_CARRIED_CHANGES = 2_000
_CHUNK = 500

#: A file's import edges: (target keys, resolved alt keys, own-package target keys that name no file).
Edges = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
_NO_EDGES: Edges = ((), (), ())


@dataclass(frozen=True)
class ImportGraph:
    #: The index epoch the graph was read at (``None``: no epoch table, never cached).
    epoch: int | None
    #: target_key (the absolute module an import names) → importing file ids.
    by_target: dict[str, tuple[int, ...]]
    #: alt_key resolved to a module file (``from pkg import mod``) → importing file ids.
    by_alt: dict[str, tuple[int, ...]]
    #: Every distinct target_key, sorted, for submodule ranges (``pkg.`` … ``pkg/``).
    targets_sorted: tuple[str, ...]
    keys_of: dict[int, tuple[str, ...]]
    path_of: dict[int, str]
    id_of: dict[str, int]
    #: Module keys of packages (``__init__`` files): only those have submodules.
    packages: frozenset[str]
    #: Imports of the repository's own top-level packages that name no file (top-level name → importing
    #: (file id, target key)): an edge the walk cannot follow, so answers about that package are ``partial``.
    unresolved: dict[str, tuple[tuple[int, str], ...]]
    #: file id → its edges (the three maps above, per importing file): what an edit of it takes away.
    edges: dict[int, Edges]
    #: Top-level names of the repository's Python modules (by each file's first key): the same for a carried graph.
    tops: frozenset[str]
    #: The epoch of the graph this one was carried from, and the files written since (``None``: read whole).
    carried_from: int | None = None
    changed: frozenset[int] = frozenset()

    def importers(self, key: str) -> tuple[int, ...]:
        return self.by_target.get(key, ())

    def alt_importers(self, key: str) -> tuple[int, ...]:
        return self.by_alt.get(key, ())

    def submodule_imports(self, key: str) -> Iterator[str]:
        """Target keys strictly below ``key`` (``key.x``, ``key.x.y``)."""
        start = bisect.bisect_right(self.targets_sorted, key + ".")
        end = bisect.bisect_left(self.targets_sorted, key + "/")
        yield from self.targets_sorted[start:end]


def current_epoch(conn: sqlite3.Connection) -> int | None:
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'epochs'").fetchone() is None:
        return None
    row = conn.execute("SELECT max(id) FROM epochs").fetchone()
    return int(row[0]) if row and row[0] is not None else None


def build_graph(conn: sqlite3.Connection, epoch: int | None, previous: ImportGraph | None = None) -> ImportGraph:
    """Read the graph inside the caller's read transaction (one consistent epoch): only the edited files' import
    rows when every epoch since ``previous`` only edited files (module docstring), else all of them."""
    if previous is not None and previous.epoch is not None and epoch is not None and epoch > previous.epoch:
        carried = _carried(conn, epoch, previous)
        if carried is not None:
            return carried
    path_of = {int(i): str(p) for i, p in conn.execute("SELECT file_id, path FROM st_file")}
    listed: dict[int, list[str]] = {}
    for file_id, key in conn.execute("SELECT file_id, key FROM st_module_key ORDER BY rank, key"):
        listed.setdefault(int(file_id), []).append(str(key))
    keys_of = {i: tuple(k) for i, k in listed.items()}
    packages = frozenset(k for i, ks in keys_of.items() if is_init(path_of.get(i, "")) for k in ks)
    tops = _tops(keys_of)
    edges = _edges(conn, tops, "")
    by_target: dict[str, list[int]] = {}
    by_alt: dict[str, list[int]] = {}
    unresolved: dict[str, list[tuple[int, str]]] = {}
    for file_id in sorted(edges):
        targets, alts, loose = edges[file_id]
        for key in targets:
            by_target.setdefault(key, []).append(file_id)
        for key in alts:
            by_alt.setdefault(key, []).append(file_id)
        for key in loose:
            unresolved.setdefault(_top(key), []).append((file_id, key))
    return ImportGraph(
        epoch=epoch, by_target={k: tuple(v) for k, v in by_target.items()},
        by_alt={k: tuple(v) for k, v in by_alt.items()}, targets_sorted=tuple(sorted(by_target)),
        keys_of=keys_of, path_of=path_of, id_of={p: i for i, p in path_of.items()}, packages=packages,
        unresolved={t: tuple(sorted(v)) for t, v in unresolved.items()}, edges=edges, tops=tops)


def _top(key: str) -> str:
    return key[3:].split(".", 1)[0]


def _tops(keys_of: Mapping[int, tuple[str, ...]]) -> frozenset[str]:
    return frozenset(_top(k) for ks in keys_of.values() for k in ks[:1] if k.startswith("py:"))


def _edges(conn: sqlite3.Connection, tops: frozenset[str], where: str, params: Iterable[int] = ()) -> dict[int, Edges]:
    """Each importing file's edges, from the ``st_import`` rows ``where`` selects (``AND …`` on ``file_id``)."""
    found: dict[int, tuple[set[str], set[str], set[str]]] = {}
    for file_id, target, alt, alt_file, resolved in conn.execute(
            "SELECT file_id, target_key, alt_key, resolved_alt_file_id IS NOT NULL, resolved_file_id IS NOT NULL "
            f"FROM st_import WHERE (target_key IS NOT NULL OR alt_key IS NOT NULL) {where}", list(params)):
        sets = found.setdefault(int(file_id), (set(), set(), set()))
        if target is not None:
            sets[0].add(str(target))
            if not resolved and not alt_file and str(target).startswith("py:") and _top(str(target)) in tops:
                sets[2].add(str(target))
        if alt is not None and alt_file:
            sets[1].add(str(alt))
    return {f: (tuple(sorted(a)), tuple(sorted(b)), tuple(sorted(c))) for f, (a, b, c) in found.items()}


def _carried(conn: sqlite3.Connection, epoch: int, previous: ImportGraph) -> ImportGraph | None:
    """``previous`` with the edges of the files written since read again, when every epoch since it only edited
    files that keep their paths and module keys and decide nothing for other files; else ``None``."""
    since = previous.epoch
    assert since is not None
    count, moved = conn.execute("SELECT count(*), total(added + deleted + renamed) FROM epochs "
                                "WHERE id > ? AND id <= ?", (since, epoch)).fetchone()
    if int(count) != epoch - since or moved:
        return None  # a file came or went (or an epoch's record is missing): paths and keys may have moved
    written = {int(f): str(p) for f, p in conn.execute("SELECT file_id, path FROM st_file WHERE epoch > ?", (since,))}
    if len(written) > MAX_CARRIED_CHANGES or any(
            previous.path_of.get(f) != p or is_marker(p) for f, p in written.items()):
        return None
    ids = sorted(written)
    listed: dict[int, list[str]] = {f: [] for f in ids}
    edges: dict[int, Edges] = {}
    tops = previous.tops
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for file_id, key in conn.execute(
                f"SELECT file_id, key FROM st_module_key WHERE file_id IN ({marks}) ORDER BY rank, key", chunk):
            listed[int(file_id)].append(str(key))
        edges.update(_edges(conn, tops, f"AND file_id IN ({marks})", chunk))
    if any(tuple(keys) != previous.keys_of.get(f, ()) for f, keys in listed.items()):
        return None
    by_target, by_alt = dict(previous.by_target), dict(previous.by_alt)
    unresolved = dict(previous.unresolved)
    for file_id in ids:
        old, new = previous.edges.get(file_id, _NO_EDGES), edges.get(file_id, _NO_EDGES)
        _move(by_target, file_id, old[0], new[0])
        _move(by_alt, file_id, old[1], new[1])
        for top in {_top(k) for k in (*old[2], *new[2])}:
            rest = [e for e in unresolved.get(top, ()) if e[0] != file_id]
            rest += [(file_id, k) for k in new[2] if _top(k) == top]
            if rest:
                unresolved[top] = tuple(sorted(rest))
            else:
                unresolved.pop(top, None)
    all_edges = {**previous.edges, **edges}
    for file_id in ids:
        if file_id not in edges:
            all_edges.pop(file_id, None)
    same_keys = by_target.keys() == previous.by_target.keys()
    return ImportGraph(
        epoch=epoch, by_target=by_target, by_alt=by_alt,
        targets_sorted=previous.targets_sorted if same_keys else tuple(sorted(by_target)),
        keys_of=previous.keys_of, path_of=previous.path_of, id_of=previous.id_of, packages=previous.packages,
        unresolved=unresolved, edges=all_edges, tops=tops, carried_from=since, changed=frozenset(ids))


def _move(index: dict[str, tuple[int, ...]], file_id: int, old: tuple[str, ...], new: tuple[str, ...]) -> None:
    """Re-point ``file_id``'s entries of ``index`` (key → importing files, sorted) from keys ``old`` to ``new``."""
    for key in set(old) - set(new):
        rest = tuple(f for f in index.get(key, ()) if f != file_id)
        if rest:
            index[key] = rest
        else:
            index.pop(key, None)
    for key in set(new) - set(old):
        index[key] = tuple(sorted({*index.get(key, ()), file_id}))
