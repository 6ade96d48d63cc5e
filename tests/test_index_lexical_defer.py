"""A big epoch defers its Tantivy writes to the commit (``LexicalIndex.defer``): same documents, same order of
deletes and adds, nothing left over after a rollback, and memory bounded by the budget."""

from __future__ import annotations

from pathlib import Path

from codeplane.index.lexical import Fragment, LexicalIndex


def _paths(index: LexicalIndex, word: str) -> list[str]:
    return sorted(path for path, _ in index.ranked([Fragment(word, False, False)]))


def _opened(directory: Path) -> LexicalIndex:
    index = LexicalIndex(directory)
    index.open()
    return index


def test_deferred_writes_reach_tantivy_in_order_at_the_commit(tmp_path: Path) -> None:
    index = _opened(tmp_path / "tantivy")
    index.add(1, "a.py", "python", "alpha beta")
    index.add(2, "b.py", "python", "alpha")
    index.commit()
    index.defer(1_000_000)
    index.delete("a.py")  # a rewrite: the old document goes, then the new one comes
    index.add(1, "a.py", "python", "gamma")
    index.add(3, "c.py", "python", "alpha gamma")
    index.delete("c.py")  # added then deleted in the same epoch: gone
    index.delete("b.py")  # deleted then added: there
    index.add(2, "b.py", "python", "gamma delta")
    assert _paths(index, "alpha") == ["a.py", "b.py"]  # nothing visible before the commit
    index.commit()
    assert _paths(index, "alpha") == []
    assert _paths(index, "gamma") == ["a.py", "b.py"]
    assert index.num_docs() == 2
    index.close()


def test_a_deferred_rebuild_empties_the_index_first(tmp_path: Path) -> None:
    index = _opened(tmp_path / "tantivy")
    index.add(1, "old.py", "python", "alpha")
    index.commit()
    index.defer(1_000_000)
    index.delete_all()  # a lexical rebuild starts the epoch this way
    index.add(2, "new.py", "python", "alpha")
    index.commit()
    assert _paths(index, "alpha") == ["new.py"]
    index.close()


def test_a_rollback_drops_the_deferred_writes_and_ends_deferring(tmp_path: Path) -> None:
    index = _opened(tmp_path / "tantivy")
    index.add(1, "a.py", "python", "alpha")
    index.commit()
    index.defer(1_000_000)
    index.delete("a.py")
    index.add(2, "b.py", "python", "alpha")
    index.rollback()
    index.add(3, "c.py", "python", "beta")  # not deferred any more, and the dropped writes do not come back
    index.commit()
    assert _paths(index, "alpha") == ["a.py"]
    assert _paths(index, "beta") == ["c.py"]
    index.close()


def test_writes_beyond_the_budget_go_ahead_oldest_first(tmp_path: Path) -> None:
    deferred, direct = _opened(tmp_path / "deferred"), _opened(tmp_path / "direct")
    texts = {f"m{n:02}.py": f"word_{n % 7} common {'x' * n}" for n in range(40)}
    deferred.defer(200)  # a few documents' worth: most writes are handed over before the commit
    for index in (deferred, direct):
        for file_id, (path, text) in enumerate(sorted(texts.items())):
            index.add(file_id, path, "python", text)
            if file_id % 5 == 0:
                index.delete(path)
        index.commit()
    for word in ("common", "word_3", "word_0"):
        assert _paths(deferred, word) == _paths(direct, word)
    assert deferred.num_docs() == direct.num_docs() == 32
    deferred.close()
    direct.close()
