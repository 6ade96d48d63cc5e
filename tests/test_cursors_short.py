"""Issue 16: cursors are short (the answer they continue stays on the server), deterministic for the same
sequence of queries, and refused (1005) when edited, forged, or passed to another query: the index's search
pages, git's walks, read_source's continuation and semantic_diff's pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.analysis.models import DiffReport
from codeplane.analysis.paging import ReportStore
from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from codeplane.index.cursors import CursorStore
from codeplane.index.reading import CURSOR_HEX as READ_CURSOR_HEX
from codeplane.index.reading import ReadTarget, read_sources
from tests.builders import make_repo
from tests.git_oracle import log_records, run_git


def _pages(store: CursorStore[int], items: list[int], *, key: str = "q") -> tuple[list[int], list[str]]:
    page = store.first_page(items, total=len(items), epoch=3, query_key=key, limit=4)
    seen, cursors = list(page.items), []
    while page.next_cursor:
        cursors.append(page.next_cursor)
        page = store.next_page(page.next_cursor, query_key=key, limit=4)
        seen += page.items
    return seen, cursors


def test_index_cursors_are_short_deterministic_and_page_everything() -> None:
    items = list(range(10))
    seen, cursors = _pages(CursorStore(), items)
    assert seen == items and len(cursors) == 2
    assert all(len(c) <= 16 for c in cursors), cursors
    again, same = _pages(CursorStore(), items)
    assert again == items and same == cursors, "a fresh store answering the same queries issues the same cursors"
    _, second_query = _pages(CursorStore(), items, key="other")
    assert second_query[0] != cursors[0]


@pytest.mark.parametrize("edit", ["offset", "id", "garbage", "query"])
def test_an_edited_or_foreign_index_cursor_answers_1005(edit: str) -> None:
    store: CursorStore[int] = CursorStore()
    page = store.first_page(list(range(20)), total=20, epoch=1, query_key="q", limit=5)
    cursor = page.next_cursor
    assert cursor is not None
    snapshot_id, offset = cursor.split(".")
    forged, key = {
        "offset": (f"{snapshot_id}.{int(offset) + 1}", "q"),  # in range, but never issued
        "id": (f"{'0' * len(snapshot_id)}.{offset}", "q"),
        "garbage": ("eyJzIjoiNmEwMzEwNDUyOWMxYTIzYiIsIm8iOjIwfQ", "q"),
        "query": (cursor, "another"),
    }[edit]
    with pytest.raises(CodePlaneError) as refused:
        store.next_page(forged, query_key=key, limit=5)
    assert refused.value.code == 1005
    assert store.next_page(cursor, query_key="q", limit=5).items == (5, 6, 7, 8, 9), "the real one still works"


def test_git_log_cursors_are_short_ids_of_server_side_state(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"x": "0\n"})
    for i in range(1, 8):
        (root / "x").write_text(f"{i}\n")
        run_git(root, "commit", "-qam", f"c{i}")
    git = GitService(root)
    first = git.log(limit=3)
    cursor = first.pagination.next_cursor
    assert cursor is not None and len(cursor) == 12
    assert git.log(limit=3).pagination.next_cursor == cursor, "the same page of the same query: the same cursor"
    oids = [c.oid for c in first.commits]
    while cursor:
        page = git.log(limit=3, cursor=cursor)
        oids += [c.oid for c in page.commits]
        cursor = page.pagination.next_cursor
    assert oids == [r["oid"] for r in log_records(root)]
    first_cursor = first.pagination.next_cursor
    assert first_cursor is not None
    forged = ("0" if first_cursor[0] != "0" else "1") + first_cursor[1:]
    for bad, kwargs in ((forged, {}), ("not-a-cursor", {}), (first_cursor, {"paths": ["x"]})):
        with pytest.raises(CodePlaneError) as refused:
            git.log(limit=3, cursor=bad, **kwargs)  # type: ignore[arg-type]
        assert refused.value.code == 1005


def _read_pages(root: Path, targets: list[ReadTarget]) -> tuple[str, list[str]]:
    batch = read_sources(root, targets, max_bytes=64)
    text, cursors = "".join(f.content for f in batch.files), []
    while batch.next_cursor:
        cursors.append(batch.next_cursor)
        batch = read_sources(root, targets, cursor=batch.next_cursor, max_bytes=64)
        text += "".join(f.content for f in batch.files)
    return text, cursors


def test_read_source_cursors_are_short_deterministic_and_bound_to_their_targets(tmp_path: Path) -> None:
    body = "".join(f"line {i:03d} of a file read in pieces\n" for i in range(40))
    root = make_repo(tmp_path / "r", {"a.txt": body, "b.txt": "other\n"})
    targets = [ReadTarget("a.txt"), ReadTarget("b.txt")]
    text, cursors = _read_pages(root, targets)
    assert text == body + "other\n" and len(cursors) > 5
    assert all(len(c) == READ_CURSOR_HEX for c in cursors), cursors
    assert _read_pages(root, targets) == (text, cursors), "the same position of the same targets: the same cursor"
    forged = ("0" if cursors[1][0] != "0" else "1") + cursors[1][1:]
    old_style = "eyJrIjoiMGNkNjQ0ZjM0ZGM5ZTZjMiIsInQiOjAsImwiOjV9"
    for bad, with_targets in ((forged, targets), (old_style, targets), (cursors[1], [ReadTarget("b.txt")])):
        with pytest.raises(CodePlaneError) as refused:
            read_sources(root, with_targets, cursor=bad, max_bytes=64)
        assert refused.value.code == 1005, bad
    assert read_sources(root, targets, cursor=cursors[1], max_bytes=64).files, "the real one still works"
    # The file changed (same size): continuing would join two versions' lines, so the cursor is refused.
    (root / "a.txt").write_text(body.replace("line 000", "LINE 000"))
    with pytest.raises(CodePlaneError) as changed:
        read_sources(root, targets, cursor=cursors[1], max_bytes=64)
    assert changed.value.code == 1005 and "changed since the cursor" in changed.value.message


def _diff_pages(store: ReportStore, report: DiffReport, key: str) -> list[str]:
    snapshot = store.keep(report, key)
    return [store.cursor(snapshot, offset) for offset in (2, 4)]


def test_semantic_diff_cursors_are_short_deterministic_and_refuse_edits() -> None:
    report = DiffReport(base="HEAD", target="worktree", mode="git", files_analyzed=0)
    store = ReportStore()
    cursors = _diff_pages(store, report, "q")
    assert all(len(c) <= 16 for c in cursors), cursors
    assert _diff_pages(ReportStore(), report, "q") == cursors, "a fresh store answering the same queries"
    assert _diff_pages(ReportStore(), report, "other") != cursors
    assert store.get(cursors[0], "q") == (cursors[0].split(".")[0], report, 2)
    snapshot, offset = cursors[0].split(".")
    for bad, key in ((f"{snapshot}.3", "q"), (f"{'0' * len(snapshot)}.{offset}", "q"), ("garbage!", "q"),
                     ("eyJzIjoiNmEwMzEwNDUyOWMxYTIzYiIsIm8iOjIwfQ", "q"), (cursors[0], "another")):
        with pytest.raises(CodePlaneError) as refused:
            store.get(bad, key)
        assert refused.value.code == 1005, bad


def test_the_same_query_asked_twice_gets_the_same_cursor_and_both_chains_page_on() -> None:
    store: CursorStore[int] = CursorStore()
    items = list(range(12))
    first = store.first_page(items, total=12, epoch=5, query_key="q", limit=4)
    ahead = store.next_page(first.next_cursor or "", query_key="q", limit=4)
    again = store.first_page(items, total=12, epoch=5, query_key="q", limit=4)
    assert again.next_cursor == first.next_cursor, "same repository state and input, same bytes"
    assert store.next_page(ahead.next_cursor or "", query_key="q", limit=4).items == (8, 9, 10, 11)
    assert store.next_page(again.next_cursor or "", query_key="q", limit=4).items == (4, 5, 6, 7)
    later = store.first_page(items, total=12, epoch=6, query_key="q", limit=4)
    assert later.next_cursor != first.next_cursor, "another epoch is another answer"
