"""A file name with a newline or another control character is quoted in text answers, as git quotes it (QA21 #6).

``nl<newline>name.txt`` was printed raw in the ``search`` and ``list_files`` text, which read as two entries.
The structured content keeps the real name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.repo.universe import quoted_path
from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

ODD = "nl\nname.txt"


async def test_search_and_list_files_text_quote_a_name_with_a_newline(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {ODD: "needle\n", "plain.txt": "needle\n", "tab\tx.txt": "needle\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            searched = await client.call_tool("search", {"query": "needle", "syntax": "identifier"})
            listed = await client.call_tool("list_files", {})
    text = answer_text(searched)
    assert '"nl\\nname.txt"' in text.splitlines() and '"tab\\tx.txt"' in text.splitlines()
    assert "plain.txt" in text.splitlines() and "nl" not in text.splitlines()
    assert ODD in {h["path"] for h in envelope(searched)["result"]["results"]}
    lines = answer_text(listed).splitlines()
    assert any(line.startswith('"nl\\nname.txt"  ') for line in lines) and "name.txt  7 B 1L" not in lines
    assert ODD in {e["path"] for e in envelope(listed)["result"]["entries"]}


def test_quoting_follows_git() -> None:
    assert quoted_path("src/café.py") == "src/café.py"
    assert quoted_path("a b.txt") == "a b.txt"
    assert quoted_path('q"\\\x1b\x7f.txt') == '"q\\"\\\\\\033\\177.txt"'
    assert quoted_path("ls\u2028x") == '"ls\\342\\200\\250x"'
