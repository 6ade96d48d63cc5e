"""The ``cpl`` entry point: one Typer app, one module per command."""

from __future__ import annotations

import gc
import sys

import typer
from typer._click.exceptions import ClickException  # typer vendors click and exports none of its errors

from codeplane import __version__
from codeplane.cli.clear_cmd import clear
from codeplane.cli.doctor_cmd import doctor
from codeplane.cli.down_cmd import down
from codeplane.cli.index_cmd import index_app
from codeplane.cli.init_cmd import init
from codeplane.cli.output import fail, run_without_traceback
from codeplane.cli.status_cmd import status
from codeplane.cli.up_cmd import up
from codeplane.core.errors import CodePlaneError, ErrorCode

commands = typer.Typer(
    name="cpl",
    help="CodePlane: a repository control plane for AI coding agents. "
    "`cpl up` serves this repository over MCP at http://127.0.0.1:<port>/mcp.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cpl {__version__}")
        raise typer.Exit()


@commands.callback()
def main(ctx: typer.Context, version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                                          help="Print the version and exit.")) -> None:
    """CodePlane operator CLI."""
    if ctx.invoked_subcommand != "up":
        gc.enable()  # only the server's boot keeps it paused, until it has frozen what it built (server/staged.py)


commands.command()(init)
commands.command()(up)
commands.command()(down)
commands.command()(status)
commands.command()(clear)
commands.command()(doctor)
commands.add_typer(index_app)


def pause_collector_for_startup() -> None:
    """Pause the cyclic garbage collector while a command starts.

    ``cpl up`` imports the MCP SDK and every subsystem before it serves: ~200k objects that live as long as the
    server, nearly none of them garbage. Collecting while they are created cost ~0.1 s of a warm restart's
    ~1.4 s of CPU (issue 19). Every other command turns the collector back on as it starts (``main`` below);
    the server's boot freezes what it built and then turns it on (``server/staged.py``).
    """
    gc.disable()


def app() -> None:
    """The ``cpl`` entry point: every command, and no traceback for anything they did not render."""
    pause_collector_for_startup()
    run_without_traceback(_commands_json if "--json" in sys.argv[1:] else commands)


def _commands_json() -> None:
    """The commands, where a usage error (a bad option value, a missing or unknown option) is the catalog's 1003 on
    stdout like every refusal under ``--json``: it printed Typer's boxed text on stderr and nothing on stdout, so a
    script parsing stdout got an empty string (QA64 F5). Exit 2, as before."""
    try:
        code = commands(standalone_mode=False)
    except ClickException as exc:
        try:
            fail(CodePlaneError(ErrorCode.INVALID_ARGUMENTS, exc.format_message(),
                                details={"usage": "cpl --help, or cpl <command> --help"}), True, exc.exit_code)
        except typer.Exit as done:
            sys.exit(done.exit_code)
    sys.exit(code if isinstance(code, int) else 0)
