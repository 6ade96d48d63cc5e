"""QA 46: ``search`` references printed a line twice when it holds two references of the symbol with different roles
(``window.f = f;`` a reference and an anchored definition, a re-export an import and a definition). Through the
real server and the official MCP client: the line once, with both tags."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s52b_search") / "repo", {
        "web/app.js": "function f() {\n  return 1;\n}\nwindow.f = f;\nf();\n",
        "pkg/__init__.py": "from .decorators import make_pass as make_pass\n\nmake_pass()\n",
        "pkg/decorators.py": "def make_pass():\n    return 1\n",
    })
    with running_server(repo) as handle:
        yield handle


async def _references(server: ServerHandle, name: str) -> tuple[list[tuple[int, str]], str]:
    async with mcp_client(server) as client:
        res = await client.call_tool("search", {"query": name, "mode": "references"})
    hits = [(h["line"], f"{h['role']} {h['ref_tier']}") for h in envelope(res)["result"]["results"]]
    return hits, answer_text(res)


async def test_a_line_holding_a_reference_and_a_definition_is_printed_once_with_both_tags(
        server: ServerHandle) -> None:
    hits, text = await _references(server, "f")
    assert {"REFERENCE PROVEN", "DEFINITION ANCHORED"} <= {role for line, role in hits if line == 4}, hits
    lines = [line for line in text.splitlines() if line.startswith("4:")]
    assert lines == ["4:[REFERENCE PROVEN, DEFINITION ANCHORED] window.f = f;"], text
    assert "5:f();" in text.splitlines(), text  # a line of the usual role alone stays untagged


async def test_a_re_export_line_is_printed_once_as_import_and_definition(server: ServerHandle) -> None:
    hits, text = await _references(server, "make_pass")
    assert {"IMPORT STRONG", "DEFINITION STRONG"} <= {role for line, role in hits if line == 1}, hits
    lines = [line for line in text.splitlines() if "import make_pass" in line]
    assert lines == ["1:[IMPORT STRONG, DEFINITION STRONG] from .decorators import make_pass as make_pass"], text
