"""QA45 (not fixed in F7): a Go method expression names a type's method, ``(*coll.Box).Put`` and
``(*coll.Stack[int]).Push`` as ``b.Put`` of a ``*Box`` does; renaming the method renames it ``high`` and the
package still builds."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.refactor_builders import refactor_env

FILES = {
    "go.mod": "module example.com/mx\n\ngo 1.19\n",
    "coll/coll.go": "package coll\n\ntype Box struct {\n\titems []int\n}\n\n"
                    "func (b *Box) Put(v int) bool {\n\tb.items = append(b.items, v)\n\treturn true\n}\n\n"
                    "type Stack[T any] struct {\n\titems []T\n}\n\n"
                    "func (s *Stack[T]) Push(v T) bool {\n\ts.items = append(s.items, v)\n\treturn true\n}\n\n"
                    "type Pair[K comparable, V any] struct {\n\tk K\n\tv V\n}\n\n"
                    "func (p *Pair[K, V]) Swap() {}\n\n"
                    "func Local() {\n\tput := (*Box).Put\n\tput(&Box{}, 1)\n\tpush := (*Stack[int]).Push\n"
                    "\tpush(&Stack[int]{}, 2)\n}\n",
    "app/main.go": "package main\n\nimport \"example.com/mx/coll\"\n\n"
                   "func main() {\n\tput := (*coll.Box).Put\n\tput(&coll.Box{}, 1)\n"
                   "\tpush := (*coll.Stack[int]).Push\n\tpush(&coll.Stack[int]{}, 2)\n"
                   "\tswap := (*coll.Pair[int, string]).Swap\n\tswap(&coll.Pair[int, string]{})\n"
                   "\tcoll.Local()\n}\n",
}


def _built(root: Path) -> None:
    if shutil.which("go") is None:
        pytest.skip("go is not installed")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
           "GOCACHE": str(root.parent / "gocache"), "GOPATH": str(root.parent / "gopath")}
    vetted = subprocess.run(["go", "vet", "./..."], cwd=root, env=env, capture_output=True, text=True, timeout=300,
                            check=False)
    assert vetted.returncode == 0, vetted.stdout + vetted.stderr


@pytest.mark.parametrize(("symbol", "lines"), [
    ("coll.Box.Put", [("app/main.go", 6), ("coll/coll.go", 7), ("coll/coll.go", 29)]),
    ("coll.Stack.Push", [("app/main.go", 8), ("coll/coll.go", 16), ("coll/coll.go", 31)]),
    ("coll.Pair.Swap", [("app/main.go", 10), ("coll/coll.go", 26)]),
])
def test_a_method_expression_is_renamed_with_the_method(tmp_path: Path, symbol: str,
                                                       lines: list[tuple[str, int]]) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename(symbol, "Renamed")
        assert sorted((e.path, e.line) for e in preview.edits if e.certainty == "high") == lines, preview.edits
        assert not [e for e in preview.edits if e.certainty == "low"], preview.edits
        env.service.apply(preview.refactor_id)
        _built(env.root)
