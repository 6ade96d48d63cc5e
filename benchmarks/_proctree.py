"""CPU and memory of a process *tree* (a command and everything it starts), sampled from ``/proc``.

``getrusage(RUSAGE_CHILDREN)`` misses grandchildren that are never waited for (CodePlane's extraction workers
are children of a forkserver), so the tree is walked every :data:`INTERVAL` seconds: peak RSS is the largest
sum over live processes at one sample, CPU the sum over every process seen of its last observed CPU time
(work done in the last interval before a process exits is missed). Linux only.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

INTERVAL = 0.05
_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat(pid: int) -> tuple[int, float, int, float] | None:
    """(parent pid, CPU seconds, RSS bytes, of the CPU the kernel's seconds) of ``pid``; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read().decode()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    ppid, utime, stime, rss = int(fields[1]), int(fields[11]), int(fields[12]), int(fields[21])
    return ppid, (utime + stime) / _TICK, rss * _PAGE, stime / _TICK


@dataclass
class TreeUsage:
    root: int
    peak_rss: int = 0
    cpu: dict[int, float] = field(default_factory=dict)
    #: Of ``cpu``, the kernel's (system time): on a VM whose host takes idle memory back, every new page the
    #: tree touches (page cache included) is kernel time, ~2.8 s per GB.
    system: dict[int, float] = field(default_factory=dict)

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())

    @property
    def system_seconds(self) -> float:
        return sum(self.system.values())

    @property
    def peak_rss_mb(self) -> float:
        return self.peak_rss / 1e6


class TreeSampler:
    """Samples the tree under ``pid`` in a thread until :meth:`stop`."""

    def __init__(self, pid: int) -> None:
        self.usage = TreeUsage(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def sample(self) -> None:
        stats: dict[int, tuple[int, float, int, float]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                found = _stat(int(name))
                if found is not None:
                    stats[int(name)] = found
        tree = {self.usage.root}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, _, _, _) in stats.items():
                if ppid in tree and pid not in tree:
                    tree.add(pid)
                    grew = True
        rss = 0
        for pid in tree:
            if pid in stats:
                _, cpu, resident, system = stats[pid]
                self.usage.cpu[pid] = max(self.usage.cpu.get(pid, 0.0), cpu)
                self.usage.system[pid] = max(self.usage.system.get(pid, 0.0), system)
                rss += resident
        self.usage.peak_rss = max(self.usage.peak_rss, rss)

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL):
            self.sample()

    def stop(self) -> TreeUsage:
        self.sample()
        self._stop.set()
        self._thread.join()
        return self.usage
