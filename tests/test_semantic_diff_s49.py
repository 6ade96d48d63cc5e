"""``semantic_diff`` read as a reviewer reads it (QA33): a preview that was cut says so, a signature change shows
its changed lines, and callers the same diff already changed are to be checked, not updated again."""

from __future__ import annotations

from pathlib import Path

from codeplane.analysis import SemanticDiffService
from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.server.tools.analysis import build_result, render
from tests.builders import make_repo

BODY = "".join(f"    v{i} = {i}\n" for i in range(12))
FILES: dict[str, str] = {
    ".gitignore": ".codeplane/\n",
    "pkg/__init__.py": "",
    "pkg/text.py": "def term_len(x):\n    return len(x)\n\n\ndef table():\n" + BODY + "    return v0\n",
    "pkg/use.py": "from .text import term_len\n\n\ndef width(s):\n    return term_len(s)\n",
    "pkg/other.py": "from .text import term_len\n\n\ndef pad(s):\n    return ' ' * term_len(s)\n",
}


def _text(root: Path) -> tuple[str, str]:
    index = IndexService(root, RepoLayout(root), IndexConfig(watch=False))
    index.register_indexer(StructuralIndexer())
    index.start()
    try:
        assert index.wait_ready(60), index.status()
        page = SemanticDiffService(root, index).diff(limit=100)
        return render(build_result(page)), page.agentic_hint
    finally:
        index.stop()


def test_a_cut_preview_says_how_much_is_not_shown(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {**FILES})
    # Three separate one-line changes: six preview lines, the third change last (QA33 saw only the first two).
    body = BODY.replace("v1 = 1", "v1 = 10").replace("v5 = 5", "v5 = 50").replace("v9 = 9", "v9 = 90")
    (root / "pkg/text.py").write_text(FILES["pkg/text.py"].replace(BODY, body))
    text, _ = _text(root)
    assert "| +    v9 = 90" in text, text
    body = "".join(line.replace(" = ", " = 1") for line in BODY.splitlines(keepends=True))
    (root / "pkg/text.py").write_text(FILES["pkg/text.py"].replace(BODY, body))
    text, _ = _text(root)
    preview = [line for line in text.splitlines() if line.lstrip().startswith("|")]
    assert len(preview) == 6 and preview[-1].endswith("… 19 more changed lines"), text


def test_a_signature_change_shows_its_lines_and_callers_changed_with_it_are_checked(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {**FILES})
    (root / "pkg/text.py").write_text(
        FILES["pkg/text.py"].replace(
            "def term_len(x):\n    return len(x)", "def term_len(x, ansi):\n    return len(x) if ansi else 0"))
    (root / "pkg/use.py").write_text(FILES["pkg/use.py"].replace("term_len(s)", "term_len(s, True)"))
    text, hint = _text(root)
    assert "| +    return len(x) if ansi else 0" in text, text
    # pkg/other.py is not in the diff: its caller still needs updating.
    assert "update the callers of 1 changed signature/name: term_len" in hint, hint
    (root / "pkg/other.py").write_text(FILES["pkg/other.py"].replace("term_len(s)", "term_len(s, True)"))
    _, hint = _text(root)
    assert "update the callers" not in hint, hint
    assert "check the callers of 1 changed signature/name, every one in a file this diff also changes: term_len" \
        in hint, hint
