"""QA59 F7: ``semantic_diff`` between older commits counted the references of definitions whose file is gone from
the work tree as none: "5 breaking changes with no reference in the repository: addMoney, formatMoney, ..." while
``formatMoney`` had 2 callers in the file it had moved to. The index describes the work tree, so such a definition
is now looked up where the index holds it (the one definition of its kind and lexical path in another file) and
counted there, said so; when it is nowhere, its references are unknown, never "no reference"."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.builders import ServerHandle, answer_text, envelope, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

FORMAT = "export function formatMoney(m: number{extra}): string {{\n  return String(m)\n}}\n"
LEGACY = "export function legacy(x: number{extra}): number {{\n  return x\n}}\n"
NAMES = "export function {name}(x: {t}): string {{\n  return String(x)\n}}\n"
USE = ('import {{ formatMoney }} from "{src}"\nimport {{ {name} }} from "./names"\n{legacy_import}\n'
       "export function show(): string {{\n  return formatMoney(1{arg}) + {name}(2){legacy_call}\n}}\n"
       "export function again(): string {{\n  return formatMoney(3{arg})\n}}\n")


def _use(src: str = "./math", name: str = "oldName", arg: str = "", legacy: bool = True) -> str:
    return USE.format(src=src, name=name, arg=arg,
                      legacy_import='import { legacy } from "./legacy"\n' if legacy else "",
                      legacy_call=" + legacy(4)" if legacy else "")


def _commit(root: Any, message: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerHandle, str, str]]:
    """first -> second changes three signatures; HEAD then moved ``math.ts``, deleted ``legacy.ts`` and renamed
    ``oldName`` (its file stays)."""
    root = make_repo(tmp_path_factory.mktemp("qa59_f7") / "repo", {
        ".gitignore": ".codeplane/\n", "src/math.ts": FORMAT.format(extra=""), "src/legacy.ts": LEGACY.format(extra=""),
        "src/names.ts": NAMES.format(name="oldName", t="number"), "src/use.ts": _use()})
    first = git(root, "rev-parse", "HEAD").stdout.strip()
    (root / "src/math.ts").write_text(FORMAT.format(extra=", cur: string"))
    (root / "src/legacy.ts").write_text(LEGACY.format(extra=", y: number"))
    (root / "src/names.ts").write_text(NAMES.format(name="oldName", t="string"))
    (root / "src/use.ts").write_text(_use(arg=', "EUR"'))
    second = _commit(root, "signatures")
    git(root, "mv", "src/math.ts", "src/format.ts")
    (root / "src/legacy.ts").unlink()
    (root / "src/names.ts").write_text(NAMES.format(name="newName", t="string"))
    (root / "src/use.ts").write_text(_use(src="./format", name="newName", arg=', "EUR"', legacy=False))
    _commit(root, "move, delete, rename")
    with running_server(root) as handle:
        yield handle, first, second


def _by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["qualified_name"]: c for c in result["structural_changes"]}


async def test_a_definition_whose_file_moved_since_is_counted_where_it_is_now(
        server: tuple[ServerHandle, str, str]) -> None:
    handle, first, second = server
    async with mcp_client(handle) as client:
        res = await client.call_tool("semantic_diff", {"base": first, "target": second})
    result = envelope(res)["result"]
    impact = _by_name(result)["formatMoney"]["impact"]
    assert impact["reference_basis"] == "ref_facts_resolved", result
    assert impact["ref_tiers"].get("proven", 0) + impact["ref_tiers"].get("strong", 0) == 2, result
    assert impact["referencing_files"] == ["src/use.ts"], result
    assert _by_name(result)["formatMoney"]["behavior_change_risk"] == "high", result
    hint = result["agentic_hint"]
    # Its callers are counted (in src/use.ts, which this diff also changes), not "no reference in the repository".
    assert ("1. check the callers of 1 changed signature/name, every one in a file this diff also changes: "
            "formatMoney (0 proven, 2 strong; counted in src/format.ts, where it is now)") in hint, hint


async def test_a_definition_gone_from_the_index_has_unknown_references_not_none(
        server: tuple[ServerHandle, str, str]) -> None:
    handle, first, second = server
    async with mcp_client(handle) as client:
        res = await client.call_tool("semantic_diff", {"base": first, "target": second})
    result = envelope(res)["result"]
    changes = _by_name(result)
    for name in ("legacy", "oldName"):
        assert changes[name]["impact"]["reference_basis"] == "unknown", result
        assert changes[name]["structural_severity"] == "breaking", result
    hint = result["agentic_hint"]
    assert "no reference in the repository" not in hint, hint
    assert ("references unknown for 1 breaking change (the definition's file is not in the index: moved or removed "
            "since; search their names before relying on them): legacy") in hint, hint
    assert ("references unknown for 1 breaking change (the index holds no such definition in its file: renamed or "
            "removed since; search their names before relying on them): oldName") in hint, hint
    assert "refs: not in index" not in answer_text(res), answer_text(res)
