"""``semantic_diff`` against git (QA27): callers of a renamed or moved definition's old name, repeated
definitions of one name, a mode-only change, and TOML tables."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeplane.analysis import SemanticDiffService
from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.server.tools.analysis import build_result, render
from tests.builders import answer_text, git, make_repo, mcp_client, running_server

SMALL: dict[str, str | bytes] = {
    ".gitignore": ".codeplane/\n",
    "pkg/__init__.py": "",
    "pkg/a.py": "def old_name(x):\n    return x + 1\n\n\ndef _helper(y):\n    return y * 2\n",
    "pkg/b.py": "from .a import old_name, _helper\n\n\ndef use():\n    return old_name(1) + _helper(2)\n",
}


def _index(root: Path) -> IndexService:
    service = IndexService(root, RepoLayout(root), IndexConfig(watch=False))
    service.register_indexer(StructuralIndexer())
    service.start()
    assert service.wait_ready(60), service.status()
    return service


def _diff(root: Path, **kwargs: object) -> object:
    index = _index(root)
    try:
        return SemanticDiffService(root, index).diff(limit=100, **kwargs)  # type: ignore[arg-type]
    finally:
        index.stop()


def test_a_rename_counts_the_callers_and_importers_of_the_old_name(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", SMALL)
    (root / "pkg/a.py").write_text("def new_name(x):\n    return x + 1\n\n\ndef _helper2(y):\n    return y * 2\n")
    page = _diff(root)
    got = {c.qualified_name: c for c in page.changes}  # type: ignore[attr-defined]
    assert set(got) == {"new_name", "_helper2"}, got
    for name in ("new_name", "_helper2"):
        change = got[name]
        assert change.change == "renamed" and change.impact is not None
        assert change.impact.importing_files == ("pkg/b.py",), change.impact
        assert change.impact.proven >= 1 and change.impact.referencing_files == ("pkg/b.py",), change.impact
        assert change.behavior_change_risk == "high", change
    hint = page.agentic_hint  # type: ignore[attr-defined]
    assert "update the callers of 2 changed signature/names" in hint, hint
    assert "new_name (1 proven, 0 strong; imported as old_name by 1 file)" in hint, hint
    assert "no reference in the repository" not in hint, hint


def test_a_move_counts_the_importers_of_the_old_module(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", SMALL)
    (root / "pkg/a.py").write_text("def old_name(x):\n    return x + 1\n")
    (root / "pkg/c.py").write_text("def _helper(y):\n    return y * 2\n")
    page = _diff(root)
    (moved,) = page.changes  # type: ignore[attr-defined]
    assert (moved.qualified_name, moved.change, moved.old_path) == ("_helper", "moved", "pkg/a.py"), moved
    assert moved.impact is not None and moved.impact.importing_files == ("pkg/b.py",), moved.impact
    assert moved.structural_severity == "breaking", moved
    hint = page.agentic_hint  # type: ignore[attr-defined]
    assert "_helper (pkg/a.py -> pkg/c.py; imported from pkg/a.py by pkg/b.py)" in hint, hint
    assert "nothing to act on" not in hint and "outside" not in hint, hint


def test_a_public_move_imported_in_the_repository_is_not_said_to_break_only_outside(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", SMALL)
    (root / "pkg/a.py").write_text("def _helper(y):\n    return y * 2\n")
    (root / "pkg/c.py").write_text("def old_name(x):\n    return x + 1\n")
    page = _diff(root)
    hint = page.agentic_hint  # type: ignore[attr-defined]
    assert "old_name (pkg/a.py -> pkg/c.py; imported from pkg/a.py by pkg/b.py)" in hint, hint
    assert "outside the repository" not in hint, hint


OVERLOADS = ("from typing import overload\n\n\n@overload\ndef conv(x: int) -> int: ...\n@overload\n"
             "def conv(x: str) -> str: ...\ndef conv(x):\n    return x\n")
PROPERTY = ("class C:\n    @property\n    def x(self):\n        return self._x\n\n"
            "    @x.setter\n    def x(self, v):\n        self._x = v\n")


def test_an_added_overload_is_one_addition_not_a_chain_of_signature_changes(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"pkg/o.py": OVERLOADS})
    (root / "pkg/o.py").write_text(OVERLOADS.replace(
        "@overload\ndef conv(x: int)", "@overload\ndef conv(x: bytes) -> bytes: ...\n@overload\ndef conv(x: int)"))
    page = SemanticDiffService(root).diff(limit=100)
    got = [(c.change, c.entity.display_name, c.structural_severity) for c in page.changes]
    assert got == [("added", "def conv(x: bytes) -> bytes", "non_breaking")], got


def test_a_deleted_property_getter_is_a_removal_and_the_setter_is_unchanged(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"pkg/p.py": PROPERTY})
    (root / "pkg/p.py").write_text("class C:\n    @x.setter\n    def x(self, v):\n        self._x = v\n")
    page = SemanticDiffService(root).diff(limit=100)
    got = [(c.change, c.qualified_name, c.entity.display_name) for c in page.changes]
    assert got == [("removed", "C.x", "def x(self)")], got


def test_a_mode_only_change_is_listed_in_the_work_tree_and_between_commits(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"tool.sh": "#!/bin/sh\necho hi\n", "pkg/m.py": "X = 1\n"})
    os.chmod(root / "tool.sh", 0o755)
    git(root, "update-index", "--chmod=+x", "tool.sh")
    git(root, "commit", "-qm", "exec")
    os.chmod(root / "tool.sh", 0o644)
    work = SemanticDiffService(root).diff(limit=100)
    assert [(f.path, f.status, f.reason) for f in work.files] == [("tool.sh", "modified", "mode_changed")], work
    git(root, "commit", "-qam", "no exec")
    commits = SemanticDiffService(root).diff("HEAD~1", "HEAD", limit=100)
    assert [(f.path, f.status, f.reason) for f in commits.files] == [("tool.sh", "modified", "mode_changed")]
    assert SemanticDiffService(root).diff(limit=100).files == ()


def test_a_toml_value_edit_is_a_body_change_of_its_table(tmp_path: Path) -> None:
    text = '[project]\nname = "demo"\nversion = "1.0"\n\n[tool.ruff]\nline-length = 100\n'
    root = make_repo(tmp_path / "r", {"pyproject.toml": text})
    (root / "pyproject.toml").write_text(text.replace('"demo"', '"demo2"').replace("100", "120"))
    page = SemanticDiffService(root).diff(limit=100)
    got = [(c.qualified_name, c.change, c.structural_severity) for c in page.changes]
    assert got == [("project", "body_changed", "non_breaking"), ("tool.ruff", "body_changed", "non_breaking")], got
    assert page.breaking_summary is None
    text = render(build_result(page))
    assert "~ pyproject.toml  table [project]  body_changed [minor_change] risk:low lines:1" in text, text
    assert "table [tool.ruff]  body_changed" in text, text


@pytest.mark.anyio
async def test_the_tool_names_the_importers_of_a_renamed_definition(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", SMALL)
    with running_server(root) as handle:
        (root / "pkg/a.py").write_text("def new_name(x):\n    return x + 1\n\n\ndef _helper(y):\n    return y * 2\n")
        async with mcp_client(handle) as client:
            res = await client.call_tool("semantic_diff", {})
    text = answer_text(res)
    (change,) = res.structured_content["result"]["structural_changes"]
    assert change["impact"]["importing_files"] == ["pkg/b.py"], change
    assert "no reference in the repository" not in text and "update the callers" in text, text
