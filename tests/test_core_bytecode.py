"""``core.bytecode``: when test processes get CodePlane's bytecode cache, and which caches a rewrite clears."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.bytecode import cache_prefixes, drop_cached_bytecode, prune_sourceless, redirected_environment
from codeplane.core.layout import RepoLayout


def test_only_an_environment_that_forbids_bytecode_and_names_no_prefix_is_redirected(tmp_path: Path) -> None:
    cache = tmp_path / "pycache"
    assert redirected_environment({"PATH": "/bin"}, cache) is None, "bytecode is written as usual"
    assert redirected_environment({"PYTHONDONTWRITEBYTECODE": ""}, cache) is None, "empty means unset"
    assert redirected_environment({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/elsewhere"},
                                  cache) is None, "the user's own prefix is theirs"
    assert redirected_environment({"PATH": "/bin", "PYTHONDONTWRITEBYTECODE": "1"}, cache) == {
        "PATH": "/bin", "PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(cache)}


def test_prefixes_are_codeplanes_and_the_environments_absolute_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    assert cache_prefixes(tmp_path) == (RepoLayout(tmp_path).pycache_dir,)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "relative/to/some/cwd")
    assert cache_prefixes(tmp_path) == (RepoLayout(tmp_path).pycache_dir,)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "mine"))
    assert cache_prefixes(tmp_path) == (RepoLayout(tmp_path).pycache_dir, tmp_path / "mine")


def test_dropping_clears_the_modules_caches_everywhere_and_nothing_else(tmp_path: Path) -> None:
    source = tmp_path / "pkg" / "mod.py"
    prefix = tmp_path / "prefix"
    beside = source.parent / "__pycache__"
    mirrored = Path(prefix, *source.parent.parts[1:])
    kept = [beside / "mod_two.cpython-311.pyc", beside / "mod.txt", mirrored / "other.cpython-311.pyc"]
    dropped = [beside / "mod.cpython-311.pyc", beside / "mod.cpython-311.opt-1.pyc",
               beside / "mod.cpython-311-pytest-9.0.pyc", mirrored / "mod.cpython-312.pyc"]
    for path in kept + dropped:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    drop_cached_bytecode(source.with_suffix(".txt"), [prefix])
    assert all(p.exists() for p in kept + dropped), "only Python sources have bytecode"
    drop_cached_bytecode(source, [prefix])
    assert [p for p in kept + dropped if p.exists()] == kept


def test_pruning_drops_the_bytecode_of_sources_that_are_gone_and_keeps_the_rest(tmp_path: Path) -> None:
    tree = tmp_path / "src"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "kept.py").write_text("")
    prefix = tmp_path / "prefix"
    mirror = Path(prefix, *tree.parts[1:])
    kept = [mirror / "pkg" / "kept.cpython-311.pyc", mirror / "pkg" / "kept.cpython-311-pytest-9.2.0.pyc",
            mirror / "pkg" / "notes.txt"]
    gone = [mirror / "pkg" / "moved.cpython-311.pyc", mirror / "old" / "deleted.cpython-311.opt-1.pyc"]
    for path in kept + gone:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    assert prune_sourceless(prefix) == 2
    assert [p for p in kept + gone if p.exists()] == kept
    assert not (mirror / "old").exists(), "a directory left empty goes too"
    assert prune_sourceless(tmp_path / "no such prefix") == 0
