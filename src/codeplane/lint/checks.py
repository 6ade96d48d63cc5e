"""Running linter instances on a set of paths: what to pass each one, its process, and its outcome read
into diagnostics and a :class:`~codeplane.lint.models.ToolRun`.

Each linter runs in its own process group with ``lint.timeout_sec`` (``runner.py``, ``core.procs``); a
missing, failing or hanging linter becomes its run's status, never an exception.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from codeplane.core.config import LintConfig
from codeplane.lint.catalog import KINDS, run_env
from codeplane.lint.discovery import mypy_excluded, mypy_has_targets
from codeplane.lint.formats import PathMap
from codeplane.lint.models import Diagnostic, LinterInfo, ToolRun
from codeplane.lint.runner import Job, Outcome, Progress, Runner
from codeplane.lint.toolchain import project_python

#: Most characters of a linter's stderr quoted in a failed run's message.
MESSAGE_CHARS = 600


def under(path: str, scope: str) -> bool:
    """``path`` is ``scope`` or below it (``""``/``"."`` is the whole repository)."""
    return scope in ("", ".") or path == scope or path.startswith(f"{scope}/")


def excerpt(text: str) -> str:
    """``text`` within ``MESSAGE_CHARS``: its start and its end. The cause is often first (ESLint's
    ``TypeError: Key "rules": …`` before its stack trace, ruff's ``unknown field`` before the known ones) and the
    outcome last."""
    text = text.strip()
    if len(text) <= MESSAGE_CHARS:
        return text
    half = MESSAGE_CHARS // 2
    return f"{text[:half].rstrip()} … {text[-half:].lstrip()}"


class Checker:
    """Runs linters of one repository. ``files`` lists the repository's files (read only for directory
    paths, to skip linters with nothing to lint there)."""

    def __init__(self, root: Path, config: LintConfig, files: Callable[[], Sequence[str]]) -> None:
        self.root = root
        self.config = config
        self._files = files
        #: Every process this service starts goes through here (``LintService.close`` kills them).
        self.runner = Runner()

    def _targets(self, info: LinterInfo, rels: Sequence[str] | None,
                 files: Callable[[], Sequence[str]]) -> list[str] | Literal[False] | None:
        """What to pass the linter (relative to its project dir): ``None`` its default scope, ``False``
        when none of ``rels`` is in its scope."""
        if rels is None:
            if info.name == "mypy" and not mypy_has_targets(self.root, info):
                return ["."]
            return None
        targets: set[str] = set()
        excluded = mypy_excluded(self.root, info) if info.name == "mypy" else None
        for rel in rels:
            if info.root == ".":
                inner = rel or "."
            elif under(rel, info.root):
                inner = rel[len(info.root) + 1:] or "."
            elif rel == "" or info.root.startswith(f"{rel}/"):
                inner = "."
            else:
                continue
            if not self._has_files(rel, info.extensions, files):
                continue  # e.g. mypy on a directory of JavaScript: nothing to lint, nothing to fail on
            if excluded is not None and excluded(inner, (self.cwd(info) / inner).is_dir()):
                continue
            targets.add(inner)
        return sorted(targets) if targets else False

    def _has_files(self, rel: str, extensions: tuple[str, ...], files: Callable[[], Sequence[str]]) -> bool:
        if (self.root / rel).is_file():
            return rel.endswith(extensions)
        prefix = f"{rel}/" if rel else ""
        return any(f.startswith(prefix) and f.endswith(extensions) for f in files())

    def cwd(self, info: LinterInfo) -> Path:
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
            stderr = result.err_text().strip()
            # A non-zero exit with no report is the tool failing before it linted (biome on a config error).
            why = (f"exited {result.returncode} without a report: {stderr}" if result.returncode and stderr
                   else f"unreadable output ({exc}): {stderr}")
            return [], ToolRun(tool=info.name, root=info.root, status="failed", exit_code=result.returncode,
                               duration_ms=took, message=excerpt(why))
        if result.returncode in kind.ok_codes:
            ok = True
        elif kind.tool_failed is not None:
            ok = not kind.tool_failed(result.returncode, result.text(), result.err_text())
        else:
            ok = bool(found)
        message = None if ok else excerpt(result.err_text() or result.text())
        if message and info.name == "mypy" and "unrecognized arguments" in message:
            message = f"this mypy has no JSON output (mypy >= 1.11 has); upgrade it in the project. {message}"
        return found, ToolRun(tool=info.name, root=info.root, status="ok" if ok else "failed",
                              exit_code=result.returncode, duration_ms=took, diagnostics=len(found), message=message)

    def run(self, linters: Sequence[LinterInfo], rels: Sequence[str] | None,
            progress: Progress | None = None) -> tuple[list[Diagnostic], list[ToolRun]]:
        """Run ``linters`` on ``rels`` in parallel: every diagnostic inside ``rels`` (sorted; what two
        instances both report, once) and one run per linter that covers them."""
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
                jobs.append((info, Job(tuple(self._argv(info, targets)), self.cwd(info), self.config.timeout_sec,
                                       env=run_env(info))))
        found: dict[tuple[object, ...], list[Diagnostic]] = {}
        done = None
        if progress is not None:
            progress.total += len(jobs)

            def done(index: int, outcome: Outcome) -> None:
                state = "timed out" if outcome.timed_out else "failed" if outcome.result is None else "finished"
                progress.finished.append(f"{jobs[index][0].key} {state}")

        outcomes = self.runner.run([j for _, j in jobs], self.config.workers, done)
        for (info, _job), outcome in zip(jobs, outcomes, strict=True):
            diagnostics, run = self._read(info, outcome)
            inside = [d for d in diagnostics if rels is None or any(under(d.path, r) for r in rels)]
            runs.append(run.model_copy(update={"diagnostics": len(inside),
                                               "elsewhere": len(diagnostics) - len(inside)}))
            # Identical diagnostics within one run are kept (ruff reports TID252 once per imported name at one
            # span, and counts each); one file linted by two instances of a linter is reported once.
            same: dict[tuple[object, ...], list[Diagnostic]] = {}
            for d in inside:
                same.setdefault(tuple(d.model_dump().values()), []).append(d)
            for key, group in same.items():
                if len(group) > len(found.get(key, ())):
                    found[key] = group
        runs.sort(key=lambda r: (r.tool, r.root))
        return sorted((d for group in found.values() for d in group), key=Diagnostic.sort_key), runs
