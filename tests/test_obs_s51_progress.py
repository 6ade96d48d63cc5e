"""A build's percentage covers the finish too (qa39 section 6): 100 % only once it is built, never while the
finish (linking, indexes, the Tantivy commit) still runs with a third of the time left."""

from __future__ import annotations

from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index import progress as build_progress
from codeplane.index.epochs import CHUNK
from codeplane.index.service import IndexService
from tests.builders import make_repo


def test_a_cold_builds_percentage_rises_and_reaches_100_only_when_built(tmp_path: Path) -> None:
    count = CHUNK * 2 + 10
    repo = make_repo(tmp_path / "repo", {f"pkg/m{n:03}.py": f"value_{n} = {n}\n" for n in range(count)})
    seen: list[dict[str, object]] = []
    serials: set[int] = set()

    def note(_done: int, _total: int) -> None:
        running = build_progress.current(repo)
        assert running is not None
        serials.add(running.serial)
        seen.append(running.as_dict())

    IndexService(repo, RepoLayout(repo), IndexConfig(watch=False)).build(progress=note)
    percents = [float(str(s["percent"])) for s in seen]
    assert [s["phase"] for s in seen] == ["indexing", "indexing", "finishing"]
    assert percents == sorted(percents) and all(p < 100.0 for p in percents), percents
    # Every file indexed is two thirds of the build, not all of it.
    assert percents[1] == round(100 * 2 / 3 * CHUNK * 2 / count, 1) and percents[-1] >= 66.7
    assert len(serials) == 1
    ended = build_progress.ended(repo, serials.pop())
    assert ended is not None and ended[0] and ended[1].as_dict()["percent"] == 100.0


def test_the_finish_advances_with_its_time_and_stops_short_of_100() -> None:
    progress = build_progress.BuildProgress("watcher", phase="indexing")
    progress.update(500, 1000)
    assert progress.snapshot().percent == 33.3
    progress.update(1000, 1000)
    assert progress.phase == "finishing" and progress.finishing_at is not None
    took = progress.finishing_at - progress.started  # the files' time: the finish is expected to take half of it
    assert round(progress.percent(progress.finishing_at), 1) == 66.7
    assert progress.percent(progress.finishing_at + took / 4) < progress.percent(progress.finishing_at + took / 2)
    # Slower than expected: it waits at 99 %, it never claims the build is done.
    assert progress.percent(progress.finishing_at + took * 10 + 3600) == build_progress.FINISH_CAP == 99.0
