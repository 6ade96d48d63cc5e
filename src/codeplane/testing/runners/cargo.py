"""``cargo test``: one target per test binary (``--lib``, ``--bin x``, ``--test y``, and a library's ``--doc``), one
process each.

A prepare step (``cargo test --no-run``) builds every test binary once before any target's clock starts,
so compilation never counts against the per-target timeout. Results come from libtest's stable format.

A target built with ``harness = false`` is the crate's own ``main`` (trybuild, datatest, a custom runner): it
prints no libtest lines and takes no libtest flags, so it is judged by its exit code and reported as one case,
``<target>::(main)`` (passed on 0, failed otherwise once it ran; an error when it did not build).

A binary killed at its timeout keeps the cases libtest had printed (a real failure among them is still reported).
libtest names a test only once it ends, so the ones that never did are found by listing the binary's tests
(``-- --list``, already built: instant) and taking away those that ended.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from codeplane.core.procs import kill_process_group, start
from codeplane.testing.model import (
    MESSAGE_CHARS,
    TRACEBACK_CHARS,
    CaseResult,
    Target,
    TargetResult,
    clip_head,
    clip_tail,
)
from codeplane.testing.reports.libtest import LibtestStream
from codeplane.testing.runners.base import (
    BatchParser,
    CoverageSetup,
    Invocation,
    Project,
    Runner,
    Toolchain,
    error_result,
    result_from_cases,
    which,
)


def read_manifest(project_dir: Path) -> dict[str, Any]:
    try:
        return tomllib.loads((project_dir / "Cargo.toml").read_text(encoding="utf-8", errors="replace"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def is_package(project_dir: Path) -> bool:
    """A workspace-only manifest (no ``[package]``) is not a runnable crate; its members are."""
    return "package" in read_manifest(project_dir)


#: What ``cargo`` prints on stderr as it starts a test binary: past it, a non-zero exit is the binary's own.
_RUNNING_BINARY = re.compile(r"^\s*Running ", re.MULTILINE)
#: The case a ``harness = false`` target is reported as.
MAIN_CASE = "(main)"
#: How long listing a killed binary's tests may take (it is built; listing runs no test).
LIST_TIMEOUT_S = 15.0
#: A failed case's message when the binary was killed before libtest printed why.
CUT_OFF = "failed; libtest prints why only after its last test, and the timeout killed it first"
#: Unfinished tests named in a timeout's message (the rest are counted).
SHOWN_UNFINISHED = 5


def target_selector(kind: str, name: str) -> str:
    """cargo's selector of the ``kind`` (``test``, ``bin``) target ``name``: ``--test -x`` is read as two options
    (``tests/-x.rs``), so such a name is joined to its option (``--test=-x``)."""
    return f"--{kind}={name}" if name.startswith("-") else f"--{kind} {name}"


def harnessless(manifest: dict[str, Any]) -> set[str]:
    """Selectors (``--test custom``, ``--bin x``, ``--lib``) of the targets built with ``harness = false``."""
    found = {target_selector(kind, str(entry.get("name"))) for kind in ("test", "bin")
             for entry in manifest.get(kind, []) if isinstance(entry, dict) and entry.get("harness") is False}
    lib = manifest.get("lib", {})
    if isinstance(lib, dict) and lib.get("harness") is False:
        found.add("--lib")
    return found


#: A library's doc-test target is named after its ``lib.rs`` with this suffix (``src/lib.rs#doctests``).
DOC_SUFFIX = "#doctests"


class CargoRunner(Runner):
    name = "cargo"
    lang = "rust"
    multi_target = False

    def default_toolchain(self, project: Project, repo_root: Path) -> Toolchain | None:
        found = which("cargo", Path.home() / ".cargo" / "bin")
        return Toolchain((found, "test")) if found else None

    def targets(self, project: Project, repo_root: Path, files: Sequence[str], base_cmd: Sequence[str]) -> list[Target]:
        manifest = read_manifest(project.dir(repo_root))
        package = manifest.get("package", {})
        crate = str(package.get("name", "crate")).replace("-", "_")
        local = {project.rel(f) for f in files}
        entries: list[tuple[str, str]] = []  # (project-relative file, selector)
        lib = str(manifest.get("lib", {}).get("path", "src/lib.rs"))
        if lib in local:
            entries.append((lib, "--lib"))
        bins = {str(b.get("path", f"src/bin/{b.get('name')}.rs")): str(b.get("name")) for b in manifest.get("bin", [])}
        if "src/main.rs" in local and "src/main.rs" not in bins:
            bins["src/main.rs"] = str(package.get("name", crate))
        if package.get("autobins", True):
            for rel in local:
                if rel.startswith("src/bin/") and rel.endswith(".rs") and rel.count("/") == 2 and rel not in bins:
                    bins[rel] = rel.rsplit("/", 1)[1].removesuffix(".rs")
        entries += [(path, target_selector("bin", name)) for path, name in bins.items() if path in local]
        tests = {str(t.get("path", f"tests/{t.get('name')}.rs")): str(t.get("name")) for t in manifest.get("test", [])}
        if package.get("autotests", True):
            for rel in local:
                parts = rel.split("/")
                if parts[0] == "tests" and len(parts) == 2 and rel.endswith(".rs") and rel not in tests:
                    tests[rel] = parts[1].removesuffix(".rs")
                elif parts[0] == "tests" and len(parts) == 3 and parts[2] == "main.rs" and rel not in tests:
                    tests[rel] = parts[1]
        entries += [(path, target_selector("test", name)) for path, name in tests.items() if path in local]
        found = [Target(target_id=project.repo_rel(path), runner=self.name, lang=self.lang, cwd=project.root,
                        selector=selector, cmd=(*base_cmd, *selector.split()), path=project.repo_rel(path),
                        kind="integration" if selector.startswith("--test") else "unit")
                 for path, selector in sorted(entries)]
        if lib in local and manifest.get("lib", {}).get("doctest", True):
            # A library's doc-tests are a test binary of their own (``cargo test --doc``): without them, a failing
            # example in a doc comment ran nowhere and the run said "passed" where ``cargo test`` fails.
            found.append(Target(target_id=project.repo_rel(lib) + DOC_SUFFIX, runner=self.name, lang=self.lang,
                                cwd=project.root, selector="--doc", cmd=(*base_cmd, "--doc"),
                                path=project.repo_rel(lib), kind="doc"))
        return found

    def prepare(self, project: Project, repo_root: Path, toolchain: Toolchain) -> tuple[str, ...] | None:
        return (*toolchain.argv, "--no-run", "--color", "never")

    def invocation(self, project: Project, repo_root: Path, toolchain: Toolchain, targets: Sequence[Target],
                   workdir: Path, *, rerun: bool = False, coverage: CoverageSetup | None = None) -> Invocation:
        (target,) = targets
        own_main = target.selector in harnessless(read_manifest(project.dir(repo_root)))
        argv = (*toolchain.argv, "--color", "never", *target.selector.split(),
                *(() if own_main else ("--", "--color", "never")))
        return Invocation(argv, project.dir(repo_root), toolchain.environ())

    def parser(self, project: Project, repo_root: Path, targets: Sequence[Target], invocation: Invocation,
               ) -> BatchParser:
        own_main = targets[0].selector in harnessless(read_manifest(project.dir(repo_root)))
        return CargoParser(targets[0].target_id, own_main=own_main, invocation=invocation)


class CargoParser(BatchParser):
    def __init__(self, target_id: str, *, own_main: bool = False, invocation: Invocation | None = None) -> None:
        self.target_id = target_id
        #: A ``harness = false`` target: no libtest lines, judged by its exit code.
        self.own_main = own_main
        #: The process's invocation: a killed binary's tests are listed with it (``--list``).
        self.invocation = invocation
        self.stream = LibtestStream()
        self.started = False

    @property
    def live(self) -> bool:
        return True

    def feed_stdout(self, line: str) -> None:
        self.started = True
        self.stream.feed(line)

    def current_target(self) -> str | None:
        return self.target_id

    def done_targets(self) -> set[str]:
        return {self.target_id} if self.stream.summaries else set()

    def finish(self, exit_code: int | None, stdout: str, stderr: str, killed: bool) -> list[TargetResult]:
        cases = [c.to_case(self.target_id, f"{self.target_id}::{c.name}") for c in self.stream.cases(self.target_id)]
        if killed and not self.stream.summaries:
            return []
        if self.own_main and not self.stream.summaries:
            return [self._by_exit_code(exit_code, stdout, stderr)]
        if not self.stream.summaries or (exit_code not in (0, None) and not any(c.failing for c in cases)):
            return [error_result(self.target_id, stderr or stdout or f"cargo test exited {exit_code}",
                                 exit_code=exit_code, cases=cases)]
        return [result_from_cases(self.target_id, cases, exit_code=exit_code, duration_s=self.stream.duration_s)]

    def partial(self, target_id: str) -> tuple[list[CaseResult], str | None]:
        """The cases libtest printed before the kill, and the tests that never ended (listed, see the module
        docstring), as ``target::name`` joined by ", " (several threads may hang at once)."""
        if target_id != self.target_id or self.own_main:
            return [], None
        cases = [c.to_case(target_id, f"{target_id}::{c.name}") for c in self.stream.cases(target_id)]
        # libtest prints a failure's panic only in its closing summary, which the kill cut off: say so.
        cases = [replace(c, message=CUT_OFF) if c.failing and not c.traceback else c for c in cases]
        ended = set(self.stream.results)
        unfinished = [name for name in self._listed() if name not in ended]
        if not unfinished:
            return cases, None
        shown = ", ".join(f"{target_id}::{name}" for name in unfinished[:SHOWN_UNFINISHED])
        more = len(unfinished) - SHOWN_UNFINISHED
        return cases, shown + (f" (+{more} more not finished)" if more > 0 else "")

    def _listed(self) -> list[str]:
        """The binary's tests, by ``cargo test <selector> -- --list`` (what the invocation runs, listed), in
        libtest's order; [] when they cannot be listed in time."""
        if self.invocation is None or "--" not in self.invocation.argv:
            return []
        argv = self.invocation.argv
        cut = argv.index("--")
        listing = (*argv[:cut], "--quiet", "--", "--list", "--format", "terse")
        try:
            proc = start(listing, cwd=self.invocation.cwd, env=self.invocation.env)
        except OSError:
            return []
        try:
            out, _ = proc.communicate(timeout=LIST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            kill_process_group(proc)
            proc.communicate()
            return []
        # ``name: test`` per test (benches say ``: bench``); doc-tests list as ``src/lib.rs - f (line 3): test``.
        return [line[:-len(": test")] for line in out.decode("utf-8", errors="replace").splitlines()
                if line.endswith(": test")]

    def _by_exit_code(self, exit_code: int | None, stdout: str, stderr: str) -> TargetResult:
        case_id = f"{self.target_id}::{MAIN_CASE}"
        if exit_code == 0:
            return result_from_cases(self.target_id, [CaseResult(case_id, self.target_id, "passed")],
                                     exit_code=exit_code, duration_s=0.0)
        ran = _RUNNING_BINARY.search(stderr)
        if ran is None:  # it did not build, or cargo failed before starting it
            return error_result(self.target_id, stderr or stdout or f"cargo test exited {exit_code}",
                                exit_code=exit_code)
        output = (stderr[ran.end():].split("\n", 1)[1:] or [""])[0].strip() or stdout.strip()
        lines = [line for line in output.splitlines() if line.strip()]
        panic = next((lines[i + 1] for i, line in enumerate(lines[:-1]) if " panicked at " in line), "")
        message = panic or (lines[-1] if lines else f"exited {exit_code}")
        case = CaseResult(case_id, self.target_id, "failed", message=clip_head(message.strip(), MESSAGE_CHARS),
                          traceback=clip_tail(output, TRACEBACK_CHARS))
        return result_from_cases(self.target_id, [case], exit_code=exit_code, duration_s=0.0)
