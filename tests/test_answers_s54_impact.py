"""QA52 F3 and F7, through the real server with the official client.

F3: inspect_affected_tests printed a chain equal to one shown above in full (every click test enters through
``CliRunner.invoke``: 22 % of the page), and a collapsed chain ending in its own elision said ``… → … (as above)``.
F7: discover_test_targets(affected_by=...) carried the whole impact explanation after the targets (each file and
its cases twice, the chains, the fallbacks: 9.9 KB for one click module); it lists the targets and points to
inspect_affected_tests for the why.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_CALLS_MAIN = "from pkg.app import main\n\n\ndef test_{n}():\n    assert main() == 3\n"
_CALLS_DEEP = "from pkg.deep import {f}1\n\n\ndef test_{n}():\n    assert {f}1() == 3\n"


def _deep(prefix: str) -> str:
    """Ten functions, each calling the next, the last the changed helper: a chain longer than is kept."""
    return "".join(f"def {prefix}{i}():\n    return {prefix}{i + 1}()\n\n\n" for i in range(1, 10)) + \
        f"def {prefix}10():\n    return helper(1)\n\n\n"


FILES = {
    "pyproject.toml": ("[project]\nname = 'pkg'\n\n[tool.pytest.ini_options]\ntestpaths = ['tests']\n"
                       "pythonpath = ['.']\n"),
    "pkg/__init__.py": "",
    "pkg/util.py": "def helper(x):\n    return x * 2\n",
    "pkg/app.py": ("from pkg.util import helper\n\n\ndef main():\n    return run()\n\n\n"
                   "def run():\n    return helper(1)\n"),
    "pkg/deep.py": "from pkg.util import helper\n\n\n" + _deep("f") + _deep("g"),
    **{f"tests/test_{n}.py": _CALLS_MAIN.format(n=n) for n in ("a", "b", "c")},
    "tests/test_d.py": _CALLS_DEEP.format(n="d", f="f"),
    "tests/test_e.py": _CALLS_DEEP.format(n="e", f="g"),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    repo = make_repo(tmp_path_factory.mktemp("s54impact") / "repo", FILES)
    (repo / "pkg" / "util.py").write_text("def helper(x):\n    return x * 3\n")
    with running_server(repo, "--profile", "full") as handle:
        yield handle


async def test_a_chain_equal_to_one_shown_above_is_said_as_above(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("inspect_affected_tests", {"changed_files": ["pkg/util.py"]})
    text = answer_text(res)
    lines = text.splitlines()
    assert "  test_a → pkg.app.main → pkg.app.run → pkg.util.helper (changed)" in lines, text
    assert "  test_b → pkg.app.main → … (as above)" in lines, text
    assert "  test_c → pkg.app.main → … (as above)" in lines, text
    assert text.count("pkg.app.run") == 1, text
    # test_e's chain meets test_d's only at the elision both were cut to: one "…", then "(as above)".
    assert "  test_e → " + " → ".join(f"pkg.deep.g{i}" for i in range(1, 6)) + " → … (as above)" in lines, text
    assert "… → …" not in text, text


async def test_discover_affected_by_lists_the_targets_once_and_points_to_the_why(server: ServerHandle) -> None:
    async with mcp_client(server) as client:
        res = await client.call_tool("discover_test_targets", {"affected_by": ["pkg/util.py"]})
    text, record = answer_text(res), envelope(res)["result"]
    files = [f"tests/test_{n}.py" for n in "abcde"]
    assert [t["target_id"] for t in record["targets"]] == files, record
    for name in files:
        assert text.count(name) == 1, text
    assert text.splitlines()[-1] == ("impact complete: 5 test files (5 high, 0 low) for pkg.util.helper; "
                                     "why: inspect_affected_tests"), text
    assert "→" not in text and "hint:" not in text, text
    # The record keeps the selection: what each file was selected by.
    assert {m["test_file"] for m in record["impact"]["matches"]} == set(files), record
