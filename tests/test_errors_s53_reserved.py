"""The catalog's reserved entries (QA50 #5): codes of the spec's catalog that nothing raises are marked so in
``describe`` (an agent was told of a retryable 7002 that never came), and every other code is raised somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from codeplane.core.errors import RESERVED, ErrorCode, catalog

_SRC = Path(__file__).resolve().parents[1] / "src" / "codeplane"


def _raised_names() -> set[str]:
    """Every catalog name the source refers to outside the catalog itself."""
    names: set[str] = set()
    for path in _SRC.rglob("*.py"):
        if path.name == "errors.py" and path.parent.name == "core":
            continue
        text = path.read_text(encoding="utf-8")
        names.update(re.findall(r"ErrorCode\.([A-Z_0-9]+)", text))
        names.update(name for name in re.findall(r'"([A-Z][A-Z_0-9]+)"', text) if name in ErrorCode.__members__)
    return names


def test_reserved_codes_are_exactly_those_nothing_raises() -> None:
    raised = _raised_names()
    never = {code.name for code in ErrorCode} - raised
    assert never == {code.name for code in RESERVED}


def test_catalog_marks_only_reserved_entries() -> None:
    marked = {entry["code"] for entry in catalog() if "reserved" in entry}
    assert marked == {code.value.code for code in RESERVED}
    assert all(entry["reserved"] for entry in catalog() if "reserved" in entry)
