"""QA59 F3: the documentation sweep took every file without a grammar for documentation. Renaming a ``log`` method
proposed ``*.log`` -> ``*.write`` in ``.gitignore`` and ``.cplignore`` as a ``medium`` doc edit, and ``apply_docs``
wrote it: log files were no longer ignored. Only ``refactor.doc_sweep.scan_extensions`` are documentation; another
file without code structure gets ``low`` candidates nothing applies unless included, and a glob's extension is no
mention at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from mcp.types import CallToolResult

from codeplane.core.config import CodePlaneConfig, DocSweepConfig, RefactorConfig
from tests.builders import answer_text, envelope, make_repo, mcp_client, running_server
from tests.refactor_builders import refactor_env

GITIGNORE = "node_modules/\n*.log\nlogs/**/*.log\n"
LOGGER = {
    "src/logger.ts": ("export class Logger {\n  lines: string[] = []\n  log(message: string): void {\n"
                      "    this.lines.push(message)\n  }\n}\n"),
    "src/main.ts": ('import { Logger } from "./logger"\n\nexport function run(): string[] {\n'
                    '  const logger = new Logger()\n  logger.log("started")\n  return logger.lines\n}\n'),
    ".gitignore": GITIGNORE,
    "settings.json": '{ "output": "log", "files": ["**/*.log"] }\n',
    "deploy.yaml": "steps:\n  - log\n",
    "README.md": "Call `Logger.log` to record a line.\nAdd `*.log` to your ignore file.\n",
}


def test_only_documentation_extensions_are_swept_as_documentation(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", LOGGER) as env:
        preview = env.service.rename("Logger.log", "write")
        page = env.service.inspect(preview.refactor_id, certainties=["high", "medium", "low"], kinds=["code", "doc"],
                                   context_lines=0, limit=200)
    found = {(i.edit.path, i.edit.line, i.edit.column, i.edit.kind, i.edit.certainty, i.edit.reason)
             for i in page.items if i.edit.path not in ("src/logger.ts", "src/main.ts")}
    assert found == {
        # Configuration mentions are listed, low, as code candidates no ``apply_docs`` takes.
        ("settings.json", 1, 13, "code", "low", "unindexed"),
        ("deploy.yaml", 2, 4, "code", "low", "unindexed"),
        # README.md is documentation: the inline code names the method; a glob in it is low.
        ("README.md", 1, 13, "doc", "high", "doc_file"),
        ("README.md", 2, 7, "doc", "low", "doc_file"),
    }, found
    assert preview.doc_edits.count == 2 and preview.doc_edits.applies == 1, preview.doc_edits
    coverage = preview.coverage
    assert coverage is not None
    # ``*.log`` (twice in .gitignore, once in settings.json) is no occurrence of the name.
    assert (coverage.lexical_occurrences, coverage.in_plan, coverage.low_candidates) == (6, 2, 2), coverage
    assert coverage.by_reason == {"doc_file": 2, "unindexed": 2}, coverage


def test_apply_docs_leaves_ignore_and_config_files_even_at_min_confidence_low(tmp_path: Path) -> None:
    # ``min_confidence: low`` makes apply_docs take every doc edit: a configuration file must not be one.
    config = CodePlaneConfig(refactor=RefactorConfig(doc_sweep=DocSweepConfig(min_confidence="low")))
    with refactor_env(tmp_path / "repo", LOGGER, config) as env:
        preview = env.service.rename("Logger.log", "write")
        outcome = env.service.apply(preview.refactor_id, apply_docs=True)
        assert outcome.applied_doc_edits == 2, outcome
        assert env.read(".gitignore") == GITIGNORE
        assert env.read("settings.json") == LOGGER["settings.json"]
        assert env.read("deploy.yaml") == LOGGER["deploy.yaml"]
        assert env.read("README.md") == "Call `Logger.write` to record a line.\nAdd `*.write` to your ignore file.\n"


def test_a_configured_extension_is_documentation(tmp_path: Path) -> None:
    config = CodePlaneConfig(refactor=RefactorConfig(doc_sweep=DocSweepConfig(scan_extensions=(".md", ".yaml"))))
    with refactor_env(tmp_path / "repo", LOGGER, config) as env:
        preview = env.service.rename("Logger.log", "write")
        page = env.service.inspect(preview.refactor_id, certainties=["high", "medium", "low"], kinds=["doc"],
                                   context_lines=0, limit=200)
    assert {(i.edit.path, i.edit.line) for i in page.items} == {("README.md", 1), ("README.md", 2),
                                                               ("deploy.yaml", 2)}


@pytest.mark.anyio
async def test_apply_docs_through_mcp_keeps_gitignore_and_cplignore(tmp_path: Path) -> None:
    # The QA repro: ``.cplignore`` and ``.gitignore`` both said ``*.log``; apply_docs rewrote both to ``*.write``.
    files = {k: v for k, v in LOGGER.items() if k in ("src/logger.ts", "src/main.ts", ".gitignore")}
    files[".cplignore"] = ".git/\nnode_modules/\n*.log\n"
    root = make_repo(tmp_path / "repo", files)
    with running_server(root) as server:
        async with mcp_client(server) as client:
            res: CallToolResult = await client.call_tool("refactor_rename", {"symbol": "Logger.log",
                                                                             "new_name": "write"})
            assert not res.is_error, answer_text(res)
            rid = envelope(res)["result"]["refactor_id"]
            assert "doc edits" not in answer_text(res), answer_text(res)
            res = await client.call_tool("refactor_apply", {"refactor_id": rid, "apply_docs": True})
            assert not res.is_error, answer_text(res)
    assert (root / ".gitignore").read_text() == GITIGNORE
    assert (root / ".cplignore").read_text() == files[".cplignore"]
    (root / "debug.log").write_text("x\n")
    status = subprocess.run(["git", "status", "--porcelain", "--", "debug.log"], cwd=root, capture_output=True,
                            text=True, check=True).stdout
    assert status == "", status
