"""A rollback never puts older bytes over newer ones (nothing lost): a batch refused because a target changed
on disk under it leaves that change alone, and recovery after a crash restores only the files that still hold
what the batch wrote — an edit made after the crash, before the restart, stays."""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.mutation.commit import Commit, FileWrite, stat_key
from codeplane.mutation.journal import Journal, Original, recover, temp_path
from tests.builders import make_repo


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_batch_refused_because_a_target_changed_leaves_the_new_bytes_alone(tmp_path: Path) -> None:
    """The 5002 ``changed on disk while the batch was being prepared`` rolled back from the journal: it wrote
    the bytes the batch had read over the other program's edit (an appended line, gone)."""
    repo = make_repo(tmp_path / "repo", {"log.txt": "HEAD\n", "other.txt": "o\n"})
    target = repo / "log.txt"
    read = target.read_bytes()
    seen = stat_key(target.lstat())
    with target.open("ab") as out:  # another program appends after the batch read the file
        out.write(b"EXTERNAL\n")
    writes = [FileWrite("log.txt", read, 0o644, seen, b"HEAD edited\n", 0o644),
              FileWrite("other.txt", b"o\n", 0o644, stat_key((repo / "other.txt").lstat()), b"o2\n", 0o644)]
    with ThreadPoolExecutor(2) as pool:
        commit = Commit(repo, repo / ".codeplane" / "journal", pool)
        with pytest.raises(CodePlaneError) as refused:
            commit.run("mut_refused", writes, [], [])
    assert refused.value.code == 5002
    assert target.read_bytes() == b"HEAD\nEXTERNAL\n" and (repo / "other.txt").read_bytes() == b"o\n"
    assert not list((repo / ".codeplane" / "journal").iterdir()), "the journal is dropped"


def test_recovery_restores_only_what_still_holds_the_batchs_bytes(tmp_path: Path) -> None:
    """A crash after the batch replaced f1 and f2 (f3, f4 not reached), then edits to f1 and f4 before the restart:
    recovery put every original back, both edits lost (f4's although the batch never touched it)."""
    files = {f"f{i}.txt": f"old {i}\n" for i in range(1, 5)}
    repo = make_repo(tmp_path / "repo", files)
    journal_dir = repo / ".codeplane" / "journal"
    new = {name: f"new {name}\n".encode() for name in files}
    Journal.write(repo, journal_dir, "mut_crashed", [
        Original(name, data.encode(), 0o644, temp_path(name, "mut_crashed"), _sha(new[name]))
        for name, data in files.items()], created_dirs=[], moves=[])
    for name in ("f1.txt", "f2.txt"):
        (repo / name).write_bytes(new[name])  # replaced before the crash
    (repo / temp_path("f3.txt", "mut_crashed")).write_bytes(new["f3.txt"])  # its temp, not yet renamed
    with (repo / "f1.txt").open("ab") as out:
        out.write(b"USER EDIT AFTER CRASH\n")
    with (repo / "f4.txt").open("ab") as out:
        out.write(b"USER EDIT AFTER CRASH\n")
    assert recover(repo, journal_dir) == ["mut_crashed"]
    assert (repo / "f1.txt").read_bytes() == b"new f1.txt\nUSER EDIT AFTER CRASH\n"
    assert (repo / "f2.txt").read_bytes() == b"old 2\n", "the batch's bytes: rolled back"
    assert (repo / "f3.txt").read_bytes() == b"old 3\n"
    assert not os.path.exists(repo / temp_path("f3.txt", "mut_crashed"))
    assert (repo / "f4.txt").read_bytes() == b"old 4\nUSER EDIT AFTER CRASH\n"
    assert not list(journal_dir.iterdir())


def test_recovery_removes_a_created_file_only_while_it_holds_the_batchs_bytes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    journal_dir = repo / ".codeplane" / "journal"
    Journal.write(repo, journal_dir, "mut_made", [
        Original("made.txt", None, 0, temp_path("made.txt", "mut_made"), _sha(b"made\n")),
        Original("also.txt", None, 0, temp_path("also.txt", "mut_made"), _sha(b"also\n")),
        Original("a.txt", b"a\n", 0o644, None, ""),  # deleted by the batch
    ], created_dirs=[], moves=[])
    (repo / "made.txt").write_bytes(b"made\n")
    (repo / "also.txt").write_bytes(b"someone else's also\n")
    (repo / "a.txt").unlink()
    recover(repo, journal_dir)
    assert not (repo / "made.txt").exists()
    assert (repo / "also.txt").read_bytes() == b"someone else's also\n"
    assert (repo / "a.txt").read_bytes() == b"a\n"
