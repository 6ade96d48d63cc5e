"""A field and a method of one name are told apart by the syntax of each use (Rust and Java).

Rust: ``x.f(..)`` can only call a method (a field holding a closure is called ``(x.f)(..)``), ``x.f`` anywhere
else can only read a field, and a struct literal's key is a field. Java: ``x.f(..)`` is a method, ``x.f`` a field.
Before, a Rust rename proposed both kinds at receivers of unknown type (``self.items.len()`` was a ``medium``
candidate of the field ``len``, which ``refactor_apply`` renamed into ``self.items.size()``, E0599), a type with a
getter ``len()`` beside its field ``len`` left every ``self.len``/``self.len()`` unlinked (the method's rename
applied left its calls behind), and Java planned ``A.make().size()`` as the field ``size`` (``medium``).
Renamed crates are built with ``cargo``, Java sources with ``javac``, when installed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.refactor.models import RefactorPreview
from tests.builders import call, make_repo, mcp_client, running_server
from tests.refactor_builders import refactor_env
from tests.runner_projects import cargo_lib_tests_pass
from tests.test_structural_index import Harness

CARGO = "[package]\nname = \"kinds\"\nversion = \"0.1.0\"\nedition = \"2018\"\n\n[dependencies]\n"

#: ``Buf`` has a field ``len``; ``Queue`` a method ``len()``; ``unknown`` reaches both through a trait's results,
#: whose types the index does not follow.
UNKNOWN = """pub struct Buf {
    pub len: usize,
}

pub struct Queue {
    items: Vec<u32>,
}

impl Queue {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn on_len(&self) -> usize {
        1
    }
}

pub struct Hooks {
    pub on_len: fn(usize) -> usize,
}

pub trait Holder {
    fn buf(&self) -> Buf;
    fn queue(&self) -> Queue;
    fn hooks(&self) -> Hooks;
}

pub fn unknown<T: Holder>(h: T) -> usize {
    let b = h.buf();
    let q = h.queue();
    let k = h.hooks();
    let read = b.len;
    let called = q.len();
    read + called + (k.on_len)(2) + q.on_len()
}

struct Fixed;

impl Holder for Fixed {
    fn buf(&self) -> Buf {
        Buf { len: 2 }
    }

    fn queue(&self) -> Queue {
        Queue { items: vec![1, 2, 3] }
    }

