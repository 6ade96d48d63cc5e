"""§8.4.4 membership (hole punches) and §8.4.5 the deterministic probe.

The probe never re-reads files: parse statistics are recorded when a file is indexed (``st_file``), so a
context's status is a pure function of the file table.
"""

from __future__ import annotations

from typing import NamedTuple

from codeplane.index.languages import DATA_FAMILIES
from codeplane.index.structural.contexts.discovery import Candidate
from codeplane.index.structural.contexts.globs import (
    INCLUDE_SPECS,
    UNIVERSAL_EXCLUDES,
    is_inside,
    matches,
    relative_to,
)

SAMPLE_SIZE = 5


class FileStats(NamedTuple):
    path: str
    node_count: int | None
    error_count: int | None
    has_named: bool | None


def punch_holes(candidates: list[Candidate]) -> None:
    """Every other candidate of the same family inside C's root is excluded from C (``child/**``)."""
    for candidate in candidates:
        holes = sorted(f"{relative_to(other.root, candidate.root)}/**" for other in candidates
                       if other is not candidate and other.family == candidate.family
                       and other.root != candidate.root and is_inside(other.root, candidate.root))
        candidate.exclude = [*UNIVERSAL_EXCLUDES, *holes]


def owns(candidate: Candidate, path: str) -> bool:
    """Containment, then exclusion, then inclusion (the router's steps 3–5)."""
    if not is_inside(path, candidate.root):
        return False
    relative = relative_to(path, candidate.root)
    if matches(tuple(candidate.exclude), relative):
        return False
    return matches(INCLUDE_SPECS.get(candidate.family, ()), relative)


def _valid(family: str, stats: FileStats) -> bool:
    if stats.node_count is None or stats.error_count is None:
        return False  # no grammar or not parsed: cannot vouch for the context
    if family in DATA_FAMILIES:
        return stats.node_count > 1 and stats.error_count == 0
    return bool(stats.has_named) and stats.error_count * 10 < max(stats.node_count, 1)


def family_members(family: str, files: list[FileStats]) -> list[FileStats]:
    """Files the family's include spec matches, in probe order (shortest path first, then by name).

    Include specs are all ``**/<name glob>``, so this does not depend on the context root."""
    spec = INCLUDE_SPECS.get(family, ())
    return sorted((f for f in files if matches(spec, f.path)), key=lambda f: (len(f.path), f.path))


def status_of(family: str, samples: list[FileStats]) -> str:
    """A probed context's status from its samples' parse statistics (``samples`` not empty)."""
    return "valid" if any(_valid(family, s) for s in samples) else "failed"


def probe(candidate: Candidate, members: list[FileStats]) -> None:
    """Set ``status`` to valid, failed or empty (detached candidates are left alone).

    ``members`` is ``family_members`` of the candidate's family; sampling stops at the fifth owned file.
    """
    if candidate.status == "detached":
        return
    samples: list[FileStats] = []
    for stats in members:
        if owns(candidate, stats.path):
            samples.append(stats)
            if len(samples) == SAMPLE_SIZE:
                break
    candidate.samples = [s.path for s in samples]
    if not samples:
        candidate.status = "empty"
        return
    candidate.status = status_of(candidate.family, samples)
