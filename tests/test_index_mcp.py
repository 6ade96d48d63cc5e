"""The index through the real server and MCP client: search, file tools, freshness, restarts, escapes."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from codeplane.index.lexical import LexicalIndex
from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    envelope,
    make_repo,
    mcp_client,
    running_server,
    write_files,
)

pytestmark = pytest.mark.anyio

FILES: dict[str, str | bytes] = {
    "src/app.py": "def handle_request(req):\n    return handle_request_impl(req)\n",
    "src/impl.py": "def handle_request_impl(req):\n    return req\n",
    "src/crlf.py": "alpha = 1\r\nbeta = 2\r\n",
    "docs/guide.md": "Call handle_request for each request.\n",
    "docs/latin1.txt": b"caf\xe9 menu\n",
    "web/handler.ts": "export const handle_request = 1;\nexport const ts_or_js_token = 2;\n",
    "web/legacy.js": "var ts_or_js_token = 1;\n",
    "scripts/extra.py": "EXTRA = 1\n",
    "many/words.txt": "needle\n" * 45,
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00",
    "big/huge.txt": "x" * 1_100_000 + "\n",
    "native/ext.c": "int c_only_token = 1;\n",
    "native/ext.hpp": "extern int c_only_token;\n",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    root = tmp_path_factory.mktemp("index_mcp")
    outside = root / "outside.txt"
    outside.write_text("secret\n")
    repo = make_repo(root / "repo", FILES)
    os.symlink(outside, repo / "src" / "escape.txt")
    with running_server(repo) as handle:
        yield handle


async def test_identifier_search_answers_exact_hits_with_epoch(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        result = await call(client, "search", {"query": "handle_request", "syntax": "identifier"})
    hits = {(h["path"], h["line"], h["column"]) for h in result["results"]}
    assert hits == {("src/app.py", 1, 5), ("docs/guide.md", 1, 6), ("web/handler.ts", 1, 14)}
    assert result["epoch"] >= 1 and result["pagination"]["total_estimate"] == 3
    assert all("match_type" not in h and h["snippet"] for h in result["results"])


async def test_pagination_returns_each_hit_exactly_once(server: ServerHandle) -> None:
    seen: list[tuple[str, int, int]] = []
    async with mcp_client(server) as client:
        args: dict[str, Any] = {"query": "needle", "syntax": "identifier", "limit": 10}
        while True:
            page = await call(client, "search", args)
            seen += [(h["path"], h["line"], h["column"]) for h in page["results"]]
            cursor = page["pagination"].get("next_cursor")
            if not cursor:
                break
            args = {**args, "cursor": cursor}
        assert len(seen) == 45 == len(set(seen))
        err = await call_error(client, "search", {"query": "needle", "cursor": "bogus"})
        assert err["code"] == 1005


async def test_the_same_search_twice_answers_the_same_bytes_cursor_included(server: ServerHandle) -> None:
    args = {"query": "needle", "syntax": "identifier", "limit": 10}
    async with mcp_client(server) as client:
        first, second = [answer_text(await client.call_tool("search", args)) for _ in range(2)]
    assert "needle" in first and first == second


async def test_overlapping_context_windows_are_merged_as_rg_c_merges_them(server: ServerHandle) -> None:
    """Each hit's context was printed whole: a line between two hits appeared twice, once as context."""
    async with mcp_client(server) as client:
        text = answer_text(await client.call_tool("search", {"query": "needle", "syntax": "identifier", "limit": 3,
                                                             "context_lines": 1}))
    assert text.splitlines()[1:] == ["many/words.txt", "1:needle", "2:needle", "3:needle", "4-needle"], text


