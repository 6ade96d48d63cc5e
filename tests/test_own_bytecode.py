"""CodePlane's own bytecode is cached where PYTHONDONTWRITEBYTECODE forbids ``__pycache__`` (issue 19)."""

from __future__ import annotations

import importlib
import marshal
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.core.own_bytecode import CachingFinder, cache_root

TAG = sys.implementation.cache_tag or "cpython"


@pytest.fixture
def probe_package(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A package ``bcprobe`` on sys.path whose submodules the finder under test loads; yields (source, cache)."""
    src = tmp_path / "src" / "bcprobe"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "mod.py").write_text("VALUE = 'from source'\n")
    cache = tmp_path / "cache"
    finder = CachingFinder(cache, TAG, package="bcprobe")
    sys.path.insert(0, str(src.parent))
    sys.meta_path.insert(0, finder)
    try:
        yield src / "mod.py", cache
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(src.parent))
        for name in [n for n in sys.modules if n == "bcprobe" or n.startswith("bcprobe.")]:
            del sys.modules[name]


def _fresh_import() -> object:
    sys.modules.pop("bcprobe.mod", None)
    importlib.invalidate_caches()
    return importlib.import_module("bcprobe.mod").VALUE


def _cached_file(cache: Path, source: Path) -> Path:
    return cache / os.path.abspath(source.parent).lstrip(os.sep) / f"mod.{TAG}.pyc"


def test_the_first_import_writes_the_cache_and_the_next_reads_it(probe_package: tuple[Path, Path]) -> None:
    source, cache = probe_package
    assert _fresh_import() == "from source"
    cached = _cached_file(cache, source)
    assert cached.is_file() and not (source.parent / "__pycache__").exists()  # nothing beside the sources
    # Same header, other code: the next import answers with what the cache holds, so it was read, not compiled.
    header = cached.read_bytes()[:16]
    cached.write_bytes(header + marshal.dumps(compile("VALUE = 'from cache'\n", str(source), "exec")))
    assert _fresh_import() == "from cache"


def test_a_changed_source_is_compiled_again(probe_package: tuple[Path, Path]) -> None:
    source, _ = probe_package
    _fresh_import()
    source.write_text("VALUE = 'edited, longer than before'\n")  # another size: the header no longer matches
    assert _fresh_import() == "edited, longer than before"
    assert _fresh_import() == "edited, longer than before"


def test_a_damaged_cache_file_only_means_compiling(probe_package: tuple[Path, Path]) -> None:
    source, cache = probe_package
    _fresh_import()
    cached = _cached_file(cache, source)
    cached.write_bytes(cached.read_bytes()[:16] + b"\x00garbage")
    assert _fresh_import() == "from source"


def _installed(env_changes: dict[str, str | None]) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update({k: v for k, v in env_changes.items() if v is not None})
    out = subprocess.run([sys.executable, "-c", "import sys, codeplane.cli, codeplane.core.own_bytecode as b; "
                          "print(any(isinstance(f, b.CachingFinder) for f in sys.meta_path))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the cache lives in a virtual environment")
def test_cpl_caches_only_where_python_would_not(tmp_path: Path) -> None:
    assert _installed({"PYTHONDONTWRITEBYTECODE": "1"}) == "True"
    assert _installed({}) == "False"  # Python writes __pycache__ itself
    assert _installed({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(tmp_path)}) == "False"


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the cache lives in a virtual environment")
def test_a_cpl_process_leaves_its_modules_compiled_in_the_environment() -> None:
    import codeplane.server.staged as staged

    source = os.path.abspath(staged.__file__)
    cached = cache_root() / os.path.dirname(source).lstrip(os.sep) / f"staged.{TAG}.pyc"
    cached.unlink(missing_ok=True)  # the next cpl process compiles it again, as it would anyway
    # A .pyc beside the source (this test process, which may write bytecode, imported the module) is read first and
    # spares the compile: remove it too, or the run depends on which test imported staged.py before this one.
    Path(importlib.util.cache_from_source(source)).unlink(missing_ok=True)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    subprocess.run([sys.executable, "-c", "import codeplane.cli, codeplane.server.staged"], env=env, check=True)
    assert cached.is_file()
    assert cached.read_bytes()[:4] == importlib.util.MAGIC_NUMBER
