"""The shape of a ``cpl doctor`` check. Subsystems contribute checks; the CLI runs them in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codeplane.core.errors import CodePlaneError


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    #: One line telling the operator what to do when ``ok`` is false.
    fix: str = ""


#: A check gets the repo root and returns one or more results.
Check = Callable[[Path], list[CheckResult]]


def unwritable_check(name: str, exc: CodePlaneError) -> CheckResult:
    """A store that cannot be opened because its directory cannot be written (``stores.sqlite_problem``): a
    permissions problem to fix by hand, which ``cpl doctor --fix`` leaves alone."""
    return CheckResult(name, False, f"{exc.code} {exc.message}",
                       "fix the permissions of .codeplane/ (or the mount); this is no damage, `--fix` leaves it")
