"""Coverage evidence in test selection (issue 22): the static graph's answer, sharpened by what tests ran.

Why evidence may leave a test out: a test runs as a function of the code it executes. If nothing it executed
when its evidence was recorded has changed since, it runs exactly as it did — so a change it did not execute
cannot affect it. What "changed since" means is worked out per recorded file version (``coverage_units.py``):
its import-time part (module code, class bodies, decorators, signatures) or a set of function bodies.

For a selection with changed lines, the *changed units* are the functions owning the changed lines plus every
function body that changed since any recording. Then each test the graph selected is:

- **kept, by coverage**: its evidence shows it ran a changed definition (tests the graph did not reach are
  added the same way);
- **kept, by the graph**: no evidence (a new test), or evidence that cannot vouch for what it did not run:
  recorded by a process that loaded a file changed at import level since, or in which a changed function ran
  outside any test (at import, at collection); a failed test; one that started a process; one that ran
  another function changed since its recording; one recorded after a test of the same process ran changed
  code, when it ran code that leads there through resolved references, or through any use when a caching
  decorator (``lru_cache``, ``cached_property``...) lies on the way (state left behind — a cache filled
  by the first caller — can be why it skipped it: click caches its wrapped streams, packaging's
  ``_get_musl_version`` its ELF interpreter) or a function that imports
  a module whose import-time code the graph fell back for (a module runs its code on the first import of a
  process only: flaskr's ``create_app`` imports ``flaskr.auth``, whose ``Blueprint(...)`` ran in the first
  test alone); or a recording that did not run all of its cases;
- **left out**: evidence that is fresh by all of the above and shows it ran none of the changed units.

Nothing is left out unless every change lies inside function bodies of files some recorded run loaded:
module-level and class-body changes, decorators and signatures, files without changed lines, new files —
the graph alone decides there, and the answer says why.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from codeplane.testing.coverage_record import TRUSTED_OUTCOMES, ChangedCode, Unit, changed_code
from codeplane.testing.coverage_store import CoverageStore, TestRow
from codeplane.testing.coverage_units import Change, CurrentUnits, compare, indexed_shas
from codeplane.testing.impact import CaseMatch, ImpactResult, TestMatch
from codeplane.testing.impact_modules import NO_TEST_REACHES
from codeplane.testing.impact_reach import CoverageUse

#: Inline bounds of what the answer lists.
MAX_LISTED = 20
#: Modules leading by import-time imports to a file the graph fell back for, beyond which every test may import one.
_MAX_IMPORTERS = 5_000
#: Ids per ``IN`` list.
_CHUNK = 400


def _chunks(ids: Sequence[int]) -> Iterable[Sequence[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start:start + _CHUNK]


@dataclass
class _Evidence:
    """The evidence and what changed since it was recorded, for one selection."""

    seeds: set[Unit]
    changed: set[Unit]
    stale_batches: dict[int, str]
    by_test: dict[int, set[Unit]]
    runs: dict[int, str]
    #: Per recording process, the place of the first test that ran changed code.
    first_change: dict[int, int]
    #: Tests that ran code leading to a changed definition (None: every test may have).
    leads: set[int] | None

    def state(self, row: TestRow) -> str:
        """``ran`` (a changed definition), ``stale``, ``untrusted``, ``other`` (ran code changed since its
        recording), ``after`` (changed code ran earlier in its process, and it ran code leading there: a
        cache filled then may be why it did not run it), or ``clean`` (fresh, and ran none of the changes)."""
        ran = self.by_test.get(row.test_id, set())
        if ran & self.seeds:
            return "ran"
        if row.batch_id in self.stale_batches:
            return "stale"
        if row.unseen or row.outcome not in TRUSTED_OUTCOMES:
            return "untrusted"
        if ran:
            return "other"
        first = self.first_change.get(row.batch_id)
        if first is not None and first < row.seq and (self.leads is None or row.test_id in self.leads):
            return "after"
        return "clean"

    def chain(self, row: TestRow) -> tuple[str, ...]:
        unit = sorted(self.by_test.get(row.test_id, set()) & self.seeds)[0]
        return (f"{row.test_file}::{row.base}",
                f"{unit[1]} (changed; ran in coverage run {self.runs.get(row.batch_id, '?')})")


def _is_case(qualified_name: str) -> bool:
    """A test function or method (``test_x``, ``TestC.test_x``) rather than a helper or a fixture."""
    return qualified_name.rsplit(".", 1)[-1].startswith("test")


def _covers(scope: str, case: str) -> bool:
    return scope in ("", case) or case.startswith(scope + "::")


def _under(base: str, case: str) -> bool:
    return base == case or base.startswith(case + "::")


class CoverageSelection:
    """One refinement over one read transaction of the index."""

    def __init__(self, store: CoverageStore, conn: sqlite3.Connection, current: CurrentUnits,
                 test_files: Iterable[str]) -> None:
        self.store = store
        self.conn = conn
        self.current = current
        self.test_files = frozenset(test_files)

    def refine(self, result: ImpactResult, changes: Mapping[str, Sequence[tuple[int, int]]]) -> ImpactResult:
        """``result`` with evidence applied. ``changes``: every changed path → its changed lines (as the file is
        now; empty: none given)."""
        with self.store.reading():
            if self.store.empty():
                return result
            code = changed_code(self.current, {p: r for p, r in changes.items() if r})
            versions = self.store.recorded_versions()
            why_not = self._why_not(changes, code, {path for path, _ in versions})
            reached = result.reached
            if reached is not None and result.fallbacks:
                importing = self._importing_functions(result.fallbacks)
                reached = None if importing is None else reached | importing
            evidence = self._evidence(code, versions, reached)
            return _Refinement(self.store, evidence, narrow=why_not is None, files=self.test_files,
                               current=self.current).apply(result, why_not or "")

    def _why_not(self, changes: Mapping[str, Sequence[tuple[int, int]]], code: ChangedCode,
                 loaded: set[str]) -> str | None:
        """Why evidence may not leave any test out of this selection, or None."""
        for path, ranges in sorted(changes.items()):
            if not ranges:
                return f"{path}: no changed lines (selected by imports)"
            if not path.endswith(".py"):
                return f"{path}: not a Python file"
            owners = code.lines.get(path)
            if owners is None:
                return f"{path}: its definitions as changed are not indexed yet"
            if path not in loaded:
                return f"{path}: no recorded run loaded it (a new file?)"
            import_time = sorted(line for line, unit in owners.items() if unit is None)
            if import_time:
                return (f"{path}:{import_time[0]}: runs at import (module level, class body, decorator or "
                        "signature)")
        if not code.units():
            return "no changed function body"
        # The graph's own fallbacks (a changed function called at import time, a use it cannot follow) need
        # no rule here: a changed function that ran outside any test makes that recording stale.
        return None

    def _importing_functions(self, fallbacks: Sequence[str]) -> frozenset[Unit] | None:
        """Functions whose body imports a file the graph fell back to module level for, or a module whose
        import-time imports lead there: a test running one may import that file, and its import-time code then
        runs the change once per process, so a later test of the process that imports it runs none of it
        (flaskr's ``create_app`` imports ``flaskr.auth``, whose ``Blueprint(...)`` runs on the first import
        only). None when too many modules lead there to say (every test may have)."""
        ids = {str(p): int(f) for f, p in self.conn.execute("SELECT file_id, path FROM st_file")}
        paths = {f: p for p, f in ids.items()}
        found = {ids[path] for f in fallbacks if (path := f.split(": ", 1)[0]) in ids}
        frontier = set(found)
        while frontier:
            if len(found) > _MAX_IMPORTERS:
                return None
            fresh: set[int] = set()
            for chunk in _chunks(sorted(frontier)):
                marks = ",".join("?" * len(chunk))
                fresh |= {int(f) for (f,) in self.conn.execute(
                    f"SELECT DISTINCT i.file_id FROM st_import i JOIN st_scope s ON s.scope_id = i.scope_id "
                    f"WHERE s.kind != 'function' AND (i.resolved_file_id IN ({marks}) OR i.resolved_alt_file_id "
                    f"IN ({marks}))", [*chunk, *chunk])}
            frontier = fresh - found
            found |= fresh
        units: set[Unit] = set()
        for chunk in _chunks(sorted(found)):
            marks = ",".join("?" * len(chunk))
            for file_id, line in self.conn.execute(
                    f"SELECT DISTINCT i.file_id, i.start_line FROM st_import i JOIN st_scope s ON s.scope_id = "
                    f"i.scope_id WHERE s.kind = 'function' AND (i.resolved_file_id IN ({marks}) OR "
                    f"i.resolved_alt_file_id IN ({marks}))", [*chunk, *chunk]).fetchall():
                owner = self.conn.execute(
                    "SELECT qualified_name FROM st_def WHERE file_id = ? AND start_line <= ? AND end_line >= ? "
                    "AND kind IN ('function', 'method') ORDER BY start_line DESC LIMIT 1",
                    (file_id, line, line)).fetchone()
                if owner is not None:
                    units.add((paths.get(int(file_id), ""), str(owner[0])))
        return frozenset(units)

    def _evidence(self, code: ChangedCode, versions: Mapping[tuple[str, str], list[int]],
                  reached: frozenset[Unit] | None) -> _Evidence:
        now = indexed_shas(self.conn, {path for path, _ in versions})
        for path in code.lines:
            sha = self.current.sha(path)  # the index may not have seen the last edit of a changed file
            if sha is not None:
                now[path] = sha
        stale: dict[int, str] = {}
        changed: set[Unit] = set()
        for (path, sha), batches in sorted(versions.items()):
            current = now.get(path)
            if current == sha:
                continue
            change = self._change(path, sha, current)
            if change.import_time:
                for batch in batches:
                    stale.setdefault(batch, f"{path}: {change.why} since it was recorded")
            else:
                changed |= {(path, name) for name in change.functions}
        seeds = code.units()
        by_test, outside = self.store.ran(seeds | changed)
        for batch, units in sorted(outside.items()):
            unit = sorted(units)[0]
            stale.setdefault(batch, f"{unit[0]}: {unit[1]} changed and ran outside any test (at import or "
                                    "collection)")
        first_change: dict[int, int] = {}
        for row in self.store.tests_by_id(by_test):
            first_change[row.batch_id] = min(row.seq, first_change.get(row.batch_id, row.seq))
        # What leads to a changed definition, apart from the test cases themselves (each selected one does).
        leads = None if reached is None else self.store.tests_running(
            u for u in reached if not (u[0] in self.test_files and _is_case(u[1])))
        return _Evidence(seeds, seeds | changed, stale, by_test, self.store.batch_runs(), first_change, leads)

    def _change(self, path: str, sha: str, current: str | None) -> Change:
        if current is None:
            return Change(True, why="deleted or no longer indexed")
        before = self.store.units_of(path, sha)
        if before is None:
            return Change(True, why="changed (its recorded definitions are not known)")
        return compare(before, self.current.units(path))


class _Refinement:
    def __init__(self, store: CoverageStore, evidence: _Evidence, *, narrow: bool, files: frozenset[str],
                 current: CurrentUnits) -> None:
        self.store = store
        self.evidence = evidence
        self.narrow = narrow
        self.files = files
        self.current = current
        self.confirmed = 0
        self.added = 0
        self.dropped: list[str] = []
        self.stale_tests = 0
        self.after_change = 0
        self.unrecorded = 0

    def apply(self, result: ImpactResult, why_not: str) -> ImpactResult:
        rows: dict[str, list[TestRow]] = {}
        for row in self.store.tests_in(m.test_file for m in result.matches):
            rows.setdefault(row.test_file, []).append(row)
        matches: dict[str, TestMatch] = {}
        for match in result.matches:
            kept = self._match(match, rows.get(match.test_file, []))
            if kept is not None:
                matches[match.test_file] = kept
        self._add(matches)
        ordered = tuple(matches[k] for k in sorted(matches))
        stale = sorted({why for why in self.evidence.stale_batches.values()})
        use = CoverageUse(narrowed=self.narrow, note=why_not, confirmed=self.confirmed, added=self.added,
                          dropped=tuple(sorted(self.dropped)[:MAX_LISTED]), dropped_total=len(self.dropped),
                          stale=tuple(stale[:MAX_LISTED]), stale_tests=self.stale_tests, unrecorded=self.unrecorded,
                          after_change=self.after_change)
        graph = result.hint
        if ordered:  # what evidence selected is a test that ran the change: "no test reaches it" no longer holds
            graph = graph.replace(NO_TEST_REACHES, "The graph reached no test; the selected tests are the "
                                                   "evidence's.")
        return replace(result, matches=ordered, coverage=use, hint=f"{_hint(use)} {graph}".strip())

    # -- one selected file -------------------------------------------------------------------------------
    def _match(self, match: TestMatch, rows: list[TestRow]) -> TestMatch | None:
        if not match.cases:
            return self._whole(match, rows)
        cases: dict[str, CaseMatch] = {}
        for case in match.cases:
            under = [r for r in rows if _under(r.base, case.case)]
            if self.narrow and len({r.base for r in under}) > 1 and self._recorded_whole(match.test_file, case, under):
                found = self._split(match.test_file, case, under)
            else:
                kept = self._case(match.test_file, case, under)
                found = [kept] if kept is not None else []
            for kept in found:
                cases.setdefault(kept.case, kept)
        if not cases:
            return None
        return replace(match, cases=tuple(cases[k] for k in sorted(cases)))

    def _recorded_whole(self, test_file: str, case: CaseMatch, rows: list[TestRow]) -> bool:
        """Whether the recordings of ``rows`` ran all of ``case`` and the file is as they saw it (the same tests)."""
        current = self.current.sha(test_file)
        return current is not None and any(_covers(r.scope, case.case) for r in rows) and all(
            self.store.batch_file_sha(batch, test_file) == current for batch in sorted({r.batch_id for r in rows}))

    def _split(self, test_file: str, case: CaseMatch, rows: list[TestRow]) -> list[CaseMatch]:
        """A case holding several tests (a test class), recorded whole: each test on its own evidence, as for a
        file the graph selected whole (``_whole``)."""
        by_base: dict[str, list[TestRow]] = {}
        for row in rows:
            by_base.setdefault(row.base, []).append(row)
        kept: list[CaseMatch] = []
        for base, mine in sorted(by_base.items()):
            states = [self.evidence.state(r) for r in mine]
            ran = [r for r, s in zip(mine, states, strict=True) if s == "ran"]
            if ran:
                self.confirmed += 1
                kept.append(CaseMatch(base, "high", self.evidence.chain(ran[0]), "coverage"))
            elif all(s == "clean" for s in states):
                self.dropped.append(f"{test_file}::{base}")
            else:
                self._count_kept(states)
                kept.append(CaseMatch(base, case.confidence, case.chain, case.source))
        return kept

    def _case(self, test_file: str, case: CaseMatch, rows: list[TestRow]) -> CaseMatch | None:
        if not rows:
            self.unrecorded += 1
            return case
        states = {r.nodeid: self.evidence.state(r) for r in rows}
        ran = [r for r in rows if states[r.nodeid] == "ran"]
        if ran:
            self.confirmed += 1
            return CaseMatch(case.case, "high", self.evidence.chain(ran[0]), "coverage")
        if self.narrow and all(s == "clean" for s in states.values()) and any(
                _covers(r.scope, case.case) for r in rows):
            self.dropped.append(f"{test_file}::{case.case}")
            return None
        self._count_kept(states.values())
        return case

    def _whole(self, match: TestMatch, rows: list[TestRow]) -> TestMatch | None:
        """A file the graph selected whole: evidence may cut it down to its cases that ran a change, when one
        recording ran all of it and the file has not changed since."""
        if not rows:
            self.unrecorded += 1
            return match
        states = {r.nodeid: self.evidence.state(r) for r in rows}
        keep = [r for r in rows if states[r.nodeid] != "clean"]
        complete = [r for r in rows if r.scope == ""]
        unchanged = any(self.store.batch_file_sha(r.batch_id, match.test_file) == self.current.sha(match.test_file)
                        for r in complete[:1])
        if not (self.narrow and complete and unchanged) or len(keep) == len(rows):
            # Nothing to leave out: the file stays whole (its collection errors count as its own).
            if any(s == "ran" for s in states.values()):
                self.confirmed += 1
            else:
                self._count_kept(states.values())
            return match
        if not keep:
            self.dropped.append(match.test_file)
            return None
        cases: dict[str, CaseMatch] = {}
        for row in keep:
            if states[row.nodeid] == "ran":
                cases.setdefault(row.base, CaseMatch(row.base, "high", self.evidence.chain(row), "coverage"))
            else:
                cases.setdefault(row.base, CaseMatch(row.base, match.confidence, (
                    f"{row.test_file}::{row.base}", *match.reasons[:1])))
        self.confirmed += sum(1 for c in cases.values() if c.source == "coverage")
        self.dropped += sorted({f"{r.test_file}::{r.base}" for r in rows if r.base not in cases})
        return replace(match, cases=tuple(cases[k] for k in sorted(cases)))

    def _count_kept(self, states: Iterable[str]) -> None:
        """A test kept although it ran none of the changes: its evidence could not vouch for it."""
        found = set(states)
        if found & {"stale", "untrusted", "other", "after"}:
            self.stale_tests += 1
            self.after_change += "after" in found

    # -- tests the graph did not reach ---------------------------------------------------------------------
    def _add(self, matches: dict[str, TestMatch]) -> None:
        ran = [t for t, units in self.evidence.by_test.items() if units & self.evidence.seeds]
        for row in self.store.tests_by_id(ran):
            if row.test_file not in self.files:
                continue
            known = matches.get(row.test_file)
            if known is not None and (not known.cases or any(_under(row.base, c.case) for c in known.cases)):
                continue
            case = CaseMatch(row.base, "high", self.evidence.chain(row), "coverage")
            self.added += 1
            if known is None:
                matches[row.test_file] = TestMatch(row.test_file, "high", (case.chain[-1],), (case,))
            else:
                matches[row.test_file] = replace(known, cases=tuple(sorted((*known.cases, case),
                                                                           key=lambda c: c.case)))


def _hint(use: CoverageUse) -> str:
    parts = [f"Coverage evidence: {use.confirmed} selected test(s) ran a changed definition"]
    if use.added:
        parts.append(f"{use.added} added that the graph did not reach")
    if use.dropped_total:
        parts.append(f"{use.dropped_total} left out (fresh evidence shows they ran none of the changed code)")
    if use.stale_tests:
        parts.append(f"{use.stale_tests} kept by the graph: their evidence is stale or untrusted (see coverage.stale)"
                     + (f", {use.after_change} of them ran after changed code in the same test process"
                        if use.after_change else ""))
    text = "; ".join(parts) + "."
    if not use.narrowed and use.note:
        text += f" Nothing was left out: {use.note}."
    return text
