"""Packing targets onto workers and the per-target cost history (pure, no processes)."""

from __future__ import annotations

from pathlib import Path

from codeplane.testing.costs import WINDOW, CostHistory
from codeplane.testing.model import Target
from codeplane.testing.packing import pack
from codeplane.testing.runners.pytest_runner import xdist_workers_requested


def _target(name: str, runner: str = "pytest") -> Target:
    return Target(target_id=name, runner=runner, lang="python", cwd=".", selector=name, cmd=("pytest", name),
                  path=name)


def test_longest_first_packing_balances_and_is_deterministic() -> None:
    costs = {"a": 8.0, "b": 7.0, "c": 3.0, "d": 3.0, "e": 2.0, "f": 1.0}
    targets = [_target(n) for n in sorted(costs)]
    batches = pack(targets, 2, cost=lambda t: costs[t.target_id])
    loads = sorted(sum(costs[t.target_id] for t in b) for b in batches)
    assert loads == [12.0, 12.0]
    assert [[t.target_id for t in b] for b in batches] == [
        [t.target_id for t in b] for b in pack(list(reversed(targets)), 2, cost=lambda t: costs[t.target_id])]
    assert len(pack(targets, 8, cost=lambda t: 1.0)) == 6, "never more batches than targets"
    assert pack([], 4, cost=lambda t: 1.0) == []


def test_grouped_targets_share_a_batch() -> None:
    targets = [_target(f"m{i}", "maven") for i in range(4)] + [_target("p1"), _target("p2")]
    batches = pack(targets, 3, cost=lambda t: 1.0,
                   group_of=lambda t: "maven:." if t.runner == "maven" else None)
    maven = [b for b in batches if any(t.runner == "maven" for t in b)]
    assert len(maven) == 1 and sum(t.runner == "maven" for t in maven[0]) == 4


def test_cost_history_keeps_a_rolling_median_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "costs.db"
    history = CostHistory(db)
    assert history.medians([("pytest", "a")]) == {}
    for value in (1.0, 100.0, 2.0):
        history.record({("pytest", "a"): value, ("go", "pkg"): value * 2})
    assert history.generation == 3
    history.close()
    reopened = CostHistory(db)
    assert reopened.medians([("pytest", "a"), ("go", "pkg"), ("pytest", "unknown")]) == {
        ("pytest", "a"): 2.0, ("go", "pkg"): 4.0}
    for _ in range(WINDOW):
        reopened.record({("pytest", "a"): 5.0})
    assert reopened.medians([("pytest", "a")]) == {("pytest", "a"): 5.0}, "old samples leave the window"
    reopened.close()


def test_xdist_workers_requested_follows_pytests_last_n_wins(tmp_path: Path) -> None:
    def asks(config: dict[str, str], env: str = "", argv: tuple[str, ...] = ()) -> bool:
        project = tmp_path / str(len(list(tmp_path.iterdir())))
        project.mkdir()
        for name, text in config.items():
            (project / name).write_text(text)
        return xdist_workers_requested(project, {"PYTEST_ADDOPTS": env} if env else {}, argv)

    assert not asks({"pytest.ini": "[pytest]\naddopts = -ra\n"})
    assert asks({"pytest.ini": "[pytest]\naddopts = -ra -n 4\n"})
    assert asks({"pytest.ini": "[pytest]\naddopts = -nauto\n"})
    assert asks({"tox.ini": "[pytest]\naddopts = --numprocesses=logical --dist loadfile\n"})
    assert asks({"pyproject.toml": '[tool.pytest.ini_options]\naddopts = ["-n", "2"]\n'})
    assert not asks({"pytest.ini": "[pytest]\naddopts = -n 2 -n 0\n"})
    assert not asks({"pytest.ini": "[pytest]\naddopts = -n 2\n"}, env="-n0")
    assert asks({"pytest.ini": "[pytest]\n"}, env="--numprocesses 3")
    assert not asks({"pytest.ini": "[pytest]\naddopts = -p no:cacheprovider --no-header\n"})
    # A cmd from config is pytest's command line: read last, after addopts and PYTEST_ADDOPTS.
    assert asks({"pytest.ini": "[pytest]\n"}, argv=("python", "-m", "pytest", "-n", "4", "-p", "x", "tests/a.py"))
    assert not asks({"pytest.ini": "[pytest]\naddopts = -n 4\n"}, env="-n 2", argv=("pytest", "-n0"))
    assert not asks({"pytest.ini": "[pytest]\n"}, argv=("pytest", "--no-header", "tests/test_n.py"))
