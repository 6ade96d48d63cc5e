"""``cpl doctor`` check: linters the repository is configured for but this machine lacks."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.doctor import CheckResult
from codeplane.lint.service import LintService


def check_linters(root: Path) -> list[CheckResult]:
    """One failing line per missing linter (with how to install it); else one ok line naming them."""
    from codeplane.core.config import load_config

    linters = LintService(root, load_config(root).lint).tools()
    missing = [i for i in linters if not i.found]
    if missing:
        return [CheckResult(f"linter {i.key}", False,
                            f"{i.name} not found ({i.config_file or 'conventional for ' + i.root})",
                            i.install_hint or "") for i in missing]
    names = sorted({i.key for i in linters})
    return [CheckResult("linters", True, ", ".join(names) if names else "no linters configured")]
