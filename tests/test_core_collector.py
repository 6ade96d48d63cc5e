"""``collector_paused``: counted across threads, and restores what it found."""

from __future__ import annotations

import gc
import threading

from codeplane.core.collector import collector_paused, resume


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


def test_resume_during_a_pause_waits_for_its_end() -> None:
    gc.disable()  # as ``cpl up`` starts: paused for the boot's imports
    try:
        with collector_paused():  # a first build, started before the boot is done
            resume()  # the boot, done: collection on for good, but not in the middle of the build
            assert not gc.isenabled()
        assert gc.isenabled()
        resume()  # with no pause running: at once
        assert gc.isenabled()
    finally:
        gc.enable()
