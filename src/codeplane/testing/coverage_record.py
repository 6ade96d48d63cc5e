"""From what the pytest coverage plugin wrote to stored evidence and a run's coverage report (§11.9.5).

Each test process of a ``coverage=true`` run writes one JSON file (``_pytest_plugin/codeplane_pytest_coverage``):
the repository files whose code ran with the SHA-256 of their content, the code objects that ran (file, first
line, name), per test and outside any test. Here each file version is mapped to its units
(``coverage_units.py``) through the structural index — only when the index holds exactly the content that
ran; a file that changed while the tests ran, or that the index has not caught up with, is *unmapped*: its
evidence is not stored, and a test that ran code in it cannot vouch for what it did not run.

A run started with changed lines (``affected_by``) also gets its coverage of that change: which changed
definitions ran, and which changed lines of their bodies (the plugin counts those line by line).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codeplane.core.logging import get_logger
from codeplane.repo.content import decode
from codeplane.testing.coverage_store import CoverageStore, RecordedBatch, RecordedTest
from codeplane.testing.coverage_units import CurrentUnits, FileUnits, file_units, index_defs
from codeplane.testing.impact import ReadConnection
from codeplane.testing.model import ChangedUnitCoverage, RunCoverage, Target
from codeplane.testing.runners.base import CoverageSetup

log = get_logger(__name__)
#: Inline bounds of a run's coverage report.
MAX_CHANGED = 50
MAX_UNMAPPED = 20
MAX_MISSED_LINES = 20
#: Outcomes whose evidence can show what a test did not run (a failure may be a flaky one).
TRUSTED_OUTCOMES = frozenset({"passed", "skipped"})

Unit = tuple[str, str]


@dataclass(frozen=True)
class ChangedCode:
    """A run's changed lines, by file: each code line's function unit (None: it runs at import)."""

    lines: Mapping[str, Mapping[int, str | None]]

    def units(self) -> set[Unit]:
        return {(path, unit) for path, owners in self.lines.items() for unit in owners.values() if unit}


def changed_code(current: CurrentUnits, changes: Mapping[str, Sequence[tuple[int, int]]]) -> ChangedCode:
    """The owners of the changed lines (``path`` → 1-based inclusive ranges in the file as it is now). Blank
    and comment-only lines are left out; a file whose units are unknown (not indexed yet) too."""
    found: dict[str, dict[int, str | None]] = {}
    for path, ranges in sorted(changes.items()):
        units = current.units(path) if path.endswith(".py") else None
        content = current.content(path)
        if units is None or content is None:
            continue
        text = decode(content[1]).splitlines()
        owners: dict[int, str | None] = {}
        for first, last in ranges:
            for line in range(max(1, min(first, last)), min(max(first, last), len(text)) + 1):
                stripped = text[line - 1].strip()
                if stripped and not stripped.startswith("#"):
                    owners[line] = units.owner(line)
        if owners:
            found[path] = owners
    return ChangedCode(found)


class CoverageRecorder:
    """Prepares a coverage run's processes and stores what they recorded. Thread-safe (the store is)."""

    def __init__(self, store: CoverageStore, read: ReadConnection, root: Path) -> None:
        self.store = store
        self.read = read
        self.root = root

    def setup(self, workdir: Path, changed: ChangedCode | None) -> CoverageSetup:
        workdir.mkdir(parents=True, exist_ok=True)
        lines_file = None
        if changed is not None and changed.lines:
            lines_file = workdir / "coverage-lines.json"
            lines_file.write_text(json.dumps({str(self.root / p): _spans(sorted(owners))
                                              for p, owners in changed.lines.items()}), encoding="utf-8")
        return CoverageSetup(workdir / "coverage", self.root, lines_file)

    def collect(self, setup: CoverageSetup, run_id: str, targets: Sequence[Target],
                changed: ChangedCode | None) -> RunCoverage:
        payloads = []
        for path in sorted(setup.out_dir.glob("*.json")) if setup.out_dir.is_dir() else ():
            try:
                payloads.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError) as exc:
                log.warning("unreadable coverage result", file=path.name, reason=str(exc))
        if not payloads:
            return RunCoverage(tests=0, note="no test process recorded coverage (pytest only; a process that was "
                                              "killed, or a configured cmd that drops the environment, writes none)")
        scopes = {t.path: t.cases for t in targets if t.path}
        with self.read() as conn:
            mapper = _Mapper(conn, os.path.realpath(self.root))
            batches = [mapper.batch(p, run_id, scopes) for p in payloads]
        stored = self.store.record(batches)
        tests = [t for b in batches for t in b.tests]
        unmapped = sorted(f"{p}: {why}" for p, why in mapper.why.items())
        report = RunCoverage(
            tests=stored, untrusted=sum(1 for t in tests if t.unseen or t.outcome not in TRUSTED_OUTCOMES),
            files=len({p for b in batches for p in b.files}), unmapped=tuple(unmapped[:MAX_UNMAPPED]),
            unmapped_total=len(unmapped),
            note="" if stored or not tests else "the evidence could not be stored (see the server log)")
        if changed is None or not changed.lines:
            return report
        return _changed_report(report, changed, batches, payloads, mapper)


def _spans(lines: Sequence[int]) -> list[list[int]]:
    spans: list[list[int]] = []
    for line in lines:
        if spans and spans[-1][1] == line - 1:
            spans[-1][1] = line
        else:
            spans.append([line, line])
    return spans


