"""Definitions of one file version, from the extractors the index uses, cached by git blob id.

A revision's facts come from parsing its blobs (never the work tree), with ``extract_many`` exactly as
the structural indexer runs it, so kinds, lexical paths, signature hashes and def_uids agree with the
index. On top of each ``DefRow`` this adds the hash of the definition's *own* lines: its span plus the
decorator/annotation/attribute lines right above it, minus the lines of definitions nested in it. A class is then
"changed" only when its header or its own statements change, not whenever one of its methods does.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from typing import Generic, TypeVar

from codeplane.analysis.models import DefState, FileDefs
from codeplane.index.languages import detect
from codeplane.index.structural.extract import PARSED, extract_many
from codeplane.index.structural.facts import DefRow
from codeplane.index.structural.leading import attributed_start
from codeplane.repo.content import decode, is_binary

BINARY = "binary"
#: Files kept in the in-memory cache (least recently used go first); ~1 KB per definition.
CACHE_FILES = 8192


def own_line_numbers(path: str, lines: Sequence[str], state: DefState, children: Sequence[DefState]) -> list[int]:
    """1-based numbers of the non-blank lines that belong to ``state`` itself (decorators and attributes in,
    nested defs out)."""
    first = attributed_start(path, lines, state.start_line)
    cut: set[int] = set()
    for child in children:
        lo = attributed_start(path, lines, child.start_line)
        cut.update(range(max(lo, state.start_line + 1), child.end_line + 1))
    # Blank lines carry no meaning (and move whenever a nested definition is added or removed).
    return [n for n in range(first, min(state.end_line, len(lines)) + 1) if n not in cut and lines[n - 1].strip()]


def _digest(lines: Sequence[str]) -> str:
    return hashlib.blake2b("\n".join(line.rstrip() for line in lines).encode("utf-8", "surrogatepass"),
                           digest_size=12).hexdigest()


def children_of(defs: Sequence[DefState]) -> dict[str, list[DefState]]:
    out: dict[str, list[DefState]] = {}
    for d in defs:
        if d.parent_uid is not None:
            out.setdefault(d.parent_uid, []).append(d)
    return out


def _states(path: str, rows: Sequence[DefRow], text: str) -> tuple[DefState, ...]:
    lines = text.split("\n")
    plain = [DefState(r.def_uid, r.kind, r.name, r.lexical_path, r.start_line, r.start_col, r.end_line, r.end_col,
                      r.signature_hash, r.display_name, r.parent_uid) for r in rows]
    kids = children_of(plain)
    out: list[DefState] = []
    for row, state in zip(rows, plain, strict=True):
        numbers = own_line_numbers(path, lines, state, kids.get(state.def_uid, ()))
        own = [lines[n - 1] for n in numbers]
        renamed = list(own)
        if row.name_line in numbers:
            at = numbers.index(row.name_line)
            line = renamed[at]
            renamed[at] = line[:row.name_col] + "\0" + line[row.name_col + len(row.name):]
        out.append(replace(state, own_hash=_digest(own), rename_hash=_digest(renamed)))
    return tuple(out)


def file_defs(path: str, data: bytes) -> FileDefs:
    """Extract ``path`` holding ``data`` (uncached)."""
    return file_defs_many([(path, data)])[0]


def file_defs_many(items: Sequence[tuple[str, bytes]]) -> list[FileDefs]:
    """``file_defs`` for several files in one ``extract_many`` call: its garbage-collector pause is paid
    once, not once a file (a collection at every resume cost ~20 % of a cold diff)."""
    texts: list[tuple[str, str]] = []
    out: list[FileDefs | str] = []
    for path, data in items:
        if is_binary(data):
            info = detect(path)
            out.append(FileDefs(path, info.language if info else None, BINARY))
        else:
            out.append(decode(data))
            texts.append((path, out[-1]))  # type: ignore[arg-type]
    outcomes = iter(extract_many(texts))
    done: list[FileDefs] = []
    for (path, _), item in zip(items, out, strict=True):
        if isinstance(item, FileDefs):
            done.append(item)
            continue
        outcome = next(outcomes)
        if outcome.status != PARSED or outcome.facts is None:
            done.append(FileDefs(path, outcome.language, outcome.status))
        else:
            done.append(FileDefs(path, outcome.language, PARSED, _states(path, outcome.facts.defs, item)))
    return done


K = TypeVar("K")
V = TypeVar("V")


class Lru(Generic[K, V]):
    """A thread-safe least-recently-used map with hit/miss counts."""

    def __init__(self, max_items: int) -> None:
        self._max = max_items
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
            else:
                self._items.move_to_end(key)
                self.hits += 1
            return found

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._max:
                self._items.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


class FactsCache(Lru[tuple[str, str], FileDefs]):
    """``FileDefs`` by (path, blob id): the path matters because def_uids and the language depend on it."""

    def __init__(self, max_files: int = CACHE_FILES) -> None:
        super().__init__(max_files)

    def lookup(self, path: str, blob_id: str) -> FileDefs | None:
        return self.get((path, blob_id))

    def peek(self, path: str, blob_id: str) -> bool:
        """Whether ``(path, blob_id)`` is cached, without counting a hit or a miss."""
        return (path, blob_id) in self

    def store(self, path: str, blob_id: str, defs: FileDefs) -> None:
        self.put((path, blob_id), defs)
