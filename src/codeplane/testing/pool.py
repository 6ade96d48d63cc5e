"""Work sharing between a phase's processes for targets packing cannot weigh (no cost history yet).

A pool is a directory. ``pool.txt`` lists the shared targets' files (absolute paths, one a line, costliest
estimate first); a process takes the i-th by creating ``<i>.claim`` with ``O_EXCL``, which exactly one
process wins. Every process of the pool collects all of them (the price of sharing), runs its own packed
targets first, then takes shared ones until none is left, so no worker idles while another still has a
queue. The taking side lives in the runner (pytest: ``_pytest_plugin``, which mirrors this protocol because
it cannot import CodePlane).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from codeplane.testing.model import Target

LIST_NAME = "pool.txt"


@dataclass(frozen=True)
class Pool:
    """Shared targets of one project in one phase."""

    directory: Path
    targets: tuple[Target, ...]

    @classmethod
    def create(cls, directory: Path, repo_root: Path, targets: Sequence[Target]) -> Pool:
        directory.mkdir(parents=True, exist_ok=True)
        lines = [os.path.normpath(repo_root / t.path) for t in targets]
        (directory / LIST_NAME).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        return cls(directory, tuple(targets))

    def unclaimed(self) -> list[Target]:
        """Targets no process has taken yet."""
        return [t for i, t in enumerate(self.targets) if not (self.directory / f"{i}.claim").exists()]
