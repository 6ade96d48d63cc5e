"""The shape of a ``cpl doctor`` check. Subsystems contribute checks; the CLI runs them in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    #: One line telling the operator what to do when ``ok`` is false.
    fix: str = ""


#: A check gets the repo root and returns one or more results.
Check = Callable[[Path], list[CheckResult]]
