"""``refactor_impact`` (issue 9 item 5): what depends on a symbol or a file, before deleting it.

For a symbol: every reference the rename planner would touch, with its index tier and certainty, the
files that import it, the tests covering those files, and a deletion plan (the definition's lines,
decorators included) to preview and apply like any other plan. For a file: the files importing it, the
references into its definitions, and a plan deleting the file. Deleting never edits the references; the
report says whether any remain (``safe_to_delete``).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import canonicalize
from codeplane.refactor import attributes
from codeplane.refactor.assemble import Draft, build_option
from codeplane.refactor.decisions import symbol_ref
from codeplane.refactor.facts import Def, FactReader, FileInfo, Ref
from codeplane.refactor.jsimports import imported_files as js_imported
from codeplane.refactor.jsimports import is_js
from codeplane.refactor.members import ClassGraph
from codeplane.refactor.models import CERTAINTY_RANK, ImpactRef, ImpactReport
from codeplane.refactor.plans import PlanOption
from codeplane.refactor.pyimports import imported_files as py_imported
from codeplane.refactor.pymodules import PyModules, is_python
from codeplane.refactor.rename import plan_structural
from codeplane.refactor.spans import SourceText, SpanEdit
from codeplane.refactor.targets import resolve_targets

_LIMIT = 100_000
MAX_PAGE = 500
#: Importing files and affected test files listed (by path); the totals count them all. The tests to run come from
#: ``run_test_targets(affected_by=...)``, the importers from ``search``.
MAX_FILES = 100

_WORD = re.compile(r"[A-Za-z0-9_]+")
Reader = Callable[[Iterable[str]], tuple[dict[str, SourceText], dict[str, str]]]
TestsFor = Callable[[Sequence[str]], list[str]]


def _page(items: list[ImpactRef], cursor: str | None, limit: int,
          subject: str) -> tuple[list[ImpactRef], str | None]:
    """A page of ``items`` and the next one's cursor, ``<offset>:<digest>``: the digest names the subject and the
    whole list, so a cursor of another target, or one issued before the references changed (a write between
    pages gave duplicates and never showed the new ones), is 1005, as is an offset past the end."""
    digest = hashlib.sha256(repr((subject, [(r.path, r.line, r.column, r.tier, r.certainty) for r in items])).encode()
                            ).hexdigest()[:10]
    start = 0
    if cursor:
        offset, _, tag = cursor.partition(":")
        if not offset.isdigit() or tag != digest or int(offset) >= max(len(items), 1):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR, "this cursor is not one this impact issued, or the "
                                 "references changed since; run refactor_impact again", details={"cursor": cursor})
        start = int(offset)
    size = max(1, min(limit, MAX_PAGE))
    end = start + size
    return items[start:end], (f"{end}:{digest}" if end < len(items) else None)


def _definition_span(src: SourceText, d: Def) -> SpanEdit:
    """The definition's whole lines, with the decorator lines right above it."""
    start = d.line
    indent = src.line_text(d.line)[: len(src.line_text(d.line)) - len(src.line_text(d.line).lstrip())]
    while start > 1 and src.line_text(start - 1).startswith(indent + "@"):
        start -= 1
    end = d.end_line
    last = len(src.lines) - (1 if src.text.endswith("\n") else 0)
    # Blank lines after the definition go with it, so the spacing above it separates what remains.
    while end < last and not src.line_text(end + 1).strip():
        end += 1
    end_text = src.line_text(end)
    old = src.slice(start, 0, end, len(end_text))
    return SpanEdit(d.path, start, 0, end, len(end_text), old, "", "delete_definition")


@dataclass(frozen=True)
class Subject:
    """What an impact query is about: a file path or one definition."""

    path: str | None = None
    definition: Def | None = None

    def word(self) -> str:
        """The identifier whose lexical occurrences matter (a file's stem, a symbol's name)."""
        if self.definition is not None:
            return self.definition.name
        assert self.path is not None
        stem = posixpath.basename(self.path).split(".")[0]
        if stem in ("__init__", "index"):
            stem = posixpath.basename(posixpath.dirname(self.path)) or stem
        match = _WORD.search(stem)
        return match.group() if match else ""


