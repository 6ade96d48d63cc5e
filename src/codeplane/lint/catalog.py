"""Every linter CodePlane knows: its executable, the files it lints, how to install it, how to run it
without letting it write the work tree, and which parser reads its output.

Adding a linter is one :class:`LinterKind` here plus a parser in ``formats/``. A kind without a parser is
listed by ``lint_tools`` (so the agent learns the repository uses it) but reported ``unsupported`` by
``lint_check``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from codeplane.lint.formats import (
    PathMap,
    parse_biome,
    parse_clippy,
    parse_eslint,
    parse_go_vet,
    parse_mypy,
    parse_ruff,
    parse_tsc,
)
from codeplane.lint.models import Diagnostic, LinterInfo

Parser = Callable[[str, PathMap], list[Diagnostic]]
#: ``targets`` are paths relative to the linter's project directory; ``None`` = the linter's default scope.
ArgvBuilder = Callable[[str, Sequence[str] | None], list[str]]
#: The argv that reads one file's text on stdin and prints it fixed: (executable, absolute path) -> argv.
StdinFixArgv = Callable[[str, str], list[str]]

PYTHON = (".py", ".pyi")
#: ruff lints Jupyter notebooks too (by default since 0.6); mypy does not.
RUFF = (*PYTHON, ".ipynb")
JS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


@dataclass(frozen=True)
class LinterKind:
    name: str
    executable: str
    extensions: tuple[str, ...]
    install_hint: str
    check_argv: ArgvBuilder | None = None
    parse: Parser | None = None
    #: Which output stream carries the machine format.
    stream: Literal["stdout", "stderr"] = "stdout"
    #: Exit codes of a run that worked, findings or not (anything else is ``failed`` unless it parsed).
    ok_codes: frozenset[int] = frozenset({0, 1})
    #: For an exit code outside ``ok_codes``: (exit code, stdout, stderr) -> the tool itself failed, whatever
    #: parsed (``None``: it failed when nothing parsed).
    tool_failed: Callable[[int, str, str], bool] | None = None
    can_fix: bool = False
    #: How it fixes one file's text given on stdin, printing the result (never writing); ``None``: see
    #: ``LintService`` (eslint fixes a batch with ``--fix-dry-run``).
    fix_stdin: StdinFixArgv | None = None

    @property
    def runnable(self) -> bool:
        return self.check_argv is not None and self.parse is not None


def operand(path: str) -> str:
    """A relative ``path`` as a command-line operand no linter reads as anything but a path: ``--fix`` (a
    directory) made ruff fix the whole tree during a check, ``-dash.py`` failed as an unknown option, and ``@x``
    is an argument file to mypy (argparse's ``fromfile_prefix_chars``), so those get ``./``. ``--`` is no cure:
    argparse expands ``@`` after it too. (``testing.runners.base.operand`` is the test runners' twin: lint may
    import only mutation, repo and core.)"""
    return f"./{path}" if path.startswith(("-", "@")) else path


def _operands(targets: Sequence[str] | None, *default: str) -> list[str]:
    """``targets`` (each an :func:`operand`), or ``default`` when there are none."""
    return [operand(t) for t in targets] if targets else list(default)


def _ruff(exe: str, targets: Sequence[str] | None) -> list[str]:
    # --no-fix: a repository's `fix = true` must not make a check write files; --force-exclude: paths the
    # caller names still honour the repository's excludes.
    return [exe, "check", "--output-format", "json", "--no-fix", "--force-exclude", *_operands(targets, ".")]


def _mypy(exe: str, targets: Sequence[str] | None) -> list[str]:
    # Without targets mypy takes `files` from its config; discovery passes "." when the config has none.
    return [exe, "-O", "json", "--no-error-summary", "--no-pretty", "--no-color-output", *_operands(targets)]


def _eslint(exe: str, targets: Sequence[str] | None) -> list[str]:
    # A project (or a named directory) without lintable files is no error: there is nothing to report.
    return [exe, "-f", "json", "--no-error-on-unmatched-pattern", *_operands(targets, ".")]


def _ruff_fix(exe: str, path: str) -> list[str]:
    return [exe, "check", "--fix-only", "--force-exclude", "--stdin-filename", path, "-"]


def _biome_fix(exe: str, path: str) -> list[str]:
    # With --stdin-file-path, --write prints the fixed text instead of writing the file (safe fixes only).
    return [exe, "lint", "--write", "--colors=off", f"--stdin-file-path={path}"]


def _biome(exe: str, targets: Sequence[str] | None) -> list[str]:
    return [exe, "lint", "--reporter=json", "--colors=off", "--no-errors-on-unmatched", *_operands(targets, ".")]


#: Checks a tsconfig.json project as its build does, writing nothing (project references, see its header).
TSC_CHECK = Path(__file__).resolve().parent / "tsc_check.cjs"


def _tsc(exe: str, targets: Sequence[str] | None) -> list[str]:
    # `tsc --noEmit -p .` checked a project with references against the referenced projects' built .d.ts files and
    # wrote .tsbuildinfo files (QA59 F2): tsc_check.cjs runs tsc -b or tsc --noEmit -p in memory. Named files
    # would make tsc ignore tsconfig.json: the whole project is checked, then filtered. `node` is what tsc's own
    # `#!/usr/bin/env node` runs.
    return ["node", str(TSC_CHECK), exe]


def _go_package(target: str) -> str:
    """A file names its package (its directory); a directory names every package below it."""
    if target.endswith(".go"):
        parent = target.rpartition("/")[0]
        return f"./{parent}" if parent else "."
    return "./..." if target == "." else f"./{target}/..."


def _go_vet(exe: str, targets: Sequence[str] | None) -> list[str]:
    packages = sorted({_go_package(t) for t in targets}) if targets else ["./..."]
    return [exe, "vet", "-json", *packages]


def _cargo_failed(code: int, stdout: str, stderr: str) -> bool:
    """cargo exits 101 both for a ``deny`` lint (rustc's error diagnostics arrive as ``compiler-message``
    records, and cargo's stderr only says "could not compile") and for its own failures (a broken
    ``Cargo.toml``, a failing build script: an ``error:`` on stderr and no compiler-message)."""
    if code != 101 or '"reason":"compiler-message"' not in stdout.replace(" ", ""):
        return True
    return any(line.startswith("error") and not line.startswith("error: could not compile")
               for line in stderr.splitlines())


def _clippy(exe: str, targets: Sequence[str] | None) -> list[str]:
    # Cargo lints whole crates; the service keeps the diagnostics of the requested paths.
    return [exe, "clippy", "--message-format", "json", "--quiet"]


KINDS: dict[str, LinterKind] = {k.name: k for k in (
    LinterKind("ruff", "ruff", RUFF, "ruff ships with CodePlane (`uv sync` restores it); or add it to the "
               "project: `uv add --dev ruff`", _ruff, parse_ruff, can_fix=True, fix_stdin=_ruff_fix),
    LinterKind("mypy", "mypy", PYTHON, "add it to the project's environment: `uv add --dev mypy`", _mypy, parse_mypy),
    LinterKind("eslint", "eslint", JS, "`npm install --save-dev eslint` in the project directory",
               _eslint, parse_eslint, can_fix=True),
    LinterKind("biome", "biome", (*JS, ".json", ".jsonc", ".css"),
               "`npm install --save-dev @biomejs/biome` in the project directory", _biome, parse_biome,
               can_fix=True, fix_stdin=_biome_fix),
    LinterKind("tsc", "tsc", (".ts", ".mts", ".cts", ".tsx"),
               "`npm install --save-dev typescript` in the project directory", _tsc, parse_tsc,
               ok_codes=frozenset({0})),
    # With -json, vet exits 0 with findings: exit 1 is the go command failing (a broken go.mod, a missing
    # package), unless it printed compiler errors (typecheck diagnostics).
    LinterKind("go vet", "go", (".go",), "install Go (https://go.dev/dl/, or `apt-get install golang-go`)",
               _go_vet, parse_go_vet, stream="stderr", ok_codes=frozenset({0})),
    LinterKind("golangci-lint", "golangci-lint", (".go",),
               "install golangci-lint (https://golangci-lint.run/welcome/install/)"),
    # Cargo exits 101 when a lint is `deny` (an error diagnostic): that is a finding, not a failed run.
    LinterKind("clippy", "cargo", (".rs",), "`rustup component add clippy` (needs a Rust toolchain)",
               _clippy, parse_clippy, ok_codes=frozenset({0}), tool_failed=_cargo_failed),
)}


def run_env(info: LinterInfo) -> tuple[tuple[str, str], ...]:
    """What a linter's runs need in their environment: ESLint 9 reads only ``eslint.config.*`` unless told to read the
    ``.eslintrc*`` (or ``package.json`` ``eslintConfig``) a project still has (qs's ``.eslintrc``: "ESLint couldn't
    find an eslint.config.(js|mjs|cjs) file"); ESLint 8 reads those by default and takes the same setting."""
    config = (info.config_file or "").rsplit("/", 1)[-1]
    if info.name == "eslint" and (config.startswith(".eslintrc") or config == "package.json"):
        return (("ESLINT_USE_FLAT_CONFIG", "false"),)
    return ()
