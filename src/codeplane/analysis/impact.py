"""Blast radius of each change from the structural index as it is now (§23.7 ImpactInfo).

The index describes the work tree, so the definition is looked up there: by its uid on the target side
(what the extractor gives a work-tree file equals the index's uid), else by file + kind + lexical path.
Found: PROVEN/STRONG counts come from references the index resolved to it (``ref_facts_resolved``), and
the ANCHORED/UNKNOWN counts are same-named references nothing resolved (candidates). A removed definition
not found: only the candidates (``ref_facts_partial``). Any other not found in its file is not "unreferenced":
for a revision whose file moved since, the one definition of its kind and lexical path elsewhere in the index is
counted (``indexed_at`` names its file); else its references are ``unknown`` (``refs_unknown`` says why). A
required member added to a type (``members.py``) is counted as the type (``refs_of``). A rename or a move
also counts what still uses the base side's identity, which the index cannot resolve to the new definition:
imports of the old name from the old module, the references bound to those imports, and (a rename) the
references spelled with the old name (``stale_importing_files`` names the importers). Each annotation is
fail-open: an error leaves that field empty and the basis ``unknown``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from codeplane.analysis.models import MOVED, REMOVED, RENAMED, Change, DefState, Impact
from codeplane.core.logging import get_logger
from codeplane.index.structural import models as m
from codeplane.index.structural.queries import StructuralQueries

log = get_logger(__name__)

#: Files listed per list in one ImpactInfo (the totals stay exact).
MAX_FILES = 20
#: Same-named definitions of one kind looked at to find where a target revision's definition lives now.
MAX_RELOCATED = 1000
#: The tests service's ``tests_for``: test targets for changed paths, per test case where changed lines are given.
TestsFor = Callable[[Sequence[str], Mapping[str, Sequence[tuple[int, int]]] | None], list[str]]


def visibility(state: DefState, language: str | None) -> str:
    name = state.name
    header = f" {state.display_name} "
    for word in ("private", "protected", "internal"):
        if f" {word} " in header:
            return word
    if language == "go":
        return "public" if name[:1].isupper() else "private"
    if name.startswith("__") and name.endswith("__"):
        return "public"
    return "private" if name.startswith("_") or name.startswith("#") else "public"


def _dunder(state: DefState) -> bool:
    """A member the language calls by its protocol (``__init__``), never by a name written at a call site."""
    name = state.name
    return state.parent_uid is not None and len(name) > 4 and name.startswith("__") and name.endswith("__")


class Enricher:
    """One diff's enrichment over one read connection, with the affected tests looked up beforehand."""

    def __init__(self, conn: sqlite3.Connection | None, tests: dict[str, tuple[str, ...]], *, exact: bool) -> None:
        self._q = StructuralQueries(conn) if conn is not None else None
        self._tests = tests
        self._file_defs: dict[str, list[m.DefFact]] = {}
        self._importers: dict[str, list[m.ImportFact]] = {}
        #: The target is the work tree, which the index describes.
        self._exact = exact

    def impact(self, change: Change, language: str | None) -> Impact:
        """Each annotation (references, importers; tests were looked up before) fails on its own (§23.7)."""
        state = change.entity
        # A required member added to a type is felt where the type is used: the type's references are the radius.
        subject = change.owner or state
        tests = self._tests.get(change.path, ())
        seen = visibility(state, language)
        if self._q is None:
            return Impact("unknown", "low", affected_test_files=tests[:MAX_FILES], affected_test_files_total=len(tests),
                          visibility=seen)
        q = self._q
        try:
            found = self._find(change.path, subject, change.new if change.owner is None else change.owner)
            elsewhere = None
            if found is None and change.change != REMOVED and not self._exact:
                # Only for a revision: in a work-tree diff the index describes the same files, and a definition
                # missing from its file is one the index has not caught up with, not one that moved.
                found = elsewhere = self._relocated(change.path, subject)
            candidates = q.count_unresolved_refs_by_token(subject.name)
            anchored, unknown = candidates.get("ANCHORED", 0), candidates.get("UNKNOWN", 0)
            if found is None and change.change != REMOVED:
                # Not "no reference": the index holds no such definition to count references of (a target revision
                # whose file moved since, or a definition renamed since); only same-named candidates are known.
                why = "not_indexed_yet" if self._exact else "not_in_file" if q.file(change.path) is not None \
                    else "file_not_in_index"
                refs = Impact("unknown", "low", anchored=anchored, unknown=unknown, refs_unknown=why)
            elif found is None:
                if _dunder(subject):
                    # The runtime calls ``__init__``/``__eq__``: every same-named token in the repository is another
                    # class's, so they are no candidates for this one (QA65 F4 counted 24 for one ``__init__``).
                    anchored = unknown = 0
                refs = self._through_imports(change.path, subject,
                                             Impact("ref_facts_partial", "low", anchored=anchored, unknown=unknown))
            else:
                counts = q.count_refs_by_def_uid(found.def_uid)
                files = q.list_referencing_files(found.def_uid, limit=MAX_FILES + 1)
                total = len(files) if len(files) <= MAX_FILES else self._count_files(found.def_uid)
                refs = Impact("ref_facts_resolved", "high" if self._exact else "low",
                              counts.get("PROVEN", 0), counts.get("STRONG", 0), anchored, unknown,
                              tuple(files[:MAX_FILES]), total,
                              indexed_at=elsewhere.path if elsewhere is not None else None)
        except Exception as exc:  # noqa: BLE001 - enrichment is fail-open (§23.7)
            log.warning("semantic_diff reference lookup failed", path=change.path, error=str(exc))
            found, refs = None, Impact("unknown", "low")
        try:
            importing = self._importing(found.path if found is not None else change.path, subject)
        except Exception as exc:  # noqa: BLE001 - enrichment is fail-open (§23.7)
            log.warning("semantic_diff importer lookup failed", path=change.path, error=str(exc))
            importing = ()
        stale: tuple[str, ...] = ()
        if change.change in (RENAMED, MOVED) and refs.reference_basis != "unknown":
            try:
                refs, stale = self._old_identity(change, refs)
            except Exception as exc:  # noqa: BLE001 - enrichment is fail-open (§23.7)
                log.warning("semantic_diff old-name lookup failed", path=change.path, error=str(exc))
            importing = tuple(sorted({*importing, *stale}))
        return replace(refs, importing_files=importing[:MAX_FILES], importing_files_total=len(importing),
                       stale_importing_files=stale[:MAX_FILES], stale_importing_files_total=len(stale),
                       affected_test_files=tests[:MAX_FILES], affected_test_files_total=len(tests), visibility=seen,
                       refs_of=change.owner.lexical_path if change.owner is not None else None)

    def _through_imports(self, path: str, state: DefState, refs: Impact) -> Impact:
        """``refs`` of a removed definition plus the uses bound to imports of its name from its module
        (``from .k import K`` then ``K(...)``): each breaks, though nothing in the index resolves to it any more."""
        assert self._q is not None
        if state.parent_uid is not None:
            return refs
        tiers: Counter[str] = Counter()
        files: set[str] = set()
        for imp in self._imports_of(path):
            if imp.imported_name == state.name:
                tiers.update(self._q.count_refs_by_def_uid(imp.import_uid))
                files.update(self._q.list_referencing_files(imp.import_uid, limit=MAX_FILES + 1))
        listed = sorted(files)
        return replace(refs, proven=refs.proven + tiers["PROVEN"], strong=refs.strong + tiers["STRONG"],
                       anchored=refs.anchored + tiers["ANCHORED"], unknown=refs.unknown + tiers["UNKNOWN"],
                       referencing_files=tuple(listed[:MAX_FILES]), referencing_files_total=len(listed))

    def _old_identity(self, change: Change, refs: Impact) -> tuple[Impact, tuple[str, ...]]:
        """``refs`` plus what uses the definition as the base had it (its old name in its old module), and the
        files importing it so: callers a rename or a move breaks (the index holds the target, where that name
        resolves to nothing, so the new definition's own counts miss them)."""
        assert self._q is not None
        old = change.old
        assert old is not None
        imports = [] if old.parent_uid is not None else [
            i for i in self._imports_of(change.old_path or change.path) if i.imported_name == old.name]
        tiers: Counter[str] = Counter()
        files = set(refs.referencing_files)
        for imp in imports:
            tiers.update(self._q.count_refs_by_def_uid(imp.import_uid))
            files.update(self._q.list_referencing_files(imp.import_uid, limit=MAX_FILES + 1))
        if change.change == RENAMED and old.name != change.name:
            tiers.update(self._q.count_unresolved_refs_by_token(old.name))
        listed = sorted(files)
        more = len(listed) - len(refs.referencing_files)
        return replace(refs, proven=refs.proven + tiers["PROVEN"], strong=refs.strong + tiers["STRONG"],
                       anchored=refs.anchored + tiers["ANCHORED"], unknown=refs.unknown + tiers["UNKNOWN"],
                       referencing_files=tuple(listed[:MAX_FILES]),
                       referencing_files_total=refs.referencing_files_total + max(more, 0)), tuple(
            sorted({i.path for i in imports}))

    def _find(self, path: str, state: DefState, target: DefState | None) -> m.DefFact | None:
        """``state`` in the index: by the target side's uid (a work-tree file's equals the index's), else by its
        file, kind and lexical path when exactly one definition there has them."""
        assert self._q is not None
        if target is not None:
            hit = self._q.get_def(target.def_uid)
            if hit is not None and hit.path == path:
                return hit
        defs = self._file_defs.get(path)
        if defs is None:
            defs = self._file_defs[path] = self._q.list_defs_in_file(path, limit=100_000)
        same = [d for d in defs if d.kind == state.kind and d.lexical_path == state.lexical_path]
        return same[0] if len(same) == 1 else None

    def _relocated(self, path: str, state: DefState) -> m.DefFact | None:
        """The one definition of ``state``'s kind and lexical path the index holds in another file, if there is
        exactly one: where a target revision's definition lives now that its file moved (``math.ts`` ->
        ``money/format.ts``). Two or more: which one it became is not known, so none."""
        assert self._q is not None
        named = self._q.list_defs_by_name(state.name, limit=MAX_RELOCATED + 1, kinds=(state.kind,))
        found = [d for d in named if d.lexical_path == state.lexical_path and d.path != path]
        return found[0] if len(found) == 1 and len(named) <= MAX_RELOCATED else None

    def _count_files(self, def_uid: str) -> int:
        assert self._q is not None
        return len(self._q.list_referencing_files(def_uid, limit=100_000))

    def _importing(self, path: str, state: DefState) -> tuple[str, ...]:
        """Files whose imports of ``path`` name this definition (top-level definitions only)."""
        assert self._q is not None
        if state.parent_uid is not None:
            return ()
        return tuple(sorted({i.path for i in self._imports_of(path) if i.imported_name == state.name}))

    def _imports_of(self, path: str) -> list[m.ImportFact]:
        assert self._q is not None
        imports = self._importers.get(path)
        if imports is None:
            imports = self._importers[path] = self._q.list_importers(path, limit=100_000)
        return imports