class ImpactPlanner:
    def __init__(self, root: Path, reader: FactReader, mentions: set[str], read: Reader,
                 tests_for: TestsFor | None) -> None:
        self.root = root
        self.reader = reader
        #: Files holding the subject's word (from the lexical index, complete).
        self.mentions = mentions
        self.read = read
        self.tests_for = tests_for

    @staticmethod
    def subject(reader: FactReader, target: str, *, path: str | None, line: int | None,
                column: int | None) -> Subject:
        if path is None and line is None and ("/" in target or "." in target):
            rel = canonicalize(target).rel
            if any(f.path == rel for f in reader.files()):
                return Subject(path=rel)
        defs, total = resolve_targets(reader, target or None, path=path, line=line, column=column)
        if total > 1:
            raise CodePlaneError(
                ErrorCode.INVALID_ARGUMENTS,
                f"{target!r} names {total} definitions; pass one def_uid or a position",
                details={"field": "target", "candidates": [
                    {"def_uid": d.def_uid, "qualified_name": d.qualified_name, "path": d.path, "line": d.name_line}
                    for d in defs]})
        return Subject(definition=defs[0])

    def _tests(self, paths: Sequence[str]) -> tuple[list[str], str]:
        if self.tests_for is None:
            return [], "the testing subsystem is not wired; affected tests are unknown"
        try:
            return sorted(set(self.tests_for(sorted(set(paths))))), ""
        except Exception as exc:  # noqa: BLE001 - affected tests are advisory; never fail impact for them
            return [], f"affected tests unknown ({type(exc).__name__}: {exc})"

    def impact(self, subject: Subject, *, limit: int, cursor: str | None) -> tuple[ImpactReport, PlanOption | None]:
        if subject.definition is not None:
            current = self.reader.get_def(subject.definition.def_uid) or attributes.current(
                self.reader, subject.definition)
            if current is None:
                raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "the index changed while planning; retry",
                                     retryable=True)
            return self._symbol_impact(current, limit, cursor)
        assert subject.path is not None
        return self._file_impact(subject.path, {f.path: f for f in self.reader.files()}, limit, cursor)

    def _symbol_impact(self, d: Def, limit: int, cursor: str | None) -> tuple[ImpactReport, PlanOption | None]:
        structural = plan_structural(self.reader, ClassGraph(self.reader, self.root), d, d.name)
        paths = sorted({e.path for e, _ in structural.draft.code} | {d.path})
        sources, hashes = self.read(paths)
        refs: list[ImpactRef] = []
        for edit, certainty in structural.draft.code:
            at = (edit.line, edit.column)
            inside = edit.path == d.path and (d.line, d.column) <= at <= (d.end_line, d.end_column)
            if edit.reason in ("definition", "override", "overload", "stub") or inside:
                continue
            src = sources.get(edit.path)
            refs.append(ImpactRef(path=edit.path, line=edit.line, column=edit.column, tier=edit.reason,
                                  certainty=certainty, snippet=src.snippet(edit.line) if src else ""))
        planned = {(r.path, r.line, r.column) for r in refs}
        for use in self._through_module_object(d):
            if (use.path, use.line, use.column) not in planned:
                src = self.read([use.path])[0].get(use.path)
                refs.append(ImpactRef(path=use.path, line=use.line, column=use.column, tier="module_member",
                                      certainty="medium", snippet=src.snippet(use.line) if src else ""))
        refs.sort(key=lambda r: (-CERTAINTY_RANK[r.certainty], r.path, r.line, r.column))
        by_tier: dict[str, int] = {}
        for ref in refs:
            by_tier[ref.tier] = by_tier.get(ref.tier, 0) + 1
        importing = sorted({r.path for r in refs if r.tier == "import"})
        tests, note = self._tests(sorted({r.path for r in refs} | {d.path}))
        found = self.mentions
        page, next_cursor = _page(refs, cursor, limit, d.def_uid)
        option = None
        src = sources.get(d.path)
        # An attribute a method assigns (``attributes.py``) has no statement of its own to delete: no plan.
        if src is not None and self.reader.get_def(d.def_uid) is not None:
            draft = Draft(symbol=symbol_ref(d))
            draft.code.append((_definition_span(src, d), "high"))
            option = build_option("c1", draft, sources, hashes)
        report = ImpactReport(
            target_kind="symbol", symbol=symbol_ref(d), references=page, references_total=len(refs),
            by_tier=dict(sorted(by_tier.items())), importing_files=importing[:MAX_FILES],
            importing_files_total=len(importing), affected_tests=tests[:MAX_FILES], affected_tests_total=len(tests),
            affected_tests_note=note, lexical_mentions=len(found - {d.path} - {r.path for r in refs}),
            next_cursor=next_cursor, safe_to_delete=not refs,
            warnings=[] if not refs else [f"{len(refs)} reference(s) remain; deleting breaks them"],
        )
        return report, option

    def _through_module_object(self, d: Def) -> list[Ref]:
        """``utils.compact`` where ``utils`` binds ``d``'s whole module (``var utils = require('./utils')``) and
        linking found no export so named (CommonJS exports by assignment): deleting ``d`` breaks it too. A rename
        keeps such an export's key (``jsshorthand.py``), unless the export is ``d`` itself, defined in place
        (``exports.f = function ...``: ``rename._commonjs_export_uses``)."""
        if d.parent_uid is not None:
            return []
        members = [r for r in self.reader.refs_named(d.name, None, _LIMIT)
                   if r.is_member and r.target_uid is None and r.via_import_uid]
        modules = {i.import_uid for path in sorted({r.path for r in members})
                   for i in self.reader.imports_in_file(path, _LIMIT)
                   if i.imported_name == "*" and i.resolved_path == d.path}
        return [r for r in members if r.via_import_uid in modules]

    def _file_impact(self, rel: str, files: Mapping[str, FileInfo], limit: int,
                     cursor: str | None) -> tuple[ImpactReport, PlanOption | None]:
        sources, _ = self.read(sorted(p for p in self.mentions if p != rel and (is_python(p) or is_js(p))))
        importing: set[str] = set()
        if is_python(rel):
            mods = PyModules(p for p in files if is_python(p))
            importing = {p for p, s in sources.items() if is_python(p) and rel in py_imported(mods, s)}
        elif is_js(rel):
            universe = frozenset(files)
            importing = {p for p, s in sources.items() if is_js(p) and rel in js_imported(universe, s)}
        refs: list[ImpactRef] = []
        for d in self.reader.defs_in_file(rel, _LIMIT):
            for ref in self.reader.refs_to(d.def_uid, _LIMIT):
                if ref.path != rel:
                    certainty = "high" if ref.tier in ("PROVEN", "STRONG") else "medium"
                    refs.append(ImpactRef(path=ref.path, line=ref.line, column=ref.column, tier=ref.tier.lower(),
                                          certainty=certainty, snippet=ref.token))
        refs.sort(key=lambda r: (r.path, r.line, r.column))
        by_tier: dict[str, int] = {}
        for item in refs:
            by_tier[item.tier] = by_tier.get(item.tier, 0) + 1
        tests, note = self._tests(sorted(importing | {rel}))
        page, next_cursor = _page(refs, cursor, limit, rel)
        own, hashes = self.read([rel])
        draft = Draft()
        draft.deletes = [rel]
        option = build_option("c1", draft, own, hashes)
        report = ImpactReport(
            target_kind="file", path=rel, references=page, references_total=len(refs),
            by_tier=dict(sorted(by_tier.items())), importing_files=sorted(importing)[:MAX_FILES],
            importing_files_total=len(importing), affected_tests=tests[:MAX_FILES], affected_tests_total=len(tests),
            affected_tests_note=note, next_cursor=next_cursor, safe_to_delete=not importing and not refs,
            warnings=[] if not importing else [f"{len(importing)} file(s) import {rel}; deleting it breaks them"],
        )
        return report, option
