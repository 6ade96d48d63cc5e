"""Human (rich) or machine (``--json``) output, and the one place CLI errors are rendered."""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.text import Text

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.storage import storage_error

# Markup and emoji codes are off: CLI lines carry paths, config values and error messages, and Rich took their
# ``[...]`` for tags (``app/[slug]/page.py`` printed as ``app//page.py``; ``[/x]`` raised MarkupError) and
# ``:name:`` for emoji. Colour goes through :func:`styled`, which never parses its text.
console = Console(highlight=False, soft_wrap=True, markup=False, emoji=False)
err_console = Console(stderr=True, highlight=False, soft_wrap=True, markup=False, emoji=False)


def styled(*parts: str | tuple[str, str]) -> Text:
    """One line from literal pieces: a ``str`` as written, a ``(text, style)`` pair in that Rich style.
    Nothing is read as markup, so data interpolated into any piece prints exactly."""
    return Text.assemble(*parts)


def emit(payload: dict[str, Any], as_json: bool, render: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(payload, sort_keys=True, default=str) + "\n")
        sys.stdout.flush()
    else:
        render()


#: Exit codes: 2 for a refused or failed command, 78 (sysexits' EX_CONFIG) for a config error the user must
#: fix in the named file, 70 (EX_SOFTWARE) for an unexpected failure.
EXIT_ERROR, EXIT_CONFIG, EXIT_INTERNAL = 2, 78, 70
CONFIG_ERRORS = frozenset({ErrorCode.CONFIG_PARSE_ERROR, ErrorCode.CONFIG_INVALID_VALUE})


def exit_code_for(error: CodePlaneError) -> int:
    return EXIT_CONFIG if error.error in CONFIG_ERRORS else EXIT_ERROR


def fail(error: CodePlaneError, as_json: bool, exit_code: int | None = None) -> NoReturn:
    exit_code = exit_code_for(error) if exit_code is None else exit_code
    if as_json:
        sys.stdout.write(json.dumps({"ok": False, "error": error.to_payload()}, sort_keys=True) + "\n")
    else:
        err_console.print(styled((f"error {error.code} {error.error.name}", "bold red"), f": {error.message}"))
    raise typer.Exit(exit_code)


@contextmanager
def cli_errors(as_json: bool) -> Iterator[None]:
    try:
        yield
    except CodePlaneError as exc:
        fail(exc, as_json)
    except OSError as exc:
        mapped = storage_error(exc, doing="the command")
        if mapped is None:
            raise
        fail(mapped, as_json)


def run_without_traceback(main: Callable[[], object]) -> None:
    """Run the CLI; an exception no command rendered becomes one error line, never a traceback
    (``CODEPLANE_DEBUG=1`` prints it first; the line and the exit code stay what they are without it)."""
    try:
        main()
    except Exception as exc:  # noqa: BLE001 - rendered as one line below, whatever it is
        if os.environ.get("CODEPLANE_DEBUG"):
            traceback.print_exception(exc, file=sys.stderr)
        try:
            _render_unexpected(exc, "--json" in sys.argv[1:])
        except typer.Exit as done:
            sys.exit(done.exit_code)


def _render_unexpected(exc: Exception, as_json: bool) -> NoReturn:
    if isinstance(exc, CodePlaneError):
        fail(exc, as_json)
    mapped = storage_error(exc, doing="the command")
    if mapped is not None:
        fail(mapped, as_json)
    fail(CodePlaneError(ErrorCode.INTERNAL_ERROR, f"{type(exc).__name__}: {exc} "
                        "(set CODEPLANE_DEBUG=1 for the traceback; please report it)"), as_json, EXIT_INTERNAL)
