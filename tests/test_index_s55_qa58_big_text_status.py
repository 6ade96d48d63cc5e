"""QA58 F8: a file over the structural size limit (1,000,000 characters) is ``too_large`` only when a grammar would
parse it. A big plain ``.txt`` was stored as ``too_large`` without a language, so ``/status`` named it among the
``parse_failures`` while ``skipped.too_large`` (counted per language) left it out."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from codeplane.index.structural.extract import NO_ADAPTER, TOO_LARGE, extract_many
from tests.builders import make_repo, running_server

BIG_PY = "x = 1\n" * 300_000  # 1.8M characters
BIG_TXT = "hello world\n" * 130_000  # 1.56M characters


def test_status_counts_and_names_the_same_too_large_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"huge.py": BIG_PY, "big15.txt": BIG_TXT, "a.py": "def a():\n    return 1\n"})
    with running_server(repo) as server:
        deadline = time.monotonic() + 60
        while True:
            section: dict[str, Any] = server.get("/status").json().get("structural") or {}
            if section.get("parse_failures") or time.monotonic() > deadline:
                break
            time.sleep(0.1)
    assert section["skipped"] == {"too_large": 1}, section
    assert [(f["path"], f["status"]) for f in section["parse_failures"]] == [("huge.py", "too_large")], section


def test_only_a_file_a_grammar_parses_is_too_large() -> None:
    outcomes = extract_many([("huge.py", BIG_PY), ("big15.txt", BIG_TXT)])
    assert [(o.path, o.language, o.status) for o in outcomes] == [
        ("huge.py", "python", TOO_LARGE), ("big15.txt", None, NO_ADAPTER)]
