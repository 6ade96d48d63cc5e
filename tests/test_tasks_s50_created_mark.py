"""The ledger's summary of a write marks a created file ``+`` (spec §12.5's short diff), a changed one ``~`` and a
deleted one ``-`` (QA36: a created file was ``~``). The report comes from a real write's delta."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.config import MutationConfig
from codeplane.mutation import CreateFile, DeleteFile, MutationEngine, ReplaceText
from codeplane.tasks.recording import path_summary
from tests.builders import make_repo


def test_created_changed_and_deleted_files_are_marked_apart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.py": "y = 1\n"})
    engine = MutationEngine(repo, MutationConfig())
    try:
        delta = engine.apply([CreateFile(path="new.py", content="z = 1\n"), ReplaceText(path="a.py", old_text="1",
                              new_text="2"), DeleteFile(path="b.py")])
    finally:
        engine.close()
    report = delta.mutation_report()
    assert report.created_paths == ("new.py",)
    assert path_summary(report) == "~ a.py\n- b.py\n+ new.py"
