"""A damaged journal is never restored into the work tree (spec §9.6, the damage table's ``journal/`` row).

A writer killed mid-batch leaves its journal; the next start rolls the batch back from ``originals.bin``. When
that file was truncated or overwritten since, the rollback wrote the damaged bytes as the files' old content
(``…\\n\\n\\ndef``) and the server came up ready. Every original is now checked against its SHA-256 in the
manifest first: the start fails naming the journal, and nothing in the work tree is touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.mutation import MutationEngine
from tests.test_mutation_crash import killed_mid_batch, make_batch_repo


def _work_tree(repo: Path) -> dict[str, bytes]:
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and not p.relative_to(repo).parts[0].startswith((".git", ".codeplane"))}


@pytest.mark.parametrize("damage", ["truncate", "overwrite"])
def test_a_damaged_originals_file_fails_the_recovery_and_touches_nothing(tmp_path: Path, damage: str) -> None:
    repo = make_batch_repo(tmp_path / "repo")
    journal = killed_mid_batch(repo)
    originals = journal / "originals.bin"
    if damage == "truncate":
        os.truncate(originals, 40)
    else:
        with originals.open("r+b") as f:
            f.seek(20)
            f.write(b"BlaBohZVztDNlxYsekxY")
    before = _work_tree(repo)
    with pytest.raises(CodePlaneError) as failed:
        MutationEngine(repo, MutationConfig()).recover()
    assert failed.value.code == 9001 and failed.value.details["journal"] == str(journal)
    assert "damaged" in failed.value.message
    assert _work_tree(repo) == before and originals.exists()


def test_an_intact_journal_is_still_rolled_back(tmp_path: Path) -> None:
    repo = make_batch_repo(tmp_path / "repo")
    killed_mid_batch(repo)
    MutationEngine(repo, MutationConfig()).recover()
    assert all("'gen0'" in (repo / f"pkg/m{i:02}.py").read_text() for i in range(24))


@pytest.mark.parametrize("shape", ["file", "dangling link"])
def test_a_file_in_place_of_the_journal_directory_is_replaced_at_the_next_write(tmp_path: Path, shape: str) -> None:
    # Every write_source answered 9001 FileExistsError, and a restart did not help.
    from codeplane.mutation import ReplaceText

    repo = make_batch_repo(tmp_path / "repo")
    (repo / ".codeplane").mkdir()
    journal = repo / ".codeplane/journal"
    if shape == "file":
        journal.write_text("not a journal\n")
    else:
        journal.symlink_to(tmp_path / "nowhere")
    engine = MutationEngine(repo, MutationConfig())
    assert engine.recover() == []
    engine.apply([ReplaceText(path="pkg/m00.py", old_text="'gen0'", new_text="'gen1'")])
    assert "'gen1'" in (repo / "pkg/m00.py").read_text() and journal.is_dir() and not journal.is_symlink()
