"""A big tree's full reconcile walks and compares in a child process (``index/walk_apart.py``): it must find
exactly what the in-process walk finds, and a failing child must only cost the in-process walk."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from codeplane.core.layout import RepoLayout
from codeplane.index import walk_apart
from codeplane.index.reconcile import racy_after
from codeplane.index.walk_apart import EarlyWalk, delta_apart, delta_in_process
from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.universe import walk_universe
from tests.builders import make_repo, write_files
from tests.index_helpers import hit_lines, open_index, running_index

FILES = {f"pkg/m{n}.py": f"value_{n} = {n}\n" for n in range(30)}


def _change_while_stopped(repo: Path) -> int:
    """Edits of every kind; returns the future mtime given to the racy file."""
    write_files(repo, {"pkg/m1.py": "changed_one = 1\n", "pkg/new.py": "brand_new = 1\n", ".cplignore": "*.log\n",
                       "pkg/skip.log": "ignored_token = 1\n"})
    (repo / "pkg" / "m2.py").unlink()
    os.rename(repo / "pkg" / "m3.py", repo / "pkg" / "renamed.py")
    # same size, same mtime, in the future: racy, so it must be re-read although its stat is unchanged
    future = (int(os.stat(repo / "pkg" / "m4.py").st_mtime) + 3600) * 1_000_000_000
    (repo / "pkg" / "m4.py").write_text("racy_now = 4\n")
    os.utime(repo / "pkg" / "m4.py", ns=(future, future))
    return future


def test_a_restart_through_the_child_finds_every_kind_of_change(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    future = (int(os.stat(repo / "pkg" / "m4.py").st_mtime) + 3600) * 1_000_000_000
    os.utime(repo / "pkg" / "m4.py", ns=(future, future))  # racy at the first index too
    index = open_index(repo)
    index.stop()
    _change_while_stopped(repo)
    monkeypatch.setattr(walk_apart, "APART_FROM_FILES", 1)
    with running_index(repo) as index:
        assert hit_lines(index, "changed_one") == {("pkg/m1.py", 1)}
        assert hit_lines(index, "brand_new") == {("pkg/new.py", 1)}
        assert hit_lines(index, "value_2") == set() and index.file_record("pkg/m2.py") is None
        assert hit_lines(index, "value_3") == {("pkg/renamed.py", 1)}
        assert hit_lines(index, "racy_now") == {("pkg/m4.py", 1)}
        assert hit_lines(index, "ignored_token") == set()
        assert hit_lines(index, "value_5") == {("pkg/m5.py", 1)}


def test_the_childs_delta_is_the_in_process_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    index = open_index(repo)
    db = RepoLayout(repo).index_db
    index.stop()
    # Everything here was written within RACY_NS: a threshold at the racy file's mtime keeps the others out.
    racy_from = _change_while_stopped(repo)
    rules = IgnoreRules.load(repo)
    apart = delta_apart(repo, rules, db, racy_from)
    conn = sqlite3.connect(db)
    try:
        here = delta_in_process({e.path: e for e in walk_universe(repo, rules)}, conn, racy_from)
    finally:
        conn.close()
    assert apart is not None
    assert apart == here
    assert {"pkg/m1.py", "pkg/new.py", "pkg/m2.py", "pkg/m3.py", "pkg/renamed.py", "pkg/m4.py"} <= apart.scope
    assert "pkg/m5.py" not in apart.scope and "pkg/skip.log" not in apart.scope


def test_a_failing_child_leaves_the_walk_to_this_process(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "alpha = 1\n"})
    assert delta_apart(repo, IgnoreRules.load(repo), tmp_path / "no-such.db", racy_after()) is None


def test_a_checkout_burst_is_indexed_while_a_child_walks_and_the_walk_finds_what_the_watcher_missed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full reconcile carrying a burst of paths (a checkout) indexes those paths as one epoch while a child walks
    the tree, then finishes the reconcile from that walk: a file changed without any event is found too."""
    from codeplane.core.config import IndexConfig
    from codeplane.index.freshness import BURST_PATHS, PendingChanges
    from codeplane.index.pipeline import IndexPipeline

    files = {f"pkg/m{n:03}.py": f"before_{n} = {n}\n" for n in range(BURST_PATHS)}
    repo = make_repo(tmp_path / "repo", {**files, "missed.py": "missed_before = 1\n"})
    monkeypatch.setattr(walk_apart, "APART_FROM_FILES", 1)
    pending = PendingChanges()
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), pending)
    pipeline.open()
    try:
        pipeline.reconcile("init")
        start = pipeline.epoch
        write_files(repo, {path: f"after_{n} = {n}\n" for n, path in enumerate(files)})
        write_files(repo, {"missed.py": "missed_after = 1\n"})  # no event for this one
        pending.mark(files)
        pending.mark_full()
        work = pending.take(timeout=0)
        assert work is not None and work.full and len(work.paths) == BURST_PATHS
        pipeline.process(work)
        assert pending.count() == 0
        # the burst's epoch, then the reconcile's for the file only the walk saw
        assert pipeline.epoch == start + 2
        record = pipeline.store.record("missed.py")
        assert record is not None and record.size == len("missed_after = 1\n")
        assert pipeline.store.record("pkg/m007.py").size == len("after_7 = 7\n")  # type: ignore[union-attr]
    finally:
        pipeline.close()


