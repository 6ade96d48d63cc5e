"""QA16: Python refactors that broke real projects after a default apply (click, attrs, requests, flask). Each
plan is applied with its defaults and the code is run, as the projects' own suites did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from codeplane.refactor.models import RefactorPreview
from tests.refactor_builders import RefactorEnv, refactor_env


def _run(env: RefactorEnv, *args: str) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=env.root, capture_output=True, text=True, check=False,
                          timeout=60, env={"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": "src"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _edits(preview: RefactorPreview) -> dict[tuple[str, int], tuple[str, str]]:
    return {(e.path, e.line): (e.certainty, e.reason) for e in preview.edits}


# -- 1: a parameter's keyword at call sites -------------------------------------------------------------------
PARAMS = {
    "pkg/__init__.py": "",
    "pkg/core.py": ("def greet(name, loud=False):\n    text = f'hi {name}'\n    if loud:\n        text = text.upper()\n"
                    "    return text\n\n\ndef caller():\n    return greet('a', loud=True) + greet(name='b')\n\n\n"
                    "class Shop:\n    def sell(self, item, count=1):\n        return f'{item}x{count}'\n\n\n"
                    "def strict(left, right, /, c=0):\n    return left + right + c\n"),
    "pkg/use.py": ("from pkg import core\nfrom pkg.core import Shop, greet\n\n\n"
                   "def run():\n    shop = Shop()\n"
                   "    return [greet('x', loud=True), core.greet('y', loud=False), shop.sell('pen', count=2),\n"
                   "            core.strict(1, 2, c=3), core.caller()]\n\n\n"
                   "def other(loud=False):\n    return loud\n\n\n"
                   "def unresolved(thing):\n    return thing.greet('z', loud=True)\n\n\n"
                   "print(run(), other(loud=True))\n"),
}
PARAMS_OUT = "['HI X', 'hi y', 'penx2', 6, 'HI Ahi b'] True\n"


def test_renaming_a_parameter_renames_its_keyword_at_resolved_calls_and_lists_the_rest(tmp_path: Path) -> None:
    # The keywords were not even listed and the plan was all high: applied at once, every caller raised TypeError.
    with refactor_env(tmp_path / "repo", PARAMS) as env:
        assert _run(env, "-m", "pkg.use") == PARAMS_OUT
        preview = env.service.rename(None, "shout", path="pkg/core.py", line=1, column=17)
        edits = _edits(preview)
        assert edits[("pkg/core.py", 9)] == ("high", "call_keyword")  # the same file's call
        assert edits[("pkg/use.py", 7)] == ("high", "call_keyword")  # imported ``greet`` and ``core.greet``
        line = PARAMS["pkg/use.py"].split("\n")[6]
        assert [e.column for e in preview.edits if (e.path, e.line) == ("pkg/use.py", 7)] == [
            line.index("loud"), line.rindex("loud")]
        assert edits[("pkg/use.py", 16)] == ("low", "keyword_argument")  # ``thing.greet``: whose?
        assert ("pkg/use.py", 11) not in edits and ("pkg/use.py", 19) not in edits  # ``other``'s own parameter
        assert env.service.apply_when_certain(preview) == "1 low edit to review"
        env.service.apply(preview.refactor_id)
        assert "greet('x', shout=True), core.greet('y', shout=False)" in env.read("pkg/use.py")
        assert "thing.greet('z', loud=True)" in env.read("pkg/use.py") and "other(loud=True)" in env.read("pkg/use.py")
        assert _run(env, "-m", "pkg.use") == PARAMS_OUT


def test_a_method_parameter_follows_typed_receivers_and_positional_only_ones_take_no_keyword(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", PARAMS) as env:
        preview = env.service.rename(None, "amount", path="pkg/core.py", line=13, column=26)
        assert _edits(preview)[("pkg/use.py", 7)] == ("high", "call_keyword")  # ``shop = Shop()``: exact
        outcome = env.service.apply_when_certain(preview)
        assert not isinstance(outcome, str), outcome
        assert "shop.sell('pen', amount=2)" in env.read("pkg/use.py")
        assert _run(env, "-m", "pkg.use") == PARAMS_OUT
        strict = env.service.rename(None, "first", path="pkg/core.py", line=17, column=11)
        assert {e.reason for e in strict.edits} == {"definition", "proven"}


INIT = {
    "pkg/__init__.py": "",
    "pkg/core.py": ("class Box:\n    def __init__(self, size=1):\n        self.size = size\n\n    @classmethod\n"
                    "    def big(cls):\n        return cls(size=10)\n\n\nclass Crate(Box):\n"
                    "    def __init__(self, size=2, lid=True):\n        super().__init__(size=size)\n"
                    "        self.lid = lid\n\n\nclass Bag(Box):\n    pass\n\n\n"
                    "def measure(box, scale=1):\n    return box.size * scale\n"),
    "pkg/use.py": ("from pkg import core\nfrom pkg.core import Bag, Crate\nfrom pkg.core import Box as Carton\n"
                   "from pkg.core import measure as gauge\n\n"
                   "print(Carton(size=3).size, core.Box(size=4).size, Bag(size=6).size, Crate(size=5).size,\n"
                   "      Bag.big().size, gauge(Crate(), scale=2))\n"),
}
INIT_OUT = "3 4 6 5 10 4\n"


def test_an_init_parameter_follows_its_class_constructions_and_an_aliased_call_is_resolved(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", INIT) as env:
        assert _run(env, "-m", "pkg.use") == INIT_OUT
        preview = env.service.rename(None, "volume", path="pkg/core.py", line=2, column=25)
        keywords = {(e.path, e.line, e.column): e.certainty for e in preview.edits if e.reason == "call_keyword"}
        line = INIT["pkg/use.py"].split("\n")[5]
        at = [i for i in range(len(line)) if line.startswith("size=", i)]
        # ``Carton(...)``, ``core.Box(...)``: Box's; ``Bag(...)`` inherits it (another base could come first);
        # ``Crate(...)`` runs Crate's own; ``cls(...)`` may be a subclass; ``super().__init__`` may be an override's
        assert keywords == {("pkg/use.py", 6, at[0]): "high", ("pkg/use.py", 6, at[1]): "high",
                            ("pkg/use.py", 6, at[2]): "medium", ("pkg/core.py", 7, 19): "medium",
                            ("pkg/core.py", 12, 25): "medium"}
        env.service.apply(preview.refactor_id)
        assert "Crate(size=5)" in env.read("pkg/use.py")
        assert _run(env, "-m", "pkg.use") == INIT_OUT
        aliased = env.service.rename(None, "factor", path="pkg/core.py", line=20, column=17)
        assert _edits(aliased)[("pkg/use.py", 7)] == ("high", "call_keyword")  # ``gauge(..., scale=2)``
        env.service.apply(aliased.refactor_id)
        assert _run(env, "-m", "pkg.use") == INIT_OUT


# -- 5: ``with Cls() as x`` -----------------------------------------------------------------------------------
WITH = {
    "pkg/__init__.py": "",
    "pkg/core.py": ("import contextlib\n\n\nclass Session:\n    def __enter__(self):\n        return self\n\n"
                    "    def __exit__(self, *exc):\n        return False\n\n    def request(self, method):\n"
                    "        return method\n\n\nclass Cursor:\n    def request(self, method):\n"
                    "        return 'cursor ' + method\n\n\nclass Connection:\n    def __enter__(self):\n"
                    "        return Cursor()\n\n    def __exit__(self, *exc):\n        return False\n\n"
                    "    def request(self, method):\n        return 'connection ' + method\n\n\n"
                    "class Stack(contextlib.ExitStack):\n    def request(self, method):\n        return method\n\n\n"
                    "class Response:\n    def __init__(self, request):\n        self.request = request\n"),
    "pkg/api.py": ("from pkg import core\n\n\ndef call(method):\n    with core.Session() as session:\n"
                   "        return session.request(method)\n\n\ndef cursor(method):\n"
                   "    with core.Connection() as c:\n        return c.request(method)\n\n\n"
                   "def stacked(method):\n    with core.Stack() as s:\n        return s.request(method)\n\n\n"
                   "print(call('A'), cursor('B'), stacked('C'))\n"),
}


def test_a_with_target_is_typed_by_a_class_whose_enter_returns_itself(tmp_path: Path) -> None:
    # ``with sessions.Session() as session: session.request(...)`` stayed low: requests.get() broke (136 tests).
    with refactor_env(tmp_path / "repo", WITH) as env:
        assert _run(env, "-m", "pkg.api") == "A cursor B C\n"
        preview = env.service.rename("pkg.core.Session.request", "perform")
        edits = _edits(preview)
        assert edits[("pkg/api.py", 6)] == ("high", "entered_receiver")
        # ``Connection.__enter__`` gives a Cursor; ``ExitStack``'s may give anything: neither is typed.
        assert edits[("pkg/api.py", 11)][0] == "low" and edits[("pkg/api.py", 16)][0] == "low"
        env.service.apply(preview.refactor_id)
        assert "session.perform(method)" in env.read("pkg/api.py")
        assert _run(env, "-m", "pkg.api") == "A cursor B C\n"


# -- 4: a record field's keyword through ``cls(...)`` ---------------------------------------------------------
FIELDS = {
    "pkg/__init__.py": "",
    "pkg/core.py": ("import dataclasses\n\n\n@dataclasses.dataclass\nclass Point:\n    x: int\n    label: str = ''\n\n"
                    "    @classmethod\n    def origin(cls):\n        return cls(x=0, label='origin')\n\n\n"
                    "@dataclasses.dataclass\nclass Tagged(Point):\n    tag: str = ''\n\n    @classmethod\n"
                    "    def blank(cls):\n        return cls(\n            x=1,\n            label='blank',\n"
                    "        )\n"),
    "pkg/use.py": ("from pkg.core import Point, Tagged\n\n\n"
                   "print(Point.origin().label, Tagged.blank().label, Tagged(x=2, label='t').label)\n"),
}


def test_a_dataclass_field_renames_its_keyword_in_cls_calls_and_subclass_constructions(tmp_path: Path) -> None:
    # ``cls(x=0, label=...)`` in a classmethod kept its keyword: TypeError (attrs' VersionInfo._from_version_string).
    with refactor_env(tmp_path / "repo", FIELDS) as env:
        assert _run(env, "-m", "pkg.use") == "origin blank t\n"
        preview = env.service.rename("pkg.core.Point.label", "title")
        edits = _edits(preview)
        for at in (("pkg/core.py", 11), ("pkg/core.py", 22), ("pkg/use.py", 4)):
            assert edits[at] == ("medium", "field_keyword"), at
        env.service.apply(preview.refactor_id)
        assert _run(env, "-m", "pkg.use") == "origin blank t\n"


ATTRS_CLASS = {
    "pkg/__init__.py": "",
    "pkg/version.py": ("from attr import attrib, attrs\n\n\n@attrs(eq=False, frozen=True)\nclass VersionInfo:\n"
                       "    year = attrib(type=int)\n    releaselevel = attrib(type=str)\n\n    @classmethod\n"
                       "    def parse(cls, s):\n        year, level = s.split('.')\n"
                       "        return cls(year=int(year), releaselevel=level)\n\n\n"
                       "print(VersionInfo.parse('25.final').releaselevel)\n"),
}


def test_a_bare_attrs_decorator_makes_a_record_class(tmp_path: Path) -> None:
    # attrs' own ``VersionInfo`` is ``@attrs(...)`` imported bare: not taken for a record class, its keyword stayed.
    with refactor_env(tmp_path / "repo", ATTRS_CLASS) as env:
        assert _run(env, "-m", "pkg.version") == "final\n"
        preview = env.service.rename("pkg.version.VersionInfo.releaselevel", "release_level")
        assert _edits(preview)[("pkg/version.py", 12)] == ("medium", "field_keyword")
        env.service.apply(preview.refactor_id)
        assert _run(env, "-m", "pkg.version") == "final\n"


# -- 2: moves inside a namespace portion of a package ---------------------------------------------------------
NAMESPACE = {
    "src/pkg/__init__.py": "from . import json as json\nfrom .app import Flask\n",
    "src/pkg/app.py": "from .sansio.app import App\n\n\nclass Flask(App):\n    pass\n",
    "src/pkg/json/__init__.py": "from .provider import Provider\n",
    "src/pkg/json/provider.py": ("from __future__ import annotations\n\nimport typing as t\n\n"
                                 "if t.TYPE_CHECKING:\n    from ..sansio.app import App\n\n\n"
                                 "class Provider:\n    def dumps(self, obj: object) -> str:\n"
                                 "        return repr(obj)\n"),
    # no ``__init__.py``: a PEP 420 portion of ``pkg``, as flask's ``src/flask/sansio/``
    "src/pkg/sansio/app.py": ("from ..json.provider import Provider\nfrom .scaffold import find\n\n\n"
                              "class App:\n    def make(self) -> Provider:\n        find()\n"
                              "        return Provider()\n"),
    "src/pkg/sansio/scaffold.py": "def find():\n    return 'found'\n\n\ndef helper():\n    return find()\n",
    "check.py": ("import pkg\nfrom pkg.sansio.app import App\n\n"
                 "print(pkg.Flask().make().dumps([1]), App().make().dumps(2))\n"),
}


def test_moves_inside_a_namespace_portion_keep_package_relative_imports(tmp_path: Path) -> None:
    # The portion was taken for a top-level root: ``from ..sansio.app`` became ``from app``, ``import pkg`` failed.
    with refactor_env(tmp_path / "repo", NAMESPACE) as env:
        assert _run(env, "check.py") == "[1] 2\n"
        preview = env.service.move("src/pkg/json", "src/pkg/jsonx")
        new_texts = {(e.path, e.line): e.new_text for e in preview.edits}
        assert new_texts[("src/pkg/sansio/app.py", 1)] == "..jsonx.provider"
        assert ("src/pkg/json/provider.py", 6) not in new_texts  # the moved file's ``..sansio.app`` still holds
        env.service.apply(preview.refactor_id)
        assert _run(env, "check.py") == "[1] 2\n"
        renamed = env.service.move("src/pkg/sansio/app.py", "src/pkg/sansio/application.py")
        assert {e.new_text for e in renamed.edits} == {".sansio.application", "..sansio.application",
                                                        "pkg.sansio.application"}
        env.service.apply(renamed.refactor_id)
        (env.root / "check.py").write_text(env.read("check.py").replace("sansio.app ", "sansio.application "))
        assert _run(env, "check.py") == "[1] 2\n"


def test_a_symbol_moved_within_a_namespace_portion_is_imported_relative_to_its_package(tmp_path: Path) -> None:
    with refactor_env(tmp_path / "repo", NAMESPACE) as env:
        preview = env.service.move_symbol("pkg.sansio.scaffold.find", "src/pkg/sansio/finding.py")
        env.service.apply(preview.refactor_id)
        assert "from .finding import find" in env.read("src/pkg/sansio/app.py")
        assert "from pkg.sansio.finding import find" in env.read("src/pkg/sansio/scaffold.py")  # (no relative import)
        assert _run(env, "check.py") == "[1] 2\n"


# -- 3: a patch target the old module still looks up -----------------------------------------------------------
PATCHED = {
    "pkg/__init__.py": "",
    "pkg/core.py": ("def greet(name):\n    return 'hi ' + name\n\n\ndef caller():\n    return greet('a')\n"),
    "pkg/check.py": ("from unittest import mock\n\nfrom pkg import core\n\n"
                     "with mock.patch('pkg.core.greet', return_value='z'):\n    print(core.caller())\n"),
}


def test_a_mock_patch_string_is_kept_while_the_old_module_still_calls_the_moved_function(tmp_path: Path) -> None:
    # Rewritten (medium, applied) to ``pkg.greeting.greet``, the patch no longer reached ``caller``'s lookup.
    with refactor_env(tmp_path / "repo", PATCHED) as env:
        assert _run(env, "-m", "pkg.check") == "z\n"
        preview = env.service.move_symbol("pkg.core.greet", "pkg/greeting.py")
        assert _edits(preview)[("pkg/check.py", 5)] == ("low", "looked_up_in_old_module")
        assert any("mock.patch" in w for w in preview.warnings)
        env.service.apply(preview.refactor_id)
        assert "mock.patch('pkg.core.greet'" in env.read("pkg/check.py")
        assert _run(env, "-m", "pkg.check") == "z\n"


# -- 6: another class's member in the docs ---------------------------------------------------------------------
DOCS = {
    "pkg/__init__.py": "",
    "pkg/core.py": ("class Session:\n    def request(self, method):\n        return method\n\n\n"
                    "class Response:\n    def __init__(self, request):\n        self.request = request\n"),
    "README.md": "# pkg\n\nUse ``Session.request()`` to send.\n\nThe ``Response.request`` attribute holds it.\n",
}


def test_a_doc_mention_qualified_by_another_class_is_not_a_high_doc_edit(tmp_path: Path) -> None:
    # ``Context.invoke()`` and ``CliRunner.invoke`` in click's CHANGES.rst were high while renaming Command.invoke.
    with refactor_env(tmp_path / "repo", DOCS) as env:
        preview = env.service.rename("pkg.core.Session.request", "perform")
        docs = {(e.line, e.certainty) for e in env.service.plans.get(preview.refactor_id).options[0].doc_edits}
        assert docs == {(3, "high"), (5, "low")}


# -- 7: ``monkeypatch.setattr(module, "name")`` -----------------------------------------------------------------
ATTRS = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def helper():\n    return 1\n\n\ndef use():\n    return helper()\n",
    "pkg/check.py": ("from unittest import mock\n\nimport pkg.core\nfrom pkg import core\n\n\n"
                     "with mock.patch.object(core, 'helper', return_value=2):\n    a = core.use()\n"
                     "with mock.patch('pkg.core.helper', return_value=3):\n    b = core.use()\n"
                     "original = core.helper\nsetattr(pkg.core, 'helper', lambda: 4)\nc = core.use()\n"
                     "setattr(core, 'helper', original)\nprint(a, b, c, getattr(mock, 'helper', None))\n"),
}


def test_a_module_object_and_attribute_string_are_labelled_like_the_dotted_string(tmp_path: Path) -> None:
    # ``monkeypatch.setattr(click._termui_impl, "isatty", ...)`` was low where ``"click.termui.x"`` was medium.
    with refactor_env(tmp_path / "repo", ATTRS) as env:
        assert _run(env, "-m", "pkg.check") == "2 3 4 None\n"
        preview = env.service.rename("pkg.core.helper", "assist")
        edits = _edits(preview)
        assert edits[("pkg/check.py", 7)] == ("medium", "module_attribute_string")
        assert edits[("pkg/check.py", 9)] == ("medium", "qualified_string")
        assert edits[("pkg/check.py", 12)] == ("medium", "module_attribute_string")
        assert edits[("pkg/check.py", 14)] == ("medium", "module_attribute_string")
        assert edits[("pkg/check.py", 15)][0] == "low"  # ``mock`` is not a module of ours
        env.service.apply(preview.refactor_id)
        assert _run(env, "-m", "pkg.check") == "2 3 4 None\n"
