"""The ``cursor`` argument of the paged tools: an empty string means no cursor, as an absent one does.

Clients fill optional string fields with ``""``; half the paged tools read that as "no cursor" and half answered
1005 "malformed" (QA42 §8). A tool declares ``cursor: Cursor = Field(...)`` and sees ``None`` for both.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator


def _absent_if_empty(value: object) -> object:
    return None if value == "" else value


Cursor = Annotated[str | None, BeforeValidator(_absent_if_empty)]