def test_a_repository_with_its_own_codeplane_package_does_not_shadow_the_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child runs ``python -m codeplane...`` from the server's working directory, often the repository: a
    top-level ``codeplane/`` there (a fork, a vendored copy) must not be imported instead of CodePlane's own."""
    repo = make_repo(tmp_path / "repo", {**FILES, "codeplane/__init__.py": "raise SystemExit('shadowed')\n"})
    index = open_index(repo)
    db = RepoLayout(repo).index_db
    index.stop()
    (repo / "pkg" / "m1.py").write_text("changed_one = 1  # longer now\n")
    monkeypatch.chdir(repo)
    apart = delta_apart(repo, IgnoreRules.load(repo), db, racy_after())
    assert apart is not None and "pkg/m1.py" in apart.scope


def test_an_early_walk_gives_the_in_process_delta_once_told_the_table(tmp_path: Path) -> None:
    """``EarlyWalk`` walks before the table exists (an artifact being adopted) and compares when asked: the same
    delta as walking and comparing in-process, here with the walk made before every change was even written."""
    repo = make_repo(tmp_path / "repo", FILES)
    index = open_index(repo)
    db = RepoLayout(repo).index_db
    index.stop()
    racy_from = _change_while_stopped(repo)
    rules = IgnoreRules.load(repo)
    early = EarlyWalk(repo, rules)
    apart = early.delta(db, racy_from)
    conn = sqlite3.connect(db)
    try:
        here = delta_in_process({e.path: e for e in walk_universe(repo, rules)}, conn, racy_from)
    finally:
        conn.close()
    assert apart is not None and apart == here
    assert {"pkg/m1.py", "pkg/new.py", "pkg/m2.py", "pkg/renamed.py", "pkg/m4.py"} <= apart.scope


def test_an_early_walk_that_fails_or_is_cancelled_leaves_no_child(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "alpha = 1\n"})
    failing = EarlyWalk(repo, IgnoreRules.load(repo))
    assert failing.delta(tmp_path / "no-such.db", racy_after()) is None
    assert failing._proc.poll() is not None
    cancelled = EarlyWalk(repo, IgnoreRules.load(repo))
    cancelled.cancel()
    assert cancelled._proc.poll() is not None


def test_a_reconcile_drops_an_early_walk_made_under_other_rules(tmp_path: Path) -> None:
    """A ``.cplignore`` edited after the early walk began: the reconcile cancels it and walks itself, so a file the
    new rules ignore is not indexed."""
    from codeplane.core.config import IndexConfig
    from codeplane.index.freshness import PendingChanges
    from codeplane.index.pipeline import IndexPipeline

    repo = make_repo(tmp_path / "repo", {"a.py": "alpha = 1\n", "b.log": "log_token = 1\n"})
    pipeline = IndexPipeline(repo, RepoLayout(repo), IndexConfig(watch=False), PendingChanges())
    pipeline.open()
    try:
        early = EarlyWalk(repo, IgnoreRules.load(repo))
        write_files(repo, {".cplignore": "*.log\n"})
        pipeline.early_walk = early
        pipeline.reconcile("startup")
        assert pipeline.early_walk is None and early._proc.poll() is not None
        assert pipeline.store.record("b.log") is None and pipeline.store.record("a.py") is not None
    finally:
        pipeline.close()
