"""Where a batch writes: directories (or nothing) above every path, and no path of the batch under another.

A batch that creates ``a/b`` and ``a/b/c``, or a file under an existing file (``README.md/x``), can only fail
once the commit has started: the rename into place finds a directory, or creating a parent finds a file. Those
are refused here, before anything is written, with the path in the way named. (A path that is itself a
directory is refused earlier, by the scope: 5001.)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from codeplane.core.errors import CodePlaneError, ErrorCode


class Place(NamedTuple):
    edit_index: int
    rel: str
    #: The edit may create the file (a create, a move's destination); an update or a delete of a path under a
    #: file finds no file there (5004, from the plan).
    creates: bool


def check_places(root: Path, places: Sequence[Place]) -> None:
    """5006 if a path of the batch lies under another; 5005 if the work tree has a file where a path the batch
    creates needs a directory."""
    by_rel = {p.rel: p for p in places}
    for place in sorted(places, key=lambda p: (p.rel, p.edit_index)):
        above = _ancestors(place.rel)
        inside = next((by_rel[a] for a in above if a in by_rel), None)
        if inside is not None:
            raise CodePlaneError(
                ErrorCode.EDIT_CONFLICT,
                f"{place.rel} (edit {place.edit_index}) lies under {inside.rel} (edit {inside.edit_index}), which the "
                "same batch uses as a file; split them into separate calls",
                details={"path": place.rel, "edits": sorted({place.edit_index, inside.edit_index}), "file": inside.rel})
        if place.creates:
            blocking = next((a for a in above if os.path.lexists(root / a) and not os.path.isdir(root / a)), None)
            if blocking is not None:
                raise CodePlaneError(
                    ErrorCode.FILE_EXISTS, f"cannot write {place.rel}: {blocking} is a file, not a directory",
                    details={"path": place.rel, "edit_index": place.edit_index, "blocking_path": blocking})


def _ancestors(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]
