"""TypeScript imports through a tsconfig's ``paths``/``baseUrl`` link like relative ones; packages stay external."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from codeplane.index.structural import tspaths
from tests.test_structural_index import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


TSCONFIG = ('{\n  // comments and trailing commas are allowed\n  "compilerOptions": {\n    "baseUrl": "src",\n'
            '    "paths": { "@lib/*": ["lib/*"], "@core": ["core/index.ts"], },\n  },\n}\n')
FILES = {
    "web/tsconfig.json": TSCONFIG,
    "web/src/lib/strings.ts": "export function shout(s: string) { return s; }\n",
    "web/src/core/index.ts": "export const version = 1;\n",
    "web/src/util/math.ts": "export function add(a: number) { return a; }\n",
    "web/src/app.ts": "import { shout } from '@lib/strings';\nimport { version } from '@core';\n"
                      "import { add } from 'util/math';\nimport React from 'react';\n"
                      "shout('x'); add(version); React;\n",
}


def test_paths_and_base_url_link_strong(h: Harness) -> None:
    h.apply(FILES)
    assert h.ref("web/src/app.ts", 5, "shout") == ("STRONG", h.uid("web/src/lib/strings.shout"))
    assert h.ref("web/src/app.ts", 5, "version") == ("STRONG", h.uid("web/src/core/index.version"))
    assert h.ref("web/src/app.ts", 5, "add") == ("STRONG", h.uid("web/src/util/math.add"))  # baseUrl
    assert h.ref("web/src/app.ts", 5, "React")[0] == "PROVEN"  # an npm package: bound to its import only


def test_a_changed_tsconfig_relinks_every_import(h: Harness) -> None:
    h.apply(FILES)
    h.apply({"web/tsconfig.json": '{"compilerOptions": {}}'})
    assert h.ref("web/src/app.ts", 5, "shout")[0] == "PROVEN"
    h.apply({"web/tsconfig.json": TSCONFIG})
    assert h.ref("web/src/app.ts", 5, "shout") == ("STRONG", h.uid("web/src/lib/strings.shout"))
    h.apply({}, deleted=("web/tsconfig.json",))
    assert h.ref("web/src/app.ts", 5, "add")[0] == "PROVEN"


def test_specifier_paths() -> None:
    config = tspaths.parse("tsconfig.json", '{"compilerOptions": {"paths": {"~/*": ["./src/*"]}}}')
    assert config == ("", False, [("~/*", "./src/*")])
    assert tspaths.specifier_path("src/a.ts", "~/b/c", {"": config}) == "src/b/c"
    assert tspaths.specifier_path("src/a.ts", "lodash", {"": config}) is None  # no baseUrl: a package
    assert tspaths.parse("tsconfig.json", "{ not json") is None
    assert tspaths.parse("x/tsconfig.json", '{"compilerOptions": {"baseUrl": "../.."}}') is None
