"""A write racing a git command run in a terminal (QA38): git holds ``.git/index.lock`` while it checks and then
rewrites the work tree, and takes no lock of CodePlane's. A ``write_source`` replaced in between was answered as
applied, with a ``file_sha256`` that was never on disk once git had written its version over it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.hashing import sha256_bytes
from codeplane.mutation import MutationEngine, ReplaceText
from tests.builders import make_repo

OLD, GITS = "x = 1\n", "x = 2\n"


def _edit() -> ReplaceText:
    return ReplaceText(path="a.py", old_text="x = 1", new_text="x = 3", expected_file_sha256=sha256_bytes(OLD.encode()))


def test_a_write_waits_for_a_running_git_and_checks_what_it_left(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": OLD})
    engine = MutationEngine(repo, MutationConfig(lock_timeout_ms=10_000))
    lock = repo / ".git" / "index.lock"
    lock.write_bytes(b"")

    def terminal_checkout() -> None:  # checks the file, then writes the branch's version and lets go of the lock
        time.sleep(0.5)
        (repo / "a.py").write_text(GITS)
        lock.unlink()

    git = threading.Thread(target=terminal_checkout)
    git.start()
    try:
        with pytest.raises(CodePlaneError) as caught:
            engine.apply([_edit()])
    finally:
        git.join()
        engine.close()
    assert caught.value.code == 5002, caught.value.to_payload()
    assert (repo / "a.py").read_text() == GITS


def test_a_write_behind_a_git_that_does_not_finish_is_refused_retryably_with_nothing_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": OLD})
    engine = MutationEngine(repo, MutationConfig(lock_timeout_ms=300))
    (repo / ".git" / "index.lock").write_bytes(b"")
    try:
        with pytest.raises(CodePlaneError) as caught:
            engine.apply([_edit()])
        assert caught.value.code == 5003 and caught.value.retryable, caught.value.to_payload()
        assert "index.lock" in caught.value.message
        assert (repo / "a.py").read_text() == OLD
        (repo / ".git" / "index.lock").unlink()
        assert engine.apply([_edit()]).files[0].file_sha256 == sha256_bytes(b"x = 3\n")
    finally:
        engine.close()
