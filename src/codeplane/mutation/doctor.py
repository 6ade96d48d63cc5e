"""``cpl doctor`` check: no write batch was left unfinished by a crash."""

from __future__ import annotations

import time
from pathlib import Path

from codeplane.core.doctor import CheckResult
from codeplane.core.layout import RepoLayout
from codeplane.mutation.journal import RETIRED_SUFFIX

#: A live batch holds its journal for well under a second; one older than this was left by a crash.
_STALE_AFTER_S = 60.0


def check_journal(root: Path, *, server_running: bool = True) -> list[CheckResult]:
    """``server_running`` False: no batch can be live, so any journal was left by a crash, however young (it said
    "journal empty" for a minute after one)."""
    journal_dir = RepoLayout(root).journal_dir
    name = "no unfinished write batch"
    if not journal_dir.is_dir():
        return [CheckResult(name, True, "journal empty")]
    now = time.time()
    stale = sorted(p.name for p in journal_dir.iterdir()
                   if p.is_dir() and not p.name.endswith(RETIRED_SUFFIX)
                   and (not server_running or now - p.stat().st_mtime > _STALE_AFTER_S))
    if not stale:
        return [CheckResult(name, True, "journal empty")]
    return [CheckResult(name, False, f"{len(stale)} batch(es) interrupted by a crash: {', '.join(stale[:5])}",
                        "run `cpl up` (startup rolls them back before serving) or `cpl clear` (rolls them back, then "
                        "removes .codeplane)")]
