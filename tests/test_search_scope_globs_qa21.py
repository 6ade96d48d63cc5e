"""``scope.paths`` and ``list_files``' ``pattern`` read globs as ``rg -g`` does (QA21 #4).

Each of these answered a silent "no hits" / "0 of 0 entries": a lone negation (``!big.txt``: rg means everything
but it), braces (``*.{py,txt}``), a leading ``./`` (``./src/m.py``, a spelling ``read_source`` accepts).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, call, call_error, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("globs") / "repo", {
        "big.txt": "needle\n",
        "notes.txt": "needle\n",
        "src/m.py": "needle = 1\n",
        "src/lib/deep.py": "needle = 2\n",
        "app.js": "let needle = 3\n",
        "{odd}.md": "needle\n",
    })
    with running_server(repo) as handle:
        yield handle


async def _searched(client: Any, globs: list[str]) -> list[str]:
    found = await call(client, "search", {"query": "needle", "syntax": "identifier", "limit": 100,
                                          "scope": {"paths": globs}})
    return sorted({h["path"] for h in found.get("results", [])})


async def _listed(client: Any, pattern: str) -> list[str]:
    found = await call(client, "list_files", {"pattern": pattern, "limit": 100})
    return [e["path"] for e in found.get("entries", [])]


@pytest.mark.parametrize(("globs", "expected"), [
    (["!big.txt"], ["app.js", "notes.txt", "src/lib/deep.py", "src/m.py", "{odd}.md"]),
    (["!*.txt", "!src/"], ["app.js", "{odd}.md"]),
    (["*.{py,txt}"], ["big.txt", "notes.txt", "src/lib/deep.py", "src/m.py"]),
    (["src/{m,lib/deep}.py"], ["src/lib/deep.py", "src/m.py"]),
    (["./src/m.py"], ["src/m.py"]),
    (["./src"], ["src/lib/deep.py", "src/m.py"]),
    (["\\{odd}.md"], ["{odd}.md"]),  # an escaped brace is the file's own
    (["*", "!*.{py,txt}"], ["app.js", "{odd}.md"]),
])
async def test_scope_paths_follow_rg_glob_rules(server: ServerHandle, globs: list[str], expected: list[str]) -> None:
    async with mcp_client(server) as client:
        assert await _searched(client, globs) == expected


async def test_list_files_pattern_follows_rg_glob_rules(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        assert await _listed(client, "*.{py,js}") == ["app.js", "src/lib/deep.py", "src/m.py"]
        assert ".cplignore" in await _listed(client, "!*.{txt,py,js,md}")
        assert await _listed(client, "./src/m.py") == ["src/m.py"]


async def test_a_brace_left_open_is_refused_naming_the_glob(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        error = await call_error(client, "search", {"query": "needle", "scope": {"paths": ["*.py", "*.{py,txt"]}})
    assert error["code"] == 1003 and error["details"] == {"field": "scope.paths.1", "glob": "*.{py,txt"}
