"""A rename aimed by path and line alone (QA33): a line holding several names is a decision between them, never
the first name found; the name (``symbol``) or the column picks one; a line with one name needs neither."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/help.py": "def make_short_help(text, limit):\n    return text[:limit]\n",
    "pkg/use.py": (
        "from pkg.help import make_short_help\n"
        "\n"
        "\n"
        "def show(value):\n"
        "    out = make_short_help(value, 45)\n"
        "    return out\n"
    ),
}


def test_a_line_of_several_names_asks_which_and_a_name_or_column_picks_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        positions: list[tuple[str | None, str | None, int | None]] = [(None, "pkg/use.py", 5), ("pkg/use.py:5", None,
                                                                                                None)]
        for symbol, path, line in positions:
            with pytest.raises(CodePlaneError) as asked:
                env.service.rename(symbol, "short_help", path=path, line=line)
            assert asked.value.code == 1003, asked.value
            assert "holds several names: out (column 5), make_short_help (column 11), value (column 27)" \
                in asked.value.message, asked.value.message
        by_name = env.service.rename("make_short_help", "short_help", path="pkg/use.py", line=5)
        by_column = env.service.rename(None, "short_help", path="pkg/use.py", line=5, column=10)
        for chosen in (by_name, by_column):
            assert chosen.status == "ready" and chosen.symbol is not None, chosen
            assert chosen.symbol.qualified_name == "pkg.help.make_short_help", chosen.symbol
        local = env.service.rename(None, "text", path="pkg/use.py", line=5, column=4)
        assert local.status == "ready" and {e.line for e in local.edits} == {5, 6}, local
        lone = env.service.rename(None, "shown", path="pkg/use.py", line=6)
        assert lone.status == "ready" and {e.line for e in lone.edits} == {5, 6}, lone
