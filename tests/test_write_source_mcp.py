"""``write_source`` end to end: the real server, the official MCP client, a real git repository."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeplane.core.hashing import sha256_bytes
from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FILES = {
    "src/app.py": "def main():\n    pass\n\n\ndef helper():\n    return 1\n",
    "src/win.txt": "one\r\ntwo\r\nthree\r\n",
    "README.md": "# Demo\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("write") / "repo", FILES)
    with running_server(repo) as handle:
        yield handle


async def test_tool_is_listed_as_a_destructive_mutation(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        doc = await call(client, "describe", {"action": "tool", "name": "write_source"})
    tool = tools["write_source"]
    assert tool.annotations is not None
    assert tool.annotations.read_only_hint is False and tool.annotations.destructive_hint is True
    assert "edits" in tool.input_schema["properties"]
    assert doc["examples"] and doc["when_not_to_use"]


async def test_update_with_read_hash_then_chain_with_the_returned_hash(server: ServerHandle) -> None:
    root = server.root
    sha = sha256_bytes((root / "src/app.py").read_bytes())
    async with mcp_client(server) as client:
        first = await call(client, "write_source", {"edits": [
            {"path": "src/app.py", "action": "update", "start_line": 2, "end_line": 2,
             "new_content": "    run()", "expected_content": "    pass", "expected_file_sha256": sha}]})
        # Lean: dry_run=false is the default, the new hash is said once, the counts once per file and batch.
        assert first["applied"] is True and "dry_run" not in first and "changed 1 file" in first["summary"]
        delta = first["delta"]
        entry = delta["files"][0]
        assert entry["old_sha256"] == sha
        assert entry["file_sha256"] == sha256_bytes((root / "src/app.py").read_bytes())
        assert "new_sha256" not in entry and "encoding" not in entry and "line_ending" not in entry
        assert (entry["insertions"], entry["deletions"]) == (1, 1)
        assert (delta["files_changed"], delta["insertions"], delta["deletions"]) == (1, 1, 1)
        assert delta["mutation_id"].startswith("mut_")
        second = await call(client, "write_source", {"edits": [
            {"path": "src/app.py", "action": "update", "old_text": "return 1", "new_text": "return 2",
             "expected_file_sha256": entry["file_sha256"]}]})
        assert second["delta"]["files"][0]["old_sha256"] == entry["file_sha256"]
        stale = await call_error(client, "write_source", {"edits": [
            {"path": "src/app.py", "action": "delete", "expected_file_sha256": sha}]})
    assert stale["code"] == 5002
    assert stale["details"]["actual_file_sha256"] == second["delta"]["files"][0]["file_sha256"]
    assert (root / "src/app.py").read_text() == FILES["src/app.py"].replace("pass", "run()").replace("1", "2")


async def test_crlf_file_keeps_its_line_endings_through_mcp(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await call(client, "write_source", {"edits": [
            {"path": "src/win.txt", "action": "update", "old_text": "two\nthree", "new_text": "2\n3"}]})
    assert (server.root / "src/win.txt").read_bytes() == b"one\r\n2\r\n3\r\n"
    assert res["delta"]["files"][0]["line_ending"] == "CRLF"


async def test_dry_run_shows_a_diff_and_writes_nothing(server: ServerHandle) -> None:
    before = (server.root / "README.md").read_bytes()
    async with mcp_client(server) as client:
        res = await call(client, "write_source", {"dry_run": True, "edits": [
            {"path": "README.md", "action": "update", "old_text": "Demo", "new_text": "Sample"},
            {"path": "docs/new.md", "action": "create", "content": "hello\n"}]})
    assert res["applied"] is False and res["dry_run"] is True
    assert "-# Demo\n+# Sample\n" in res["delta"]["diff"] and "+++ b/docs/new.md" in res["delta"]["diff"]
    assert (server.root / "README.md").read_bytes() == before and not (server.root / "docs").exists()


async def test_bad_input_gets_typed_errors_and_nothing_is_written(server: ServerHandle) -> None:
    root = server.root
    before = {p: (root / p).read_bytes() for p in ("src/app.py", "README.md")}
    cases = [
        ({"path": "../escape.txt", "action": "create", "content": "x"}, 5001),
        ({"path": ".git/config", "action": "update", "old_text": "[core]", "new_text": "x"}, 5001),
        ({"path": "/etc/hosts", "action": "delete"}, 5001),
        ({"path": "README.md", "action": "update", "content": "x"}, 1003),
        ({"path": "README.md", "action": "update", "old_text": "x", "start_line": 1}, 1003),
        ({"path": "README.md", "action": "move"}, 1003),
        ({"path": "README.md", "action": "update", "start_line": 1, "end_line": 1, "new_content": "x",
          "expected_content": "# Nope"}, 5002),
        ({"path": "missing.py", "action": "delete"}, 5004),
        ({"path": "README.md", "action": "create", "content": "x"}, 5005),
    ]
    async with mcp_client(server) as client:
        for edit, code in cases:
            batch = [{"path": "src/app.py", "action": "update", "old_text": "def main", "new_text": "def go"}, edit]
            err = await call_error(client, "write_source", {"edits": batch})
            assert err["code"] == code, (edit, err)
            if code != 5001:  # a refused edit of a batch of several is named by its index
                assert err["details"]["edit_index"] == 1, err
        drift = await call_error(client, "write_source", {"edits": [
            {"path": "README.md", "action": "update", "start_line": 1, "new_content": "x",
             "expected_content": "# Nope"}]})
        typo = await call_error(client, "write_source", {"edits": [{"path": "README.md", "action": "move"}]})
    assert drift["details"]["current"] == [{"line": 1, "text": "# Demo"}]
    # The only edit of a batch needs no index.
    assert "edit_index" not in drift["details"] and "edit_index" not in typo["details"]
    assert typo["code"] == 1003 and typo["details"]["field"] == "edits.0.to"
    assert {p: (root / p).read_bytes() for p in before} == before


async def test_a_left_out_action_is_taken_from_the_fields_and_a_bare_path_is_refused(server: ServerHandle) -> None:
    """Agents often leave ``action`` out; the fields name it (update, create, move), never delete, and a mix or
    nothing is 1003 on ``action`` with nothing written."""
    root = server.root
    (root / "src/inferred.py").write_text("A = 1\nB = 2\n")
    async with mcp_client(server) as client:
        done = await call(client, "write_source", {"edits": [
            {"path": "src/inferred.py", "old_text": "A = 1", "new_text": "A = 10"},
            {"path": "src/inferred.py", "start_line": 2, "new_content": "B = 20"},
            {"path": "src/inferred_new.py", "content": "C = 3\n"}]})
        moved = await call(client, "write_source", {"edits": [{"path": "src/inferred_new.py", "to": "src/c.py"}]})
        before = {p.name: p.read_bytes() for p in (root / "src").iterdir() if p.is_file()}
        bare = await call_error(client, "write_source", {"edits": [{"path": "src/c.py"}]})
        mixed = await call_error(client, "write_source", {"edits": [
            {"path": "src/c.py", "content": "x\n", "to": "src/d.py"}]})
    assert done["applied"] is True and moved["applied"] is True
    assert (root / "src/inferred.py").read_text() == "A = 10\nB = 20\n"
    assert (root / "src/c.py").read_text() == "C = 3\n" and not (root / "src/inferred_new.py").exists()
    for err in (bare, mixed):
        assert err["code"] == 1003 and err["details"]["field"] == "edits.0.action", err
    assert "no field names one" in bare["message"] and "create and move" in mixed["message"]
    assert {p.name: p.read_bytes() for p in (root / "src").iterdir() if p.is_file()} == before


async def test_read_hash_write_then_search_sees_it_without_waiting(server: ServerHandle) -> None:
    """read_source's file_sha256 is write_source's precondition, and search reflects the write at once."""
    async with mcp_client(server) as client:
        read = await call(client, "read_source", {"targets": [{"path": "README.md"}]})
        sha = read["files"][0]["file_sha256"]
        assert sha == sha256_bytes((server.root / "README.md").read_bytes())
        written = await call(client, "write_source", {"edits": [
            {"path": "README.md", "action": "update", "start_line": 1, "end_line": 1,
             "new_content": "# zebracornucopia", "expected_file_sha256": sha},
            {"path": "src/fresh_module.py", "action": "create", "content": "QUOKKAQUARTZ = 1\n"},
        ]})
        hits = await call(client, "search", {"query": "zebracornucopia"})
        created = await call(client, "search", {"query": "QUOKKAQUARTZ"})
        again = await call(client, "read_source", {"targets": [{"path": "README.md"}]})
    assert [h["path"] for h in hits["results"]] == ["README.md"]
    assert [h["path"] for h in created["results"]] == ["src/fresh_module.py"]
    by_path = {f["path"]: f for f in written["delta"]["files"]}
    assert again["files"][0]["file_sha256"] == by_path["README.md"]["file_sha256"]
