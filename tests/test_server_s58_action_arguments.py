"""QA64 F3: in every tool with an ``action``, an argument the chosen action does not use is 1003.

Arguments whose description named no action counted as used by every action, so ``describe(action="errors",
name=...)`` and ``git_merge(action="abort", ref=...)`` dropped them without a word. Now an argument either names its
actions or is declared ``every_action``, checked when the registry is built; ``describe`` given ``name`` without an
``action`` documents that tool (only action=tool takes a name), as ``write_source`` infers an edit's action."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar, Literal

import pytest
from pydantic import Field

from codeplane.server.tooling import ToolContext, ToolParams, ToolRegistry, ToolResult, ToolSpec, _action_fields
from tests.builders import ServerHandle, answer_text, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


class _Unstated(ToolParams):
    action: Literal["show", "drop"] = "show"
    target: str | None = Field(default=None, description="What to act on.")


class _Stated(_Unstated):
    every_action: ClassVar[frozenset[str]] = frozenset({"target"})


async def _never_called(ctx: ToolContext, params: _Unstated) -> ToolResult:
    raise AssertionError("a registry that refuses the tool never calls it")


def test_an_action_argument_that_names_no_action_is_refused_unless_declared_for_every_action() -> None:
    with pytest.raises(TypeError, match=r"_Unstated\.target: its description names no action"):
        _action_fields(_Unstated)
    spec = ToolSpec(name="unstated", category="test", summary="A tool whose argument names no action.",
                    params=_Unstated, result=ToolResult, handler=_never_called)
    with pytest.raises(TypeError, match=r"_Unstated\.target"):
        ToolRegistry([spec], profile="full")  # a server with such a tool does not start
    assert _action_fields(_Stated) == {}
    assert _Stated.model_validate({"action": "drop", "target": "x"}).target == "x"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("actions") / "repo", {"a.txt": "a\n"})
    with running_server(repo) as handle:  # tests.builders serves the full profile: git_merge included
        yield handle


async def test_describe_with_a_name_and_no_action_documents_that_tool(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        page = await call(client, "describe", {"name": "search"})
        text = answer_text(await client.call_tool("describe", {"name": "search"}))
    assert page["action"] == "tool" and page["name"] == "search", page
    assert text.startswith("search ["), text


@pytest.mark.parametrize(("tool", "args", "field", "action"), [
    ("describe", {"action": "errors", "name": "search"}, "name", "errors"),
    ("describe", {"action": "repo", "name": "search"}, "name", "repo"),
    ("git_merge", {"action": "abort", "ref": "main"}, "ref", "abort"),
    ("git_merge", {"action": "abort", "target": "main"}, "target", "abort"),
])
async def test_an_argument_the_chosen_action_does_not_use_is_1003(
        server: ServerHandle, tool: str, args: dict[str, str], field: str, action: str) -> None:
    async with mcp_client(server) as client:
        error = await call_error(client, tool, args)
    assert error["code"] == 1003, error
    assert f"{field}: used by action" in error["message"] and f"not {action}" in error["message"], error
