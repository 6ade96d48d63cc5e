"""attrs strips a field's leading underscores for ``__init__``: ``_balance = attr.ib()`` is ``Account(balance=5)``.
Renaming the field kept those keywords (they were not even proposed, "3/3 occurrences") and every construction
raised TypeError; an ``alias=`` fixes the keyword, which a rename then keeps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.refactor_builders import refactor_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/recs.py": ("import attr\n\n\n@attr.s\nclass Account:\n    _balance = attr.ib(default=0)\n"
                    "    _owner = attr.ib(default='', alias='holder')\n    limit = attr.ib(default=9)\n\n"
                    "    def deposit(self, amount):\n        self._balance += amount\n"
                    "        return self._balance\n\n\n"
                    "def make():\n    return Account(balance=5, holder='me', limit=3)\n"),
    "use.py": ("from pkg.recs import Account, make\n\n"
               "print(make().deposit(1), Account(balance=2).deposit(1), Account(limit=1).limit)\n"),
}
OUTPUT = "6 3 1\n"


def _run(root: Path) -> str:
    proc = subprocess.run([sys.executable, "use.py"], cwd=root, capture_output=True, text=True, check=False,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_private_attrs_field_renames_its_underscore_free_constructor_keyword(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        assert _run(env.root) == OUTPUT
        preview = env.service.rename("pkg.recs.Account._balance", "_funds")
        keywords = {(e.path, e.line, e.old_text, e.new_text, e.certainty) for e in preview.edits
                    if e.reason == "field_keyword"}
        assert keywords == {("pkg/recs.py", 16, "balance", "funds", "medium"),
                            ("use.py", 3, "balance", "funds", "medium")}
        env.service.apply(preview.refactor_id)
        assert "Account(funds=5, holder='me'" in env.read("pkg/recs.py")
        assert _run(env.root) == OUTPUT


def test_a_public_attrs_field_made_private_keeps_an_underscore_free_keyword(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("pkg.recs.Account.limit", "_cap")
        assert {(e.old_text, e.new_text) for e in preview.edits if e.reason == "field_keyword"} == {("limit", "cap")}
        env.service.apply(preview.refactor_id)
        assert "Account(cap=1)._cap" in env.read("use.py")
        assert _run(env.root) == OUTPUT


def test_an_aliased_attrs_field_keeps_its_keyword(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", FILES) as env:
        preview = env.service.rename("pkg.recs.Account._owner", "_holder_name")
        assert not [e for e in preview.edits if e.reason == "field_keyword"]
        env.service.apply(preview.refactor_id)
        assert _run(env.root) == OUTPUT
