"""Greedy cost-balanced packing of targets onto workers (§11.4): longest first onto the least loaded.

Items that must share a process (all targets of a Maven/Gradle project) are packed as one item. Ties break
on target id so the same inputs always give the same batches.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence

from codeplane.testing.model import Target


def pack(targets: Sequence[Target], workers: int, *, cost: Callable[[Target], float],
         group_of: Callable[[Target], str | None] = lambda _t: None) -> list[list[Target]]:
    """Split ``targets`` into at most ``workers`` non-empty batches with balanced total cost.

    ``group_of`` returns a key for targets that must stay together (None: free). Within a batch, targets
    keep the order they were assigned (costliest first).
    """
    items: dict[str, list[Target]] = {}
    for target in targets:
        key = group_of(target)
        items.setdefault(key if key is not None else f"\0{target.target_id}", []).append(target)
    weighted = sorted(((sum(cost(t) for t in group), min(t.target_id for t in group), group)
                       for group in items.values()), key=lambda item: (-item[0], item[1]))
    count = max(1, min(workers, len(weighted)))
    heap = [(0.0, index) for index in range(count)]
    batches: list[list[Target]] = [[] for _ in range(count)]
    for weight, _, group in weighted:
        load, index = heapq.heappop(heap)
        batches[index].extend(group)
        heapq.heappush(heap, (load + weight, index))
    return [b for b in batches if b]
