"""git subsystem (spec §10): pygit2 for local work, the git CLI only for remotes and some
submodule/worktree commands; recovery points before anything that can discard work.

The server uses :class:`GitService`; result models live in the modules named for each operation. ``GitService`` is
loaded on first use (PEP 562): the server's tool modules import those result models at boot, and the service's own
modules are left for after ``/ready`` (``server/services.py``'s ``Deferred``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codeplane.git.service import GitService


def __getattr__(name: str) -> object:
    if name != "GitService":  # a submodule (``from codeplane.git import recovery``) is then imported as usual
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module(f"{__name__}.service").GitService
    globals()[name] = value
    return value


__all__ = ["GitService"]
