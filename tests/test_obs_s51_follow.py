"""``cpl status --follow --json`` prints one line per second (qa39 section 6: a poll's own time was added to
each second, so lines came every 1.4 s)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from codeplane.cli.live_view import POLL_S, follow
from codeplane.core.layout import RepoLayout
from tests.builders import make_repo, running_server


def test_follow_polls_once_per_second_counting_the_polls_own_time(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    slept: list[float] = []

    def clock() -> float:  # real time for the polls, the waits only counted (the test does not wait them)
        return time.monotonic() + sum(slept)

    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_server(repo) as server:
        server.wait_serving()
        began = clock()
        follow(RepoLayout(repo), as_json=True, iterations=4, sleep=slept.append, clock=clock)
        took = clock() - began
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert len(lines) == 4  # a poll that timed out on a busy machine is a line too ({"running": false, ...})
    # Each wait is what is left of the second after its poll (none after a poll slower than a second), so the
    # lines come a second apart, not a second plus a poll.
    assert len(slept) == 4 and all(0 <= wait < POLL_S for wait in slept), slept
    assert took >= 4 * POLL_S and (took - 4 * POLL_S < 0.05 or 0 in slept), (took, slept)
