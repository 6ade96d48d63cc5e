"""The stdlib's generated code reused between processes (core/codegen_cache.py, issue 19's warm restart)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import typing
from collections import namedtuple
from pathlib import Path

import pytest

from codeplane.core.codegen_cache import CodegenCache, hook

#: Run in a fresh interpreter: hook a table at argv[1], create dataclasses, a namedtuple and string annotations, use
#: them, save, and print what the table answered.
_PROCESS = """
import dataclasses, sys, typing
from collections import namedtuple
from pathlib import Path
from codeplane.core.codegen_cache import CodegenCache, hook

cache = CodegenCache(Path(sys.argv[1]))
hook(cache)

@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: "list[str]" = dataclasses.field(default_factory=list)

Pair = namedtuple("Pair", "left right")

def f(a: "dict[str, Point]") -> "Point | None":
    return None

hints = typing.get_type_hints(f)
assert Point(1) == Point(1, []) and repr(Point(2, ["a"])) == "Point(x=2, y=['a'])"
assert Pair(1, 2).right == 2 and hints["a"] == dict[str, Point]
cache.save()
print(cache.hits, cache.misses)
"""


def _run(table: Path) -> tuple[int, int]:
    proc = subprocess.run([sys.executable, "-c", _PROCESS, str(table)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    hits, misses = proc.stdout.split()
    return int(hits), int(misses)


def test_a_second_process_compiles_nothing_the_first_one_did(tmp_path: Path) -> None:
    table = tmp_path / "codegen.marshal"
    first_hits, first_misses = _run(table)
    assert first_misses > 5 and table.is_file()
    hits, misses = _run(table)
    assert (hits, misses) == (first_hits + first_misses, 0)


def test_code_from_the_table_behaves_as_compiled_code(tmp_path: Path) -> None:
    table = tmp_path / "codegen.marshal"
    for _ in range(2):  # the second round runs every generated method from the saved table
        cache = CodegenCache(table)
        restore = hook(cache)
        try:
            @dataclasses.dataclass(frozen=True, order=True)
            class Version:
                major: int
                minor: int = 0
                tags: tuple[str, ...] = ()

            Span = namedtuple("Span", ["start", "end"], defaults=[0])

            class Holder(typing.NamedTuple):
                value: Version
        finally:
            restore()
        cache.save()
        assert Version(1) == Version(1, 0, ()) and Version(1, 2) < Version(2)
        assert repr(Version(3, tags=("a",))).endswith(".Version(major=3, minor=0, tags=('a',))")
        with pytest.raises(dataclasses.FrozenInstanceError):
            Version(1).major = 2  # type: ignore[misc]
        with pytest.raises(TypeError):
            Version()  # type: ignore[call-arg]
        assert Span(1) == (1, 0) and typing.get_type_hints(Holder, localns={"Version": Version})["value"] is Version
    assert cache.hits > 0 and cache.misses == 0


def test_a_broken_annotation_still_raises_and_foreign_tables_are_empty(tmp_path: Path) -> None:
    cache = CodegenCache(tmp_path / "codegen.marshal")
    restore = hook(cache)
    try:
        with pytest.raises(SyntaxError):
            typing.ForwardRef("not an expression(")
        assert typing.ForwardRef("int | None").__forward_code__ is not None
    finally:
        restore()
    assert "compile" not in typing.__dict__ or typing.compile is not cache.compile  # type: ignore[attr-defined]
    for junk in (b"", b"not a table", cache_header_of_another_interpreter()):
        (tmp_path / "junk.marshal").write_bytes(junk)
        empty = CodegenCache(tmp_path / "junk.marshal")
        assert empty.code("1 + 1", "eval") is not None and (empty.hits, empty.misses) == (0, 1)


def cache_header_of_another_interpreter() -> bytes:
    return b"\x00\x00\r\ncpl-codegen-1\n" + b"{}"
