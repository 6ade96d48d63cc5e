"""``collector_paused``: counted across threads, and restores what it found."""

from __future__ import annotations

import gc
import threading

from codeplane.core.collector import collector_paused


def test_collection_resumes_only_when_the_last_overlapping_pause_ends() -> None:
    assert gc.isenabled()
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collector_paused():
        thread.start()
        assert inside.wait(10)
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's pause is still running
    release.set()
    thread.join(10)
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
