"""Moves (Python and JS/TS import rewriting, git mv) and impact/deletion through the refactor service."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.builders import git
from tests.refactor_builders import refactor_env

PY = {
    "src/pkg/__init__.py": "",
    "src/pkg/util.py": "def helper():\n    return 1\n",
    "src/pkg/sub/__init__.py": "",
    "src/pkg/sub/deep.py": "from ..util import helper\nfrom . import sibling\n\n\ndef go():\n    return helper()\n",
    "src/pkg/sub/sibling.py": "X = 1\n",
    "src/pkg/user.py": ("from .sub.deep import go\nfrom .sub import deep\nimport pkg.sub.deep\n\n"
                        "go()\npkg.sub.deep.go()\n"),
    "tests/test_deep.py": "from pkg.sub.deep import go\n\n\ndef test_go():\n    assert go() == 1\n",
}


def test_move_rewrites_relative_imports_in_both_directions_and_uses_git_mv(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PY) as env:
        preview = env.service.move("src/pkg/sub/deep.py", "src/pkg/deep.py")
        assert preview.operation == "move" and preview.counts["moves"] == 1
        assert preview.counts["low"] == 0, preview.edits
        outcome = env.service.apply(preview.refactor_id)
        assert not (env.root / "src/pkg/sub/deep.py").exists()
        # Inside the moved file: relative imports now start one level higher.
        assert env.read("src/pkg/deep.py").startswith("from .util import helper\nfrom .sub import sibling\n")
        # In importers: relative, from-submodule and absolute forms.
        assert env.read("src/pkg/user.py") == (
            "from .deep import go\nfrom . import deep\nimport pkg.deep\n\ngo()\npkg.deep.go()\n")
        assert env.read("tests/test_deep.py").startswith("from pkg.deep import go\n")
        assert outcome.git_mv
        staged = git(env.root, "diff", "--cached", "--name-status", "-M").stdout
        assert "src/pkg/sub/deep.py" in staged and "src/pkg/deep.py" in staged


def test_move_without_content_edits_is_a_plain_git_mv(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PY) as env:
        preview = env.service.move("src/pkg/sub/sibling.py", "src/pkg/sub/neighbour.py")
        env.service.apply(preview.refactor_id)
        assert env.read("src/pkg/sub/deep.py").startswith(
            "from ..util import helper\nfrom . import neighbour as sibling\n")
        staged = git(env.root, "diff", "--cached", "--name-status", "-M").stdout
        assert "R100\tsrc/pkg/sub/sibling.py\tsrc/pkg/sub/neighbour.py" in staged


def test_move_refuses_existing_destination_and_missing_source(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PY) as env:
        with pytest.raises(CodePlaneError) as exists:
            env.service.move("src/pkg/util.py", "src/pkg/user.py")
        assert exists.value.code == 5005
        with pytest.raises(CodePlaneError) as missing:
            env.service.move("src/pkg/nope.py", "src/pkg/x.py")
        assert missing.value.code == 5004
        with pytest.raises(CodePlaneError) as escape:
            env.service.move("src/pkg/util.py", "../outside.py")
        assert escape.value.code == 5001


JS = {
    "package.json": "{\"name\": \"demo\"}\n",
    "src/lib/format.ts": "import { clamp } from './math';\nexport const fmt = (n: number) => String(clamp(n));\n",
    "src/lib/math.ts": "export function clamp(n: number): number {\n  return Math.max(0, n);\n}\n",
    "src/app.ts": "import { fmt } from './lib/format';\nexport * from './lib/format';\nconsole.log(fmt(2));\n",
    "src/legacy.js": "const f = require('./lib/format');\nmodule.exports = f;\n",
}


def test_js_ts_move_rewrites_relative_specifiers(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", JS) as env:
        preview = env.service.move("src/lib/format.ts", "src/text/format.ts")
        env.service.apply(preview.refactor_id)
        assert env.read("src/text/format.ts").startswith("import { clamp } from '../lib/math';\n")
        assert env.read("src/app.ts") == ("import { fmt } from './text/format';\nexport * from './text/format';\n"
                                          "console.log(fmt(2));\n")
        assert env.read("src/legacy.js").startswith("const f = require('./text/format');\n")


def test_impact_lists_references_and_deletion_goes_through_preview_apply(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/core.py": ("import functools\n\n\n@functools.cache\ndef unused():\n    return 1\n\n\n"
                        "def used():\n    return 2\n"),
        "pkg/app.py": "from pkg.core import used\n\nused()\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        used = env.service.impact("pkg.core.used")
        assert used.references_total == 2 and not used.safe_to_delete
        assert used.importing_files == ["pkg/app.py"]
        assert used.affected_tests == [] and used.affected_tests_note
        unused = env.service.impact("pkg.core.unused")
        assert unused.references_total == 0 and unused.safe_to_delete and unused.delete_refactor_id
        env.service.apply(unused.delete_refactor_id)
        assert env.read("pkg/core.py") == "import functools\n\n\ndef used():\n    return 2\n"
        file_report = env.service.impact("pkg/app.py")
        assert file_report.target_kind == "file" and file_report.safe_to_delete
        core = env.service.impact("pkg/core.py")
        assert core.importing_files == ["pkg/app.py"] and not core.safe_to_delete
        assert core.delete_refactor_id
        deleted = env.service.apply(core.delete_refactor_id)
        assert not (env.root / "pkg/core.py").exists()
        # The preview's warning holds for what was written: the apply says it again (it answered only "applied").
        assert any("import pkg/core.py; deleting it breaks them" in w for w in deleted.warnings), deleted.warnings


def test_directory_move_rewrites_every_import_into_it(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PY) as env:
        preview = env.service.move("src/pkg/sub", "src/pkg/inner")
        assert preview.counts["moves"] == 3 and preview.counts["high"] == 5
        env.service.apply(preview.refactor_id)
        assert env.read("src/pkg/user.py") == ("from .inner.deep import go\nfrom .inner import deep\n"
                                               "import pkg.inner.deep\n\ngo()\npkg.inner.deep.go()\n")
        assert env.read("src/pkg/inner/deep.py").startswith("from ..util import helper\nfrom . import sibling\n")
        assert env.read("tests/test_deep.py").startswith("from pkg.inner.deep import go\n")
        assert not (env.root / "src/pkg/sub").exists()
