"""QA51 #3: ``refactor_impact`` asked again (the same call, another page) names the deletion plan it made the first
time; it made a new plan per call (``rf_…19`` then ``rf_…20``; 178 open plans after a few runs)."""

from __future__ import annotations

from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def used():\n    return 2\n\n\ndef other():\n    return 3\n",
    "pkg/app.py": "from pkg.core import used\n\nused()\nused()\n",
    "pkg/more.py": "from pkg.core import used\n\nused()\n",
}


def test_the_same_impact_names_the_same_open_plan_until_it_changes(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        first = env.service.impact("pkg.core.used", limit=1)
        assert first.delete_refactor_id and first.next_cursor
        again = env.service.impact("pkg.core.used", limit=1)
        page_two = env.service.impact("pkg.core.used", limit=1, cursor=first.next_cursor)
        assert again.delete_refactor_id == page_two.delete_refactor_id == first.delete_refactor_id
        assert env.service.plans.open_count() == 1
        other = env.service.impact("pkg.core.other")
        assert other.delete_refactor_id not in (None, first.delete_refactor_id)
        # The definition's file changed: another deletion, a new plan (the old one stays as it was previewed).
        (env.root / "pkg/core.py").write_text("import os\n\n\n" + FILES["pkg/core.py"])
        env.index.refresh_paths(["pkg/core.py"])
        changed = env.service.impact("pkg.core.used", limit=1)
        assert changed.delete_refactor_id not in (None, first.delete_refactor_id)
        # An applied plan is closed, never named again.
        fresh = env.service.impact("pkg.core.other")
        assert fresh.delete_refactor_id not in (None, other.delete_refactor_id)
        open_before = env.service.plans.open_count()
        env.service.apply(fresh.delete_refactor_id)
        assert env.service.plans.open_count() == open_before - 1
        assert env.service.impact("pkg.core.used").delete_refactor_id != fresh.delete_refactor_id
