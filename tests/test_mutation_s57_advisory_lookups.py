"""A write's delta under index lag (QA63 1/2): the symbols it touches come from its own text's facts without waiting
for unrelated paths, an affected-tests look-up that cannot finish says "unknown" (never "none"), and that look-up
runs after the write let go of its files' locks, so another writer of the same file does not wait for it."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from codeplane.mutation.edits import ReplaceText
from codeplane.server.services import Services
from tests.builders import make_repo, until, write_files
from tests.index_helpers import running_services

MOD = "def area(w, h):\n    return w * h\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
TEST = "from pkg.mod import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    root = make_repo(tmp_path_factory.mktemp("lookups") / "repo", {
        "pkg/__init__.py": "", "pkg/mod.py": MOD, "tests/__init__.py": "", "tests/test_mod.py": TEST,
        "notes.txt": "notes\n"})
    # A short freshness wait keeps the timed-out look-up fast; a short lock wait makes a held lock a 5003 at once.
    with running_services(root, "s57-lookups", lock_timeout_ms=300) as built:
        yield built


def _settled(services: Services) -> None:
    until(lambda: services.index.pending_count == 0)


def test_a_write_whose_test_lookup_times_out_says_the_tests_are_unknown(services: Services) -> None:
    _settled(services)
    index, engine = services.index, services.mutation
    with index.holding():  # the indexer takes nothing meanwhile: what another program changed stays pending
        write_files(services.root, {"notes.txt": "rewritten by another program\n"})
        until(lambda: index.pending_count > 0)
        delta = engine.apply([ReplaceText(path="pkg/mod.py", old_text="return w * h", new_text="return h * w")])
    # The symbols are read from the facts of the text read and of the text written: nothing to wait for.
    assert delta.symbols_changed == ("pkg/mod.py:function:pkg.mod.area",)
    assert delta.tests_affected == ()
    assert delta.tests_affected_by == ("pkg/mod.py:2-2",)  # what selects them once the index has caught up
    unknown = [w for w in delta.warnings if w.startswith("affected tests unknown")]
    assert len(unknown) == 1 and "3005: the index is catching up with" in unknown[0], delta.warnings
    assert 'run_test_targets(affected_by=["pkg/mod.py:2-2"])' in unknown[0]  # a text-only client sees it too

    _settled(services)
    quiet = engine.apply([ReplaceText(path="pkg/mod.py", old_text="return h * w", new_text="return w * h")])
    assert quiet.tests_affected == ("tests/test_mod.py::test_area",) and not quiet.warnings
    assert quiet.tests_affected_by == ()


def test_a_writes_test_lookup_keeps_no_other_writer_of_the_file_waiting(services: Services) -> None:
    _settled(services)
    engine = services.mutation
    real = engine.tests_for
    looking, release = threading.Event(), threading.Event()

    def slow_tests_for(paths: Sequence[str]) -> list[str]:
        looking.set()
        release.wait(30)
        return real(paths)

    engine.tests_for = slow_tests_for
    with ThreadPoolExecutor(1) as pool:
        try:
            first = pool.submit(engine.apply, [ReplaceText(path="pkg/mod.py", old_text="return 2 * (w + h)",
                                                           new_text="return 2 * w + 2 * h")])
            assert looking.wait(30)
            engine.tests_for = real
            # The same file, while the first write still looks its tests up: its lock is no longer held (5003 after
            # 300 ms when it was).
            second = engine.apply([ReplaceText(path="pkg/mod.py", old_text="return w * h", new_text="return h * w")])
        finally:
            release.set()
            engine.tests_for = real
        first_delta = first.result(30)
    assert second.files[0].old_sha256 == first_delta.files[0].file_sha256  # it wrote on top of the first one
    assert (services.root / "pkg/mod.py").read_text() == MOD.replace("return w * h", "return h * w").replace(
        "return 2 * (w + h)", "return 2 * w + 2 * h")
    assert first_delta.symbols_changed == ("pkg/mod.py:function:pkg.mod.perimeter",)
    assert second.tests_affected == ("tests/test_mod.py::test_area",)
