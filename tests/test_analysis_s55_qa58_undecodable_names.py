"""QA58 F0: ``semantic_diff`` on a file whose name is not valid UTF-8. pygit2 hands such a name over as surrogate
escapes, which no JSON answer or SQLite row can carry: a work-tree diff with an untracked ``bad\\xffname.txt``
answered 9001, and a diff between revisions holding a committed ``m\\xe9.py`` broke the transport ("Internal server
error", no envelope, no ledger row). The name is now shown with ``\\xNN`` escapes, as the git tools show it, and the
file is still read from disk by its real name."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeplane.analysis.service import SemanticDiffService
from tests.builders import ServerHandle, answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

COMMITTED = os.fsdecode(b"m\xe9.py")
UNTRACKED_TEXT = os.fsdecode(b"bad\xffname.txt")
UNTRACKED_PY = os.fsdecode(b"u\xfe.py")


def _repo(root: Path) -> Path:
    """HEAD~1 -> HEAD adds ``m\\xe9.py``; the work tree then adds a function to it and holds two untracked files
    whose names are not UTF-8."""
    repo = make_repo(root, {"a.py": "def a():\n    return 1\n"})
    (repo / COMMITTED).write_bytes(b"def f():\n    return 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "add a name that is not UTF-8")
    (repo / COMMITTED).write_bytes(b"def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    (repo / UNTRACKED_TEXT).write_bytes(b"x\n")
    (repo / UNTRACKED_PY).write_bytes(b"def u():\n    pass\n")
    return repo


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    with running_server(_repo(tmp_path_factory.mktemp("qa58_names") / "repo")) as handle:
        yield handle


def _ledger(root: Path) -> list[tuple[str, int | None]]:
    conn = sqlite3.connect(f"{(root / '.codeplane' / 'ledger.db').as_uri()}?mode=ro", uri=True)
    try:
        return [(str(op), code) for op, code in conn.execute(
            "SELECT op_type, error_code FROM operations WHERE op_type = 'semantic_diff' ORDER BY op_id")]
    finally:
        conn.close()


async def test_a_diff_between_revisions_names_the_file_with_escapes(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("semantic_diff", {"base": "HEAD~1", "target": "HEAD"})
    assert not res.is_error, envelope(res)
    changes = envelope(res)["result"]["structural_changes"]
    assert [(c["path"], c["name"], c["change"]) for c in changes] == [("m\\xe9.py", "f", "added")], changes
    assert "m\\xe9.py" in answer_text(res) and '"m\\\\xe9.py"' not in answer_text(res)  # as git_diff shows it
    assert _ledger(server.root)[-1] == ("semantic_diff", None)


async def test_a_work_tree_diff_reads_each_file_by_its_real_name(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("semantic_diff", {})
    assert not res.is_error, envelope(res)
    result = envelope(res)["result"]
    # ``g`` is found only by reading m\xe9.py from disk (a file named with the escapes does not exist).
    assert sorted((c["path"], c["name"], c["change"]) for c in result["structural_changes"]) == [
        ("m\\xe9.py", "g", "added"), ("u\\xfe.py", "u", "added")], result
    assert [f["path"] for f in result["non_structural_changes"]] == ["bad\\xffname.txt"], result
    text = answer_text(res)
    assert "xffname.txt" in text and "xfe.py" in text, text


def test_the_service_keeps_every_name_it_answers_encodable(tmp_path: Path) -> None:
    """Without a server: the blob-facts store (SQLite) took the raw names too ("cache failed; continuing in
    memory"), and a repeat answered from the kept report names the same escapes."""
    repo = _repo(tmp_path / "repo")
    service = SemanticDiffService(repo, cache_db=tmp_path / "facts.db")
    for _ in range(2):
        page = service.diff("HEAD", None)
        names = [c.path for c in page.changes] + [f.path for f in page.files]
        assert sorted(names) == ["bad\\xffname.txt", "m\\xe9.py", "u\\xfe.py"], ascii(names)
        for name in names:
            name.encode("utf-8")
    assert service.reports_built == 1
    assert service.store is not None and service.store.get("m\\xe9.py", service_blob(repo)) is not None


def service_blob(repo: Path) -> str:
    return git(repo, "rev-parse", f"HEAD:{COMMITTED}").stdout.strip()
