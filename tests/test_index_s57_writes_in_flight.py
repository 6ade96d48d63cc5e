"""Reads while the index lags (QA63 3, D6): a read waits for the changes marked before it began, not for those of a
file another program keeps rewriting, nor for the files of another call's write batch still in flight (it has not
answered: answering as of before it is linearizable); a read of such a file that times out says what it waits for."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.index.freshness import PendingChanges, concerns_prefix
from codeplane.index.reconcile import RACY_NS
from codeplane.index.search import LexicalScope
from codeplane.index.service_models import LexicalRequest
from codeplane.mutation.edits import CreateFile
from codeplane.server.services import Services
from tests.builders import make_repo, until
from tests.index_helpers import running_services

MOD = "def area(w, h):\n    return w * h\n"


def test_a_read_waits_for_changes_marked_before_it_not_for_a_path_rewritten_since() -> None:
    pending = PendingChanges()
    pending.mark(["CHANGES.rst"])
    work = pending.take(0)  # the indexer took it
    began = threading.Event()

    def concerns(_path: str) -> bool:  # consulted as the read begins, under the lock that marks take
        began.set()
        return True

    with ThreadPoolExecutor(1) as pool:
        read = pool.submit(pending.wait_until_fresh, concerns, 10.0)
        assert began.wait(10) and work is not None
        pending.mark(["CHANGES.rst"])  # another program rewrote it again, after the read began
        pending.done(work)  # what the read waited for is indexed
        read.result(2)  # returns although the path is pending again (it waited until nothing was: 3005, QA63)
    assert pending.count() == 1
    with pytest.raises(CodePlaneError) as caught:  # a later read waits for that newer change, bounded
        pending.wait_until_fresh(concerns_prefix("CHANGES.rst"), 0.01)
    assert caught.value.code == 3005 and caught.value.details["pending_paths"] == ["CHANGES.rst"]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = make_repo(tmp_path_factory.mktemp("inflight") / "repo", {"pkg/__init__.py": "", "pkg/mod.py": MOD})
    # No file "racy" (changed within the timestamps' granularity): the watcher's catch-up walk would mark it pending
    # at a moment the test does not choose (an old mtime does not do it: it moves ctime, which counts).
    time.sleep(RACY_NS / 1e9 + 0.2)
    with running_services(root, "s57-inflight") as built:
        yield built


def test_reads_of_fresh_files_answer_while_another_calls_write_batch_is_in_flight(services: Services) -> None:
    index, engine = services.index, services.mutation
    until(lambda: index.pending_count == 0)
    refresh = engine.after_write
    assert refresh is not None
    committed, release = threading.Event(), threading.Event()

    def held_refresh(paths: Sequence[str]) -> object:  # the batch stays in flight until the test lets it go
        committed.set()
        release.wait(30)
        return refresh(paths)

    engine.after_write = held_refresh
    edits = [CreateFile(path=f"gen/mod_{k}.py", content=f"def area_{k}(w):\n    return w\n") for k in range(5)]
    with ThreadPoolExecutor(1) as pool, index.holding():  # the indexer takes nothing: as while a long refresh runs
        try:
            batch = pool.submit(engine.apply, edits)
            assert committed.wait(30)
            until(lambda: index.pending_count >= 1)  # the watcher saw the batch's files

            path, start, end = services.structural.definition_span("pkg.mod.area")
            assert (path, start, end) == ("pkg/mod.py", 1, 2)
            page = index.search_lexical(LexicalRequest(query="area", syntax="identifier", scope=LexicalScope()),
                                        limit=10)
            assert [(h.path, h.line) for h in page.hits] == [("pkg/mod.py", 1)]  # not yet the batch's files

            # A read of a file of that batch still waits for it, and says what it waits for.
            with pytest.raises(CodePlaneError) as caught:
                index.file_record("gen/mod_0.py")
            error = caught.value
            assert error.code == 3005 and error.details["write_batch_files"] == [5], error.details
            assert "a write batch of 5 files of another call in this server is still being indexed" in error.message
        finally:
            release.set()
            engine.after_write = refresh
        delta = batch.result(30)
    assert delta.files_changed == 5
    record = index.file_record("gen/mod_0.py")
    assert record is not None and record.file_sha256 == delta.files[0].file_sha256
