"""Planning ``lint_check(fix=true)``: ask each fixer for the fixed text of the files its check found
fixable, without letting it write, and turn that text into one batch of pinned edits (``fixes.py``).

ruff and biome fix the exact bytes they get on stdin; eslint's ``--fix-dry-run`` reads the files itself,
so each is read before and after its run and kept only when both reads agree. A file the mutation engine
would refuse (which would fail the whole batch) is left out with a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.config import LintConfig, MutationConfig
from codeplane.core.hashing import sha256_bytes
from codeplane.lint.catalog import KINDS, operand, run_env
from codeplane.lint.checks import Checker, excerpt, under
from codeplane.lint.fixes import span_edits
from codeplane.lint.formats import PathMap
from codeplane.lint.formats.eslint import eslint_results
from codeplane.lint.models import FixedFile, LinterInfo
from codeplane.lint.runner import Job, Progress
from codeplane.mutation import UpdateSpan
from codeplane.repo.ignore import IgnoreRules


@dataclass(frozen=True)
class FixPlan:
    """Fixes computed but not applied: edits pinned to the bytes each fixer saw."""

    edits: tuple[UpdateSpan, ...]
    files: tuple[FixedFile, ...]
    notes: tuple[str, ...] = ()


class FixPlanner:
    """Plans fixes with ``checker``'s linters; ``limits`` are the mutation engine's batch and file limits."""

    def __init__(self, root: Path, config: LintConfig, checker: Checker, limits: MutationConfig | None) -> None:
        self.root = root
        self.config = config
        self._checker = checker
        self._limits = limits

    def plan(self, linters: Sequence[LinterInfo], rels: Sequence[str] | None,
             progress: Progress | None = None) -> FixPlan:
        """The fixes every fixer in ``linters`` offers for ``rels``, as edits; nothing is written.

        Fixers are asked only about files their check reported a fixable diagnostic in. Each edit carries
        the SHA-256 of the bytes its fixer saw, so :meth:`LintService.apply_fixes` refuses files changed since.
        """
        fixers = [i for i in linters if i.can_fix and i.found]
        diagnostics, _runs = self._checker.run(fixers, rels, progress)
        notes: list[str] = []
        texts: list[tuple[LinterInfo, str, bytes, str]] = []  # (linter, path, bytes seen, fixed text)
        for info in fixers:
            files = sorted({d.path for d in diagnostics if d.fixable and d.tool == info.name
                            and under(d.path, info.root)})
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
        limits = self._limits
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
        limit = self._limits.max_file_bytes if self._limits is not None else None
        if limit is not None and size > limit:
            return f"{size} bytes exceed mutation.max_file_bytes={limit}"
        return None

    def _read_bytes(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except OSError:
            return None

    def _stdin_fixes(self, info: LinterInfo, files: list[str]) -> list[tuple[str, bytes, str | None, str]]:
        """ruff and biome fix exactly the bytes they are given on stdin and print the result."""
        fix_argv = KINDS[info.name].fix_stdin
        assert info.executable is not None and fix_argv is not None
        cwd = self._checker.cwd(info)
        seen = {path: self._read_bytes(path) for path in files}
        todo = [(p, data) for p, data in seen.items() if data is not None]
        jobs = [Job(tuple(fix_argv(info.executable, str(self.root / path))), cwd, self.config.timeout_sec,
                    stdin=data) for path, data in todo]
        out: list[tuple[str, bytes, str | None, str]] = []
        for (path, data), outcome in zip(todo, self._checker.runner.run(jobs, self.config.workers), strict=True):
            result = outcome.result
            if result is None or result.timed_out or result.returncode != 0:
                reason = outcome.error or ("timed out" if outcome.timed_out else excerpt(result.err_text() if result
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
        cwd = self._checker.cwd(info)
        before = {path: self._read_bytes(path) for path in files}
        args = [operand((self.root / path).relative_to(cwd).as_posix()) for path in files]
        job = Job((info.executable, "-f", "json", "--fix-dry-run", *args), cwd, self.config.timeout_sec,
                  env=run_env(info))
        outcome = self._checker.runner.run([job], 1)[0]
        result = outcome.result
        if result is None or result.timed_out:
            reason = outcome.error or "timed out"
            return [(p, b"", None, f"not fixed: {reason}") for p in files]
        try:
            results = eslint_results(result.text())
        except ValueError as exc:
            return [(p, b"", None, f"not fixed: unreadable eslint output ({exc})") for p in files]
        if not results and result.returncode not in KINDS[info.name].ok_codes:
            reason = excerpt(result.err_text() or result.text())
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
