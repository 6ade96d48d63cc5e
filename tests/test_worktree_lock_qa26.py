"""A git operation that rewrites the work tree and a ``write_source`` commit never interleave (one lock per work
tree, ``core/worktree_lock.py``).

Four agents' confirmed edits of 629 were lost while another client switched branches every 10 ms: the checkout
checked the tree was clean, the edit landed, and the checkout overwrote it. Here a git write is held open (the
span in which a checkout checks and rewrites files) while an edit of the same file is applied from another
thread: the edit must wait for it, then find the file as the checkout left it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.mutation import MutationEngine, ReplaceText
from tests.builders import make_repo


def test_an_edit_waits_for_a_git_work_tree_write_and_then_sees_its_result(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f.txt": "BRANCH=main\nfiller 2\n"})
    git = GitService(root)
    engine = MutationEngine(root, MutationConfig(lock_timeout_ms=10_000))
    inside = threading.Event()
    outcome: list[object] = []

    def edit() -> None:
        inside.wait(10)
        try:
            outcome.append(engine.apply([ReplaceText(path="f.txt", old_text="filler 2\n", new_text="filler 2 EDIT\n")]))
        except CodePlaneError as exc:
            outcome.append(exc)

    writer = threading.Thread(target=edit)
    writer.start()
    with git._s.writing(files=True, reconcile=False):
        inside.set()
        time.sleep(0.5)  # the edit is planned and waits here, not inside the "checkout"
        assert not outcome, "the edit was committed while a git operation was rewriting the work tree"
        (root / "f.txt").write_text("BRANCH=other\nfiller 2\n")  # what the checkout writes
    writer.join(20)
    [result] = outcome
    # It planned against the file before the checkout: its precondition check finds the checkout's bytes.
    assert isinstance(result, CodePlaneError) and result.code == 5002, result
    assert (root / "f.txt").read_text() == "BRANCH=other\nfiller 2\n"


def test_an_edit_gives_up_with_a_retryable_lock_error_when_git_holds_the_tree_too_long(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"f.txt": "a\n"})
    git = GitService(root)
    engine = MutationEngine(root, MutationConfig(lock_timeout_ms=200))
    errors: list[CodePlaneError] = []
    with git._s.writing(files=True, reconcile=False):
        worker = threading.Thread(target=lambda: _apply(engine, errors))
        worker.start()
        worker.join(10)
    [error] = errors
    assert error.code == 5003 and error.retryable
    assert (root / "f.txt").read_text() == "a\n"


def _apply(engine: MutationEngine, errors: list[CodePlaneError]) -> None:
    with pytest.raises(CodePlaneError) as raised:
        engine.apply([ReplaceText(path="f.txt", old_text="a\n", new_text="b\n")])
    errors.append(raised.value)


def test_local_changes_libgit2_finds_in_the_way_are_the_dirty_work_tree_refusal(tmp_path: Path) -> None:
    # A file changed after the checkout's own check reached libgit2's: "1 conflict prevents checkout" came back as
    # 8001 GIT_ERROR where the same situation is otherwise 8004, which agents branch on.
    import pygit2

    from codeplane.git._session import git_errors
    from tests.git_oracle import run_git

    root = make_repo(tmp_path / "r", {"f.txt": "main\n"})
    run_git(root, "checkout", "-q", "-b", "other")
    (root / "f.txt").write_text("other\n")
    run_git(root, "commit", "-qam", "other")
    run_git(root, "checkout", "-q", "main")
    (root / "f.txt").write_text("local edit\n")
    repo = pygit2.Repository(str(root))
    with pytest.raises(CodePlaneError) as refused, git_errors():
        repo.checkout(repo.lookup_reference("refs/heads/other"))
    assert refused.value.code == 8004 and "prevent" in refused.value.message
    assert (root / "f.txt").read_text() == "local edit\n"
