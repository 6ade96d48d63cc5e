"""A source file over the structural parser's limit (``extract.MAX_CHARS``, 1,000,000 characters) but under
``index.max_file_bytes`` is text-searchable and has no definitions: ``/status`` counts it apart and says why (QA30
note: it looked indexed like any other file)."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.layout import RepoLayout
from codeplane.index.structural.extract import MAX_CHARS
from codeplane.index.structural.status import structural_status
from tests.builders import make_repo
from tests.index_helpers import hit_lines, selecting

BIG = "".join(f"def qa_grow_{n}():\n    return {n}\n\n" for n in range(40_000))


def test_a_file_over_the_parse_limit_is_counted_apart_with_its_reason(tmp_path: Path) -> None:
    assert MAX_CHARS < len(BIG) < 2 * 1024 * 1024
    repo = make_repo(tmp_path / "repo", {"big.py": BIG, "small.py": "def small():\n    return 1\n"})
    with selecting(repo) as (index, _):
        assert hit_lines(index, "qa_grow_7") == {("big.py", 22)}  # text search reads it
        section = structural_status(RepoLayout(repo).index_db)
    assert section["skipped"] == {"too_large": 1}
    assert section["parse_failures"] == [{"path": "big.py", "status": "too_large",
                       "error": f"structure skipped: {len(BIG)} characters, over the {MAX_CHARS} parsed "
                                "(no definitions or references; text search still reads it)"}]
