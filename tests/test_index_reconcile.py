"""Repository truth: the file universe, reconcile (stat, hash, renames, CRLF), epochs, refresh."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.index.freshness import BURST_PATHS, BURST_QUIET_SEC, PendingChanges, concerns_prefix, settle_burst
from codeplane.index.reconcile import RACY_NS
from tests.builders import git, make_repo, write_files
from tests.index_helpers import hit_lines, open_index, running_index


def test_universe_skips_prunable_dirs_and_lists_binaries_and_oversized_without_content(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "src/app.py": "token_alpha = 1\n",
        "node_modules/lib/index.js": "token_alpha\n",
        "build/out.py": "token_alpha\n",
        ".hypothesis/examples/0a1b/2c3d": "token_alpha\n",
        "img.png": b"\x89PNG\x00\x00token_alpha",
        "big.txt": "token_alpha\n" * 20,
    })
    with running_index(repo, max_file_bytes=100) as index:
        paths = [e.path for e in index.list_files(limit=100).entries]
        assert "src/app.py" in paths and "img.png" in paths and "big.txt" in paths
        assert not any(p.startswith(("node_modules/", "build/", ".git/", ".codeplane/", ".hypothesis/")) for p in paths)
        # big.txt has no Tantivy document; search scans it from disk (as rg would), the binary stays out
        assert hit_lines(index, "token_alpha") == {("src/app.py", 1)} | {("big.txt", n) for n in range(1, 21)}
        assert [e.path for e in index.list_files("src/app.py", limit=10).entries] == ["src/app.py"]
        record = index.file_record("img.png")
        assert record is not None and record.kind == "binary"
        big = index.file_record("big.txt")
        assert big is not None and big.kind == "oversized"
        status = index.status()
        assert status["binary_files"] == 1 and status["oversized_files"] == 1
        assert status["primary_language"] == "python"


def test_cplignore_negation_anchoring_and_directory_patterns(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        ".cplignore": "*.log\n!keep.log\n/top_only.txt\ngenerated/\n!generated/reincluded.py\n",
        "a.log": "x\n", "keep.log": "x\n", "sub/b.log": "x\n",
        "top_only.txt": "x\n", "sub/top_only.txt": "x\n",
        "generated/reincluded.py": "x\n", "generated/other.py": "x\n",
    })
    with running_index(repo) as index:
        paths = {e.path for e in index.list_files(limit=100).entries}
    assert "keep.log" in paths and "sub/top_only.txt" in paths
    # Like git: a file inside an excluded directory cannot be re-included.
    assert not paths & {"a.log", "sub/b.log", "top_only.txt", "generated/reincluded.py", "generated/other.py"}


def test_cplignore_change_reevaluates_the_universe(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"notes.md": "marker_word\n", "app.py": "marker_word\n"})
    with running_index(repo) as index:
        assert hit_lines(index, "marker_word") == {("notes.md", 1), ("app.py", 1)}
        (repo / ".cplignore").write_text("*.md\n")
        index.reconcile()
        assert hit_lines(index, "marker_word") == {("app.py", 1)}
        assert index.ignore_rules.excludes("notes.md")


def test_rename_keeps_the_file_id_and_is_reported(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"old/name.py": "def renamed_function():\n    pass\n"})
    with running_index(repo) as index:
        before = index.file_record("old/name.py")
        assert before is not None
        (repo / "new").mkdir()
        os.replace(repo / "old" / "name.py", repo / "new" / "name.py")
        epoch = index.reconcile()
        after = index.file_record("new/name.py")
        assert after is not None and after.id == before.id and after.indexed_epoch == epoch
        assert index.file_record("old/name.py") is None
        last = index.status()["last_reconcile"]
        assert isinstance(last, dict) and last["renamed"] == 1 and last["added"] == 0 and last["deleted"] == 0
        assert hit_lines(index, "renamed_function") == {("new/name.py", 1)}


def test_crlf_only_change_does_not_dirty_the_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "one = 1\ntwo = 2\n"})
    with running_index(repo) as index:
        epoch = index.epoch
        (repo / "a.py").write_bytes(b"one = 1\r\ntwo = 2\r\n")
        assert index.reconcile() == epoch  # nothing to reindex: no new epoch
        last = index.status()["last_reconcile"]
        assert isinstance(last, dict) and last["touched"] == 1 and last["modified"] == 0
        record = index.file_record("a.py")
        assert record is not None
        # The exact-bytes hash follows the disk even though the content hash did not change.
        from codeplane.core.hashing import sha256_bytes
        assert record.file_sha256 == sha256_bytes((repo / "a.py").read_bytes())
        assert hit_lines(index, "two") == {("a.py", 2)}


def test_refresh_paths_publishes_created_modified_and_deleted_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "first_value = 1\n", "pkg/b.py": "first_value\n"})
    with running_index(repo) as index:
        start = index.epoch
        write_files(repo, {"c.py": "fresh_symbol = 2\n", "a.py": "second_value = 1\n"})
        (repo / "pkg" / "b.py").unlink()
        epoch = index.refresh_paths(["c.py", "a.py", "pkg"])
        assert epoch == start + 1
        assert hit_lines(index, "fresh_symbol") == {("c.py", 1)}
        assert hit_lines(index, "first_value") == set()
        assert index.file_record("pkg/b.py") is None
        assert index.refresh_paths(["c.py"]) == epoch  # unchanged: no new epoch


def test_a_write_during_a_reconciles_walk_is_not_undone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full walk runs outside the writer lock (a write tool's refresh must not wait for it); a write
    that lands between the walk and the diff must survive: created, modified and deleted files alike."""
    import threading

    from codeplane.index import pipeline
    from codeplane.repo.ignore import IgnoreRules
    from codeplane.repo.universe import DiskEntry, walk_universe

    repo = make_repo(tmp_path / "repo", {"kept.py": "kept_symbol = 1\n", "edited.py": "old_symbol = 1\n",
                                         "removed.py": "removed_symbol = 1\n"})
    real_walk = walk_universe
    lock_free_during_walk: list[bool] = []
    with running_index(repo) as index:
        lock = index._pipeline.lock

        def walk_then_write(root: Path, rules: IgnoreRules, unnamed: list[str] | None = None) -> list[DiskEntry]:
            entries = real_walk(root, rules, unnamed)
            def try_lock() -> None:
                # Waits out another writer's short hold (the indexer's checkpoint after the startup epoch); a walk
                # holding the lock would keep it until this gives up, since the walk waits for this thread.
                taken = lock.acquire(timeout=10)
                if taken:
                    lock.release()
                lock_free_during_walk.append(taken)

            probe = threading.Thread(target=try_lock)
            probe.start()
            probe.join()
            # What a write tool does meanwhile: change files, then refresh exactly them.
            write_files(repo, {"created.py": "created_symbol = 1\n", "edited.py": "new_symbol = 22\n"})
            (repo / "removed.py").unlink()
            index.refresh_paths(["created.py", "edited.py", "removed.py"])
            return entries

        monkeypatch.setattr(pipeline, "walk_universe", walk_then_write)
        index.reconcile()
        monkeypatch.setattr(pipeline, "walk_universe", real_walk)
        assert lock_free_during_walk == [True], "the walk must not hold the writer lock"
        assert hit_lines(index, "created_symbol") == {("created.py", 1)}
        assert hit_lines(index, "new_symbol") == {("edited.py", 1)} and hit_lines(index, "old_symbol") == set()
        assert hit_lines(index, "removed_symbol") == set() and index.file_record("removed.py") is None
        assert hit_lines(index, "kept_symbol") == {("kept.py", 1)}
        epoch = index.epoch
        assert index.reconcile() == epoch, "the index already matches the disk: nothing left to publish"


