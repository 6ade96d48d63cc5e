"""The lint subsystem's one entry point: which linters apply (``tools``), and a run of them (``check``)
whose diagnostics are kept in memory and paged by cursor.

A check runs every selected linter at once (``runner.py``), each bounded by ``lint.timeout_sec``; a
missing, failing or hanging linter becomes that linter's ``ToolRun`` status, never an error of the call.
``fix`` runs the fixers first (``plan_fixes``), applies every fix as one mutation batch
(``apply_fixes``) and then checks the fixed tree, so the answer lists what is left.
"""

from __future__ import annotations

import functools
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from codeplane.core.config import LintConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.hashing import sha256_bytes
from codeplane.core.paths import resolve_in_repo
from codeplane.lint.catalog import KINDS
from codeplane.lint.discovery import discover_linters, mypy_has_targets
from codeplane.lint.fixes import span_edits
from codeplane.lint.formats import PathMap
from codeplane.lint.formats.eslint import eslint_results
from codeplane.lint.models import Diagnostic, FixedFile, FixOutcome, LinterInfo, LintReport, ToolRun
from codeplane.lint.runner import Job, Outcome, Progress, run_jobs
from codeplane.lint.toolchain import project_python
from codeplane.mutation import MutationEngine, UpdateSpan
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import walk_universe

#: Runs kept for their cursors; an older cursor answers 1005.
KEPT_RUNS = 16
#: Most characters of a linter's stderr quoted in a failed run's message.
MESSAGE_CHARS = 600
DEFAULT_LIMIT = 100

FilesSource = Callable[[], Sequence[str] | None]


