"""Human (rich) or machine (``--json``) output, and the one place CLI errors are rendered."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import typer
from rich.console import Console

from codeplane.core.errors import CodePlaneError

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def emit(payload: dict[str, Any], as_json: bool, render: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(json.dumps(payload, sort_keys=True, default=str) + "\n")
        sys.stdout.flush()
    else:
        render()


def fail(error: CodePlaneError, as_json: bool, exit_code: int = 2) -> NoReturn:
    if as_json:
        sys.stdout.write(json.dumps({"ok": False, "error": error.to_payload()}, sort_keys=True) + "\n")
    else:
        err_console.print(f"[bold red]error {error.code} {error.error.name}[/]: {error.message}")
    raise typer.Exit(exit_code)


@contextmanager
def cli_errors(as_json: bool) -> Iterator[None]:
    try:
        yield
    except CodePlaneError as exc:
        fail(exc, as_json)