def test_same_size_rewrite_within_one_timestamp_tick_is_seen_by_refresh(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "alpha_1 = 1\n"})
    with running_index(repo) as index:
        stat = os.stat(repo / "a.py")
        (repo / "a.py").write_text("alpha_2 = 1\n")
        os.utime(repo / "a.py", ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime, same inode
        index.refresh_paths(["a.py"])
        assert hit_lines(index, "alpha_2") == {("a.py", 1)}


def test_files_changed_while_stopped_are_found_at_next_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "before_stop = 1\n", "gone.py": "x\n"})
    index = open_index(repo)
    index.stop()
    write_files(repo, {"a.py": "after_restart = 1\n", "added.py": "after_restart\n"})
    (repo / "gone.py").unlink()
    with running_index(repo) as index:
        assert hit_lines(index, "after_restart") == {("a.py", 1), ("added.py", 1)}
        assert hit_lines(index, "before_stop") == set()
        assert index.file_record("gone.py") is None


def test_a_racy_row_is_rehashed_by_the_next_start_although_its_stat_is_unchanged(tmp_path: Path) -> None:
    # An mtime in the future stays "racy" (younger than RACY_NS) for the whole test: the full reconcile compares
    # the table and the walk as stat tuples, and must still re-read a row whose equal stat proves nothing.
    repo = make_repo(tmp_path / "repo", {"a.py": "racy_before = 1\n", "b.py": "steady = 1\n"})
    future = (int(os.stat(repo / "a.py").st_mtime) + 3600) * 1_000_000_000
    os.utime(repo / "a.py", ns=(future, future))
    index = open_index(repo)
    assert hit_lines(index, "racy_before") == {("a.py", 1)}
    index.stop()
    (repo / "a.py").write_text("racy_after_ = 1\n")  # same size
    os.utime(repo / "a.py", ns=(future, future))
    with running_index(repo) as index:
        assert hit_lines(index, "racy_after_") == {("a.py", 1)}
        assert hit_lines(index, "racy_before") == set()
        assert hit_lines(index, "steady") == {("b.py", 1)}


