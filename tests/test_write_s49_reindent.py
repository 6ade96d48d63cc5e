"""``old_text`` copied from a ``search`` block (QA33): search shows a hit with context without the indentation its
lines share, so a block of several lines copied from it is found once its later lines get that indentation back,
``new_text`` indented alike, and the answer says so; nowhere else, never ambiguously, never with ``replace_all``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codeplane.mutation.document import Document
from codeplane.mutation.spans import text_replacements
from tests.builders import answer_text, call, call_error, make_repo, mcp_client, running_server

SOURCE = (
    "class Exact:\n"
    "    def prep(self, value):\n"
    "        if value:\n"
    "            if not value.has_limit_one():\n"
    "                raise ValueError(\n"
    "                    \"The QuerySet value must be limited to one result.\"\n"
    "\n"
    "                )\n"
    "        return value\n"
)


def _apply(text: str, old: str, new: str, *, replace_all: bool = False) -> str:
    doc = Document.decode(text.encode(), "a.py", default_ending="LF")
    found, _ = text_replacements(doc, "a.py", 0, old_text=old, new_text=new, replace_all=replace_all)
    (one,) = found
    return text[:one.start] + one.new + text[one.end:]


def test_a_dedented_block_is_found_and_the_new_text_indented_alike() -> None:
    old = 'raise ValueError(\n    "The QuerySet value must be limited to one result."\n\n)'
    new = 'raise TypeError(\n    "one result, please"\n)'
    was = ('                raise ValueError(\n                    "The QuerySet value must be limited to one result."'
           '\n\n                )')
    assert _apply(SOURCE, old, new) == SOURCE.replace(
        was, '                raise TypeError(\n                    "one result, please"\n                )')
    # Ending with a line break, and in a CRLF file.
    assert _apply(SOURCE, "if value:\n    if not", "if value is not None:\n    if not") == SOURCE.replace(
        "if value:\n            if not", "if value is not None:\n            if not")
    crlf = SOURCE.replace("\n", "\r\n")
    assert _apply(crlf, "if value:\n    if not", "if value:\n    if   not") == crlf.replace(
        "if value:\r\n            if not", "if value:\r\n            if   not")


def test_no_guess_when_the_block_fits_twice_or_differs() -> None:
    twice = SOURCE + "    def other(self, value):\n        if value:\n            if not value.has_limit_one():\n"
    doc = Document.decode(twice.encode(), "a.py", default_ending="LF")
    with pytest.raises(Exception, match="old_text was not found"):
        text_replacements(doc, "a.py", 0, old_text="if value:\n    if not", new_text="x\n    y", replace_all=False)
    doc = Document.decode(SOURCE.encode(), "a.py", default_ending="LF")
    # The relative indentation must be the file's: two spaces where it has four is another text.
    with pytest.raises(Exception, match="old_text was not found"):
        text_replacements(doc, "a.py", 0, old_text="if value:\n  if not", new_text="x", replace_all=False)
    with pytest.raises(Exception, match="old_text was not found"):
        text_replacements(doc, "a.py", 0, old_text="if value:\n    if not", new_text="x", replace_all=True)


@pytest.mark.anyio
async def test_a_block_copied_from_a_search_hit_edits_the_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {".gitignore": ".codeplane/\n", "pkg/lookups.py": SOURCE})
    with running_server(root) as handle:
        async with mcp_client(handle) as client:
            res = await client.call_tool("search", {"query": "raise ValueError", "context_lines": 1})
            text = answer_text(res)
            block = [re.sub(r"^\d+[:-]", "", line) for line in text.splitlines()[1:]]
            # Shown without the indentation the lines share (the hit's line keeps its own, relative to them).
            assert block[:2] == ["if not value.has_limit_one():", "    raise ValueError("], text
            old = "\n".join(block[1:3])
            res = await client.call_tool("write_source", {"edits": [
                {"path": "pkg/lookups.py", "old_text": old, "new_text": '    raise TypeError(\n        "one"'}]})
            text = answer_text(res)
            assert not res.is_error, text
            assert "old_text of edit 0 found at line 5 with its later lines indented 12 space(s) more" in text, text
            err = await call_error(client, "write_source", {"edits": [
                {"path": "pkg/lookups.py", "old_text": 'raise TypeError(\n  "one"', "new_text": "x"}]})
            assert err["code"] == 5002, err
            await call(client, "read_source", {"targets": [{"path": "pkg/lookups.py"}]})
    assert (root / "pkg/lookups.py").read_text() == SOURCE.replace(
        'raise ValueError(\n                    "The QuerySet value must be limited to one result."',
        'raise TypeError(\n                    "one"')
