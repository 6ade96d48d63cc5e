"""Go renames around struct embedding and implicit interfaces (QA 37 items 1, 2, 3 and 8): each rename that would
change what a selector means, or break the build in a way the plan did not show, is a collision (4007, nothing
written); a field's type is not a base class, so a same-named field of another struct is left alone."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.refactor_builders import RefactorEnv, refactor_env

GO_MOD = "module example.com/gsyn\n\ngo 1.18\n"

EMBED = {
    "go.mod": GO_MOD,
    "p/a.go": "package p\n\ntype Inner struct{ Val int }\n\nfunc (i Inner) Show() int { return i.Val }\n\n"
              "type Outer struct {\n\t*Inner\n\tExtra int\n}\n\n"
              "func NewOuter() *Outer { return &Outer{Inner: &Inner{Val: 1}} }\n",
    "p/b.go": "package p\n\nfunc Sum() int {\n\to := NewOuter()\n\treturn o.Inner.Val + o.Val + o.Show()\n}\n",
    "cmd/show/main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/gsyn/p\"\n)\n\n"
                        "func main() { fmt.Println(p.Sum()) }\n",
}

NODES = {
    "go.mod": GO_MOD,
    "p/node.go": "package p\n\ntype Node struct {\n\tsrc *Item\n\tid  int\n}\n\ntype Item struct {\n\tid  int\n"
                 "\tkey string\n}\n\nfunc Total(n *Node) int { return n.id + n.src.id + len(n.src.key) }\n\n"
                 "func Make() *Node { return &Node{src: &Item{id: 1, key: \"k\"}, id: 2} }\n",
}


def _go(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local",
           "GOCACHE": str(root.parent / "gocache"), "GOPATH": str(root.parent / "gopath")}
    return subprocess.run(["go", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False)


def _refused_unwritten(env: RefactorEnv, refactor_id: str) -> None:
    before = env.snapshot()
    with pytest.raises(CodePlaneError) as refused:
        env.service.apply(refactor_id)
    assert refused.value.code == 4007
    assert env.snapshot() == before


def test_go_promoted_member_renamed_onto_a_name_the_embedding_type_has_is_a_collision(tmp_path: Path) -> None:
    """``Inner.Val`` → ``Extra`` where ``Outer`` embeds ``*Inner`` and declares ``Extra``: ``o.Val`` became
    ``o.Extra``, which reads ``Outer.Extra`` (the program printed 2, not 3) and still built. A collision at
    ``Outer.Extra``, as for a method; a name no embedding type has is still ready."""
    with refactor_env(tmp_path / "repo", EMBED) as env:
        for symbol in ("p.Inner.Val", "p.Inner.Show"):
            preview = env.service.rename(symbol, "Extra")
            assert [(c.path, c.line, c.kind) for c in preview.collisions] == [("p/a.go", 9, "member")], symbol
            assert "p.Outer.Extra" in preview.collisions[0].detail
            _refused_unwritten(env, preview.refactor_id)
        fine = env.service.rename("p.Inner.Val", "Value")
        assert not fine.collisions and fine.status == "ready"
        env.service.apply(fine.refactor_id)
        assert "o.Inner.Value + o.Value" in env.read("p/b.go")
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        ran = _go(env.root, "run", "./cmd/show")
        assert ran.returncode == 0 and ran.stdout.strip() == "3", ran.stdout + ran.stderr


def test_go_field_rename_leaves_the_same_named_field_of_the_struct_its_field_points_to(tmp_path: Path) -> None:
    """``Node`` has a field ``src *Item``: ``Item`` was taken for a base class of ``Node``, so renaming ``Node.id``
    renamed ``Item.id`` too ("overrides p.Item.id"), and ``Node.id`` → ``key`` was refused because ``Item.key``
    exists. Only ``Node.id`` and its uses are renamed; the build passes."""
    with refactor_env(tmp_path / "repo", NODES) as env:
        preview = env.service.rename("p.Node.id", "key")
        assert not preview.collisions and not preview.warnings, (preview.collisions, preview.warnings)
        assert preview.status == "ready"
        env.service.apply(preview.refactor_id)
        text = env.read("p/node.go")
        assert "\tkey  int\n" in text and "\tid  int\n\tkey string\n" in text, text
        assert "n.key + n.src.id + len(n.src.key)" in text and "&Item{id: 1, key: \"k\"}, key: 2}" in text, text
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr


def test_go_embedded_field_rename_is_a_collision_that_names_the_type(tmp_path: Path) -> None:
    """``Outer.Inner`` (``struct { *Inner }``) renamed alone was ready with high edits, and applying it left
    ``undefined: Core``. An embedded field's name is its type's: a collision saying to rename the type, which
    builds (the field goes with it)."""
    with refactor_env(tmp_path / "repo", EMBED) as env:
        for symbol in ("p.Outer.Inner", "p/a.go:8:3"):
            preview = env.service.rename(symbol, "Core")
            assert [(c.path, c.line, c.kind) for c in preview.collisions] == [("p/a.go", 8, "embedded_field")]
            assert "rename the type p.Inner instead" in preview.collisions[0].detail
            _refused_unwritten(env, preview.refactor_id)
        the_type = env.service.rename("p.Inner", "Core")
        assert not the_type.collisions
        env.service.apply(the_type.refactor_id)
        assert "\t*Core\n" in env.read("p/a.go") and "o.Core.Val" in env.read("p/b.go")
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr


def test_go_method_of_a_standard_library_interface_is_a_collision(tmp_path: Path) -> None:
    """``Router.ServeHTTP`` → ``Serve`` was ready with no word, and the build broke where ``*Router`` is an
    ``http.Handler``. A method whose name and signature are a standard interface's (``http.Handler``,
    ``fmt.Stringer``) is a collision naming the interface; another signature of the name is not."""
    files = {
        "go.mod": GO_MOD,
        "p/router.go": "package p\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\ntype Router struct{ n int }\n\n"
                       "func (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) { r.n++ }\n\n"
                       "func (r Router) String() string { return fmt.Sprint(r.n) }\n\n"
                       "type Tally struct{ n int }\n\nfunc (t Tally) String(sep string) string { return sep }\n\n"
                       "var _ http.Handler = &Router{}\n\n"
                       "func Describe(t Tally) string { return Router{}.String() + t.String(\",\") }\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        for symbol, new_name, line, interface in [("p.Router.ServeHTTP", "Serve", 10, "http.Handler"),
                                                  ("p.Router.String", "Text", 12, "fmt.Stringer")]:
            preview = env.service.rename(symbol, new_name)
            assert [(c.line, c.kind) for c in preview.collisions] == [(line, "interface")], symbol
            assert interface in preview.collisions[0].detail
            _refused_unwritten(env, preview.refactor_id)
        other = env.service.rename("p.Tally.String", "Join")
        assert not other.collisions and other.status == "ready"
        env.service.apply(other.refactor_id)
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr


def test_go_interface_embedding_another_still_takes_its_method_uses_along(tmp_path: Path) -> None:
    """A regression guard for the base-class change: ``Box interface { Sizer }`` is the one kind of Go "base" a
    body spells as a bare reference, and ``b.Size()`` on a ``Box`` is the renamed method's use."""
    files = {
        "go.mod": GO_MOD,
        "p/i.go": "package p\n\ntype Sizer interface {\n\tSize() int\n}\n\ntype Box interface {\n\tSizer\n"
                  "\tName() string\n}\n\ntype Crate struct{ n int }\n\nfunc (c Crate) Size() int { return c.n }\n"
                  "func (c Crate) Name() string { return \"crate\" }\n\n"
                  "func Use(b Box) int { return b.Size() }\n\n"
                  "func UseSizer(s Sizer) int { return s.Size() + Use(Crate{}) }\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.rename("p.Sizer.Size", "Measure")
        assert not preview.collisions and {e.certainty for e in preview.edits} <= {"high", "medium"}, preview.edits
        env.service.apply(preview.refactor_id)
        text = env.read("p/i.go")
        assert "return b.Measure()" in text and "func (c Crate) Measure() int" in text, text
        if shutil.which("go") is None:
            pytest.skip("go is not installed")
        built = _go(env.root, "vet", "./...")
        assert built.returncode == 0, built.stderr
