"""QA59 F1: the Vitest tests of an npm/pnpm/yarn workspace member whose ``package.json`` names no test runner were
claimed by a default-Jest project of the member and failed under Jest with a SyntaxError, while the root's
``vitest.config.ts`` ``include`` names them and the root ``package.json`` runs ``vitest run``. Such a member now
yields the files its ancestor's config includes, and they run as the repository's own ``npm test`` runs them: Vitest
from the root, the file path relative to it. ``tests.runners: {typescript: vitest}`` gave the member a Vitest
project run from the member's directory, where the root config's ``include`` (Vitest loads it: it looks upward)
matched nothing; and ``inspect_affected_tests(["vitest.config.ts"])`` selected none of these tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.config import CodePlaneConfig
from codeplane.testing.discovery import discover
from tests.builders import ServerHandle, answer_text, envelope, make_repo, mcp_client, running_server
from tests.runner_projects import link_node_modules, require

ROOT_PACKAGE = ('{"private": true, "workspaces": ["packages/*"], "scripts": {"test": "vitest run"}, '
                '"devDependencies": {"vitest": "^3.2.7"}}\n')
ROOT_CONFIG = ('import { defineConfig } from "vitest/config"\n'
               'export default defineConfig({ test: { include: ["packages/*/test/**/*.test.ts"] } })\n')
ADD_TEST = ('import { describe, it, expect } from "vitest"\nimport { add } from "../src/index"\n'
            'describe("add", () => { it("adds", () => expect(add(1, 2)).toBe(3)) })\n')
WORKSPACE: dict[str, str] = {
    ".gitignore": "node_modules\n",
    "package.json": ROOT_PACKAGE,
    "vitest.config.ts": ROOT_CONFIG,
    "packages/a/package.json": '{"name": "@x/a", "version": "1.0.0", "main": "src/index.ts"}\n',
    "packages/a/src/index.ts": "export function add(a: number, b: number): number { return a + b }\n",
    "packages/a/test/add.test.ts": ADD_TEST,
}


def _targets(root: Path, runners: dict[str, str] | None = None) -> dict[str, tuple[str, str, str]]:
    """target id → (runner, cwd, the file operand of its command) under ``tests.runners``."""
    found = discover(root, CodePlaneConfig().tests.model_copy(update={"runners": runners or {}}))
    return {t.target_id: (t.runner, t.cwd, t.selector) for t in found.targets}


def test_a_member_naming_no_runner_yields_the_tests_the_root_vitest_config_includes(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        **WORKSPACE,
        # Not named by the root's include: Vitest at the root never runs it; it stays the member's (default Jest).
        "packages/a/src/extra.test.ts": "test('x', () => expect(1).toBe(1))\n",
        # A member that names its runner keeps its files, even those the root's include names.
        "packages/store/package.json": '{"name": "@x/store", "scripts": {"test": "jest"}}\n',
        "packages/store/test/cart.test.ts": "test('cart', () => expect(1).toBe(1))\n",
    })
    assert _targets(root) == {
        "packages/a/test/add.test.ts": ("vitest", ".", "packages/a/test/add.test.ts"),
        "packages/a/src/extra.test.ts": ("jest", "packages/a", "src/extra.test.ts"),
        "packages/store/test/cart.test.ts": ("jest", "packages/store", "test/cart.test.ts"),
    }


def test_typescript_mapped_to_vitest_runs_a_members_tests_from_the_config_that_includes_them(
        tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", WORKSPACE)
    assert _targets(root, {"typescript": "vitest"}) == {
        "packages/a/test/add.test.ts": ("vitest", ".", "packages/a/test/add.test.ts")}


def test_a_vitest_member_without_a_config_of_its_own_follows_the_config_vitest_loads(tmp_path: Path) -> None:
    # ``vitest run`` in packages/v loads the root's config (Vitest looks upward) and matches its ``include``
    # against paths relative to packages/v: nothing. The root's ``vitest run`` runs test/x.test.ts and never
    # src/y.test.ts, which no command of the repository runs.
    root = make_repo(tmp_path / "repo", {
        **WORKSPACE,
        "packages/v/package.json": '{"name": "@x/v", "scripts": {"test": "vitest run"}}\n',
        "packages/v/test/x.test.ts": "import { test } from 'vitest'\ntest('x', () => {})\n",
        "packages/v/src/y.test.ts": "import { test } from 'vitest'\ntest('y', () => {})\n",
    })
    assert _targets(root) == {
        "packages/a/test/add.test.ts": ("vitest", ".", "packages/a/test/add.test.ts"),
        "packages/v/test/x.test.ts": ("vitest", ".", "packages/v/test/x.test.ts"),
    }


def test_an_unread_root_config_loaded_by_a_member_is_named_once_by_its_own_path(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {
        **WORKSPACE,
        "vitest.config.ts": ('import { defineConfig } from "vitest/config"\nconst dirs = ["packages/*/test"]\n'
                             'export default defineConfig({ test: { include: dirs.map((d) => `${d}/**`) } })\n'),
        "packages/v/package.json": '{"name": "@x/v", "scripts": {"test": "vitest run"}}\n',
        "packages/v/test/x.test.ts": "import { test } from 'vitest'\ntest('x', () => {})\n",
    })
    found = discover(root, CodePlaneConfig().tests)
    assert [(u.project, u.path) for u in found.unread] == [(".", "vitest.config.ts")], found.unread


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerHandle]:
    require("vitest")
    repo = make_repo(tmp_path_factory.mktemp("s56vitest") / "repo", WORKSPACE)
    link_node_modules(repo)
    with running_server(repo) as handle:
        yield handle


async def _call(handle: ServerHandle, tool: str, args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    async with mcp_client(handle) as client:
        res = await client.call_tool(tool, args)
    return envelope(res), answer_text(res)


@pytest.mark.anyio
async def test_the_members_vitest_test_runs_and_passes_as_npm_test_runs_it(server: ServerHandle) -> None:
    _, listed = await _call(server, "discover_test_targets", {})
    assert "vitest" in listed and "jest" not in listed and "cwd packages/a" not in listed, listed
    body, text = await _call(server, "run_test_targets", {"wait_sec": 120})
    record = body["result"]
    assert record["finished"] and "1 passed" in text and "error" not in text, text


@pytest.mark.anyio
async def test_a_changed_root_vitest_config_selects_the_members_tests(server: ServerHandle) -> None:
    _, text = await _call(server, "inspect_affected_tests", {"changed_files": ["vitest.config.ts"]})
    assert "packages/a/test/add.test.ts" in text and " 0 test files" not in text, text


def test_the_root_configs_setup_file_and_alias_select_a_members_tests(tmp_path: Path) -> None:
    """Selection read a member test's ``setupFiles``/``resolve.alias`` from the member's directory (its nearest
    ``package.json``), not from the root config its run loads: a change to either selected nothing."""
    from tests.index_helpers import selected_cases, selecting

    config = ('import { defineConfig } from "vitest/config"\n'
              'export default defineConfig({ resolve: { alias: { "@lib": "./lib" } },\n'
              '  test: { include: ["packages/*/test/**/*.test.ts"], setupFiles: ["./setup.ts"] } })\n')
    files = {**WORKSPACE, "vitest.config.ts": config, "setup.ts": "export const ready = true\n",
             "lib/m.ts": "export const m = 1\n",
             "packages/a/test/lib.test.ts": ('import { it, expect } from "vitest"\nimport { m } from "@lib/m"\n'
                                             'it("m", () => expect(m).toBe(1))\n')}
    repo = make_repo(tmp_path / "repo", files)
    with selecting(repo) as (_, service):
        assert set(selected_cases(service, "setup.ts")) >= {"packages/a/test/add.test.ts",
                                                             "packages/a/test/lib.test.ts"}
        assert "packages/a/test/lib.test.ts" in selected_cases(service, "lib/m.ts")


def test_a_change_of_runner_configs_alone_is_complete_and_with_an_unreached_module_partial(tmp_path: Path) -> None:
    """The selection of a changed ``vitest.config.ts`` (every target it configures) said ``partial`` with no reason:
    the import walk's, since no test imports the config; the runner loads it, so its selection is complete."""
    from tests.index_helpers import selecting

    files = {**WORKSPACE, "packages/a/src/unused.ts": "export const unused = 1\n"}
    repo = make_repo(tmp_path / "repo", files)
    with selecting(repo) as (_, service):
        view = service.discover(affected_by=["vitest.config.ts"])
        assert view.impact is not None and view.impact.confidence == "complete", view.impact
        assert {t.target_id for t in view.targets} == {"packages/a/test/add.test.ts"}
        # A module no test imports beside it: a test may load it by name, so the walk's "partial" stands.
        view = service.discover(affected_by=["vitest.config.ts", "packages/a/src/unused.ts"])
        assert view.impact is not None and view.impact.confidence == "partial", view.impact
