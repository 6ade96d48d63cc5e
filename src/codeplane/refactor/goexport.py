"""Go's export rule in a rename: a name that starts with an upper-case letter is visible to other packages.

Renaming an exported definition to a lower-case name unexports it: every use from another package (another
directory) stops compiling, however exactly the rename edits it. Refused with 4006 naming the first such use,
before any plan is made (a plan applied by default would leave the build broken).
"""

from __future__ import annotations

import posixpath

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.facts import Def, FactReader

_LIMIT = 10_000


def check_export(reader: FactReader, target: Def, new_name: str) -> None:
    """4006 when renaming the Go definition ``target`` to ``new_name`` unexports a name other packages use."""
    if target.language != "go" or not target.name[:1].isupper() or new_name[:1].isupper():
        return
    package = posixpath.dirname(target.path)
    outside = sorted({(r.path, r.line) for r in reader.refs_to(target.def_uid, _LIMIT)
                      if r.role != "DEFINITION" and posixpath.dirname(r.path) != package})
    if outside:
        path, line = outside[0]
        raise CodePlaneError(
            ErrorCode.REFACTOR_INVALID_NAME,
            f"{new_name!r} would unexport {target.name}: {len(outside)} use(s) in other packages ({path}:{line} "
            "first) would no longer compile; keep the first letter upper-case",
            details={"new_name": new_name, "language": "go", "uses": [f"{p}:{n}" for p, n in outside[:20]]})