async def test_a_scope_language_is_a_family_or_a_language_name_and_a_typo_is_refused(server: ServerHandle) -> None:
    # ``typescript`` answered "no hits" (the lexical index knows files by family, ``javascript``), and so did a typo.
    async with mcp_client(server) as client:
        for languages in (["typescript"], ["javascript"]):
            found = await call(client, "search", {"query": "handle_request", "syntax": "identifier",
                                                  "scope": {"languages": languages}})
            assert [h["path"] for h in found["results"]] == ["web/handler.ts"], languages
        # A language narrower than its family is that language's files, as ``rg -t ts`` (typescript took .js too).
        for languages, paths in ((["typescript"], ["web/handler.ts"]),
                                 (["javascript"], ["web/handler.ts", "web/legacy.js"])):
            found = await call(client, "search", {"query": "ts_or_js_token", "syntax": "identifier",
                                                  "scope": {"languages": languages}})
            assert sorted(h["path"] for h in found["results"]) == paths, (languages, found)
        typo = await call_error(client, "search", {"query": "x", "scope": {"languages": ["pythn"]}})
        assert typo["code"] == 1003 and typo["details"]["field"] == "scope.languages.0", typo
        assert "python" in typo["details"]["known"]
        # C and C++ have no family in the index: selected by their files' suffixes (this was a 1003).
        for languages, paths in ((["c"], ["native/ext.c"]), (["cpp"], ["native/ext.hpp"]),
                                 (["c", "cpp"], ["native/ext.c", "native/ext.hpp"]), (["python"], [])):
            found = await call(client, "search", {"query": "c_only_token", "syntax": "identifier",
                                                  "scope": {"languages": languages}})
            assert sorted(h["path"] for h in found.get("results", [])) == paths, languages
        symbol_typo = await call_error(client, "search", {"query": "x", "mode": "symbol",
                                                          "scope": {"languages": ["pythn"]}})
        assert symbol_typo["code"] == 1003
        # A kind no definition has is named when nothing is found; a real kind with no match is just no hits.
        kind_typo = await call_error(client, "search", {"query": "handle_request", "mode": "symbol",
                                                        "scope": {"kinds": ["functon"]}})
        assert kind_typo["code"] == 1003 and "function" in kind_typo["details"]["known"], kind_typo
        none = await call(client, "search", {"query": "handle_request", "mode": "symbol",
                                             "scope": {"kinds": ["class"]}})
        assert not none.get("results")


