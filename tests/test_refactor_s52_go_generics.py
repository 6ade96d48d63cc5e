"""Go generics (QA 45 F7): a value built by an instantiated generic constructor (``NewStack[int](2)``,
``coll.NewStack[U](n)``) and a member promoted through an embedded instantiated type (``struct { *Stack[string] }``)
link like their non-generic forms, so renaming ``Stack.Push`` renames every call and the build passes; renaming
``Stack.Pop`` onto a name a type embedding ``*Stack[string]`` declares is a collision."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.refactor_builders import refactor_env

GO_MOD = "module example.com/gen\n\ngo 1.19\n"

STACK = {
    "go.mod": GO_MOD,
    "coll/stack.go": "package coll\n\n"
                     "type Stack[T any] struct {\n\titems []T\n\tLimit int\n}\n\n"
                     "func NewStack[T any](limit int) *Stack[T] { return &Stack[T]{Limit: limit} }\n\n"
                     "func (s *Stack[T]) Push(v T) bool {\n\ts.items = append(s.items, v)\n\treturn true\n}\n\n"
                     "func (s *Stack[T]) Pop() (T, bool) {\n\tvar zero T\n\treturn zero, false\n}\n\n"
                     "func Map[T, U any](s *Stack[T], f func(T) U) *Stack[U] {\n"
                     "\tout := NewStack[U](s.Limit)\n\tfor _, v := range s.items {\n\t\tout.Push(f(v))\n\t}\n"
                     "\treturn out\n}\n\n"
                     "type Named struct {\n\t*Stack[string]\n\tName string\n}\n\n"
                     "func Fill() {\n\ts := NewStack[int](2)\n\ts.Push(1)\n"
                     "\tn := Named{Stack: NewStack[string](0)}\n\tn.Push(\"a\")\n}\n",
    "app/main.go": "package main\n\nimport \"example.com/gen/coll\"\n\n"
                   "type Tagged struct {\n\tcoll.Stack[int]\n\tTag string\n}\n\n"
                   "func main() {\n\ts := coll.NewStack[string](3)\n\ts.Push(\"a\")\n"
                   "\tt := Tagged{}\n\tt.Push(7)\n\tcoll.Fill()\n}\n",
}


def _go(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
           "GOCACHE": str(root.parent / "gocache"), "GOPATH": str(root.parent / "gopath")}
    return subprocess.run(["go", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_go_calls_on_instantiated_generic_values_are_renamed_with_the_method(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", STACK) as env:
        preview = env.service.rename("coll.Stack.Push", "Add")
        linked = sorted((e.path, e.line) for e in preview.edits if e.certainty == "high")
        assert linked == [("app/main.go", 12), ("app/main.go", 14), ("coll/stack.go", 10), ("coll/stack.go", 23),
                          ("coll/stack.go", 35), ("coll/stack.go", 37)], preview.edits
        assert preview.status == "ready" and not [e for e in preview.edits if e.certainty == "low"], preview.edits
        env.service.apply(preview.refactor_id)
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        vetted = _go(env.root, "vet", "./...")
        assert vetted.returncode == 0, vetted.stdout + vetted.stderr


def test_go_promoted_generic_member_renamed_onto_an_embedders_name_is_a_collision(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", STACK) as env:
        preview = env.service.rename("coll.Stack.Pop", "Name")
        assert [(c.path, c.line, c.kind) for c in preview.collisions] == [("coll/stack.go", 30, "member")], preview
        tagged = env.service.rename("coll.Stack.Pop", "Tag")
        assert [(c.path, c.line) for c in tagged.collisions] == [("app/main.go", 7)], tagged