def test_git_checkout_is_picked_up_by_reconcile(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "on_main = 1\n"})
    git(repo, "checkout", "-q", "-b", "feature")
    write_files(repo, {"a.py": "on_feature = 1\n", "feature_only.py": "on_feature\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    with running_index(repo) as index:
        assert hit_lines(index, "on_feature") == {("a.py", 1), ("feature_only.py", 1)}
        git(repo, "checkout", "-q", "main")
        index.reconcile()
        assert hit_lines(index, "on_main") == {("a.py", 1)}
        assert index.file_record("feature_only.py") is None
        assert index.status()["head"] == git(repo, "rev-parse", "HEAD").stdout.strip()


def test_paths_are_validated_by_the_one_canonicaliser(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x\n"})
    with running_index(repo) as index:
        for bad in ("../x", "/etc/passwd", "a\x00b"):
            with pytest.raises(CodePlaneError) as caught:
                index.refresh_paths([bad])
            assert caught.value.code == 5001


def test_pending_changes_block_only_queries_they_concern_and_time_out_retryably() -> None:
    pending = PendingChanges()
    pending.mark(["src/a.py"])
    pending.wait_until_fresh(concerns_prefix("docs"), 0.01)  # unrelated: no wait
    with pytest.raises(CodePlaneError) as caught:
        pending.wait_until_fresh(concerns_prefix("src"), 0.05)
    assert caught.value.code == 3005 and caught.value.retryable
    assert caught.value.details["pending_paths"] == ["src/a.py"]
    work = pending.take(0)
    assert work is not None
    pending.mark(["src/a.py"])  # changed again while being indexed: stays pending
    pending.done(work)
    assert pending.count() == 1
    again = pending.take(0)
    assert again is not None
    pending.done(again)
    pending.wait_until_fresh(concerns_prefix("src"), 0.01)


def test_mutation_engine_transient_files_are_never_in_the_universe() -> None:
    from codeplane.repo.ignore import IgnoreRules

    rules = IgnoreRules.load(Path("/nonexistent"))
    assert rules.excludes("pkg/.a.py.batch1.cpl-tmp")
    assert rules.excludes("a.py.cpl-restore")
    assert not rules.excludes("a.py")


def test_a_burst_still_arriving_is_taken_whole_once_the_watcher_goes_quiet() -> None:
    """A checkout's files reach the indexer in several watcher batches: it waits until nothing was marked for
    ``BURST_QUIET_SEC`` and takes them all (with HEAD's full reconcile) as one piece of work."""
    import threading
    import time

    pending = PendingChanges()
    pending.mark([f"wave1/f{n}.py" for n in range(BURST_PATHS)])
    first = pending.take(timeout=0)
    assert first is not None

    def later_waves() -> None:
        for wave in (2, 3):
            time.sleep(BURST_QUIET_SEC / 3)
            pending.mark([f"wave{wave}/f{n}.py" for n in range(40)])
        pending.mark_full()

    feeder = threading.Thread(target=later_waves)
    began = time.monotonic()
    feeder.start()
    work = settle_burst(pending, first, threading.Event())
    feeder.join()
    assert len(work.paths) == BURST_PATHS + 80 and work.full
    assert time.monotonic() - began >= BURST_QUIET_SEC  # it waited for a quiet moment, not only for the first wave
    pending.mark(["late.py"])
    assert settle_burst(pending, work, threading.Event()).paths.keys() >= {"late.py"}


def test_a_refresh_of_paths_is_the_last_update_not_the_last_reconcile(tmp_path: Path) -> None:
    """The watcher's refreshes kept the index current, but "last reconcile" (and the freshness metric's age) stayed
    at the startup reconcile: an idle healthy server looked ever staler. The last update is either kind."""
    repo = make_repo(tmp_path / "repo", {"a.py": "one = 1\n"})
    with running_index(repo) as index:
        startup = index.status()["last_reconcile"]
        (repo / "b.py").write_text("two = 2\n")
        index.refresh_paths(["b.py"])
        status = index.status()
        update = status["last_update"]
        assert status["last_reconcile"] == startup and isinstance(update, dict), status
        assert update["full"] is False and update["epoch"] == index.epoch and index.last_update is not None
        assert index.last_update.at_ms >= index.last_reconcile.at_ms  # type: ignore[union-attr]


def test_a_restart_sees_a_same_size_rewrite_whose_mtime_was_put_back(tmp_path: Path) -> None:
    # Made while the server was down, by a tool keeping times (``cp -p``, ``touch -r``): size, mtime and inode as
    # before, only ctime moved. The restart's reconcile said ``modified=0`` and kept ``alpha_one``'s facts: a read
    # by symbol then showed the body of whatever function now sat there.
    repo = make_repo(tmp_path / "repo", {"m.py": "def alpha_one():\n    pass\n"})
    path = repo / "m.py"
    old = os.stat(path).st_mtime_ns - 100 * 10**9
    os.utime(path, ns=(old, old))
    with running_index(repo) as index:
        assert hit_lines(index, "alpha_one") == {("m.py", 1)}
    time.sleep(RACY_NS / 1e9 + 0.2)  # the row is past the racy window: only the stat decides
    with path.open("r+") as handle:  # in place: the inode stays
        handle.write("def alpha_two():\n    pass\n")
    os.utime(path, ns=(old, old))
    with running_index(repo) as index:
        assert hit_lines(index, "alpha_two") == {("m.py", 1)} and hit_lines(index, "alpha_one") == set()