class _Mapper:
    """Maps one coverage run's files and code objects to units, each file version once."""

    def __init__(self, conn: Any, root: str) -> None:
        self.conn = conn
        self.root = root
        self.versions: dict[tuple[str, str], FileUnits | None] = {}
        self.why: dict[str, str] = {}

    def rel(self, path: str) -> str | None:
        real = os.path.realpath(path)
        if not real.startswith(self.root + os.sep):
            return None
        return real[len(self.root) + 1:].replace(os.sep, "/")

    def units(self, rel: str, sha: str) -> FileUnits | None:
        key = (rel, sha)
        if key not in self.versions:
            self.versions[key] = self._units(rel, sha)
        return self.versions[key]

    def _units(self, rel: str, sha: str) -> FileUnits | None:
        indexed = index_defs(self.conn, rel)
        if indexed is None:
            self.why[rel] = "not in the index"
            return None
        if indexed[0] != sha:
            self.why[rel] = "changed while the tests ran, or not indexed yet"
            return None
        try:
            data = (Path(self.root) / rel).read_bytes()
        except OSError:
            data = b""
        if hashlib.sha256(data).hexdigest() != sha:
            self.why[rel] = "changed while the tests ran"
            return None
        units = file_units(indexed[1], decode(data))
        if units is None:
            self.why[rel] = "does not tokenize"
        return units

    def batch(self, payload: Mapping[str, Any], run_id: str, scopes: Mapping[str, tuple[str, ...]]) -> RecordedBatch:
        files: dict[str, str] = {}
        by_index: list[tuple[str, FileUnits | None] | None] = []
        for path, sha in payload.get("files", ()):
            rel = self.rel(str(path))
            if rel is None:
                by_index.append(None)
                continue
            files[rel] = str(sha)
            by_index.append((rel, self.units(rel, str(sha))))
        codes: list[tuple[str | None, Unit | None]] = []  # (file, unit) per code index
        for file_index, first, name, function in payload.get("codes", ()):
            entry = by_index[int(file_index)] if 0 <= int(file_index) < len(by_index) else None
            if entry is None:
                codes.append((None, None))
                continue
            rel, units = entry
            unit = units.unit_of_code(int(first), str(name), bool(function)) if units is not None else None
            codes.append((rel, (rel, unit) if unit else None))

        def ran(indices: Sequence[int]) -> tuple[frozenset[Unit], bool]:
            """The units code objects ``indices`` belong to, and whether any ran in an unmapped file."""
            found: set[Unit] = set()
            blind = False
            for index in indices:
                rel, unit = codes[index] if 0 <= index < len(codes) else (None, None)
                if unit is not None:
                    found.add(unit)
                elif rel is not None and self.versions.get((rel, files.get(rel, ""))) is None:
                    blind = True
            return frozenset(found), blind

        outside, _ = ran([int(i) for i in payload.get("outside", ())])
        tests = []
        for nodeid, item_file, outcome, unseen, indices, seq in payload.get("tests", ()):
            test_file = self.rel(str(item_file))
            if test_file is None:
                continue
            case = str(nodeid).split("::", 1)[1] if "::" in str(nodeid) else ""
            executed, blind = ran([int(i) for i in indices])
            tests.append(RecordedTest(f"{test_file}::{case}", test_file, str(outcome), bool(unseen) or blind,
                                      _scope(case, scopes.get(test_file)), executed, int(seq)))
        versions = {k: u for k, u in self.versions.items() if u is not None and files.get(k[0]) == k[1]}
        return RecordedBatch(run_id, files, versions, outside, tests)


def _scope(case: str, selected: tuple[str, ...] | None) -> str:
    """``""`` when the test's whole file ran (its recording is complete), else the selected case it ran under."""
    if selected is None:
        return case  # a file this run did not target (pytest collected it through another file)
    if not selected:
        return ""
    base = case.split("[", 1)[0]
    return next((c for c in selected if base == c or base.startswith(c + "::")), case)


def _changed_report(report: RunCoverage, changed: ChangedCode, batches: Sequence[RecordedBatch],
                    payloads: Sequence[Mapping[str, Any]], mapper: _Mapper) -> RunCoverage:
    ran = {u for b in batches for t in b.tests for u in t.units} | {u for b in batches for u in b.outside}
    executable: dict[str, set[int]] = {}
    executed: dict[str, set[int]] = {}
    for payload in payloads:
        for key, into in (("executable", executable), ("lines", executed)):
            for path, lines in (payload.get(key) or {}).items():
                rel = mapper.rel(str(path))
                if rel is not None:
                    into.setdefault(rel, set()).update(int(n) for n in lines)
    units: dict[Unit, list[int]] = {}
    import_time = 0
    for path, owners in changed.lines.items():
        for line, unit in owners.items():
            if unit is None:
                import_time += 1
            elif line in executable.get(path, ()):
                units.setdefault((path, unit), []).append(line)
            else:
                units.setdefault((path, unit), [])
    rows = []
    for (path, name), lines in units.items():
        run = [n for n in lines if n in executed.get(path, ())]
        missed = sorted(set(lines) - set(run))
        rows.append(ChangedUnitCoverage(path, name, (path, name) in ran, len(lines), len(run),
                                        tuple(missed[:MAX_MISSED_LINES])))
    rows.sort(key=lambda r: (r.ran, r.lines_run == r.lines, r.path, r.name))
    return replace(report, changed=tuple(rows[:MAX_CHANGED]), changed_total=len(rows),
                   changed_run=sum(1 for r in rows if r.ran), lines=sum(r.lines for r in rows),
                   lines_run=sum(r.lines_run for r in rows), import_time_lines=import_time)