    fn hooks(&self) -> Hooks {
        Hooks { on_len: |n| n * 10 }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sums() {
        assert_eq!(super::unknown(super::Fixed), 2 + 3 + 20 + 1);
    }
}
"""

#: The getter idiom: a field ``len`` and a method ``len()`` of one type.
GETTER = """pub struct Buf {
    len: usize,
}

impl Buf {
    pub fn new() -> Buf {
        Buf { len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn grow(&mut self) -> usize {
        self.len += 1;
        self.len()
    }
}

pub fn outside(b: &mut Buf) -> usize {
    b.grow();
    b.len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn grows() {
        assert_eq!(super::outside(&mut super::Buf::new()), 1);
    }
}
"""


def _edits(preview: RefactorPreview) -> dict[tuple[int, int], tuple[str, str]]:
    return {(e.line, e.column): (e.certainty, e.reason) for e in preview.edits}


def test_rust_method_rename_sets_aside_field_reads_at_unknown_receivers(tmp_path: Path) -> None:
    """``b.len`` (b: a trait call's result) was a low ``unresolved_receiver`` candidate of ``Queue::len``, and
    ``(k.on_len)(2)`` one of ``Queue::on_len``: reads of a field, never the method. Now set aside; the calls
    ``q.len()`` / ``q.on_len()`` stay proposed."""
    with refactor_env(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": UNKNOWN}) as env:
        preview = env.service.rename("src/lib.rs:10:12", "size")
        edits = _edits(preview)
        assert (33, 17) not in edits, edits  # let read = b.len;
        assert edits[(34, 19)] == ("low", "unresolved_receiver"), edits  # let called = q.len();
        assert preview.coverage is not None and preview.coverage.set_aside == ["src/lib.rs:33:17"], preview.coverage
        assert preview.coverage.by_reason.get("other_symbol") == 1, preview.coverage
        hook = env.service.rename("src/lib.rs:14:12", "hook")
        edits = _edits(hook)
        assert (35, 23) not in edits and edits[(35, 38)] == ("low", "unresolved_receiver"), edits
        assert hook.coverage is not None and hook.coverage.set_aside == ["src/lib.rs:35:23"], hook.coverage


def test_rust_field_rename_never_proposes_method_calls_and_the_crate_still_builds(tmp_path: Path) -> None:
    """Renaming the field ``Buf.len`` proposed ``self.items.len()`` and ``q.len()`` as ``medium``: applied, the
    crate no longer built (``Vec`` and ``Queue`` have no ``size()``). Now they are set aside and the rest
    applies."""
    with refactor_env(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": UNKNOWN}) as env:
        preview = env.service.rename("src/lib.rs:2:9", "size")
        edits = _edits(preview)
        assert (11, 19) not in edits and (34, 19) not in edits, edits
        assert edits[(2, 8)] == ("high", "definition") and edits[(33, 17)] == ("medium", "anchored"), edits
        assert edits[(10, 11)] == ("low", "other_binding"), edits  # the method's declaration: another symbol
        assert preview.coverage is not None
        assert preview.coverage.set_aside == ["src/lib.rs:11:19", "src/lib.rs:34:19"], preview.coverage
        env.service.apply(preview.refactor_id)
        text = env.read("src/lib.rs")
        assert "self.items.len()" in text and "let read = b.size;" in text and "Buf { size: 2 }" in text, text
        cargo_lib_tests_pass(env.root, tmp_path / "target")


def test_rust_getter_and_field_of_one_name_each_rename_with_their_own_uses(tmp_path: Path) -> None:
    """``len`` and ``len()`` of one type left ``self.len``, ``self.len()`` and ``b.len()`` unlinked (two members
    answer ``Buf.len``): the method's rename proposed its calls low and applied without them (E0599), the field's
    proposed the calls ``medium`` and renamed them (E0599). The syntax now picks the member: each rename is high
    on its own uses only, and the renamed crate builds and passes its test."""
    with refactor_env(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": GETTER}) as env:
        method = env.service.rename("src/lib.rs:10:12", "size")
        assert {k for k, v in _edits(method).items() if v[0] != "low"} == {(10, 11), (16, 13), (22, 6)}, \
            method.edits
        field = env.service.rename("src/lib.rs:2:5", "count")
        assert {k for k, v in _edits(field).items() if v[0] != "low"} == {(2, 4), (7, 14), (11, 13), (15, 13)}, \
            field.edits
        assert all(e.certainty == "high" for e in field.edits if e.certainty != "low"), field.edits
        env.service.apply(method.refactor_id)
        assert "self.size()" in env.read("src/lib.rs") and "b.size()" in env.read("src/lib.rs")
        cargo_lib_tests_pass(env.root, tmp_path / "target")
        again = env.service.rename("src/lib.rs:2:5", "count")
        env.service.apply(again.refactor_id)
        text = env.read("src/lib.rs")
        assert "Buf { count: 0 }" in text and "self.count += 1;" in text and "self.size()" in text, text
        cargo_lib_tests_pass(env.root, tmp_path / "target")


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


def test_rust_members_link_to_the_field_or_the_method_the_syntax_names(h: Harness) -> None:
    """The index links ``x.len`` to the field and ``x.len()`` to the method of a type that has both; a closure
    field called as ``(x.on)(..)`` is the field. Unlinked before (both ANCHORED)."""
    h.apply({"Cargo.toml": CARGO, "src/lib.rs":
             "pub struct Buf {\n    len: usize,\n    on: fn() -> usize,\n    pick: usize,\n}\n\nimpl Buf {\n"
             "    fn len(&self) -> usize {\n        self.len\n    }\n\n    fn on(&self) -> usize {\n"
             "        (self.on)()\n    }\n\n    fn pick<T>(&self) -> usize {\n        self.pick\n    }\n}\n\n"
             "pub fn f(b: &Buf) -> usize {\n    let x = b.len;\n    let y = b.len();\n"
             "    let z = b.pick::<u8>();\n    x + y + z + b.on()\n}\n"})
    rows = {(line, kind): uid for uid, line, kind in h.conn.execute(
        "SELECT def_uid, name_line, kind FROM st_def WHERE name IN ('len', 'on', 'pick')")}
    assert h.ref("src/lib.rs", 9, "len") == ("STRONG", rows[(2, "field")])  # self.len
    assert h.ref("src/lib.rs", 13, "on") == ("STRONG", rows[(3, "field")])  # (self.on)()
    assert h.ref("src/lib.rs", 17, "pick") == ("STRONG", rows[(4, "field")])  # self.pick
    assert h.ref("src/lib.rs", 22, "len") == ("STRONG", rows[(2, "field")])  # b.len
    assert h.ref("src/lib.rs", 23, "len") == ("STRONG", rows[(8, "method")])  # b.len()
    assert h.ref("src/lib.rs", 24, "pick") == ("STRONG", rows[(16, "method")])  # b.pick::<u8>()
    assert h.ref("src/lib.rs", 25, "on") == ("STRONG", rows[(12, "method")])  # b.on()


JAVA = {
    "A.java": "public class A {\n    int size = 3;\n\n    int size() {\n        return size;\n    }\n\n"
              "    static A make() {\n        return new A();\n    }\n}\n",
    "B.java": "public class B {\n    int total() {\n        int read = A.make().size;\n"
              "        int called = A.make().size();\n        return read + called;\n    }\n}\n",
}


def _javac(root: Path) -> None:
    if shutil.which("javac") is None:
        pytest.skip("javac is not installed")
    ran = subprocess.run(["javac", "-d", "out", "A.java", "B.java"], cwd=root, capture_output=True, text=True,
                         timeout=120, check=False)
    assert ran.returncode == 0, ran.stderr


def test_java_member_through_a_returned_receiver_is_only_its_own_kind(tmp_path: Path) -> None:
    """``A.make().size()`` was a ``medium`` candidate of the field ``A.size`` (the receiver's class is known from
    ``make``'s return type, its kind was not looked at) and ``A.make().size`` one of the method: applied, javac
    failed. Each is now set aside by the other's rename, and the renamed sources compile."""
    with refactor_env(tmp_path / "repo", JAVA) as env:
        method = env.service.rename("A.java:4:9", "count")
        assert (3, 28) not in _edits(method) and _edits(method)[(4, 30)] == ("medium", "returned_receiver"), \
            method.edits
        assert method.coverage is not None and method.coverage.set_aside == ["B.java:3:28"]
        field = env.service.rename("A.java:2:9", "count")
        edits = _edits(field)
        assert (4, 30) not in edits and edits[(3, 28)] == ("medium", "returned_receiver"), field.edits
        env.service.apply(field.refactor_id)
        assert "A.make().count;" in env.read("B.java") and "A.make().size();" in env.read("B.java")
        assert "int count = 3;" in env.read("A.java") and "return count;" in env.read("A.java")
        _javac(env.root)


@pytest.mark.anyio
async def test_rust_field_rename_through_the_server_sets_the_calls_aside_and_applies_cleanly(tmp_path: Path) -> None:
    """Through MCP: the field's rename lists the method calls it set aside by 1-based position, proposes none of
    them, and ``refactor_apply`` (high and medium) leaves a crate that builds and passes its test."""
    with running_server(make_repo(tmp_path / "repo", {"Cargo.toml": CARGO, "src/lib.rs": UNKNOWN})) as server:
        async with mcp_client(server) as client:
            preview = await call(client, "refactor_rename", {"path": "src/lib.rs", "line": 2, "column": 9,
                                                             "new_name": "size"})
            assert preview["coverage"]["set_aside"] == ["src/lib.rs:11:20", "src/lib.rs:34:20"], preview
            assert preview["coverage"]["by_reason"]["other_symbol"] == 2, preview["coverage"]
            assert not any(e["line"] in (11, 34) for e in preview["edits"]), preview["edits"]
            applied = await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
            assert applied["applied_edits"] == 3, applied  # the declaration, `b.len` and `Buf { len: 2 }`
    assert "self.items.len()" in (server.root / "src/lib.rs").read_text()
    cargo_lib_tests_pass(server.root, tmp_path / "target")
