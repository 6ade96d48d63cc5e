"""The diffs of a write: minimal around the edit even in files of repeated lines (``}``, blank lines, a lock
file), where difflib alone was quadratic (12,000 lines: 14 s per write) or, with its popular-line heuristic,
answered a 96 KB dry-run diff for a one-line change."""

from __future__ import annotations

import random

from codeplane.mutation.diffs import count_changes, unified


def test_a_one_line_change_among_repeated_lines_is_a_one_line_diff() -> None:
    old = ["genP token"] + ["}"] * 12000
    new = ["genR token"] + ["}"] * 12000
    assert count_changes(old, new) == (1, 1)
    diff = unified("f.txt", "f.txt", old, new)
    assert diff.splitlines() == ["--- a/f.txt", "+++ b/f.txt", "@@ -1,4 +1,4 @@", "-genP token", "+genR token",
                                 " }", " }", " }"]
    middle = ["pad"] * 4000 + ["x"] + ["pad"] * 4000
    assert count_changes(["pad"] * 8000, middle) == (1, 0)


def test_every_diff_replays_to_the_new_text() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        old = [rng.choice("abc}") for _ in range(rng.randint(0, 14))]
        new = [rng.choice("abc}") for _ in range(rng.randint(0, 14))]
        lines = unified("f", "f", old, new).splitlines()[2:]
        rebuilt, cursor = [], 0
        for line in lines:
            if line.startswith("@@"):
                start = int(line.split()[1].split(",")[0].lstrip("-"))
                start = start - 1 if start else 0
                rebuilt += old[cursor:start]
                cursor = start
            elif line[0] == " ":
                rebuilt.append(line[1:])
                cursor += 1
            elif line[0] == "-":
                cursor += 1
            else:
                rebuilt.append(line[1:])
        rebuilt += old[cursor:]
        assert rebuilt == new, (old, new, lines)
        insertions, deletions = count_changes(old, new)
        assert insertions == sum(1 for x in lines if x[0] == "+") and deletions == sum(1 for x in lines if x[0] == "-")
