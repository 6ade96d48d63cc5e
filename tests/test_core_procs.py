"""core.procs on real processes: the exit waiter wakes on exit and naps otherwise, with or without a pidfd."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from codeplane.core.procs import ExitWaiter, kill_process_group, start


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "popen-wait"])
def test_exit_waiter_wakes_when_the_process_exits_and_naps_while_it_runs(tmp_path: Path, pidfd: bool) -> None:
    sleeper = start([sys.executable, "-c", "import time; time.sleep(60)"], cwd=tmp_path)
    quick = start([sys.executable, "-c", "import time; time.sleep(0.3)"], cwd=tmp_path)
    try:
        with ExitWaiter(sleeper) as napping, ExitWaiter(quick) as waking:
            if not pidfd:
                napping.close()
                waking.close()
            napping.nap(0.2)
            assert sleeper.poll() is None, "a nap must not end the process"
            began = time.monotonic()
            waking.nap(60)
            assert time.monotonic() - began < 30, "the nap ran on long after the process had exited"
            assert quick.wait(5) == 0
    finally:
        kill_process_group(sleeper)
        kill_process_group(quick)
