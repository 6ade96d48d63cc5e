"""The term dictionary as one string, so an open fragment finds its terms with ``str.find`` instead of a regex.

A fragment that is not a whole token (``text`` syntax: ``cache`` must match ``get_cache_key``) was a Tantivy
regex ``.*cache.*`` over the whole term dictionary: it walks every term (~25 ms for Django's 166k, ~0.3 s on a
133k-file tree), per execution. Here the dictionary's terms are one newline-joined string, read once from a
searcher (``terms_with_prefix``), and the terms holding a fragment are found in it and asked for by
``term_set_query``: a few ms. When too many terms match (a one-letter fragment), the regex stays.

Exactness rests on one invariant: for a searcher of generation ``g >= base_generation``, every term it holds is
in the base or in ``added``. The base is read from a searcher taken while no write was pending (``dirty``: applied
but not committed), and from that moment every added document's text is run through the index's own analyzer
(the same tokens Tantivy stores) before it can be committed. Terms of deleted documents stay: asking for a term
no document holds finds nothing. A searcher older than the base (``g < base_generation``) uses the regex.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from codeplane.core.logging import get_logger

log = get_logger(__name__)

#: A term set costs per term it holds (~1.5 µs each on Django), the regex walk per term of the dictionary (~0.15 µs
#: each: ~25 ms for Django's 166k): beyond a tenth of the dictionary the regex is cheaper (``get`` holds 2.6k
#: terms: 4.6 ms as a set; a one-letter fragment ~77k: 290 ms as a set against ~100 ms as the regex). Never fewer
#: than :data:`MAX_TERMS`.
DICTIONARY_PER_SET_TERM = 10
MAX_TERMS = 2000


class TermIndex:
    def __init__(self, analyzer: Any, field: str) -> None:
        self._analyzer = analyzer
        self._field = field
        self._lock = threading.Lock()
        #: Writes applied to Tantivy's writer since the last commit or rollback.
        self._dirty = False
        #: Reloads so far: a searcher taken with generation ``g`` sees every commit before it.
        self.generation = 0
        self._recording = False
        self._building = False
        self._base: str | None = None
        self._base_generation = 0
        self._limit = MAX_TERMS
        #: Set when the read under way (on a thread of its own or a caller's) ends.
        self._read_done = threading.Event()
        self._read_done.set()
        self._added: set[str] = set()
        self._added_joined = "\n"

    # -- the writer's side (under the index's writer lock) ---------------------------------------------
    def applying(self, text: str | None) -> None:
        """A write is about to reach Tantivy's writer; ``text`` is an added document's content."""
        with self._lock:
            self._dirty = True
            recording = self._recording
        if recording and text:
            tokens = self._analyzer.analyze(text)
            with self._lock:
                if self._recording:
                    before = len(self._added)
                    self._added.update(tokens)
                    if len(self._added) != before:
                        self._added_joined = ""  # rebuilt when next read

    def committed(self) -> None:
        """Tantivy committed and reloaded: searchers from now on see the applied writes."""
        with self._lock:
            self._dirty = False
            self.generation += 1

    def rolled_back(self) -> None:
        with self._lock:
            self._dirty = False

    def reset(self) -> None:
        """Every document is going (or the index was rebuilt): start over from the next searcher."""
        with self._lock:
            self._recording = False
            self._base = None
            self._added = set()
            self._added_joined = "\n"
            self.generation += 1

    # -- the readers' side -----------------------------------------------------------------------------
    def snapshot(self, searcher: Callable[[], Any]) -> tuple[Any, int]:
        """A searcher and its generation, taken together."""
        with self._lock:
            return searcher(), self.generation

    def ensure_base(self, searcher: Callable[[], Any], *, wait: bool = False) -> None:
        """Read the base from a searcher, on a thread of its own unless ``wait`` (which also waits for a read on
        a thread already under way); nothing happens while a write is pending (the next query tries again) or once
        a base exists."""
        with self._lock:
            if self._building:
                # A read is under way, on a thread or in another caller (the server's warm-up): a caller that must
                # see the base waits for it (it went on with the regex, and the same query narrowed differently).
                done = self._read_done
                if not wait:
                    return
            elif self._base is not None or self._dirty:
                return
            else:
                self._building, self._recording = True, True
                self._read_done = threading.Event()
                current, generation = searcher(), self.generation
                if not wait:
                    threading.Thread(target=self._build, args=(current, generation), name="cpl-lexical-terms",
                                     daemon=True).start()
                    return
                done = None
        if done is not None:
            done.wait()
            return
        self._build(current, generation)

    def _build(self, searcher: Any, generation: int) -> None:
        try:
            terms = sorted(term for term, _ in searcher.terms_with_prefix(self._field, ""))
            joined = "\n" + "\n".join(terms) + "\n"
        except Exception:  # a missing base only means the regex path
            log.exception("reading the term dictionary failed")
            terms, joined = [], None
        with self._lock:
            self._building = False
            if joined is not None and self._recording:  # not reset meanwhile
                self._base, self._base_generation = joined, generation
                self._limit = max(MAX_TERMS, len(terms) // DICTIONARY_PER_SET_TERM)
            self._read_done.set()

    def matching(self, fragment: str, *, left_open: bool, right_open: bool, generation: int) -> list[str] | None:
        """Terms holding ``fragment`` (as a suffix, prefix or anywhere, by which sides are open) in every
        searcher of ``generation``, or ``None``: no base for it yet, or more than a set should hold (a tenth of the
        dictionary, at least :data:`MAX_TERMS`)."""
        with self._lock:
            base, limit = self._base, self._limit
            if base is None or generation < self._base_generation:
                return None
            if not self._added_joined:
                self._added_joined = "\n" + "\n".join(sorted(self._added)) + "\n"
            added = self._added_joined
        needle = ("" if left_open else "\n") + fragment + ("" if right_open else "\n")
        found: set[str] = set()
        for text in (base, added):
            if not _collect(text, needle, found, limit):
                return None
        return sorted(found)


def _collect(text: str, needle: str, found: set[str], limit: int) -> bool:
    """Add the terms of ``text`` (newline-joined) that hold ``needle``; ``False`` past ``limit``."""
    position = text.find(needle)
    while position >= 0:
        start = text.rfind("\n", 0, position + (1 if needle[0] == "\n" else 0)) + 1
        end = text.find("\n", position + len(needle) - (1 if needle[-1] == "\n" else 0))
        found.add(text[start:end])
        if len(found) > limit:
            return False
        position = text.find(needle, end)
    return True
