"""Columns at the refactor tools' edge: 1-based, as ``search`` hits, ``rg --column`` and compilers show them.

The refactor engine counts columns from 0 (``refactor/models.py``). An agent that took a column from a search hit
and passed it to ``refactor_rename`` landed one character to the right (a one-letter name was then no name at
all), and an edit's column in a preview was one less than the hit's. The tools convert once, here: a column
argument (or the column of a ``path:line:col`` position) going in, every ``column``/``end_column`` and every
``path:line:col`` listed in coverage coming out.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel

from codeplane.core.errors import CodePlaneError
from codeplane.refactor.targets import POSITION

M = TypeVar("M", bound=BaseModel)

_COLUMNS = ("column", "end_column")
#: Digits of the largest column a position may name (``refactor/targets.py`` POSITION_MAX, 2**31 - 1).
_DIGITS = 10
#: Coverage lists of positions written as ``path:line:column``.
_POSITION_LISTS = ("kept", "set_aside")


def engine_position(symbol: str | None, column: int | None) -> tuple[str | None, int | None]:
    """The symbol (a ``path:line:col`` position in it made 0-based) and the column, as the engine counts them."""
    match = POSITION.match(symbol or "")
    # A column of more than 10 digits is left as given: ``refactor/targets.py`` refuses it (1003) by name, where
    # ``int()`` of 5,000 digits here raised ValueError (9001).
    if symbol is not None and match is not None and match["col"] is not None and len(match["col"]) <= _DIGITS:
        symbol = f"{match['path']}:{match['line']}:{max(0, int(match['col']) - 1)}"
    return symbol, column - 1 if column is not None else None


def one_based(model: M) -> M:
    """``model`` with every engine column (nested models and lists included) counted from 1."""
    update: dict[str, Any] = {}
    for name in type(model).model_fields:
        value = getattr(model, name)
        if name in _COLUMNS and isinstance(value, int):
            update[name] = value + 1
        elif name in _POSITION_LISTS and isinstance(value, list):
            update[name] = [_shifted(v) if isinstance(v, str) else v for v in value]
        elif isinstance(value, BaseModel):
            update[name] = one_based(value)
        elif isinstance(value, list | tuple) and value and any(isinstance(v, BaseModel) for v in value):
            update[name] = type(value)(one_based(v) if isinstance(v, BaseModel) else v for v in value)
    return model.model_copy(update=update) if update else model


def one_based_error(exc: CodePlaneError) -> CodePlaneError:
    """``exc`` with the positions in its details (a 4007's ``collisions``, a 3007's ``path:line:col`` symbol, in
    its message too) counted from 1, as the answers' and the caller's."""
    for item in exc.details.get("collisions") or ():
        if isinstance(item, dict):
            for key in _COLUMNS:
                if isinstance(item.get(key), int):
                    item[key] += 1
    symbol = exc.details.get("symbol")
    if isinstance(symbol, str) and _POSITION.fullmatch(symbol):
        shown = _shifted(symbol)
        exc.details["symbol"] = shown
        exc.message = exc.message.replace(repr(symbol), repr(shown))
    return exc


#: ``path:line:col`` (a column only counts with a line before it).
_POSITION = re.compile(r".+:\d+:\d+")


def _shifted(position: str) -> str:
    head, _, column = position.rpartition(":")
    return f"{head}:{int(column) + 1}" if head and column.isdigit() and len(column) <= _DIGITS else position
