"""JS/TS imports only a ``package.json`` resolves link like relative ones (s55): npm/yarn/pnpm workspace members
and self-references through ``"exports"`` (subpaths, ``*`` patterns, conditions) or ``"main"``, ``#imports``, a
directory's ``"main"``. Before, every one of them stayed an external package's import: references, renames and
impact missed the uses in the other packages (or proposed them ``low``). Each test compares an incremental index
with one built cold from the same files, since a ``package.json`` edit must relink exactly what it affects."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from codeplane.index.structural import jspackages
from tests.test_structural_index import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


def _pkg(**fields: object) -> str:
    return json.dumps(fields) + "\n"


A_EXPORTS = {".": {"types": "./src/index.ts", "import": "./dist/index.mjs"}, "./math": "./src/math.ts",
             "./util/*": "./src/util/*.ts", "./util/secret": None}
MONO = {
    "package.json": _pkg(name="mono", private=True, workspaces=["packages/*"]),
    "packages/a/package.json": _pkg(name="@acme/a", exports=A_EXPORTS, imports={"#base": "./src/base.ts"}),
    "packages/a/src/index.ts": "export function rate(): number { return 0.2; }\n",
    "packages/a/src/math.ts": "import { base } from '#base';\nexport function double(n: number) { return n * base; }\n",
    "packages/a/src/base.ts": "export const base = 2;\n",
    "packages/a/src/util/pad.ts": "export function pad(s: string) { return s; }\n",
    "packages/a/src/util/secret.ts": "export function secret() { return 1; }\n",
    "packages/a/src/self.ts": "import { rate } from '@acme/a';\nexport const own = rate();\n",
    "packages/b/package.json": _pkg(name="@acme/b", main="lib/main.js"),
    "packages/b/lib/main.js": "export function hello() { return 'hi'; }\n",
    "packages/c/src/app.ts": ("import { rate } from '@acme/a';\nimport { double } from '@acme/a/math';\n"
                              "import { pad } from '@acme/a/util/pad';\nimport { secret } from '@acme/a/util/secret';\n"
                              "import { hello } from '@acme/b';\nimport { x } from 'react';\n"
                              "rate(); double(1); pad(''); secret(); hello(); x;\n"),
    "packages/c/package.json": _pkg(name="@acme/c", dependencies={"@acme/a": "*", "@acme/b": "*"}),
    # A fixture carrying a published package's name is not what ``import 'react'`` loads.
    "packages/c/test/fixtures/react/package.json": _pkg(name="react", main="index.js"),
    "packages/c/test/fixtures/react/index.js": "export const x = 1;\n",
}


def _cold(files: dict[str, str]) -> set[tuple[str, int, int, str, str, str | None]]:
    tree = Harness()
    tree.apply(files)
    try:
        return tree.tiers()
    finally:
        tree.conn.close()


def test_workspace_members_link_through_exports_main_and_imports(h: Harness) -> None:
    h.apply(MONO)
    app = "packages/c/src/app.ts"
    assert h.ref(app, 7, "rate") == ("STRONG", h.uid("packages/a/src/index.rate"))  # "." → types condition
    assert h.ref(app, 7, "double") == ("STRONG", h.uid("packages/a/src/math.double"))  # a subpath
    assert h.ref(app, 7, "pad") == ("STRONG", h.uid("packages/a/src/util/pad.pad"))  # a ``*`` pattern
    assert h.ref(app, 7, "secret")[0] == "PROVEN"  # excluded by ``null``: Node refuses it
    assert h.ref(app, 7, "hello") == ("STRONG", h.uid("packages/b/lib/main.hello"))  # ``main``, no exports
    assert h.ref(app, 7, "x")[0] == "PROVEN"  # not the fixture named react
    assert h.ref("packages/a/src/math.ts", 2, "base") == ("STRONG", h.uid("packages/a/src/base.base"))  # #imports
    assert h.ref("packages/a/src/self.ts", 2, "rate") == ("STRONG", h.uid("packages/a/src/index.rate"))


def test_a_pnpm_workspace_and_a_directory_main_link(h: Harness) -> None:
    h.apply({
        "pnpm-workspace.yaml": "packages:\n  - 'libs/*'\n",
        "package.json": _pkg(name="root", private=True),
        "libs/q/package.json": _pkg(name="q", types="./types/q.ts", main="./dist/q.js"),
        "libs/q/types/q.ts": "export function query(): number { return 1; }\n",
        "app/vendor/package.json": _pkg(main="entry.js"),
        "app/vendor/entry.js": "export function vend() { return 2; }\n",
        "app/vendor/index.js": "export function vend() { return 3; }\n",
        "app/main.ts": "import { query } from 'q';\nimport { vend } from './vendor';\nquery(); vend();\n",
    })
    assert h.ref("app/main.ts", 3, "query") == ("STRONG", h.uid("libs/q/types/q.query"))  # types before main
    assert h.ref("app/main.ts", 3, "vend") == ("STRONG", h.uid("app/vendor/entry.vend"))  # main before index


def test_a_name_two_members_share_links_nothing(h: Harness) -> None:
    h.apply({
        "package.json": _pkg(private=True, workspaces=["a", "b"]),
        "a/package.json": _pkg(name="dup", main="x.js"), "a/x.js": "export const v = 1;\n",
        "b/package.json": _pkg(name="dup", main="x.js"), "b/x.js": "export const v = 2;\n",
        "use.js": "import { v } from 'dup';\nv;\n",
    })
    assert h.ref("use.js", 2, "v")[0] == "PROVEN"


def test_package_json_edits_relink_what_they_affect(h: Harness) -> None:
    h.apply(MONO)
    app = "packages/c/src/app.ts"
    steps: list[tuple[dict[str, str], tuple[str, ...]]] = [
        # ``./math`` moves to another file, the workspace stops declaring packages, comes back, a member goes.
        ({"packages/a/package.json": _pkg(name="@acme/a", exports={**A_EXPORTS, "./math": "./src/base.ts"},
                                          imports={"#base": "./src/base.ts"})}, ()),
        ({"package.json": _pkg(name="mono", private=True)}, ()),
        ({"package.json": _pkg(name="mono", private=True, workspaces=["packages/*"])}, ()),
        ({}, ("packages/b/package.json",)),
        ({"packages/b/package.json": _pkg(name="@acme/b", version="2.0.0", main="lib/main.js")}, ()),
    ]
    for written, deleted in steps:
        h.apply(written, deleted)
        assert h.tiers() == _cold(dict(h.tree.files)), (written, deleted)
    assert h.ref(app, 7, "hello") == ("STRONG", h.uid("packages/b/lib/main.hello"))


def test_a_file_taking_a_passed_over_candidate_takes_the_import(h: Harness) -> None:
    # ``baseUrl`` maps ``utils`` to ``src/utils`` first (TypeScript's order); no file there, so the workspace
    # member links. Once ``src/utils.ts`` exists it wins, and when it goes the member links again.
    files = {
        "package.json": _pkg(private=True, workspaces=["packages/*"]),
        "tsconfig.json": '{"compilerOptions": {"baseUrl": "src"}}\n',
        "packages/utils/package.json": _pkg(name="utils", main="index.ts"),
        "packages/utils/index.ts": "export function tool() { return 1; }\n",
        "src/app.ts": "import { tool } from 'utils';\ntool();\n",
    }
    h.apply(files)
    assert h.ref("src/app.ts", 2, "tool") == ("STRONG", h.uid("packages/utils/index.tool"))
    local = {"src/utils.ts": "export function tool() { return 2; }\n"}
    h.apply(local)
    assert h.ref("src/app.ts", 2, "tool") == ("STRONG", h.uid("src/utils.tool"))
    assert h.tiers() == _cold({**files, **local})
    h.apply({}, ("src/utils.ts",))
    assert h.ref("src/app.ts", 2, "tool") == ("STRONG", h.uid("packages/utils/index.tool"))
    assert h.tiers() == _cold(files)


def test_candidates_follow_node_order() -> None:
    packages = jspackages.Packages.from_texts({
        "package.json": _pkg(workspaces={"packages": ["pkgs/**"]}),
        "pkgs/deep/x/package.json": _pkg(name="x", exports={"./*.js": {"node": ["./n/*.js", "./m/*.js"]},
                                                            "./feat/*": "./src/feat/*/index.js",
                                                            "./feat/x/*": "./special/*.js"}),
    })
    found = packages.resolve("app.js", "x/a.js")
    assert found is not None and found.paths == ("pkgs/deep/x/n/a.js", "pkgs/deep/x/m/a.js")
    found = packages.resolve("app.js", "x/feat/x/y")  # the longest prefix wins
    assert found is not None and found.paths == ("pkgs/deep/x/special/y.js",)
    assert packages.resolve("app.js", "x/none") == jspackages.Candidates((), "pkgs/deep/x/package.json exports",
                                                                          "pkgs/deep/x")
    assert packages.resolve("app.js", "y") is None and packages.resolve("app.js", "#k") is None
    assert jspackages.Packages.decode(packages.encode()).encode() == packages.encode()
