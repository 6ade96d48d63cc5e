"""QA17 and QA16 (8, 9): a package move refused as divergent, a symbol move's import splitting a statement from its
``# noqa``, the old stub left declaring a moved name, and the exactness and bounds of impact and preview answers.
Plans are applied and the code is imported and run, as the reports did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.refactor.assemble import Draft, build_option, merge_agreeing
from codeplane.refactor.models import ImpactRef, ImpactReport
from codeplane.refactor.preview import PREVIEW_WARNINGS, bounded_warnings
from codeplane.refactor.spans import SourceText, SpanEdit
from codeplane.server.tools.refactor_columns import one_based
from codeplane.server.tools.refactor_render import render_impact, render_preview
from tests.refactor_builders import RefactorEnv, refactor_env


def _run(env: RefactorEnv, *args: str) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=env.root, capture_output=True, text=True, check=False,
                          timeout=60, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# -- F1: a package move with ``from pkg.utils import timezone`` ------------------------------------------------
PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/utils/__init__.py": "from . import timezone\n\nx = 1\n",
    "pkg/utils/timezone.py": "def now():\n    return 'now'\n",
    "pkg/utils/text.py": "from pkg.utils import timezone\n\n\ndef say():\n    return 'said ' + timezone.now()\n",
    "pkg/app.py": ("from pkg.utils import timezone\nfrom pkg.utils import timezone as tz, x\nfrom .utils import text\n"
                   "from pkg import utils\nimport pkg.utils.timezone\n\n"
                   "print(timezone.now(), tz.now(), x, text.say(), utils.x, pkg.utils.timezone.now())\n"),
}
PACKAGE_OUT = "now now 1 said now 1 now\n"
PATCHED = {**PACKAGE, "pkg/patching.py": "TARGET = 'pkg.utils.timezone.now'  # or pkg.utils.x\n"}


def test_moving_a_package_keeps_imports_of_its_submodules_with_one_exact_edit_each(tmp_path: Path) -> None:
    # ``from pkg.utils import timezone`` got a whole-statement edit and a module-mention edit over one span: 4001.
    with refactor_env(tmp_path / "repo", PACKAGE) as env:
        assert _run(env, "-m", "pkg.app") == PACKAGE_OUT
        preview = env.service.move("pkg/utils", "pkg/utilsx")
        edits = sorted((e.path, e.line, e.column, e.old_text, e.new_text, e.certainty) for e in preview.edits)
        assert ("pkg/app.py", 1, 5, "pkg.utils", "pkg.utilsx", "high") in edits
        assert ("pkg/app.py", 2, 5, "pkg.utils", "pkg.utilsx", "high") in edits
        assert ("pkg/utils/text.py", 1, 5, "pkg.utils", "pkg.utilsx", "high") in edits
        assert {e.certainty for e in preview.edits} == {"high"}, edits
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/app.py").startswith(
            "from pkg.utilsx import timezone\nfrom pkg.utilsx import timezone as tz, x\nfrom .utilsx import text\n"
            "from pkg import utilsx as utils\nimport pkg.utilsx.timezone\n")
        assert _run(env, "-m", "pkg.app") == PACKAGE_OUT.replace("pkg.utils", "pkg.utilsx")


def _edit(line: int, column: int, old: str, new: str, reason: str) -> SpanEdit:
    return SpanEdit("m.py", line, column, line, column + len(old), old, new, reason)


def test_overlapping_edits_that_write_the_same_text_merge_at_the_higher_certainty() -> None:
    whole = _edit(1, 0, "from pkg.utils import timezone", "from pkg.utilsx import timezone", "import")
    part = _edit(1, 5, "pkg.utils", "pkg.utilsx", "module_reference")
    assert merge_agreeing([(part, "low"), (whole, "high")]) == [(whole, "high")]
    # The more certain inner edit lends its certainty and reason; the span stays the outer one.
    merged = merge_agreeing([(part, "high"), (whole, "low")])
    assert [(e.column, e.end_column, e.reason, c) for e, c in merged] == [(0, 30, "module_reference", "high")]
    assert merge_agreeing([(part, "low"), (part, "medium")]) == [(part, "medium")]
    # Across lines: the inner edit's position is found inside the outer text.
    block = SpanEdit("m.py", 1, 4, 2, 14, "(a,\n    pkg.utils)", "(a,\n    pkg.utilsx)", "import")
    assert merge_agreeing([(block, "high"), (_edit(2, 4, "pkg.utils", "pkg.utilsx", "x"), "low")]) == [
        (block, "high")]
    # Edits that disagree are both kept, and the plan is refused (§8.6).
    other = _edit(1, 5, "pkg.utils", "pkg.other", "module_reference")
    assert len(merge_agreeing([(whole, "high"), (other, "low")])) == 2
    draft = Draft(code=[(whole, "high"), (other, "low")])
    sources = {"m.py": SourceText("m.py", "from pkg.utils import timezone\n")}
    with pytest.raises(CodePlaneError) as refused:
        build_option("c1", draft, sources, {"m.py": "0"})
    assert refused.value.code == 4001
    option = build_option("c1", Draft(code=[(whole, "high"), (part, "low")]), sources, {"m.py": "0"})
    assert [(e.column, e.certainty) for e in option.edits] == [(0, "high")]


# -- QA16 #8 and #9: a symbol moved out of a star-imported module with a stub ------------------------------------
CONVERTERS = {
    "pkg/__init__.py": "",
    "pkg/converters.py": ("from typing import Any\n\n__all__ = ['default_if_none', 'to_bool']\n\n\n"
                          "def default_if_none(default: Any) -> Any:\n"
                          "    return lambda v: default if v is None else v\n\n\n"
                          "def to_bool(v: Any) -> bool:\n    return bool(v)\n"),
    "pkg/converters.pyi": ("from typing import Any, Callable, TypeVar, overload\n\n_T = TypeVar('_T')\n\n"
                           "__all__ = ['default_if_none', 'to_bool']\n\n"
                           "@overload\ndef default_if_none(default: _T) -> Callable[[Any], _T]: ...\n"
                           "@overload\ndef default_if_none(*, factory: Callable[[], _T]) -> Callable[[Any], _T]: ...\n"
                           "def to_bool(val: Any) -> bool: ...\n"),
    "pkg/defaults.py": '"""Defaults."""\n\nNONE = None\n',
    "pkg/defaults.pyi": "NONE: None\n",
    "pkg2/__init__.py": "",
    "pkg2/converters.py": ("from pkg.converters import *  # noqa: F403\n\n"
                           "print(default_if_none(3)(None), to_bool(1))  # noqa: F405\n"),
}


def test_a_new_import_after_a_star_import_leaves_its_noqa_comment_on_the_star_import(tmp_path: Path) -> None:
    # The insertion landed before the star import's noqa comment, which then closed the new line: ruff flagged F403.
    with refactor_env(tmp_path / "repo", CONVERTERS) as env:
        assert _run(env, "-m", "pkg2.converters") == "3 True\n"
        preview = env.service.move_symbol("pkg.converters.default_if_none", "pkg/defaults.py")
        env.service.apply(preview.refactor_id)
        assert env.read("pkg2/converters.py").startswith(
            "from pkg.converters import *  # noqa: F403\nfrom pkg.defaults import default_if_none\n\n")
        assert _run(env, "-m", "pkg2.converters") == "3 True\n"
        ruff = subprocess.run([str(Path(sys.executable).parent / "ruff"), "check", "--isolated", "--select", "F",
                               "pkg2/converters.py"], cwd=env.root, capture_output=True, text=True, check=False)
        assert ruff.returncode == 0, ruff.stdout


def test_a_moved_symbols_stub_declarations_move_to_the_destination_stub(tmp_path: Path) -> None:
    # ``converters.pyi`` kept declaring both overloads: type checkers saw a name the module no longer had.
    with refactor_env(tmp_path / "repo", CONVERTERS) as env:
        preview = env.service.move_symbol("pkg.converters.default_if_none", "pkg/defaults.py")
        assert {(e.path, e.reason) for e in preview.edits if e.path.endswith(".pyi")} >= {
            ("pkg/converters.pyi", "stub"), ("pkg/converters.pyi", "all_entry"), ("pkg/defaults.pyi", "stub")}
        assert any("_T" in w and "pkg/defaults.pyi" in w for w in preview.warnings), preview.warnings
        env.service.apply(preview.refactor_id)
        old = env.read("pkg/converters.pyi")
        assert "default_if_none" not in old and "def to_bool(val: Any) -> bool: ...\n" in old
        assert env.read("pkg/defaults.pyi") == (
            "from typing import Any, Callable, overload\n\n\nNONE: None\n\n"
            "@overload\ndef default_if_none(default: _T) -> Callable[[Any], _T]: ...\n"
            "@overload\ndef default_if_none(*, factory: Callable[[], _T]) -> Callable[[Any], _T]: ...\n")


def test_without_a_destination_stub_the_old_declaration_goes_and_the_preview_says_so(tmp_path: Path) -> None:
    files = {**CONVERTERS}
    del files["pkg/defaults.pyi"]
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("pkg.converters.default_if_none", "pkg/fresh.py")
        assert any("pkg/fresh.pyi does not exist" in w for w in preview.warnings), preview.warnings
        env.service.apply(preview.refactor_id)
        assert "default_if_none" not in env.read("pkg/converters.pyi")
        assert not (env.root / "pkg/fresh.pyi").exists()
        assert _run(env, "-m", "pkg2.converters") == "3 True\n"


# -- F7: refactor_impact's text ------------------------------------------------------------------------------------
IMPACT = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def f(x):\n    return x\n",
    "pkg/use.py": "from pkg.core import f\n\nprint(f(1) + f(2))\nprint(f(3))\n",
    "notes.txt": "f is mentioned here\n",
    "docs.md": "call f twice, f\n",
}


def test_impact_names_both_columns_of_a_line_with_two_references_and_counts_files_as_files(tmp_path: Path) -> None:
    # ``numpy.ndarray`` showed line 1044 twice with no column, and "360 more lexical mentions" counted files.
    with refactor_env(tmp_path / "repo", IMPACT) as env:
        report = one_based(env.service.impact("pkg.core.f"))
    text = render_impact(report)
    line = IMPACT["pkg/use.py"].split("\n")[2]
    first, second = line.index("f(") + 1, line.rindex("f(") + 1
    assert f"3:{first},{second}:print(f(1) + f(2))" in text.splitlines(), text
    assert "4:print(f(3))" in text.splitlines() and text.count("print(f(1) + f(2))") == 1
    assert report.lexical_mentions == 2 and "2 more files spelling the name" in text and "lexical mentions" not in text


def test_impact_gives_each_column_its_own_tag_when_a_lines_references_differ() -> None:
    refs = [ImpactRef(path="a.py", line=3, column=1, tier="proven", certainty="high", snippet="x(y.x)"),
            ImpactRef(path="a.py", line=3, column=5, tier="unresolved_receiver", certainty="low", snippet="x(y.x)"),
            ImpactRef(path="a.py", line=4, column=1, tier="proven", certainty="high", snippet="x()")]
    report = ImpactReport(target_kind="symbol", references=refs, references_total=3, by_tier={}, importing_files=[],
                          affected_tests=[], lexical_mentions=1)
    lines = render_impact(report).splitlines()
    assert "3:1,5[unresolved_receiver low]:x(y.x)" in lines and "4:x()" in lines, lines
    assert "1 more file spelling the name" in lines[0]


# -- F6: a preview's structured lists are bounded, with totals ------------------------------------------------------
def test_a_preview_lists_a_bounded_number_of_files_with_their_total(tmp_path: Path) -> None:
    # Renaming Django's ``Model`` answered 87 KB of structured content: all 665 affected files.
    users = {f"pkg/use_{n:03}.py": "from pkg.core import target\n\nVALUE = target()\n" for n in range(160)}
    with refactor_env(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/core.py": "def target():\n    return 1\n",
                                          **users}) as env:
        preview = env.service.rename("pkg.core.target", "aim")
        assert preview.affected_files_total == 161 and len(preview.affected_files) == 100
        assert len(preview.model_dump_json()) < 40_000
        text = render_preview(one_based(preview))
        assert " 321 edits in 161 files [" in text and len(text) < 16_000
        # The plan keeps every edit: inspect pages them all, and so every file.
        files: set[str] = set()
        cursor = None
        while True:
            page = env.service.inspect(preview.refactor_id, certainties=["high", "medium", "low"], kinds=["code"],
                                       cursor=cursor, limit=200, context_lines=0)
            files |= {item.edit.path for item in page.items}
            cursor = page.next_cursor
            if cursor is None:
                break
        assert len(files) == 161
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/use_159.py") == "from pkg.core import aim\n\nVALUE = aim()\n"


def test_warnings_past_the_bound_are_counted() -> None:
    shown = bounded_warnings([f"w{n}" for n in range(PREVIEW_WARNINGS + 7)])
    assert len(shown) == PREVIEW_WARNINGS + 1 and shown[-1] == "… 7 more warnings"
    assert bounded_warnings(["a", "b"]) == ["a", "b"]


def test_a_package_moves_dotted_mentions_are_one_edit_each_for_the_longest_module(tmp_path: Path) -> None:
    # One pattern per moved module also matched ``pkg.utils`` inside ``pkg.utils.timezone`` (one was dropped). A
    # string that is exactly a dotted path into the module is ``medium`` (s51: as in a rename or a symbol move).
    with refactor_env(tmp_path / "repo", PATCHED) as env:
        preview = env.service.move("pkg/utils", "pkg/utilsx")
        mentions = sorted((e.column, e.old_text, e.new_text, e.certainty, e.reason) for e in preview.edits
                          if e.path == "pkg/patching.py")
        line = PATCHED["pkg/patching.py"]
        assert mentions == [(line.index("pkg."), "pkg.utils.timezone", "pkg.utilsx.timezone", "medium",
                             "dotted_path_string"),
                            (line.rindex("pkg."), "pkg.utils", "pkg.utilsx", "low", "comment")], mentions


def test_a_kept_reexport_is_declared_in_the_old_stub_as_an_explicit_reexport(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", CONVERTERS) as env:
        preview = env.service.move_symbol("pkg.converters.default_if_none", "pkg/defaults.py", keep_reexport=True)
        env.service.apply(preview.refactor_id)
        old = env.read("pkg/converters.pyi")
        assert "from pkg.defaults import default_if_none as default_if_none\n" in old
        assert "def default_if_none" not in old and "'default_if_none'" in old  # ``__all__`` keeps it
        assert "def default_if_none" in env.read("pkg/defaults.pyi")
        assert _run(env, "-m", "pkg2.converters") == "3 True\n"


def test_an_impact_cursor_belongs_to_its_target_and_its_answer(tmp_path: Path) -> None:
    # The cursor was a bare offset ("3"): after a write between pages, paging gave duplicates and never showed the
    # new references; Widget's cursor paged Gadget; "999" answered an empty page.
    users = {f"{name}.py": "from pkg.core import Widget, Gadget\n\nw1 = Widget()\nw2 = Widget()\ng = Gadget()\n"
             for name in "bcde"}
    files = {"pkg/__init__.py": "", "pkg/core.py": "class Widget:\n    pass\n\n\nclass Gadget:\n    pass\n", **users}
    with refactor_env(tmp_path / "repo", files) as env:
        seen = []
        report = env.service.impact("pkg.core.Widget", limit=3)
        first_cursor = report.next_cursor
        while True:
            seen += [(r.path, r.line, r.column) for r in report.references]
            if report.next_cursor is None:
                break
            report = env.service.impact("pkg.core.Widget", limit=3, cursor=report.next_cursor)
        assert len(seen) == len(set(seen)) == 12
        assert first_cursor is not None
        for target, cursor in (("pkg.core.Gadget", first_cursor), ("pkg.core.Widget", "999"),
                               ("pkg.core.Widget", "3")):
            with pytest.raises(CodePlaneError) as refused:
                env.service.impact(target, limit=3, cursor=cursor)
            assert refused.value.code == 1005, (target, cursor)
        (tmp_path / "repo" / "a.py").write_text("from pkg.core import Widget\n\nw = Widget()\n")
        env.index.refresh_paths(["a.py"])
        with pytest.raises(CodePlaneError) as stale:
            env.service.impact("pkg.core.Widget", limit=3, cursor=first_cursor)
        assert stale.value.code == 1005
