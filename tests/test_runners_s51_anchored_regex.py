"""QA41 §9: a regular expression that matches the empty string only on some lines (``^$``, ``^\\s*$``,
``^.{0,3}$``) is a search, answered as ``rg -n --column`` answers it; one matching every line (``a*``) is still
refused, now for the reason that is true."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.query import compile_query
from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server
from tests.index_helpers import all_hits, running_index

RG = shutil.which("rg")
needs_rg = pytest.mark.skipif(RG is None, reason="ripgrep (rg) is not installed; .ci/run installs it")

FILES: dict[str, str | bytes] = {
    "blank.txt": "a\n\nb\n   \n\tx\n\r\nend",
    "ends_in_newline.py": "x = 1\n\ny = 2\n",
    "crlf.txt": "one\r\n\r\ntwo\r\n",
    "just_newline.txt": "\n",
    "empty.txt": "",
    "no_blank.md": "# title\ntext\n",
}
ANCHORED = ["^$", r"^\s*$", "^.{0,3}$", r"^\s+$", "^(?:)$"]


def _rg(repo: Path, pattern: str) -> list[tuple[str, int, int]]:
    assert RG is not None
    proc = subprocess.run([RG, "-n", "--column", "--no-heading", "--with-filename", "--sort", "path",
                           "-g", "!.git", "-g", "!.codeplane", "-e", pattern, "."],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    rows = []
    for row in proc.stdout.splitlines():
        path, line, column, _ = row.split(":", 3)
        rows.append((path.removeprefix("./"), int(line), int(column)))
    return sorted(rows)


@needs_rg
def test_anchored_empty_matching_regexes_answer_exactly_as_rg(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    with running_index(repo) as index:
        for pattern in ANCHORED:
            hits = all_hits(index, pattern, "regex")
            got = sorted((h.path, h.line, h.column) for h in hits)
            assert got == _rg(repo, pattern), pattern
        blank = sorted((h.path, h.line, h.end_column, h.snippet) for h in all_hits(index, "^$", "regex"))
        # Empty lines only: none after a file's last line break, none in an empty file, none on a CRLF line
        # (``$`` does not match before ``\r``, as in rg without --crlf).
        assert blank == [("blank.txt", 2, 1, ""), ("ends_in_newline.py", 2, 1, ""), ("just_newline.txt", 1, 1, "")]


@pytest.mark.parametrize("pattern", ["a*", "x?", "^", "$", "(?:)", r"\s*", "(?!zz)"])
def test_a_regex_matching_every_line_is_refused_saying_so(pattern: str) -> None:
    with pytest.raises(CodePlaneError) as caught:
        compile_query(pattern, "regex")
    assert caught.value.error is ErrorCode.INVALID_QUERY
    assert "would match every line" in caught.value.message and "^\\s*$" in caught.value.message


@pytest.mark.anyio
async def test_search_finds_blank_lines_over_mcp(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"m.py": "import os\n\n\ndef f():\n    return os\n", "n.py": "x = 1\n"})
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            res = await client.call_tool("search", {"query": r"^\s*$", "syntax": "regex"})
            assert not res.is_error, res.content
            text = answer_text(res)
            assert "m.py" in text and "n.py" not in text, text
            hits = envelope(res)["result"]["results"]
            assert [(h["path"], h["line"], h["column"]) for h in hits] == [("m.py", 2, 1), ("m.py", 3, 1)], hits
