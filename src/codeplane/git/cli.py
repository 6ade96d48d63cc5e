"""The git CLI, used only where §10 allows it: remotes (credentials) and some submodule/worktree commands.

Always an argument list through :func:`codeplane.core.procs.run` (no shell, timeout, process-group kill).
Prompts are disabled so a missing credential fails fast instead of hanging the server; messages are
forced to the C locale so they can be parsed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.procs import ProcResult, run

#: Longest stderr excerpt carried in an error's details.
_ERR_TAIL = 4000


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", "LC_ALL": "C", "LANGUAGE": "C",
                "GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no"})
    # ssh must not ask about host keys or passphrases on a terminal the server does not have.
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env.update(extra or {})
    return env


def run_git(root: Path, args: Sequence[str], *, timeout_s: float,
            env: Mapping[str, str] | None = None) -> ProcResult:
    """Run ``git <args>`` in ``root``; 8001 if git is not installed, 9002-style timeout as 8006."""
    exe = shutil.which("git")
    if exe is None:
        raise CodePlaneError(ErrorCode.GIT_ERROR, "the git executable is not installed (needed for this operation)")
    result = run([exe, *args], cwd=root, timeout_s=timeout_s, env=git_env(env))
    if result.timed_out:
        raise CodePlaneError(ErrorCode.GIT_REMOTE_ERROR, f"git {args[0]} timed out after {timeout_s:.0f}s",
                             details={"command": ["git", *args], "timeout_s": timeout_s})
    return result


def failure(result: ProcResult, code: ErrorCode, what: str, **details: object) -> CodePlaneError:
    """A catalog error carrying git's own message (stderr tail) and exit code."""
    err = result.err_text().strip() or result.text().strip()
    first = next((ln for ln in err.splitlines() if ln.startswith(("fatal:", "error:"))), err.splitlines()[0]
                 if err else "")
    return CodePlaneError(code, f"{what}: {first or f'git exited {result.returncode}'}",
                          details={"exit_code": result.returncode, "stderr": err[-_ERR_TAIL:], **details})
