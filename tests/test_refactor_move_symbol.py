"""Moving a Python symbol between modules (issue 20) through the refactor service on real repositories.

Each move is applied and then *run*: the repository's own tests (a tiny pytest suite per fixture) are
executed in a subprocess, so "importers rewritten" means "the code still imports and works".
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from tests.builders import answer_text, call, call_error, make_repo, mcp_client, running_server
from tests.refactor_builders import RefactorEnv, assert_tsc_passes, refactor_env, run_node

PKG = {
    "src/pkg/__init__.py": '"""The package."""\nfrom .util import helper, LIMIT\n\n__all__ = ["helper", "LIMIT"]\n',
    "src/pkg/util.py": (
        '"""Utilities."""\n'
        "from __future__ import annotations\n\n"
        "import os\n"
        "from typing import TYPE_CHECKING\n\n"
        "from .base import Base\n\n"
        "if TYPE_CHECKING:\n"
        "    from collections.abc import Sequence\n\n"
        '__all__ = ["helper", "LIMIT", "Widget"]\n\n'
        "LIMIT = 10\n\n\n"
        "# Join a name onto the cwd.\n"
        "def helper(name: str, parts: Sequence[str] = ()) -> str:\n"
        "    return os.path.join(os.getcwd(), name, *parts)\n\n\n"
        "class Widget(Base):\n"
        "    size = LIMIT\n\n"
        "    def path(self) -> str:\n"
        "        return helper(self.name)\n"
    ),
    "src/pkg/base.py": "class Base:\n    name = 'w'\n",
    "src/pkg/core/__init__.py": "",
    "src/pkg/core/paths.py": '"""Paths."""\nimport sys\n\n\ndef here() -> str:\n    return sys.prefix\n',
    "src/pkg/core/user.py": (
        "from ..util import helper as join_name, Widget\n"
        "from pkg import util\n"
        "import pkg.util\n"
        "import pkg.util as u\n\n\n"
        "def go() -> tuple[str, str, str, str]:\n"
        "    return join_name('a'), util.helper('b'), pkg.util.helper('c'), u.helper('d')\n"
    ),
    "tests/test_util.py": (
        "from unittest import mock\n\n"
        "from pkg import helper\n"
        "from pkg.util import helper as h2\n"
        "from pkg.core.user import go\n\n\n"
        "def test_helper() -> None:\n"
        "    assert helper('x').endswith('x') and h2('y').endswith('y')\n"
        "    assert all(p.endswith(s) for p, s in zip(go(), 'abcd'))\n\n\n"
        "def test_package_attribute() -> None:\n"
        "    import pkg\n"
        "    assert pkg.util.helper('q').endswith('q')\n\n\n"
        "def test_patch() -> None:\n"
        "    with mock.patch('pkg.util.helper', return_value='p'):\n"
        "        import pkg.util\n"
        "        assert pkg.util.helper('z') == 'p'\n"
    ),
    "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['src']\n",
}


def run_tests(env: RefactorEnv) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=env.root,
                          capture_output=True, text=True, check=False, timeout=120,
                          env={"PYTHONPATH": "src", "PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"})


def test_function_moves_to_a_new_module_with_its_imports_and_every_importer_follows(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PKG) as env:
        assert run_tests(env).returncode == 0
        preview = env.service.move_symbol("pkg.util.helper", "src/pkg/core/paths2.py")
        assert preview.operation == "move" and preview.symbol is not None and preview.symbol.name == "helper"
        assert preview.counts["low"] == 0, preview.edits
        assert preview.counts["medium"] == 1  # the mock.patch string
        # Widget still calls helper in the old module: it imports it from the new one.
        env.service.apply(preview.refactor_id)
        new = env.read("src/pkg/core/paths2.py")
        assert "from __future__ import annotations\n" in new and "import os\n" in new
        assert "from typing import TYPE_CHECKING" in new and "    from collections.abc import Sequence" in new
        assert new.endswith("# Join a name onto the cwd.\ndef helper(name: str, parts: Sequence[str] = ()) -> str:\n"
                            "    return os.path.join(os.getcwd(), name, *parts)\n")
        old = env.read("src/pkg/util.py")
        assert "def helper" not in old and "# Join a name" not in old
        assert "from .core.paths2 import helper\n" in old
        assert '__all__ = ["LIMIT", "Widget"]' in old
        assert env.read("src/pkg/__init__.py").startswith('"""The package."""\nfrom .util import LIMIT\n'
                                                          "from .core.paths2 import helper\n")
        user = env.read("src/pkg/core/user.py")
        assert user.startswith("from ..util import Widget\nfrom .paths2 import helper as join_name\n")
        assert "paths2.helper('b')" in user and "pkg.core.paths2.helper('c')" in user
        assert "import pkg.core.paths2\n" in user and "from pkg.core import paths2\n" in user
        assert " as paths2" not in user  # ``from pkg.core import paths2``, never ``import pkg.core.paths2 as paths2``
        test_util = env.read("tests/test_util.py")
        assert "mock.patch('pkg.core.paths2.helper'" in test_util
        assert "    import pkg\n    import pkg.core.paths2\n    assert pkg.core.paths2.helper('q')" in test_util
        result = run_tests(env)
        assert result.returncode == 0, result.stdout + result.stderr


def test_class_moves_into_an_existing_module_importing_what_it_needs(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PKG) as env:
        preview = env.service.move_symbol("pkg.util.Widget", "src/pkg/base.py")
        env.service.apply(preview.refactor_id)
        base = env.read("src/pkg/base.py")
        # Base is the destination's own; LIMIT and helper stay in util (no cycle: util no longer needs Widget).
        assert base.startswith("from __future__ import annotations\nfrom .util import LIMIT, helper\n\n\nclass Base:\n")
        assert "class Widget(Base):" in base and "from .base import Base" not in base
        assert "Widget" not in env.read("src/pkg/util.py").split("__all__")[1]
        assert "from ..base import Widget\n" in env.read("src/pkg/core/user.py")
        result = run_tests(env)
        assert result.returncode == 0, result.stdout + result.stderr


def test_constant_moves_and_keep_reexport_leaves_the_old_location_working(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PKG) as env:
        preview = env.service.move_symbol("pkg.util.LIMIT", "src/pkg/core/paths.py", keep_reexport=True)
        env.service.apply(preview.refactor_id)
        paths = env.read("src/pkg/core/paths.py")
        assert paths.endswith("\n\n\nLIMIT = 10\n") and paths.startswith('"""Paths."""\nimport sys\n')
        old = env.read("src/pkg/util.py")
        assert "from .core.paths import LIMIT\n" in old and '"LIMIT"' in old  # the re-export stays listed
        assert "from .util import helper\nfrom .core.paths import LIMIT\n" in env.read("src/pkg/__init__.py")
        result = run_tests(env)
        assert result.returncode == 0, result.stdout + result.stderr


def test_a_constant_moves_into_an_empty_package_init(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PKG) as env:
        preview = env.service.move_symbol("src/pkg/util.py:14", "src/pkg/core/__init__.py")
        assert preview.symbol is not None and preview.symbol.name == "LIMIT"
        env.service.apply(preview.refactor_id)
        assert env.read("src/pkg/core/__init__.py") == "LIMIT = 10\n"
        assert "from .core import LIMIT\n" in env.read("src/pkg/util.py")
        result = run_tests(env)
        assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("user", "expected"), [
    # The destination's only import is of the moved name: the definition takes its place.
    ("from pkg.a import helper\n\n\ndef use():\n    return helper(1)\n",
     "def helper(x):\n    return x\n\n\ndef use():\n    return helper(1)\n"),
    # Below the other imports, two blank lines either side, though the source had fewer.
    ("import os\nfrom pkg.a import helper\nX = helper(os.sep)\n",
     "import os\n\n\ndef helper(x):\n    return x\n\n\nX = helper(os.sep)\n"),
    # Below the docstring; the comment closing the deleted import's line goes with it (it stayed, indented).
    ('"""Doc."""\n\nfrom pkg.a import helper  # the helper\n\nVALUE = helper(2)\n',
     '"""Doc."""\n\n\ndef helper(x):\n    return x\n\n\nVALUE = helper(2)\n'),
    # Imported under another name, used at import time: the alias is bound after the definition (``h(1)`` was
    # left naming nothing).
    ("import os\nfrom pkg.a import helper as h\n\nX = h(os.sep)\n",
     "import os\n\n\ndef helper(x):\n    return x\n\n\nh = helper\n\n\nX = h(os.sep)\n"),
])
def test_a_function_moves_next_to_its_only_user_which_imported_it(tmp_path: Path, user: str, expected: str) -> None:
    # The definition was anchored to the import line the move deletes: 4001, "two planned edits overlap".
    files = {"pkg/__init__.py": "", "pkg/a.py": "def helper(x):\n    return x\n\n\ndef thing():\n    return 1\n",
             "pkg/b.py": user}
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("pkg.a.helper", "pkg/b.py").refactor_id)
        assert env.read("pkg/b.py") == expected
        assert env.read("pkg/a.py") == "def thing():\n    return 1\n"


def test_a_module_import_left_unused_by_the_move_goes_or_gives_way_to_the_new_one(tmp_path: Path) -> None:
    # ``import pkg.a`` used only as ``pkg.a.helper(...)`` stayed behind, unused (ruff F401), after every move.
    files = {
        "pkg/__init__.py": "", "pkg/a.py": "def helper(x):\n    return x\n\n\ndef thing():\n    return 1\n",
        "pkg/c.py": "import os\nimport pkg.a\n\nprint(pkg.a.helper(1), os.sep)\n",
        "pkg/d.py": "from pkg import a\n\nprint(a.helper(2))\n",
        "pkg/e.py": "from pkg import a\n\nprint(a.helper(2), a.thing())\n",
        "pkg/g.py": "from pkg import a\n__all__ = ['a']\nprint(a.helper(2))\n",
        "pkg/h.py": "import pkg.a\n\n\ndef f(x: 'pkg.a.Thing') -> int:\n    return pkg.a.helper(x)\n",
        "pkg/user.py": ("import pkg.a\nfrom pkg import a as amod\n\n\n"
                        "def use():\n    return pkg.a.helper(1) + amod.thing()\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("pkg.a.helper", "pkg/new.py").refactor_id)
        assert env.read("pkg/c.py") == "import os\nimport pkg.new\n\nprint(pkg.new.helper(1), os.sep)\n"
        assert env.read("pkg/d.py") == "from pkg import new\n\nprint(new.helper(2))\n"
        # Still used elsewhere in the file, or named in a string (``__all__``): kept.
        assert env.read("pkg/e.py") == "from pkg import a\nfrom pkg import new\n\nprint(new.helper(2), a.thing())\n"
        assert env.read("pkg/g.py").startswith("from pkg import a\nfrom pkg import new\n")
        assert env.read("pkg/h.py").startswith("import pkg.a\nimport pkg.new\n")  # a string annotation names it
    with refactor_env(tmp_path / "repo2", files) as env:
        # Into the module that imported it: its import of the old module is left with no use and goes.
        env.service.apply(env.service.move_symbol("pkg.a.helper", "pkg/user.py").refactor_id)
        assert env.read("pkg/user.py") == ("from pkg import a as amod\n\n\ndef helper(x):\n    return x\n\n\n"
                                           "def use():\n    return helper(1) + amod.thing()\n")


def test_a_move_that_would_make_two_modules_import_each_other_is_refused(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/b.py": "X = 1\n",
             # A default runs with the ``def``: f cannot import SIZE when it runs instead.
             "pkg/a.py": "SIZE = 2\n\n\ndef f(n=SIZE):\n    return n\n\n\ndef g():\n    return f()\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as cycle:
            env.service.move_symbol("pkg.a.f", "pkg/b.py")
        assert cycle.value.code == 4009
        assert cycle.value.details["needs_from_old_module"] == ["SIZE"]
        assert env.snapshot() == before
        # SIZE needs nothing from a: a imports it from b afterwards, no cycle.
        preview = env.service.move_symbol("pkg.a.SIZE", "pkg/b.py")
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/a.py").startswith("from pkg.b import SIZE\n")
        assert env.read("pkg/b.py") == "X = 1\n\n\nSIZE = 2\n"


def test_bad_input_gets_typed_errors_and_writes_nothing(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PKG) as env:
        before = env.snapshot()
        cases = [("pkg.util.nope", "src/pkg/x.py", 3007), ("pkg.util.helper", "../elsewhere.py", 5001),
                 ("pkg.util.helper", "src/pkg/util.py", 1003), ("pkg.util.helper", "src/pkg/x.txt", 1003),
                 ("pkg.util.Widget.path", "src/pkg/x.py", 4008)]
        for symbol, dest, code in cases:
            with pytest.raises(CodePlaneError) as bad:
                env.service.move_symbol(symbol, dest)
            assert bad.value.code == code, (symbol, dest, bad.value)
        env.read("src/pkg/base.py")
        (env.root / "src/pkg/clash.py").write_text("def helper():\n    return 0\n")
        env.index.reconcile()
        with pytest.raises(CodePlaneError) as clash:
            env.service.move_symbol("pkg.util.helper", "src/pkg/clash.py")
        assert clash.value.code == 4007 and clash.value.details["reason"] == "exists in destination"
        (env.root / "src/pkg/clash.py").unlink()
        assert env.snapshot() == before


def test_stale_preview_is_refused_and_cancel_forgets_the_plan(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PKG) as env:
        preview = env.service.move_symbol("pkg.util.helper", "src/pkg/core/paths.py")
        (env.root / "tests/test_util.py").write_text(env.read("tests/test_util.py") + "\n# touched\n")
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as stale:
            env.service.apply(preview.refactor_id)
        assert stale.value.code == 5002
        assert [c["path"] for c in stale.value.details["changed"]] == ["tests/test_util.py"]
        assert env.snapshot() == before
        again = env.service.move_symbol("pkg.util.helper", "src/pkg/core/paths.py")
        env.service.cancel(again.refactor_id)
        with pytest.raises(CodePlaneError) as gone:
            env.service.apply(again.refactor_id)
        assert gone.value.code == 4004
        assert env.snapshot() == before


@pytest.mark.anyio
async def test_symbol_move_over_mcp_preview_apply_and_bad_input(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", PKG)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            bad = await call_error(client, "refactor_move", {"to_path": "src/pkg/x.py"})
            assert bad["code"] == 1003
            # from_path with symbol names the file defining it; user.py only imports helper
            elsewhere = await call_error(client, "refactor_move", {"from_path": "src/pkg/core/user.py",
                                                                   "symbol": "helper", "to_path": "src/pkg/x.py"})
            assert elsewhere["code"] == 3007
            unknown = await call_error(client, "refactor_move", {"symbol": "pkg.util.nope", "to_path": "src/pkg/x.py"})
            assert unknown["code"] == 3007
            shown = answer_text(await client.call_tool("refactor_move", {
                "symbol": "helper", "from_path": "src/pkg/util.py", "to_path": "src/pkg/core/paths.py"}))
            # what is inserted is shown, not the blank line it starts with
            assert "import src/pkg/core/paths.py:2 + 'import os' (+4 lines) | import sys" in shown, shown
            assert "moved_definition src/pkg/core/paths.py:6 + '# Join a name onto the cwd.' (+2 lines)" in shown
            assert "moved_definition src/pkg/util.py:17 - '# Join a name onto the cwd.' (+4 lines)" in shown
            preview = await call(client, "refactor_move", {"symbol": "helper", "from_path": "src/pkg/util.py",
                                                           "to_path": "src/pkg/core/paths.py"})
            assert preview["symbol"]["qualified_name"].endswith("helper")
            assert preview["move"] == {"from_path": "src/pkg/util.py", "to_path": "src/pkg/core/paths.py"}
            applied = await call(client, "refactor_apply", {"refactor_id": preview["refactor_id"]})
            assert {f["path"] for f in applied["files"]} >= {"src/pkg/util.py", "src/pkg/core/paths.py",
                                                             "src/pkg/core/user.py", "tests/test_util.py"}
    assert "def helper" in (repo / "src/pkg/core/paths.py").read_text()
    assert "from .paths import helper as join_name" in (repo / "src/pkg/core/user.py").read_text()


def test_direct_import_cycles_are_refused_and_dropped_imports_are_no_anchor(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/base.py": "class Base:\n    pass\n",
             "pkg/b.py": "X = 1\n",
             # a imports b at import time; g needs a's own Y as its default, which runs with the def: b would
             # import a back while a imports b.
             "pkg/a.py": "from pkg.b import X\n\nY = X\n\n\ndef g(y=Y):\n    return y\n",
             "pkg/m.py": ('"""Doc."""\n\nfrom pkg.base import Base\n\n\ndef split(x):\n    return isinstance(x, Base)\n'
                          "\n\ndef use(x):\n    return split(x)\n")}
    with refactor_env(tmp_path / "repo", files) as env:
        with pytest.raises(CodePlaneError) as cycle:
            env.service.move_symbol("pkg.a.g", "pkg/b.py")
        assert cycle.value.code == 4009 and "at import time" in cycle.value.message
        # Base was only used by split: its import leaves m, and m's new import takes its place.
        preview = env.service.move_symbol("pkg.m.split", "pkg/other.py")
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/m.py") == ('"""Doc."""\n\nfrom pkg.other import split\n\n\n\n'
                                        "def use(x):\n    return split(x)\n")
        assert env.read("pkg/other.py") == ("from pkg.base import Base\n\n\n"
                                            "def split(x):\n    return isinstance(x, Base)\n")


def test_a_function_whose_old_module_imports_the_destination_imports_its_needs_when_it_runs(tmp_path: Path) -> None:
    """werkzeug's ``get_content_type`` moved from utils into http: utils imports http at load time (through
    datastructures), so ``from .utils import _charset_mimetypes`` at the top of http.py failed at import
    (ImportError, partially initialized module) under a ready plan. The import opens the function's body instead,
    after its docstring; the modules import, and the function works."""
    files = {
        "pkg/__init__.py": "",
        "pkg/structures.py": "from .http import quote\n\n\nclass Headers:\n    name = quote('h')\n",
        "pkg/http.py": "def quote(value):\n    return f'\"{value}\"'\n",
        "pkg/utils.py": ("from .structures import Headers\n\n_charsets = {'text/html'}\n\n\n"
                         "def get_content_type(mimetype, charset):\n    \"\"\"The header value.\"\"\"\n"
                         "    if mimetype in _charsets:\n        return f'{mimetype}; charset={charset}'\n"
                         "    return mimetype\n"),
        "pkg/test.py": ("from .utils import get_content_type\n\n\n"
                        "def run():\n    return get_content_type('text/html', 'utf-8')\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("pkg.utils.get_content_type", "pkg/http.py")
        assert preview.status == "ready" and not any("circular-import risk" in w for w in preview.warnings)
        assert any("_charsets imported inside get_content_type" in w for w in preview.warnings), preview.warnings
        env.service.apply(preview.refactor_id)
        http = env.read("pkg/http.py")
        opened = '    """The header value."""\n    from .utils import _charsets\n    if mimetype in _charsets:'
        assert opened in http, http
        assert not http.startswith("from .utils")
        assert _prints(env, "import pkg.utils, pkg.test; print(pkg.test.run())") == "text/html; charset=utf-8\n"


def test_an_import_opening_a_tab_indented_function_is_indented_with_a_tab(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/structures.py": "from .http import quote\n\n\nclass Headers:\n\tname = quote('h')\n",
        "pkg/http.py": "def quote(value):\n\treturn value\n",
        "pkg/utils.py": ("from .structures import Headers\n\n_charsets = {'text/html'}\n\n\n"
                         "def kind(mimetype):\n\tif mimetype in _charsets:\n\t\treturn 1\n\treturn 0\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("pkg.utils.kind", "pkg/http.py").refactor_id)
        assert "def kind(mimetype):\n\tfrom .utils import _charsets\n\tif mimetype" in env.read("pkg/http.py")
        assert _prints(env, "import pkg.utils, pkg.http; print(pkg.http.kind('text/html'))") == "1\n"


def _prints(env: RefactorEnv, code: str) -> str:
    """What ``code`` prints, run by Python in the repository (the moved code imports and runs there)."""
    ran = subprocess.run([sys.executable, "-c", code], cwd=env.root, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_a_function_its_old_module_still_uses_imports_that_module_inside_its_body(tmp_path: Path) -> None:
    # packaging's canonicalize_name into its own module: utils still calls it (parse_wheel_filename), and it needs
    # utils' InvalidName, NormalizedName and regexes. That was 4009; the function now imports them when it runs,
    # and the names its (unevaluated: ``from __future__ import annotations``) annotations use under TYPE_CHECKING.
    utils = ("from __future__ import annotations\n\nimport re\nfrom typing import NewType, cast\n\n"
             "Normal = NewType('Normal', str)\n_SEP = re.compile('[-_.]+')\n\n\nclass Invalid(ValueError):\n"
             "    pass\n\n\n"
             "def canon(name: str, *, strict: bool = False) -> Normal:\n    \"\"\"Normalised.\"\"\"\n"
             "    if strict and not name:\n        raise Invalid(name)\n"
             "    return cast(Normal, _SEP.sub('-', name).lower())\n\n\n"
             "def wheel(filename: str) -> str:\n    return canon(filename.split('-')[0])\n")
    files = {"pkg/__init__.py": "", "pkg/utils.py": utils}
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("pkg.utils.canon", "pkg/names.py")
        assert any("imported inside canon" in w and "still used there" in w for w in preview.warnings)
        env.service.apply(preview.refactor_id)
        assert env.read("pkg/names.py") == (
            "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING, cast\n\nif TYPE_CHECKING:\n"
            "    from pkg.utils import Normal\n\n\n"
            "def canon(name: str, *, strict: bool = False) -> Normal:\n    \"\"\"Normalised.\"\"\"\n"
            "    from pkg.utils import Invalid, Normal, _SEP\n"
            "    if strict and not name:\n        raise Invalid(name)\n"
            "    return cast(Normal, _SEP.sub('-', name).lower())\n")
        # Either module imported first, the other loads and both work.
        for first in ("pkg.utils", "pkg.names"):
            assert _prints(env, f"import {first}\nfrom pkg.utils import wheel\nfrom pkg.names import canon\n"
                                "print(wheel('Foo.Bar-1.0'), canon('A_b'))") == "foo-bar a-b\n"
    # Without the __future__ import the annotation runs with the ``def``: still a cycle at import time.
    eager = {"pkg/__init__.py": "", "pkg/utils.py": utils.replace("from __future__ import annotations\n\n", "")}
    with refactor_env(tmp_path / "eager", eager) as env:
        with pytest.raises(CodePlaneError) as caught:
            env.service.move_symbol("pkg.utils.canon", "pkg/names.py")
        assert caught.value.code == 4009


def test_star_reexports_import_time_uses_and_third_module_cycles(tmp_path: Path) -> None:
    files = {
        "lib/__init__.py": "",
        "lib/setters.py": "def pipe():\n    return 1\n\n\nNO_OP = object()\n",
        "lib/public.py": "from lib.setters import *\n",
        # make uses NO_OP at import time (a module-level call): the constant must land above that call.
        "lib/make.py": ("from lib import setters, compat\n\n\ndef build(x=None):\n    return x is setters.NO_OP\n\n\n"
                        "DEFAULT = build()\n"),
        "lib/compat.py": "PYPY = False\n",
        "lib/filters.py": "from lib.make import build\n\n\ndef split(x):\n    return build(x)\n",
        "lib/sorters.py": "from lib.make import build\n\n\ndef order(x, key=build):\n    return key(x)\n",
        "tests/test_lib.py": ("import lib.public\nimport lib.make\nimport lib.compat\n\n\ndef test_it():\n"
                              "    assert lib.public.NO_OP is not None and lib.make.DEFAULT is False\n"),
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("lib.setters.NO_OP", "lib/make.py")
        assert preview.counts["medium"] == 1 and any("star-imports" in w for w in preview.warnings)
        env.service.apply(preview.refactor_id)
        assert env.read("lib/public.py") == "from lib.setters import *\nfrom lib.make import NO_OP\n"
        make = env.read("lib/make.py")
        assert make.index("NO_OP = object()") < make.index("DEFAULT = build()")
        assert "x is NO_OP" in make
        result = run_tests(env)
        assert result.returncode == 0, result.stdout + result.stderr
        # compat would import make (for build), which imports compat at import time: split imports it when it runs
        # (its module, left with nothing, is emptied: the import's deletion and the block's are one edit).
        preview = env.service.move_symbol("lib.filters.split", "lib/compat.py")
        assert any("build imported inside split" in w for w in preview.warnings), preview.warnings
        env.service.apply(preview.refactor_id)
        moved = "def split(x):\n    from lib.make import build\n    return build(x)\n"
        assert env.read("lib/compat.py").endswith(moved)
        assert env.read("lib/filters.py") == ""
        result = run_tests(env)
        assert result.returncode == 0, result.stdout + result.stderr
        # A default runs with the def: order cannot import build later; refused.
        with pytest.raises(CodePlaneError) as cycle:
            env.service.move_symbol("lib.sorters.order", "lib/compat.py")
        assert cycle.value.code == 4009 and cycle.value.details["via"] == "lib/make.py"


JS = {
    "package.json": '{"name": "demo", "type": "module"}\n',
    "web/util.mjs": "export const round = (n) => Math.round(n);\n",
    "web/math.mjs": ("import { round } from './util.mjs';\n\n"
                     "/** Clamp a number. */\nexport function clamp(n) {\n  return round(Math.max(0, n));\n}\n\n"
                     "export const LIMIT = 3;\n\nexport function useIt() {\n  return clamp(LIMIT);\n}\n"),
    "web/app.mjs": ("import { clamp, LIMIT } from './math.mjs';\nimport * as m from './math.mjs';\n"
                    "export { clamp as c } from './math.mjs';\n\n"
                    "console.log(clamp(1.2), m.clamp(-2), LIMIT, m.useIt());\n"),
    "web/default.mjs": "export default function greet() {\n  return 'hi';\n}\n",
    "web/greetings.mjs": "export const hello = 1;\n",
    "web/main.mjs": ("import greet from './default.mjs';\nimport { c } from './app.mjs';\n\n"
                     "console.log(greet(), c(5));\n"),
}


@pytest.mark.skipif(shutil.which("node") is None, reason="node runs the moved JS")
def test_js_named_and_default_exports_move_and_the_code_still_runs(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", JS) as env:
        before = run_node(env, "web/main.mjs")
        preview = env.service.move_symbol("web/math.mjs:4", "web/lib/clamp.mjs")
        assert preview.symbol is not None and preview.symbol.name == "clamp"
        env.service.apply(preview.refactor_id)
        assert env.read("web/lib/clamp.mjs") == ("import { round } from '../util.mjs';\n\n/** Clamp a number. */\n"
                                                  "export function clamp(n) {\n  return round(Math.max(0, n));\n}\n")
        math = env.read("web/math.mjs")
        assert "function clamp" not in math and "import { clamp } from './lib/clamp.mjs';" in math
        app = env.read("web/app.mjs")
        assert app.startswith("import { LIMIT } from './math.mjs';\nimport { clamp } from './lib/clamp.mjs';\n")
        assert "export { clamp as c } from './lib/clamp.mjs';" in app and "clamp(-2)" in app
        default = env.service.move_symbol("web/default.mjs:1", "web/greetings.mjs")
        env.service.apply(default.refactor_id)
        assert env.read("web/main.mjs").startswith("import greet from './greetings.mjs';\n")
        assert env.read("web/greetings.mjs").endswith("\n\nexport default function greet() {\n  return 'hi';\n}\n")
        assert run_node(env, "web/main.mjs") == before


def test_ts_move_keeps_type_imports_and_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    files = {
        "src/types.ts": "export interface Opts { x?: number }\n",
        "src/a.ts": ("import type { Opts } from './types';\n\nconst BASE = 2;\n\n"
                     "export function scale(n: number, o?: Opts): number {\n  return n * BASE;\n}\n\n"
                     "export function twice(n: number): number {\n  return scale(n) * 2;\n}\n\n"
                     "export function half(n: number): number {\n  return n / 2;\n}\n"),
        "src/b.ts": "import { scale, twice, half } from './a';\nexport const x = scale(1) + twice(2) + half(4);\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        # scale needs a's BASE and a calls scale as it loads (TWICE_ONE): an import cycle read while loading.
        (env.root / "src/a.ts").write_text(files["src/a.ts"] + "\nexport const TWICE_ONE = scale(1);\n")
        env.index.refresh_paths(["src/a.ts"])
        with pytest.raises(CodePlaneError) as cycle:
            env.service.move_symbol("src/a.ts:5", "src/scale.ts")
        assert cycle.value.code == 4009
        (env.root / "src/a.ts").write_text(files["src/a.ts"])
        env.index.refresh_paths(["src/a.ts"])
        # keep_reexport: a re-exports twice from twice.ts, which imports scale from a; both read only in function
        # bodies, so the cycle is harmless, and the preview says so. Not applied: the next case moves twice alone.
        kept = env.service.move_symbol("src/a.ts:9", "src/twice.ts", keep_reexport=True)
        assert any("now import each other" in w for w in kept.warnings), kept.warnings
        preview = env.service.move_symbol("src/a.ts:9", "src/twice.ts")
        env.service.apply(preview.refactor_id)
        assert env.read("src/twice.ts") == ("import { scale } from './a';\n\n"
                                            "export function twice(n: number): number {\n  return scale(n) * 2;\n}\n")
        half = env.service.move_symbol("half", "src/half.ts", keep_reexport=True)
        env.service.apply(half.refactor_id)
        a = env.read("src/a.ts")
        assert "export { half } from './half';" in a and "function twice" not in a and "function half" not in a
        assert env.read("src/b.ts").startswith("import { scale } from './a';\nimport { half } from './half';\n"
                                               "import { twice } from './twice';\n")


def test_es_modules_that_end_up_importing_each_other_still_load_and_run(tmp_path: Path) -> None:
    # immer's isPlainObject into its own module: it needs common's getPrototypeOf, and common still calls it, in
    # function bodies only. That was refused (4009) as a cycle; ES modules load such a cycle fine.
    files = {
        "package.json": '{"type": "module"}\n',
        "lib/common.js": ("const BASE = 2;\nexport function scale(n) {\n  return n * BASE;\n}\n\n"
                          "export function twice(n) {\n  return scale(n) * 2;\n}\n"),
        "lib/index.js": "import { twice, scale } from './common.js';\n\nconsole.log(twice(3), scale(1));\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("scale", "lib/scale.js")
        assert any("lib/common.js and lib/scale.js now import each other" in w for w in preview.warnings)
        env.service.apply(preview.refactor_id)
        assert env.read("lib/scale.js").startswith("import { BASE } from './common.js';\n")
        # The import goes above the ``export`` added at the same place; the code above the moved function keeps
        # a blank line before what followed it.
        assert env.read("lib/common.js") == ("import { scale } from './scale.js';\n\nexport const BASE = 2;\n\n"
                                             "export function twice(n) {\n  return scale(n) * 2;\n}\n")
        assert run_node(env) == "12 2\n"


def test_an_import_added_where_a_dropped_one_stood_and_module_global_writes_are_warned(tmp_path: Path) -> None:
    files = {
        "pkg/__init__.py": "", "pkg/base.py": "class Base:\n    pass\n",
        # The only import is used only by split: it goes, and m's new import takes line 1.
        "pkg/m.py": ("from pkg.base import Base\n\n\ndef split(x):\n    return isinstance(x, Base)\n\n\n"
                     "def use(x):\n    return split(x)\n"),
        "pkg/conf.py": "WIDTH = 80\n\n\ndef width():\n    return WIDTH\n",
        "pkg/testing.py": "from pkg import conf\n\n\ndef narrow():\n    conf.WIDTH = 40\n",
    }
    with refactor_env(tmp_path / "repo", files) as env:
        preview = env.service.move_symbol("pkg.m.split", "pkg/other.py")
        env.service.apply(preview.refactor_id)
        m = env.read("pkg/m.py")
        assert m.startswith("from pkg.other import split\n") and "Base" not in m
        compile(m, "m.py", "exec")
        widths = env.service.move_symbol("pkg.conf.WIDTH", "pkg/other.py")
        assert any("assigns" in w and "WIDTH" in w for w in widths.warnings), widths.warnings


def test_added_import_lines_take_each_files_quotes_and_semicolons(tmp_path: Path) -> None:
    # immer writes ``} from "../internal"`` without semicolons (prettier ``semi: false``)
    files = {"package.json": '{"name": "demo"}\n',
             "web/a.ts": 'export const a = "x"\n',
             "web/util.ts": ('import { a } from "./a"\n\nexport function pad(s: string): string {\n'
                             "  return a + s\n}\n\nexport const LIMIT = pad('')\n"),
             "web/main.ts": 'import { pad, LIMIT } from "./util"\n\nconsole.log(pad("1"), LIMIT)\n',
             "web/semi.ts": "import { pad } from './util';\n\nexport const b = pad('b');\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("pad", "web/pad.ts", from_path="web/util.ts").refactor_id)
        assert env.read("web/pad.ts") == ('import { a } from "./a"\n\nexport function pad(s: string): string {\n'
                                          "  return a + s\n}\n")
        assert env.read("web/util.ts").startswith('import { a } from "./a"\nimport { pad } from "./pad"\n')
        assert env.read("web/main.ts").startswith('import { LIMIT } from "./util"\nimport { pad } from "./pad"\n')
        assert env.read("web/semi.ts").startswith("import { pad } from './pad';\n")


def test_a_moved_interface_is_imported_and_re_exported_as_a_type(tmp_path: Path) -> None:
    # Under ``isolatedModules`` a re-export of a type without ``export type`` is TS1205.
    files = {"package.json": '{"name": "demo"}\n',
             "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "isolatedModules": true, '
                              '"types": []}, "include": ["src"]}\n',
             "src/scope.ts": ("export interface Scope {\n  n: number\n}\n\n"
                              "export function make(): Scope {\n  return { n: 1 }\n}\n"),
             "src/internal.ts": 'export * from "./scope"\n',
             "src/use.ts": 'import { Scope, make } from "./internal"\n\nexport const s: Scope = make()\n'}
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("Scope", "src/types.ts", from_path="src/scope.ts").refactor_id)
        # scope.ts has no import to take a style from: the other modules' (QA18); internal.ts writes its own way
        assert env.read("src/scope.ts").startswith('import type { Scope } from "./types"\n\nexport function make')
        assert env.read("src/internal.ts") == 'export * from "./scope"\nexport type { Scope } from "./types"\n'
        assert_tsc_passes(env)


def test_a_js_function_assigning_its_modules_variable_is_not_moved(tmp_path: Path) -> None:
    # immer's enterScope sets scope.ts's ``let currentScope``: an imported binding is read-only (TS2632).
    files = {"package.json": '{"name": "demo"}\n',
             "src/scope.ts": ("let current = 0\n\nexport function read(): number {\n  return current\n}\n\n"
                              "export function bump(): number {\n  current += 1\n  return current\n}\n\n"
                              "export function reset(): void {\n  current = 0\n}\n"),
             "src/use.ts": 'import { bump, read, reset } from "./scope"\n\nreset()\nexport const n = bump() + read()\n'}
    with refactor_env(tmp_path / "repo", files) as env:
        before = env.snapshot()
        for name in ("bump", "reset"):
            with pytest.raises(CodePlaneError) as refused:
                env.service.move_symbol(name, "src/counter.ts", from_path="src/scope.ts")
            assert refused.value.code == 4008 and refused.value.details["assigned"] == ["current"], name
        env.service.apply(env.service.move_symbol("read", "src/reader.ts", from_path="src/scope.ts").refactor_id)
        assert env.read("src/reader.ts").startswith('import { current } from "./scope"\n')  # use.ts's style
        assert env.snapshot() != before


def test_a_python_function_rebinding_its_modules_global_is_not_moved(tmp_path: Path) -> None:
    # Moved, ``global COUNT`` would be the new module's COUNT: bump() would count there, read() here, silently.
    files = {"pkg/__init__.py": "",
             "pkg/m.py": ("COUNT = 0\n\n\ndef bump():\n    global COUNT\n    COUNT += 1\n    return COUNT\n\n\n"
                          "def read():\n    return COUNT\n"),
             "pkg/use.py": "from pkg.m import bump, read\n\n\ndef go():\n    bump()\n    return read()\n"}
    with refactor_env(tmp_path / "repo", files) as env:
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as refused:
            env.service.move_symbol("pkg.m.bump", "pkg/other.py")
        assert refused.value.code == 4008 and refused.value.details["assigned"] == ["COUNT"]
        assert env.snapshot() == before
        env.service.apply(env.service.move_symbol("pkg.m.read", "pkg/other.py").refactor_id)
        assert "from pkg.m import COUNT" in env.read("pkg/other.py")


def test_a_destination_importing_the_symbol_through_a_barrel_takes_it_in(tmp_path: Path) -> None:
    # immer's plugins.ts imports ``die`` from the ``internal.ts`` barrel (``export * from "./utils/errors"``).
    files = {"package.json": '{"name": "demo"}\n',
             "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "types": []}, '
                              '"include": ["src"]}\n',
             "src/internal.ts": 'export * from "./errors"\nexport * from "./plugins"\n',
             "src/errors.ts": ('export const errors = ["bad"]\n\n'
                               "export function die(n: number): never {\n  throw new Error(errors[n])\n}\n"),
             "src/plugins.ts": ('import { die, errors } from "./internal"\n\n'
                                "export function need(x?: string): string {\n"
                                "  return x ?? die(errors.length - 1)\n}\n"),
             "src/use.ts": 'import { die } from "./internal"\n\nexport const f = () => die(0)\n'}
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("die", "src/plugins.ts", from_path="src/errors.ts").refactor_id)
        plugins = env.read("src/plugins.ts")
        # ``errors``, which die reads, comes through the barrel already: no second import of it
        assert plugins.startswith('import { errors } from "./internal"\n\nexport function need'), plugins
        assert plugins.endswith("\n\nexport function die(n: number): never {\n  throw new Error(errors[n])\n}\n")
        assert "function die" not in env.read("src/errors.ts")
        assert env.read("src/use.ts") == files["src/use.ts"]
        # the barrel already re-exports everything from plugins.ts: nothing to add to it
        assert env.read("src/internal.ts") == files["src/internal.ts"]
        assert_tsc_passes(env, plugins)


def test_a_destination_binding_a_name_the_moved_code_reads_to_something_else_refuses(tmp_path: Path) -> None:
    files = {"package.json": '{"name": "demo"}\n',
             "src/errors.ts": 'export const errors = ["bad"]\n\nexport function die(n: number): string {\n'
                              "  return errors[n]\n}\n",
             "src/other.ts": "export const errors = 3\n",
             "src/plugins.ts": 'import { errors } from "./other"\n\nexport const n = errors + 1\n'}
    with refactor_env(tmp_path / "repo", files) as env:
        before = env.snapshot()
        with pytest.raises(CodePlaneError) as refused:
            env.service.move_symbol("die", "src/plugins.ts", from_path="src/errors.ts")
        assert refused.value.code == 4007 and "another errors" in refused.value.details["reason"]
        assert env.snapshot() == before


def test_a_moved_default_interface_is_imported_as_a_type_where_an_import_is_split(tmp_path: Path) -> None:
    files = {"package.json": '{"name": "demo"}\n',
             "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "isolatedModules": true, '
                              '"types": []}, "include": ["src"]}\n',
             "src/a.ts": "export default interface Options {\n  n: number\n}\n\nexport const LIMIT = 3\n",
             "src/use.ts": 'import Options, { LIMIT } from "./a"\n\nexport const o: Options = { n: LIMIT }\n'}
    with refactor_env(tmp_path / "repo", files) as env:
        env.service.apply(env.service.move_symbol("Options", "src/options.ts", from_path="src/a.ts").refactor_id)
        assert env.read("src/use.ts").startswith('import { LIMIT } from "./a"\nimport type Options from "./options"\n')
        assert_tsc_passes(env)