@dataclass(frozen=True)
class FixPlan:
    """Fixes computed but not applied: edits pinned to the bytes each fixer saw."""

    edits: tuple[UpdateSpan, ...]
    files: tuple[FixedFile, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Run:
    run_id: str
    diagnostics: tuple[Diagnostic, ...]
    total: int
    truncated: bool


def _under(path: str, scope: str) -> bool:
    return scope in ("", ".") or path == scope or path.startswith(f"{scope}/")


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MESSAGE_CHARS else "…" + text[-MESSAGE_CHARS:]


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
                                 f"no linter {', '.join(map(repr, unknown))} in this repository; lint_tools lists "
                                 f"them: {', '.join(sorted(known)) or 'none'}",
                                 details={"field": "tools", "unknown": unknown, "available": sorted(known)})
        wanted = set(names)
        return [i for i in found if i.name in wanted or i.key in wanted]

    def scope(self, paths: Sequence[str] | None) -> list[str] | None:
        """Canonical repo-relative paths (``""`` = the whole repository); 5001 outside it, 5004 if missing."""
        if paths is None:
            return None
        scoped: list[str] = []
        for raw in paths:
            rel = str(resolve_in_repo(self.root, raw))
            if not (self.root / rel).exists():
                raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{raw} does not exist",
                                     details={"field": "paths", "path": raw})
            scoped.append(rel)
        return sorted(set(scoped))

    # -- checking ------------------------------------------------------------------------------------

    def _targets(self, info: LinterInfo, rels: Sequence[str] | None,
                 files: Callable[[], Sequence[str]]) -> list[str] | Literal[False] | None:
        """What to pass the linter (relative to its project dir): ``None`` its default scope, ``False``
        when none of ``rels`` is in its scope."""
        if rels is None:
            if info.name == "mypy" and not mypy_has_targets(self.root, info):
                return ["."]
            return None
        targets: set[str] = set()
        for rel in rels:
            if info.root == ".":
                inner = rel or "."
            elif _under(rel, info.root):
                inner = rel[len(info.root) + 1:] or "."
            elif rel == "" or info.root.startswith(f"{rel}/"):
                inner = "."
            else:
                continue
            if not self._has_files(rel, info.extensions, files):
                continue  # e.g. mypy on a directory of JavaScript: nothing to lint, nothing to fail on
            targets.add(inner)
        return sorted(targets) if targets else False

    def _has_files(self, rel: str, extensions: tuple[str, ...], files: Callable[[], Sequence[str]]) -> bool:
        if (self.root / rel).is_file():
            return rel.endswith(extensions)
        prefix = f"{rel}/" if rel else ""
        return any(f.startswith(prefix) and f.endswith(extensions) for f in files())

    def _cwd(self, info: LinterInfo) -> Path:
        return self.root if info.root == "." else self.root / info.root

    def _argv(self, info: LinterInfo, targets: list[str] | None) -> list[str]:
        kind = KINDS[info.name]
        assert kind.check_argv is not None and info.executable is not None
        argv = kind.check_argv(info.executable, targets)
        python = project_python(self.root, info.root) if info.name == "mypy" else None
        if python is not None and Path(python).parent != Path(info.executable).parent:
            argv[1:1] = ["--python-executable", python]  # a mypy from elsewhere must see the project's packages
        return argv

    def _read(self, info: LinterInfo, outcome: Outcome) -> tuple[list[Diagnostic], ToolRun]:
        kind = KINDS[info.name]
        result = outcome.result
        if result is None:
            return [], ToolRun(tool=info.name, root=info.root, status="failed", message=outcome.error)
        took = int(result.duration_s * 1000)
        if result.timed_out:
            return [], ToolRun(tool=info.name, root=info.root, status="timed_out", duration_ms=took,
                               message=f"killed after {outcome.job.timeout_s:g}s (lint.timeout_sec); "
                                       "no diagnostics from this linter")
        assert kind.parse is not None
        text = result.text() if kind.stream == "stdout" else result.err_text()
        try:
            found = kind.parse(text, PathMap(self.root, outcome.job.cwd))
        except ValueError as exc:
            return [], ToolRun(tool=info.name, root=info.root, status="failed", exit_code=result.returncode,
                               duration_ms=took, message=_tail(f"unreadable output ({exc}): {result.err_text()}"))
        ok = result.returncode in kind.ok_codes or bool(found)
        message = None if ok else _tail(result.err_text() or result.text())
        if message and info.name == "mypy" and "unrecognized arguments" in message:
            message = f"this mypy has no JSON output (mypy >= 1.11 has); upgrade it in the project. {message}"
        return found, ToolRun(tool=info.name, root=info.root, status="ok" if ok else "failed",
                              exit_code=result.returncode, duration_ms=took, diagnostics=len(found), message=message)

    def run_checks(self, linters: Sequence[LinterInfo], rels: Sequence[str] | None,
                   progress: Progress | None = None) -> tuple[list[Diagnostic], list[ToolRun]]:
        """Run ``linters`` on ``rels`` in parallel: every diagnostic inside ``rels`` (sorted, without
        duplicates) and one run per linter that covers them."""
        runs: list[ToolRun] = []
        jobs: list[tuple[LinterInfo, Job]] = []
        files = functools.cache(self._files)  # read at most once per run, only for directory paths
        for info in linters:
            targets = self._targets(info, rels, files)
            if targets is False:
                continue
            if not info.runnable:
                runs.append(ToolRun(tool=info.name, root=info.root, status="unsupported",
                                    message=f"CodePlane lists {info.name} but cannot read its output yet"))
            elif not info.found:
                runs.append(ToolRun(tool=info.name, root=info.root, status="missing", message=info.install_hint))
            else:
                jobs.append((info, Job(tuple(self._argv(info, targets)), self._cwd(info), self.config.timeout_sec)))
        found: dict[tuple[object, ...], Diagnostic] = {}
        done = None
        if progress is not None:
            progress.total += len(jobs)

            def done(index: int, outcome: Outcome) -> None:
                state = "timed out" if outcome.timed_out else "failed" if outcome.result is None else "finished"
                progress.finished.append(f"{jobs[index][0].key} {state}")

        outcomes = run_jobs([j for _, j in jobs], self.config.workers, done)
        for (info, _job), outcome in zip(jobs, outcomes, strict=True):
            diagnostics, run = self._read(info, outcome)
            runs.append(run)
            for d in diagnostics:
                if rels is None or any(_under(d.path, r) for r in rels):
                    found.setdefault(tuple(d.model_dump().values()), d)
        runs.sort(key=lambda r: (r.tool, r.root))
        return sorted(found.values(), key=Diagnostic.sort_key), runs

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
        cap = self.config.max_diagnostics
        run = _Run(run_id="lint_" + uuid.uuid4().hex[:16], diagnostics=tuple(diagnostics[:cap]),
                   total=len(diagnostics), truncated=len(diagnostics) > cap)
        with self._lock:
            self._runs[run.run_id] = run
            while len(self._runs) > KEPT_RUNS:
                self._runs.popitem(last=False)
        first = self._page(run, 0, limit)
        return first.model_copy(update={"runs": tuple(runs), "fix": outcome, "notes": notes})

    def page(self, cursor: str, limit: int = DEFAULT_LIMIT) -> LintReport:
        """The page of an earlier run that ``cursor`` (a ``next_cursor``) points at; 1005 when unknown."""
        run_id, _, offset = cursor.partition(":")
        with self._lock:
            run = self._runs.get(run_id)
        if run is None or not offset.isdigit() or int(offset) > len(run.diagnostics):
            raise CodePlaneError(ErrorCode.INVALID_CURSOR,
                                 f"cursor {cursor!r} is malformed or its run is gone (the last {KEPT_RUNS} runs "
                                 "are kept); run lint_check again",
                                 details={"field": "cursor", "cursor": cursor})
        return self._page(run, int(offset), limit)

    @staticmethod
    def _page(run: _Run, offset: int, limit: int) -> LintReport:
        page = run.diagnostics[offset:offset + limit]
        end = offset + len(page)
        counts = {"error": 0, "warning": 0, "info": 0}
        for d in run.diagnostics:
            counts[d.severity] += 1
        return LintReport(diagnostics=page, total=run.total, errors=counts["error"], warnings=counts["warning"],
                          fixable=sum(d.fixable for d in run.diagnostics), offset=offset,
                          next_cursor=f"{run.run_id}:{end}" if end < len(run.diagnostics) else None,
                          truncated=run.truncated)

    # -- fixing --------------------------------------------------------------------------------------

    def plan_fixes(self, linters: Sequence[LinterInfo], rels: Sequence[str] | None,
                   progress: Progress | None = None) -> FixPlan:
        """The fixes every fixer in ``linters`` offers for ``rels``, as edits; nothing is written.

        Fixers are asked only about files their check reported a fixable diagnostic in. Each edit carries
        the SHA-256 of the bytes its fixer saw, so :meth:`apply_fixes` refuses files changed since.
        """
        fixers = [i for i in linters if i.can_fix and i.found]
        diagnostics, _runs = self.run_checks(fixers, rels, progress)
        notes: list[str] = []
        texts: list[tuple[LinterInfo, str, bytes, str]] = []  # (linter, path, bytes seen, fixed text)
        for info in fixers:
            files = sorted({d.path for d in diagnostics if d.fixable and d.tool == info.name
                            and _under(d.path, info.root)})
            if not files:
                continue
            fixed = self._stdin_fixes(info, files) if KINDS[info.name].fix_stdin else self._eslint_fixes(info, files)
            for path, seen, text, note in fixed:
                if note:
                    notes.append(f"{info.name}: {path}: {note}")
                elif text is not None:
                    texts.append((info, path, seen, text))
        return self._edits(texts, notes)

    def _edits(self, texts: list[tuple[LinterInfo, str, bytes, str]], notes: list[str]) -> FixPlan:
        limits = self._mutation.config if self._mutation is not None else None
        rules = IgnoreRules.load(self.root)
        planned: list[tuple[LinterInfo, str, bytes, str, list[UpdateSpan]]] = []
        for info, path, seen, text in sorted(texts, key=lambda t: t[1]):
            reason = self._unwritable(rules, path, len(seen))
            if reason:
                notes.append(f"{info.name}: {path}: not fixed: {reason}")
                continue
            spans = span_edits(path, seen, text, max_edits=1_000_000)
            if spans:
                planned.append((info, path, seen, text, spans))
        if limits is not None and len(planned) > limits.max_batch_files:
            notes.append(f"{len(planned) - limits.max_batch_files} more file(s) have fixes (mutation.max_batch_files="
                         f"{limits.max_batch_files}); run lint_check with fix again")
            planned = planned[:limits.max_batch_files]
        if limits is not None and sum(len(p[4]) for p in planned) > limits.max_batch_edits:
            # One span per file keeps the batch within mutation.max_batch_edits.
            planned = [(i, p, b, t, span_edits(p, b, t, max_edits=1)) for i, p, b, t, _ in planned]
        edits = [e for *_, spans in planned for e in spans]
        files = [FixedFile(path=path, tool=info.name, old_sha256=sha256_bytes(seen), edits=len(spans))
                 for info, path, seen, _text, spans in planned]
        return FixPlan(edits=tuple(edits), files=tuple(files), notes=tuple(sorted(notes)))

    def _unwritable(self, rules: IgnoreRules, path: str, size: int) -> str | None:
        """Why the mutation engine would refuse ``path`` (which would fail the whole batch), or ``None``."""
        if rules.excludes(path):
            return "excluded by .cplignore (or in a pruned directory); CodePlane does not write there"
        if (self.root / path).is_symlink():
            return "a symbolic link; fix the file it points to"
        limit = self._mutation.config.max_file_bytes if self._mutation is not None else None
        if limit is not None and size > limit:
            return f"{size} bytes exceed mutation.max_file_bytes={limit}"
        return None

    def apply_fixes(self, plan: FixPlan) -> FixOutcome:
        """Apply ``plan`` as one mutation batch (delta, ledger, index refresh); on any failure nothing is
        written and the engine's error (5002 for a file changed since planning) propagates."""
        if self._mutation is None:
            raise CodePlaneError(ErrorCode.INTERNAL_ERROR, "this lint service has no mutation engine")
        delta = self._mutation.apply(list(plan.edits))
        new = {f.path: f.new_sha256 for f in delta.files}
        files = tuple(f.model_copy(update={"new_sha256": new.get(f.path)}) for f in plan.files)
        return FixOutcome(mutation_id=delta.mutation_id, files=files, delta=delta)

    def _read_bytes(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except OSError:
            return None

    def _stdin_fixes(self, info: LinterInfo, files: list[str]) -> list[tuple[str, bytes, str | None, str]]:
        """ruff and biome fix exactly the bytes they are given on stdin and print the result."""
        fix_argv = KINDS[info.name].fix_stdin
        assert info.executable is not None and fix_argv is not None
        cwd = self._cwd(info)
        seen = {path: self._read_bytes(path) for path in files}
        todo = [(p, data) for p, data in seen.items() if data is not None]
        jobs = [Job(tuple(fix_argv(info.executable, str(self.root / path))), cwd, self.config.timeout_sec,
                    stdin=data) for path, data in todo]
        out: list[tuple[str, bytes, str | None, str]] = []
        for (path, data), outcome in zip(todo, run_jobs(jobs, self.config.workers), strict=True):
            result = outcome.result
            if result is None or result.timed_out or result.returncode != 0:
                reason = outcome.error or ("timed out" if outcome.timed_out else _tail(result.err_text() if result
                                                                                          else ""))
                out.append((path, data, None, f"not fixed: {reason}"))
                continue
            try:
                out.append((path, data, result.stdout.decode("utf-8"), ""))
            except UnicodeDecodeError:
                out.append((path, data, None, "not fixed: output is not UTF-8"))
        return out

    def _eslint_fixes(self, info: LinterInfo, files: list[str]) -> list[tuple[str, bytes, str | None, str]]:
        """``eslint --fix-dry-run`` reports each fixed file's text without writing it. It reads the files
        itself, so each is read before and after its run and kept only if both reads agree."""
        assert info.executable is not None
        cwd = self._cwd(info)
        before = {path: self._read_bytes(path) for path in files}
        args = [str((self.root / path).relative_to(cwd)) for path in files]
        job = Job((info.executable, "-f", "json", "--fix-dry-run", *args), cwd, self.config.timeout_sec)
        outcome = run_jobs([job], 1)[0]
        result = outcome.result
        if result is None or result.timed_out:
            reason = outcome.error or "timed out"
            return [(p, b"", None, f"not fixed: {reason}") for p in files]
        try:
            results = eslint_results(result.text())
        except ValueError as exc:
            return [(p, b"", None, f"not fixed: unreadable eslint output ({exc})") for p in files]
        if not results and result.returncode not in KINDS[info.name].ok_codes:
            reason = _tail(result.err_text() or result.text())
            return [(p, b"", None, f"not fixed: eslint exited {result.returncode}: {reason}") for p in files]
        paths = PathMap(self.root, cwd)
        outputs = {paths.to_rel(str(r.get("filePath") or "")): r.get("output") for r in results}
        out: list[tuple[str, bytes, str | None, str]] = []
        for path in files:
            data, text = before[path], outputs.get(path)
            if data is None or not isinstance(text, str):
                continue
            if self._read_bytes(path) != data:
                out.append((path, data, None, "not fixed: the file changed while eslint ran"))
                continue
            out.append((path, data, text, ""))
        return out
