"""The server over real MCP: tool listing, envelope, describe, structured errors."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest

from codeplane.server.tooling import CORE_TOOLS, RECOVERY_TOOLS
from tests.builders import (
    ServerHandle,
    answer_text,
    call,
    call_error,
    cpl_env,
    envelope,
    git,
    make_repo,
    mcp_client,
    running_server,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    """One server for the tests that only read (each with its own client, hence its own session): a start costs
    about two seconds of CPU. Tests of the boot, of a profile, or that write start their own."""
    repo = make_repo(tmp_path_factory.mktemp("mcp_server") / "repo", {"a.py": "x = 1\n"})
    with running_server(repo, env=cpl_env(home=tmp_path_factory.mktemp("xdg"))) as handle:
        yield handle


async def test_tools_list_is_deterministic_with_flat_schemas_and_annotations(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        first = await client.list_tools()
        second = await client.list_tools()
        failed = await client.call_tool("read_source", {"targets": [{"path": "missing.py"}]})
        read = await client.call_tool("read_source", {"targets": [{"path": "a.py"}]})
    # Both an error and a success validate against the tool's output schema: the TypeScript SDK checks an error's
    # structuredContent too, and threw -32602 instead of showing the model the error when only result was allowed.
    schema = next(t.output_schema for t in first.tools if t.name == "read_source")
    assert failed.is_error and failed.structured_content and failed.structured_content["error"]["code"] == 5004
    assert not read.is_error
    for answer in (failed, read):
        jsonschema.validate(answer.structured_content, schema)
    names = [t.name for t in first.tools]
    assert names == [t.name for t in second.tools]
    assert "describe" in names
    for tool in first.tools:
        dumped = json.dumps(tool.output_schema)
        assert "oneOf" not in dumped, tool.name
        assert tool.output_schema is not None, tool.name
        assert tool.output_schema["properties"].keys() == {"result", "error", "meta"}
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        # Every tool accepts session_id; tools/list names it, describe(action='tool') explains it.
        assert tool.input_schema["properties"]["session_id"] == {"type": "string"}, tool.name
        assert tool.description and len(tool.description) <= 400, tool.name
        # A description ends as a sentence (cut after a ";" it read as broken off mid-way).
        assert tool.description.endswith((".", "…", ")")), (tool.name, tool.description[-60:])
        assert "title" not in json.dumps(tool.input_schema).replace('"title":{', ""), tool.name


async def test_describe_repo_and_tool(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("describe", {})
        assert not res.is_error
        body = envelope(res)
        meta = body["meta"]
        # The first answer of a session names it and its task; the request id is protocol metadata.
        assert meta == {"task_id": meta["task_id"]} and meta["task_id"].startswith("task_")
        assert res.meta and res.meta["codeplane/request_id"].startswith("req_")
        again = await client.call_tool("describe", {})
        assert envelope(again)["meta"] == {}, "an ordinary answer repeats no ids"
        summary = body["result"]
        assert summary["repo_root"] == str(server.root.resolve())
        assert summary["branch"] == "main"
        assert summary["tool_count"] == len(summary["tools"])
        doc = await call(client, "describe", {"action": "tool", "name": "describe"})
        assert doc["name"] == "describe"
        assert doc["when_to_use"] and doc["when_not_to_use"]
        assert doc["input_schema"]["properties"]["session_id"]["description"]
        assert doc["annotations"]["readOnlyHint"] is True
        # The text is a manual page: use for / not for, examples as arguments, the parameters by name (their
        # types, bounds and descriptions are the tools/list schema's).
        page = answer_text(await client.call_tool("describe", {"action": "tool", "name": "search"}))
        lines = page.splitlines()
        assert lines[0].startswith("search [search, read-only, idempotent]: Search the repository.")
        header = "parameters (types, bounds, defaults: the tools/list schema): query (required), "
        assert any(line.startswith(header) for line in lines)
        assert "What to search for." not in page
        assert 'e.g. every use of an identifier: {"query":"get_or_create","syntax":"identifier"}' in lines
        assert not page.startswith("{") and "$defs" not in page
        errors = await call(client, "describe", {"action": "errors"})
        codes = [e["code"] for e in errors["errors"]]
        assert codes == sorted(codes) and 5001 in codes and 6001 in codes
        # The catalog reads as a line per code, half its JSON.
        listed = answer_text(await client.call_tool("describe", {"action": "errors"})).splitlines()
        assert len(listed) == len(codes) and listed[0].startswith(f"{codes[0]} {errors['errors'][0]['error']}")
        assert any(line.startswith("3005 INDEX_FRESHNESS_TIMEOUT (retryable): ") for line in listed), listed
        # A code of the spec's catalog this version never raises says so, and how the condition is reported.
        timeout = next(line for line in listed if line.startswith("7002 "))
        assert "[never raised: a target out of time is a run result" in timeout
        assert not any("never raised" in line for line in listed if line.startswith("7001 "))


async def test_invalid_arguments_give_catalog_error_and_server_stays_healthy(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        err = await call_error(client, "describe", {"action": "nonsense"})
        assert err["code"] == 1003 and err["error"] == "INVALID_ARGUMENTS"
        assert err["retryable"] is False
        assert err["details"]["problems"][0]["field"] == "action"
        err = await call_error(client, "describe", {"bogus_field": 1})
        assert err["code"] == 1003
        err = await call_error(client, "describe", {"action": "tool", "name": "no_such_tool"})
        assert err["code"] == 1004
        err = await call_error(client, "no_such_tool", {})
        assert err["code"] == 1004 and err["details"] == {"tool": "no_such_tool"}, err  # no list of every name
        still = await call(client, "describe", {})
        assert still["repo_root"]
        # An argument the tool does not take: the spelling meant, or the arguments it takes there; the text
        # says each problem once (the record keeps them).
        edit = {"path": "a.py", "old_txt": "x", "new_text": "y"}
        typo = await client.call_tool("write_source", {"edits": [edit]})
        unknown = await client.call_tool("open_task", {"limits": {"max_tool_calls": 5}})
        # No spelling is close, the meaning is: the spec's and the sibling tools' name for it.
        synonym = await client.call_tool("inspect_affected_tests", {"affected_by": ["a.py"]})
    assert server.get("/health").status_code == 200
    assert answer_text(synonym).endswith("affected_by: Extra inputs are not permitted; did you mean "
                                         "'changed_files'?"), answer_text(synonym)
    assert answer_text(typo) == ("error 1003 INVALID_ARGUMENTS: invalid arguments for write_source: "
                                 "edits.0.old_txt: Extra inputs are not permitted; did you mean 'old_text'?")
    assert answer_text(unknown).endswith("limits.max_tool_calls: Extra inputs are not permitted (takes: "
                                         "max_duration_sec, max_mutations, max_test_runs)"), answer_text(unknown)
    assert envelope(unknown)["error"]["details"]["problems"][0]["field"] == "limits.max_tool_calls"


async def test_explicit_session_id_is_echoed(server: ServerHandle) -> None:
    async with mcp_client(server, name="same-program") as client:
        res = await client.call_tool("describe", {"session_id": "sess_mine"})
        assert envelope(res)["meta"]["session_id"] == "sess_mine"
        res = await client.call_tool("describe", {})
        assert "session_id" not in envelope(res)["meta"], "a derived session id is not echoed"
        mine = (await call(client, "get_task", {"session_id": "sess_mine"}))["task"]
        task = (await call(client, "get_task", {}))["task"]
        assert mine["session_id"] == "sess_mine" and task["session_id"] != "sess_mine"
    async with mcp_client(server, name="same-program") as client:
        res = await client.call_tool("describe", {})
        # A reconnecting stateless client keeps its session (its budgets are not silently reset), so
        # nothing is news to it.
        assert envelope(res)["meta"] == {}
        assert (await call(client, "get_task", {}))["task"]["task_id"] == task["task_id"]


def test_rest_routes_and_repo_header(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_server(repo) as server:
        health = server.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert health.headers["x-codeplane-repo"] == str(repo.resolve())
        # While the MCP stack boots behind the socket, /status answers at once with the identity fields.
        deadline = time.monotonic() + 60
        while True:
            status = server.get("/status").json()
            assert status["api_version"] == "0.1.0"
            assert status["repo"] == str(repo.resolve())
            assert status["pid"] == server.ready["pid"]
            assert status["phase"] in ("starting", "serving")
            if status["phase"] == "serving" or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        assert status["phase"] == "serving" and "index" in status
        ready = server.get("/ready")
        assert ready.status_code in (200, 503) and "reason" in ready.json()
        assert "codeplane_tool_calls_total" in server.get("/metrics").text or server.get("/metrics").status_code == 200
        assert server.get("/dashboard").status_code == 200


def test_foreign_origin_and_host_are_refused_before_any_handler(server: ServerHandle) -> None:
    evil_origin = server.get("/health", headers={"Origin": "http://evil.example"})
    assert evil_origin.status_code == 403
    assert evil_origin.headers["x-codeplane-repo"] == str(server.root.resolve())
    assert server.get("/status", headers={"Host": "evil.example"}).status_code == 403
    assert server.get("/health", headers={"Host": "evil.example:80"}).status_code == 403
    ok_origin = server.get("/health", headers={"Origin": f"http://127.0.0.1:{server.port}"})
    assert ok_origin.status_code == 200
    import httpx

    post = httpx.post(server.mcp_url, headers={"Origin": "http://evil.example"}, json={}, timeout=10)
    assert post.status_code == 403


def test_stateless_call_answers_the_same_bytes_on_the_fast_path_and_the_streaming_path(server: ServerHandle) -> None:
    """A 2026-07-28 call without a progress token skips the SDK's SSE set-up (McpFastPath); one with a token
    keeps it. Both answer the same JSON, byte for byte but the request id, as one HTTP response."""
    import httpx

    def post(extra_meta: dict[str, str]) -> httpx.Response:
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {}, **extra_meta}
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "describe", "arguments": {"action": "tool", "name": "search"}, "_meta": meta}}
        return httpx.post(server.mcp_url, json=body, timeout=60, headers={
            "accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call", "mcp-name": "describe"})

    post({})  # the session's first answer announces its task: not compared
    fast, streaming = post({}), post({"progressToken": "p1"})
    for res in (fast, streaming):
        assert res.status_code == 200 and res.headers["content-type"] == "application/json"
        assert res.headers["x-codeplane-repo"] == str(server.root.resolve())
    ids = [json.loads(r.content)["result"]["_meta"]["codeplane/request_id"] for r in (fast, streaming)]
    assert fast.content.replace(ids[0].encode(), ids[1].encode()) == streaming.content
    assert not json.loads(fast.content)["result"]["isError"]
    evil = httpx.post(server.mcp_url, content=fast.request.content, timeout=10,
                      headers={**fast.request.headers, "origin": "http://evil.example"})
    assert evil.status_code == 403
    # A client that does not accept SSE is refused as the SDK's streaming mode refuses it (406).
    json_only = httpx.post(server.mcp_url, content=fast.request.content, timeout=10,
                           headers={**fast.request.headers, "accept": "application/json"})
    assert json_only.status_code == 406


async def test_both_protocol_revisions_are_served(server: ServerHandle) -> None:
    """D3: 2025-11-25 (initialize handshake + session header) and the stateless 2026-07-28 revision."""
    from mcp import Client

    seen = {}
    for mode in ("legacy", "2026-07-28"):
        async with Client(server.mcp_url, mode=mode) as client:
            res = await client.call_tool("describe", {})
            assert not res.is_error
            seen[client.protocol_version] = (await call(client, "get_task", {}))["task"]["session_id"]
    assert set(seen) == {"2025-11-25", "2026-07-28"}
    assert seen["2025-11-25"].startswith("mcp_")  # identity from the MCP session header
    assert seen["2026-07-28"].startswith("client_")  # stateless: one session per client program


async def test_read_only_profile_lists_and_serves_only_read_only_tools(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    with running_server(repo, "--profile", "read_only") as server:
        async with mcp_client(server) as client:
            listed = (await client.list_tools()).tools
            # Read-only tools, and the two calls a spent budget's error names (they write no file).
            assert listed and all((t.annotations and t.annotations.read_only_hint) or t.name in RECOVERY_TOOLS
                                  for t in listed)
            names = {t.name for t in listed}
            assert {"search", "read_source", "git_status", "git_diff"} <= names
            writes = ["write_source", "git_commit", "git_stage", "git_checkout", "git_branch", "git_reset",
                      "git_merge", "git_stash", "git_rebase", "git_push", "git_pull", "git_stage_and_commit",
                      "refactor_apply", "run_test_targets"]
            for tool in writes:
                assert tool not in names
                err = await call_error(client, tool, {"edits": [{"path": "b.py", "action": "create",
                                                                 "content": "y = 2\n"}]}
                                       if tool == "write_source" else {"message": "m", "all": True})
                assert err["code"] == 1006 and err["error"] == "TOOL_NOT_IN_PROFILE", tool
                assert err["details"]["profile"] == "read_only"
            assert (await call(client, "describe", {}))["profile"] == "read_only"
    assert not (repo / "b.py").exists()
    assert git(repo, "log", "--format=%s").stdout.count("\n") == 1, "nothing was committed"


async def test_core_profile_is_the_default_and_serves_the_loop_in_a_fraction_of_the_catalogue(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    env = {k: v for k, v in cpl_env().items() if k != "CODEPLANE__TOOLS__PROFILE"}
    with running_server(repo, env=env) as server:
        async with mcp_client(server) as client:
            core = {t.name for t in (await client.list_tools()).tools}
            assert (await call(client, "describe", {}))["profile"] == "core"
            err = await call_error(client, "git_rebase", {"action": "plan"})
            assert err["code"] == 1006 and "--profile full" in err["message"]
            err = await call_error(client, "no_such_tool", {})
            assert err["code"] == 1004
            # Describing a withheld tool says the same as calling it (it said "no tool named"); a typo is named.
            err = await call_error(client, "describe", {"action": "tool", "name": "git_rebase"})
            assert err["code"] == 1006 and "--profile full" in err["message"]
            err = await call_error(client, "serch", {})
            assert err["code"] == 1004 and "did you mean search?" in err["message"], err
    assert {"search", "read_source", "write_source", "run_test_targets", "git_diff"} <= core
    assert core <= CORE_TOOLS and len(core) <= 22 and core >= RECOVERY_TOOLS and "git_checkout" in core