async def test_invalid_regex_is_a_query_error(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        err = await call_error(client, "search", {"query": "(oops", "syntax": "regex"})
        assert err["code"] == 3006 and "regular expression" in err["message"]


async def test_read_source_returns_ranges_and_the_exact_bytes_hash(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        result = await call(client, "read_source", {"targets": [
            {"path": "src/crlf.py", "start_line": 2, "end_line": 2}, {"path": "src/app.py"}]})
    crlf, app = result["files"]
    assert crlf["content"] == "beta = 2\r\n" and crlf["range"] == [2, 2] and crlf["line_count"] == 2
    assert crlf["file_sha256"] == hashlib.sha256(FILES["src/crlf.py"].encode()).hexdigest()  # type: ignore[union-attr]
    assert app["language"] == "python" and app["range"] == [1, 2] and not result.get("has_more")


async def test_a_file_that_is_not_utf8_is_read_with_a_flag_and_a_warning(server: ServerHandle) -> None:
    """A Latin-1 file was read as ``caf\ufffd menu`` with nothing to say the text is not the file's (its sha256 is of
    the bytes): an agent writing it back changed the byte."""
    async with mcp_client(server) as client:
        answer = await client.call_tool("read_source", {"targets": [{"path": "docs/latin1.txt"},
                                                                    {"path": "src/app.py"}]})
    latin, app = envelope(answer)["result"]["files"]
    assert latin["lossy"] is True and latin["content"] == "caf\ufffd menu\n" and "lossy" not in app, (latin, app)
    assert answer_text(answer).splitlines()[0].endswith("(not UTF-8: invalid bytes shown as \ufffd; writing this "
                                                        "text back changes them)"), answer_text(answer)


async def test_a_whole_file_read_that_is_not_utf8_says_so_too(server: ServerHandle) -> None:
    """``read_file_full`` returned the same ``caf\ufffd menu`` with no flag: the read an agent most likely writes
    back unchanged."""
    async with mcp_client(server) as client:
        asked = await client.call_tool("read_file_full", {"path": "docs/latin1.txt"})
        whole = await client.call_tool("read_file_full", {"path": "docs/latin1.txt", "confirm": True})
        clean = await client.call_tool("read_file_full", {"path": "src/app.py", "confirm": True})
    for answer in (asked, whole):
        assert envelope(answer)["result"]["lossy"] is True
        assert "(not UTF-8: invalid bytes shown as \ufffd" in answer_text(answer).splitlines()[0], answer_text(answer)
    assert envelope(whole)["result"]["content"] == "caf\ufffd menu\n"
    assert "lossy" not in envelope(clean)["result"] and "not UTF-8" not in answer_text(clean)


async def test_read_source_is_bounded_and_continues_with_a_cursor(server: ServerHandle) -> None:
    pieces: list[str] = []
    async with mcp_client(server) as client:
        args: dict[str, Any] = {"targets": [{"path": "many/words.txt"}], "max_bytes": 1024}
        result = await call(client, "read_source", {**args, "max_bytes": 1024})
        assert "has_more" not in result and "partial" not in result["files"][0]  # 45 short lines fit: false
        args = {"targets": [{"path": "big/huge.txt"}, {"path": "src/app.py"}], "max_bytes": 1024}
        result = await call(client, "read_source", args)
        assert result["has_more"] and result["files"][0]["partial"]
        assert len(result["files"][0]["content"].encode()) <= 1024
        pieces.append(result["files"][0]["content"])
        result = await call(client, "read_source", {**args, "cursor": result["cursor"]})
        # The one line of 1.1 MB goes on where the first part stopped (a line is never skipped).
        assert [f["path"] for f in result["files"]] == ["big/huge.txt"] and result["has_more"]
        assert result["files"][0]["start_column"] == 1025 and result["files"][0]["range"] == [1, 1]


async def test_read_file_full_is_gated_and_bounded(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        preview = await call(client, "read_file_full", {"path": "src/app.py"})
        assert preview["confirmed"] is False and "content" not in preview and preview["line_count"] == 2
        full = await call(client, "read_file_full", {"path": "src/app.py", "confirm": True})
        assert full["content"] == FILES["src/app.py"] and full["file_sha256"] == preview["file_sha256"]
        assert (await call_error(client, "read_file_full", {"path": "big/huge.txt", "confirm": True}))["code"] == 5007
        assert (await call_error(client, "read_file_full", {"path": "assets/logo.png"}))["code"] == 5008
        assert (await call_error(client, "read_source", {"targets": [{"path": "nope.py"}]}))["code"] == 5004


async def test_list_files_folds_by_depth_and_pages(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        top = await call(client, "list_files", {"depth": 1})
        entries = {e["path"]: e for e in top["entries"]}
        assert entries["src"]["type"] == "dir" and entries["src"]["file_count"] == 4
        assert entries["assets"].get("file_count", 1) == 1
        py = await call(client, "list_files", {"path": "src", "pattern": "*.py"})
        assert [e["path"] for e in py["entries"]] == ["src/app.py", "src/crlf.py", "src/impl.py"]
        assert py["entries"][0]["language"] == "python" and py["entries"][0]["line_count"] == 2
        first = await call(client, "list_files", {"limit": 2})
        rest = await call(client, "list_files", {"limit": 100, "cursor": first["next_cursor"]})
        paths = [e["path"] for e in first["entries"] + rest["entries"]]
        assert len(paths) == len(set(paths)) == first["total"]
        # A cursor this listing did not issue is refused: any string was taken as the path to go on after.
        for cursor, args in (("zzz", {}), ("!!garbage!!", {}), (first["next_cursor"], {"path": "src"}),
                             (first["next_cursor"], {"pattern": "*.py"})):
            refused = await call_error(client, "list_files", {"limit": 2, "cursor": cursor, **args})
            assert refused["code"] == 1005, (cursor, args, refused)
        missing = await call_error(client, "list_files", {"path": "no/such/dir"})  # like ``ls``, not "0 entries"
        assert missing["code"] == 5004 and missing["details"]["path"] == "no/such/dir"
        assert (await call(client, "list_files", {"path": "src", "pattern": "*.rs"}))["total"] == 0


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "src/\x00x", "src/escape.txt"])
async def test_path_escapes_are_refused_with_5001(server: ServerHandle, path: str) -> None:
    async with mcp_client(server) as client:
        err = await call_error(client, "read_source", {"targets": [{"path": path}]})
        assert err["code"] == 5001 and err["details"]["path"] == path.replace("\x00", "\\0")
        assert (await call_error(client, "read_file_full", {"path": path}))["code"] == 5001
        assert (await call_error(client, "list_files", {"path": path}))["code"] == 5001


async def test_status_and_describe_show_the_index(server: ServerHandle) -> None:
    server.wait_serving()
    index = server.get("/status").json()["index"]
    assert index["state"] == "ready" and index["epoch"] >= 1 and index["primary_language"] == "python"
    assert index["file_count"] == len(FILES) + 2  # + the symlink and the .cplignore `cpl up` wrote
    assert index["binary_files"] == 1 and index["oversized_files"] == 0 and index["symlinks"] == 1
    assert index["last_reconcile"]["duration_ms"] >= 0 and index["pending_changes"] == 0
    assert server.get("/ready").status_code == 200
    async with mcp_client(server) as client:
        summary = await call(client, "describe", {})
    assert summary["language"] == "python" and summary["index_status"] == "ready"


async def test_an_edit_on_disk_becomes_searchable_without_restart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            before = await call(client, "search", {"query": "brand_new_name", "syntax": "identifier"})
            assert before.get("results", []) == []
            write_files(repo, {"pkg/fresh.py": "brand_new_name = 2\n"})
            deadline = time.monotonic() + 10
            while True:  # the watcher is asynchronous; it publishes within debounce + indexing time
                found = await call(client, "search", {"query": "brand_new_name", "syntax": "identifier"})
                if found.get("results") or time.monotonic() > deadline:
                    break
            assert [(h["path"], h["line"]) for h in found["results"]] == [("pkg/fresh.py", 1)]
            assert found["epoch"] > before["epoch"]
            listed = await call(client, "list_files", {"path": "pkg"})
            assert [e["path"] for e in listed["entries"]] == ["pkg/fresh.py"]


async def test_tantivy_deleted_under_a_running_server_is_rebuilt_not_left_empty(tmp_path: Path) -> None:
    """``rm -rf .codeplane/tantivy`` while the server runs, then an edit: Tantivy's writer panicked (a Rust panic
    is no ``Exception``), the indexer thread died with ``/ready`` still true, every search then timed out, and a
    restart refilled only the one edited file's document: searches answered "no hits" for everything else. The
    indexer reopens the index now, and a start compares Tantivy's documents with the text files it indexed."""
    files = {f"pkg/m{i}.py": f"def helper_{i}():\n    return {i}\n" for i in range(5)}
    repo = make_repo(tmp_path / "repo", files)
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            assert len((await call(client, "search", {"query": "def helper"}))["results"]) == 5
            shutil.rmtree(repo / ".codeplane" / "tantivy")
            write_files(repo, {"pkg/live.py": "LIVE_TOKEN = 1\n"})
            for _ in range(100):
                res = await client.call_tool("search", {"query": "LIVE_TOKEN", "syntax": "identifier"})
                if not res.is_error and envelope(res)["result"].get("results"):
                    break
                await anyio.sleep(0.2)
            assert [h["path"] for h in envelope(res)["result"]["results"]] == ["pkg/live.py"], answer_text(res)
            assert len((await call(client, "search", {"query": "def helper"}))["results"]) == 5
    # The same damage found at a start: a Tantivy index of fewer documents than index.db's text files.
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            await call(client, "search", {"query": "def helper"})
    shutil.rmtree(repo / ".codeplane" / "tantivy")
    lexical = LexicalIndex(repo / ".codeplane" / "tantivy")
    lexical.open()
    lexical.add(99, "pkg/live.py", "python", "LIVE_TOKEN = 1\n")
    lexical.commit()
    lexical.close()
    # As the dead writer left it: that document's path marked in flight (so the opstamps were not compared).
    with sqlite3.connect(repo / ".codeplane" / "index.db") as conn:
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('tantivy_inflight', '[\"pkg/live.py\"]')")
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            assert len((await call(client, "search", {"query": "def helper"}))["results"]) == 5
        warnings = handle.get("/status").json()["index"]["warnings"]
        assert any("documents for" in w for w in warnings), warnings


async def test_edits_while_down_and_a_corrupt_tantivy_dir_are_handled_at_restart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "old_name = 1\n"})
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            assert (await call(client, "search", {"query": "old_name", "syntax": "identifier"}))["results"]
    write_files(repo, {"a.py": "new_name = 1\n"})
    (repo / ".codeplane" / "tantivy" / "meta.json").write_text("garbage")
    with running_server(repo) as handle:
        async with mcp_client(handle) as client:
            found = await call(client, "search", {"query": "new_name", "syntax": "identifier"})
            assert [(h["path"], h["line"]) for h in found["results"]] == [("a.py", 1)]
            gone = await call(client, "search", {"query": "old_name", "syntax": "identifier"})
            assert gone.get("results", []) == []
        warnings = handle.get("/status").json()["index"]["warnings"]
        assert any("rebuilt" in w for w in warnings)