#: Changed files whose tests are selected from their changed lines (each walk may take up to the delta's 0.1 s
#: budget); the files past these, in path order, are selected by their importers, wider and quick.
SHARP_FILES = 20


class PageTests:
    """Each changed file's affected tests, looked up when a page shows one of its changes (a lookup walks the
    import graph, ~30 ms a file on Django: looking up all 1,485 files of a diff took 45 s whatever the page).
    A file gets the same answer as when every file was looked up at once: its lines are used if it is among
    the first ``SHARP_FILES`` changed files by path, as before."""

    def __init__(self, paths: Sequence[str], tests_for: TestsFor | None,
                 lines: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> None:
        ordered = sorted(set(paths))
        self._sharp = {p: tuple(lines[p]) for p in ordered[:SHARP_FILES] if lines and lines.get(p)}
        self._tests_for = tests_for
        self._done: dict[str, tuple[str, ...] | None] = {}
        self._lock = threading.Lock()
        #: Files looked up so far (observable: a page looks up only its own files).
        self.looked_up = 0

    def _lookup(self, path: str) -> tuple[str, ...] | None:
        if self._tests_for is None:
            return None
        changed = self._sharp.get(path)
        try:
            # Test cases (``file::case``) where the lines let the graph pick them; the answer names their files.
            return tuple(sorted({t.split("::", 1)[0] for t in self._tests_for([path], {path: changed} if changed
                                                                                else None)}))
        except Exception as exc:  # noqa: BLE001 - enrichment is fail-open (§23.7)
            log.warning("semantic_diff test lookup failed", path=path, error=str(exc))
            return None

    def known(self, path: str) -> bool:
        """Whether ``path``'s lookup succeeded (looking it up first if needed)."""
        self.of(path)
        with self._lock:
            return self._done.get(path) is not None

    def of(self, path: str) -> tuple[str, ...]:
        with self._lock:
            if path in self._done:
                return self._done[path] or ()
        found = self._lookup(path)  # outside the lock: a slow walk must not hold other pages up
        with self._lock:
            if path not in self._done:
                self.looked_up += 1
                self._done[path] = found
            return self._done[path] or ()

    def fill(self, change: Change) -> Change:
        """``change`` with its file's affected tests in its impact."""
        if change.impact is None or self._tests_for is None:
            return change
        tests = self.of(change.path)
        return replace(change, impact=replace(change.impact, affected_test_files=tests[:MAX_FILES],
                                              affected_test_files_total=len(tests)))


def union_of_tests(paths: Sequence[str], tests_for: TestsFor | None,
                   lines: Mapping[str, Sequence[tuple[int, int]]] | None = None) -> tuple[str, ...]:
    """Every test file the changes to ``paths`` affect (the hint's count), in one walk for all of them (3 s for
    Django's 1,485 files, where a walk per file took 45 s): the selection ``inspect_affected_tests`` makes for the
    whole change, with the first ``SHARP_FILES`` files' changed lines."""
    ordered = sorted(set(paths))
    if tests_for is None or not ordered:
        return ()
    sharp = {p: lines[p] for p in ordered[:SHARP_FILES] if lines and lines.get(p)}
    try:
        return tuple(sorted({t.split("::", 1)[0] for t in tests_for(ordered, sharp or None)}))
    except Exception as exc:  # noqa: BLE001 - enrichment is fail-open (§23.7)
        log.warning("semantic_diff test lookup failed", paths=len(ordered), error=str(exc))
        return ()
