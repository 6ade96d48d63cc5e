"""Running the repository's commit hooks (``pre-commit``, ``prepare-commit-msg``, ``commit-msg``,
``post-commit``) with structured, bounded output.

The hook directory honours ``core.hooksPath`` (relative paths are relative to the work tree, as in git).
Hooks run in the work tree with ``GIT_INDEX_FILE`` set, through the one subprocess runner (timeout,
process-group kill). A hook that is absent or not executable is reported as not run, like git does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pygit2

from codeplane.core.procs import run
from codeplane.git.models import GitModel

#: Only the last this-many characters of each hook stream are kept.
OUTPUT_TAIL = 8000


class HookRun(GitModel):
    hook: str
    ran: bool
    exit_code: int | None = None
    timed_out: bool = False
    duration_ms: float = 0.0
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False

    @property
    def passed(self) -> bool:
        return not self.ran or (self.exit_code == 0 and not self.timed_out)


def common_dir(repo: pygit2.Repository) -> Path:
    """The git directory shared by every worktree (``.git``): a linked worktree's own (``.git/worktrees/<name>``)
    names it in ``commondir``. Hooks, config and refs live there."""
    own = Path(repo.path)
    pointer = own / "commondir"
    try:
        shared = pointer.read_text(encoding="utf-8").strip()
    except OSError:
        return own
    return (own / shared).resolve() if shared else own


def hooks_dir(repo: pygit2.Repository) -> Path:
    """``core.hooksPath`` (a relative one from the work tree's top, where git runs hooks), else ``hooks`` in the
    common git directory: a linked worktree runs the repository's hooks, as git does."""
    workdir = Path(repo.workdir) if repo.workdir else Path(repo.path)
    try:
        configured = repo.config["core.hooksPath"]
    except KeyError:
        configured = None
    if configured:
        path = Path(os.path.expanduser(str(configured)))
        return path if path.is_absolute() else workdir / path
    return common_dir(repo) / "hooks"


def hook_exists(repo: pygit2.Repository, name: str) -> bool:
    """Whether git would run hook ``name``: a file in the hook directory that is executable."""
    path = hooks_dir(repo) / name
    return path.is_file() and os.access(path, os.X_OK)


def run_hook(repo: pygit2.Repository, name: str, args: Sequence[str] = (), *, timeout_s: float,
             env: Mapping[str, str] | None = None, index_file: Path | None = None) -> HookRun:
    """Run hook ``name`` if present and executable; never raises for the hook's own failure. ``index_file``: the
    index git would name in ``GIT_INDEX_FILE`` (a partial commit's temporary one), default the repository's."""
    path = hooks_dir(repo) / name
    if not hook_exists(repo, name):
        return HookRun(hook=name, ran=False)
    workdir = Path(repo.workdir) if repo.workdir else Path(repo.path)
    index = index_file if index_file is not None else Path(repo.path) / "index"
    full_env = {**os.environ, "GIT_INDEX_FILE": str(index), **(env or {})}
    result = run([str(path), *args], cwd=workdir, timeout_s=timeout_s, env=full_env)
    out, err = result.text(), result.err_text()
    return HookRun(
        hook=name, ran=True, exit_code=result.returncode, timed_out=result.timed_out,
        duration_ms=round(result.duration_s * 1000.0, 1),
        stdout=out[-OUTPUT_TAIL:], stderr=err[-OUTPUT_TAIL:],
        output_truncated=len(out) > OUTPUT_TAIL or len(err) > OUTPUT_TAIL,
    )
