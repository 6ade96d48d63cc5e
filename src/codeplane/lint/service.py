"""The lint subsystem's one entry point: which linters apply (``tools``), and a run of them (``check``)
whose diagnostics are kept in memory and paged by cursor.

A check runs every selected linter at once (``checks.py``), each bounded by ``lint.timeout_sec``; a
missing, failing or hanging linter becomes that linter's ``ToolRun`` status, never an error of the call.
``fix`` plans the fixers' fixes first (``fixing.py``), applies them as one mutation batch
(``apply_fixes``) and then checks the fixed tree, so the answer lists what is left.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.config import LintConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.lint.checks import Checker
from codeplane.lint.discovery import discover_linters
from codeplane.lint.fixing import FixPlan, FixPlanner
from codeplane.lint.models import Diagnostic, FixOutcome, LinterInfo, LintReport, ToolRun
from codeplane.lint.runner import Progress
from codeplane.mutation import MutationEngine
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import walk_universe

#: Runs kept for their cursors; an older cursor answers 1005.
KEPT_RUNS = 16
DEFAULT_LIMIT = 100

FilesSource = Callable[[], Sequence[str] | None]


@dataclass(frozen=True)
class _Run:
    run_id: str
    diagnostics: tuple[Diagnostic, ...]
    total: int
    truncated: bool
    #: Of every diagnostic found, kept or not (the summary said "7430 diagnostic(s): 5000 error, 0 warning").
    errors: int
    warnings: int
    fixable: int
    #: The call's canonical ``paths`` (None: the whole repository) and the ``tools`` it named (None: every one):
    #: a cursor passed with other ones is refused (1005), as every paged tool does.
    paths: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None


def _paths_key(rels: Sequence[str] | None) -> tuple[str, ...] | None:
    """``paths`` as a run is keyed by: the whole repository (``[""]``, ``["."]``) is the same as none given."""
    if rels is None or not [r for r in rels if r not in ("", ".")]:
        return None
    return tuple(sorted(set(rels)))


def _tools_key(tools: Sequence[str] | None) -> tuple[str, ...] | None:
    return tuple(sorted(set(tools))) if tools else None


class LintService:
    """Discovers and runs the repository's linters. Thread-safe."""

    def __init__(self, root: Path, config: LintConfig, mutation: MutationEngine | None = None, *,
                 files_source: FilesSource | None = None) -> None:
        self.root = root
        self.config = config
        self._mutation = mutation
        self._files_source = files_source
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        self._lock = threading.Lock()
        self._checker = Checker(root, config, self._files)

    # -- discovery -----------------------------------------------------------------------------------

    def _files(self) -> Sequence[str]:
        files = self._files_source() if self._files_source is not None else None
        if files is not None:
            return files
        return [e.path for e in walk_universe(self.root, IgnoreRules.load(self.root))]

    def tools(self) -> list[LinterInfo]:
        """Every linter configured or conventional here, found or not (sorted by name, then root)."""
        return discover_linters(self.root, self._files())

    def select(self, names: Sequence[str] | None) -> list[LinterInfo]:
        """The linters ``names`` picks (a name runs it everywhere; ``name@dir`` one instance); 1003 for a
        name no linter of this repository has."""
        found = self.tools()
        if not names:
            return found
        known = {i.name for i in found} | {i.key for i in found}
        unknown = sorted(set(names) - known)
        if unknown:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                 f"no linter {', '.join(map(repr, unknown))} in this repository; it has: "
                                 f"{', '.join(sorted(known)) or 'none'}",
                                 details={"field": "tools", "unknown": unknown, "available": sorted(known)})
        wanted = set(names)
        return [i for i in found if i.name in wanted or i.key in wanted]

    def scope(self, paths: Sequence[str] | None) -> list[str] | None:
        """Canonical repo-relative paths (``""`` = the whole repository); 5001 outside it or outside the files
        CodePlane lists (``.cplignore``, a pruned directory such as ``node_modules``), 5004 if missing. Every path
        is checked before any linter starts, so a bad one costs no run."""
        if paths is None:
            return None
        scoped: list[str] = []
        rules: IgnoreRules | None = None
        for raw in paths:
            rel = str(resolve_in_repo(self.root, raw))
            if not (self.root / rel).exists():
                raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{raw} does not exist",
                                     details={"field": "paths", "path": raw})
            rules = rules or IgnoreRules.load(self.root)
            if rel and rules.excludes(rel, is_dir=(self.root / rel).is_dir()):
                raise CodePlaneError(ErrorCode.MUTATION_SCOPE_VIOLATION,
                                     f"{raw} is not a repository file CodePlane lists (.cplignore, or a directory "
                                     "such as node_modules or .venv it never walks); lint a path inside the "
                                     "repository's files", details={"field": "paths", "path": raw})
            scoped.append(rel)
        return sorted(set(scoped))

    # -- checking ------------------------------------------------------------------------------------







    def check(self, *, paths: Sequence[str] | None = None, tools: Sequence[str] | None = None,
              fix: bool = False, limit: int = DEFAULT_LIMIT, progress: Progress | None = None) -> LintReport:
        """Run the linters (fixing first when ``fix``) and answer the first page; ``progress`` counts
        finished linter runs for a caller on another thread.

        With ``fix`` the fixes are one mutation batch: on any precondition failure the error propagates
        and no file was written.
        """
        rels = self.scope(paths)
        linters = self.select(tools)
        outcome: FixOutcome | None = None
        notes: tuple[str, ...] = ()
        if fix:
            plan = self.plan_fixes(linters, rels, progress)
            notes = plan.notes
            if plan.edits:
                outcome = self.apply_fixes(plan)
        diagnostics, runs = self.run_checks(linters, rels, progress)
        if not runs:  # say why nothing ran, so an empty answer is not read as "clean"
            notes += ("no linter is configured or conventional in this repository"
                      if not linters else f"no linter here lints {', '.join(rels or []) or 'these paths'}",)
        cap = self.config.max_diagnostics
        # The id hashes the call and what it found: the same repository and call give the same cursor (same
        # bytes), and two calls that found the same diagnostics for other paths keep cursors of their own.
        scope, named = _paths_key(rels), _tools_key(tools)
        found = json.dumps([[d.model_dump(mode="json") for d in diagnostics], scope, named], sort_keys=True).encode()
        run = _Run(run_id="lint_" + hashlib.sha256(found).hexdigest()[:16], diagnostics=tuple(diagnostics[:cap]),
                   total=len(diagnostics), truncated=len(diagnostics) > cap,
                   errors=sum(d.severity == "error" for d in diagnostics),
                   warnings=sum(d.severity == "warning" for d in diagnostics),
                   fixable=sum(d.fixable for d in diagnostics), paths=scope, tools=named)
        with self._lock:
            self._runs[run.run_id] = run
            while len(self._runs) > KEPT_RUNS:
                self._runs.popitem(last=False)
        first = self._page(run, 0, limit)
        return first.model_copy(update={"runs": tuple(runs), "fix": outcome, "notes": notes})

    def page(self, cursor: str, limit: int = DEFAULT_LIMIT, *, paths: Sequence[str] | None = None,
             tools: Sequence[str] | None = None) -> LintReport:
        """The page of an earlier run that ``cursor`` (a ``next_cursor``) points at; 1005 when unknown, or when
        ``paths``/``tools`` are given and are not the run's (a page of another call's diagnostics is no answer for
        these); given none, the run's own apply. A missing or outside path is 5004/5001, as for :meth:`check`."""
        run_id, _, offset = cursor.partition(":")
        with self._lock:
            run = self._runs.get(run_id)
        if run is None or not offset.isdigit() or int(offset) > len(run.diagnostics):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR,
                                 f"cursor {cursor!r} is malformed or its run is gone (the last {KEPT_RUNS} runs "
                                 "are kept); run lint_check again",
                                 details={"field": "cursor", "cursor": cursor})
        for name, given, own in (("paths", _paths_key(self.scope(paths)) if paths is not None else run.paths,
                                  run.paths),
                                 ("tools", _tools_key(tools) if tools is not None else run.tools, run.tools)):
            if given != own:
                raise CodePlaneError(ErrorCode.INVALID_CURSOR,
                                     f"cursor {cursor!r} was issued for other {name} "
                                     f"({', '.join(own) if own else 'all'}); pass it with those, or without "
                                     f"{name}, or run lint_check again without the cursor",
                                     details={"field": "cursor", "cursor": cursor, name: list(own or ())})
        return self._page(run, int(offset), limit)

    @staticmethod
    def _page(run: _Run, offset: int, limit: int) -> LintReport:
        page = run.diagnostics[offset:offset + limit]
        end = offset + len(page)
        return LintReport(diagnostics=page, total=run.total, errors=run.errors, warnings=run.warnings,
                          fixable=run.fixable, offset=offset,
                          cursor=f"{run.run_id}:{offset}",
                          next_cursor=f"{run.run_id}:{end}" if end < len(run.diagnostics) else None,
                          truncated=run.truncated)

    # -- fixing --------------------------------------------------------------------------------------

    def plan_fixes(self, linters: Sequence[LinterInfo], rels: Sequence[str] | None,
                   progress: Progress | None = None) -> FixPlan:
        """The fixes every fixer in ``linters`` offers for ``rels``, as edits; nothing is written
        (``fixing.py``). Each edit carries the SHA-256 of the bytes its fixer saw, so :meth:`apply_fixes`
        refuses files changed since."""
        limits = self._mutation.config if self._mutation is not None else None
        return FixPlanner(self.root, self.config, self._checker, limits).plan(linters, rels, progress)

    def run_checks(self, linters: Sequence[LinterInfo], rels: Sequence[str] | None,
                   progress: Progress | None = None) -> tuple[list[Diagnostic], list[ToolRun]]:
        """Run ``linters`` on ``rels`` in parallel: every diagnostic inside ``rels`` (sorted; what two
        instances both report, once) and one run per linter that covers them (``checks.py``)."""
        return self._checker.run(linters, rels, progress)



    def close(self) -> None:
        """Kill every linter still running (with its process group); later runs are refused."""
        self._checker.runner.close()

    def apply_fixes(self, plan: FixPlan) -> FixOutcome:
        """Apply ``plan`` as one mutation batch (delta, ledger, index refresh); on any failure nothing is
        written and the engine's error (5002 for a file changed since planning) propagates."""
        if self._mutation is None:
            raise CodePlaneError(ErrorCode.INTERNAL_ERROR, "this lint service has no mutation engine")
        delta = self._mutation.apply(list(plan.edits))
        new = {f.path: f.file_sha256 for f in delta.files}
        files = tuple(f.model_copy(update={"new_sha256": new.get(f.path)}) for f in plan.files)
        return FixOutcome(mutation_id=delta.mutation_id, files=files, delta=delta)



