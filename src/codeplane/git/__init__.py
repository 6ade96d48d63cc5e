"""git subsystem (spec §10): pygit2 for local work, the git CLI only for remotes and some
submodule/worktree commands; recovery points before anything that can discard work.

The server uses :class:`GitService`; result models live in the modules named for each operation.
"""

from codeplane.git.service import GitService

__all__ = ["GitService"]
