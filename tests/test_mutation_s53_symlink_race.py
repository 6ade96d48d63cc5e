"""No byte is written outside the repository, whatever another program does to the tree meanwhile (DECISIONS D4).

The scope proved a target's directories real and inside the repository, by name; the commit then wrote by full
path. A directory swapped for a symlink in between (a second agent, a build, a sync tool) was followed: files and
``.cpl-tmp`` leftovers landed outside the repository, and a directory removed meanwhile answered 9001
(FileNotFoundError). The commit and its rollback now work through directory descriptors opened without following
symlinks: such a swap is refused with a retryable 5002 and the batch rolled back."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.mutation import CreateFile, MutationEngine, ReplaceText
from codeplane.mutation.journal import Journal, Original, temp_path
from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server

FILES = {"a.txt": "A = 0\n", "racedir/keep.txt": "keep\n"}


def _engine(root: Path, before_commit: Callable[[], object]) -> MutationEngine:
    """The real engine; ``before_commit`` runs after every check and the plan, just before the commit (the engine
    asks for the repository fingerprint exactly there)."""
    pending = [before_commit]

    def fingerprint() -> str:
        while pending:  # once: the engine asks again for the delta after a commit
            pending.pop()()
        return "rf_test"
    return MutationEngine(root, MutationConfig(), repo_fingerprint=fingerprint)


def _swap_for_link(directory: Path, outside: Path) -> None:
    directory.rename(directory.with_name(directory.name + ".moved"))
    directory.symlink_to(outside, target_is_directory=True)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink() and ".git" not in p.parts and ".codeplane" not in p.parts}


def test_a_directory_swapped_for_a_symlink_before_the_write_is_refused_and_nothing_lands_outside(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", FILES)
    outside = tmp_path / "outside"
    outside.mkdir()
    engine = _engine(root, lambda: _swap_for_link(root / "racedir", outside))
    try:
        with pytest.raises(CodePlaneError) as info:
            engine.apply([ReplaceText(path="a.txt", old_text="0", new_text="1"),
                          CreateFile(path="racedir/new.txt", content="escaped\n")])
    finally:
        engine.close()
    err = info.value
    assert err.code == 5002 and err.retryable, err.to_payload()
    assert err.details == {"path": "racedir/new.txt", "directory": "racedir", "reason": "changed during apply"}
    assert list(outside.iterdir()) == []
    assert (root / "a.txt").read_text() == "A = 0\n"  # all or nothing
    assert not [p for p in root.rglob("*") if p.name.endswith((".cpl-tmp", ".cpl-restore"))]
    assert list((root / ".codeplane/journal").iterdir()) == []


def test_a_directory_the_batch_creates_that_becomes_a_symlink_is_refused_and_nothing_lands_outside(
        tmp_path: Path) -> None:
    # ``mkdir(exist_ok=True)`` accepted a symlink to a directory as the directory it was to create, and created the
    # next level (and the file) inside the outside directory.
    root = make_repo(tmp_path / "repo", FILES)
    outside = tmp_path / "outside"
    outside.mkdir()
    engine = _engine(root, lambda: (root / "fresh").symlink_to(outside, target_is_directory=True))
    try:
        with pytest.raises(CodePlaneError) as info:
            engine.apply([CreateFile(path="fresh/sub/new.txt", content="escaped\n")])
    finally:
        engine.close()
    assert info.value.code == 5002 and info.value.retryable, info.value.to_payload()
    assert info.value.details["directory"] == "fresh"
    assert list(outside.iterdir()) == []
    assert _tree(root) == {k: v.encode() for k, v in FILES.items()}


def test_a_rollback_never_restores_through_a_directory_now_a_symlink(tmp_path: Path) -> None:
    # A batch replaced racedir/keep.txt and failed later; by the rollback (or the restart's recovery) racedir is a
    # symlink to a directory whose keep.txt happens to hold the batch's bytes: it was restored there, outside.
    root = make_repo(tmp_path / "repo", FILES)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("new\n")
    batch = "mut_" + "0" * 32
    journal = Journal.write(root, root / ".codeplane/journal", batch,
                            [Original("racedir/keep.txt", b"keep\n", 0o644, temp_path("racedir/keep.txt", batch),
                                      hashlib.sha256(b"new\n").hexdigest())],
                            created_dirs=[], moves=[])
    _swap_for_link(root / "racedir", outside)
    kept = journal.rollback()
    assert [(p.name, p.read_text()) for p in outside.iterdir()] == [("keep.txt", "new\n")]
    assert kept == ["racedir/keep.txt"]  # not reachable inside the repository any more: left as it is
    assert list((root / ".codeplane/journal").iterdir()) == []


def _race(directory: Path, outside: Path, stop: threading.Event) -> None:
    """What the QA reproduction's shell loop did: the directory, gone, a symlink to outside, gone, again (the
    engine creates the directory too, so each step may find it there)."""
    def link() -> None:
        os.symlink(outside, directory)

    def make() -> None:
        os.mkdir(directory)

    def remove() -> None:
        if directory.is_symlink():
            directory.unlink()
        else:
            shutil.rmtree(directory)

    while not stop.is_set():
        for step in (remove, make, remove, link):
            try:
                step()
            except OSError:
                pass
        time.sleep(0.0005)


def test_writes_racing_a_directory_swapped_for_a_symlink_never_land_outside_and_fail_typed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.txt": "A\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    engine = MutationEngine(root, MutationConfig())
    stop = threading.Event()
    racer = threading.Thread(target=_race, args=(root / "racedir", outside, stop), daemon=True)
    outcomes: dict[str, int] = {}
    racer.start()
    try:
        deadline = time.monotonic() + 8
        for i in range(400):
            if time.monotonic() > deadline or any(outside.iterdir()):
                break
            try:
                engine.apply([CreateFile(path=f"racedir/race{i}.txt", content="race\n")])
                key = "applied"
            except CodePlaneError as exc:
                key = str(exc.code)
            except OSError as exc:  # what the server answered as 9001
                key = f"OSError {exc.strerror}"
            outcomes[key] = outcomes.get(key, 0) + 1
    finally:
        stop.set()
        racer.join()
        engine.close()
    assert sorted(p.name for p in outside.iterdir()) == [], outcomes
    assert set(outcomes) <= {"applied", "5001", "5002", "5005"}, outcomes
    assert outcomes.get("5002", 0) > 0, outcomes  # the race was really run at the commit


@pytest.mark.anyio
async def test_write_source_racing_a_symlink_swap_answers_typed_refusals_and_writes_nothing_outside(
        tmp_path: Path) -> None:
    # The QA run: 15 files and 14 ``.cpl-tmp`` leftovers outside the repository, 43 answers of 9001.
    root = make_repo(tmp_path / "repo", {"a.txt": "A\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    stop = threading.Event()
    racer = threading.Thread(target=_race, args=(root / "racedir", outside, stop), daemon=True)
    outcomes: dict[str, int] = {}
    with running_server(root) as handle:
        async with mcp_client(handle) as client:
            racer.start()
            try:
                deadline = time.monotonic() + 8
                for i in range(120):
                    if time.monotonic() > deadline or any(outside.iterdir()):
                        break
                    res = await client.call_tool("write_source", {"edits": [
                        {"path": f"racedir/race{i}.txt", "action": "create", "content": "race\n"}]})
                    body = envelope(res)
                    key = str(body["error"]["code"]) if res.is_error else "applied"
                    outcomes[key] = outcomes.get(key, 0) + 1
                    if key == "5002":
                        assert body["error"]["retryable"] and body["error"]["details"]["directory"] == "racedir"
                        assert answer_text(res).startswith(f"error 5002 MUTATION_PRECONDITION_FAILED (retryable): "
                                                           f"racedir/race{i}.txt: "), answer_text(res)
            finally:
                stop.set()
                racer.join()
    assert sorted(p.name for p in outside.iterdir()) == [], outcomes
    assert set(outcomes) <= {"applied", "5001", "5002", "5005"}, outcomes
