"""PHP across files in the structural index: namespaces, ``use`` (class, alias, group, function, const), class,
function and constant names, members through ``$this``/``self::``/``C::``/type hints, and what stays unsettled."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest

from codeplane.index.structural import classdeps
from codeplane.index.structural.store import BatchEffect
from tests.test_structural_index import Harness


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    harness.conn.close()


PHP = {
    "src/Support/Helper.php": "<?php\nnamespace App\\Support;\n\nconst LIMIT = 3;\n\n"
                              "function fmt(int $x): string { return (string) $x; }\n\n"
                              "class Helper\n{\n    public static function go(): int { return LIMIT; }\n"
                              "    public function run(): void { }\n}\n",
    "src/Support/Arr.php": "<?php\nnamespace App\\Support;\n\nclass Arr { const EMPTY = []; }\n",
    "src/helpers.php": "<?php\n\nfunction global_helper(): int { return 1; }\n",
    "src/Models/Base.php": "<?php\nnamespace App\\Models;\n\nabstract class Base\n{\n"
                           "    protected function touch(): void { }\n}\n",
    "src/Models/Cart.php": "<?php\nnamespace App\\Models;\n\n"
                           "use App\\Support\\Helper;\nuse App\\Support\\{Arr as A};\n"
                           "use function App\\Support\\fmt;\nuse const App\\Support\\LIMIT;\n\n"   # 7
                           "class Cart extends Base\n{\n"                                             # 9
                           "    const MAX = 3;\n    private Helper $helper;\n"                        # 11, 12
                           "    public function add(Item $item, $any): void\n    {\n"                 # 13
                           "        $this->touch();\n"                                               # 15
                           "        self::make();\n"                                                 # 16
                           "        Helper::go();\n"                                                 # 17
                           "        \\App\\Support\\Helper::go();\n"                                  # 18
                           "        fmt(LIMIT) . A::EMPTY . Cart::MAX;\n"                           # 19
                           "        $h = new Helper();\n        $h->run();\n"                       # 20, 21
                           "        $this->helper->run();\n"                                         # 22
                           "        $item->price();\n"                                               # 23
                           "        global_helper();\n"                                              # 24
                           "        $any->run();\n"                                                  # 25
                           "        $h = make_other();\n        $h->run();\n"                        # 26, 27
                           "    }\n    public static function make(): static { return new static(); }\n}\n",
    "src/Models/Item.php": "<?php\nnamespace App\\Models;\n\nclass Item\n{\n"
                           "    public function price(): int { return 1; }\n}\n",
    "src/Models/Legacy.php": "<?php\nnamespace App\\Models;\n\nclass Legacy extends \\Vendor\\Model\n{\n"
                             "    public function save(): void { $this->touch(); $this->mine(); }\n"   # 6
                             "    public function mine(): void { }\n}\n",
}


def test_names_resolve_through_namespaces_and_use(h: Harness) -> None:
    h.apply(PHP)
    helper = h.uid("App\\Support.Helper")
    assert h.ref("src/Models/Cart.php", 4, "Helper") == ("STRONG", helper)  # the ``use`` clause itself
    assert h.ref("src/Models/Cart.php", 17, "Helper") == ("STRONG", helper)
    assert h.ref("src/Models/Cart.php", 18, "Helper") == ("STRONG", helper)  # fully qualified
    assert h.ref("src/Models/Cart.php", 9, "Base") == ("STRONG", h.uid("App\\Models.Base"))  # same namespace
    assert h.ref("src/Models/Cart.php", 13, "Item") == ("STRONG", h.uid("App\\Models.Item"))  # a type hint
    assert h.ref("src/Models/Cart.php", 19, "fmt") == ("STRONG", h.uid("App\\Support.fmt"))  # use function
    assert h.ref("src/Models/Cart.php", 19, "LIMIT") == ("STRONG", h.uid("App\\Support.LIMIT"))  # use const
    assert h.ref("src/Models/Cart.php", 19, "A") == ("STRONG", h.uid("App\\Support.Arr"))  # a group use alias
    assert h.ref("src/Models/Cart.php", 5, "Arr") == ("STRONG", h.uid("App\\Support.Arr"))
    fallback = h.uid("src/helpers.global_helper")  # a global function PHP falls back to
    assert h.ref("src/Models/Cart.php", 24, "global_helper") == ("STRONG", fallback)


def test_members_through_this_self_classes_and_hints(h: Harness) -> None:
    h.apply(PHP)
    run = h.uid("App\\Support.Helper.run")
    assert h.ref("src/Models/Cart.php", 15, "touch") == ("STRONG", h.uid("App\\Models.Base.touch"))  # inherited
    assert h.ref("src/Models/Cart.php", 16, "make") == ("STRONG", h.uid("App\\Models.Cart.make"))
    assert h.ref("src/Models/Cart.php", 17, "go") == ("STRONG", h.uid("App\\Support.Helper.go"))
    assert h.ref("src/Models/Cart.php", 19, "EMPTY") == ("STRONG", h.uid("App\\Support.Arr.EMPTY"))
    assert h.ref("src/Models/Cart.php", 19, "MAX") == ("STRONG", h.uid("App\\Models.Cart.MAX"))
    assert h.ref("src/Models/Cart.php", 23, "price") == ("STRONG", h.uid("App\\Models.Item.price"))  # hinted
    assert h.ref("src/Models/Cart.php", 22, "helper") == ("STRONG", h.uid("App\\Models.Cart.helper"))
    assert h.ref("src/Models/Cart.php", 22, "run") == ("STRONG", run)  # a typed property


def test_what_the_syntax_does_not_settle_stays_anchored(h: Harness) -> None:
    h.apply(PHP)
    assert h.ref("src/Models/Cart.php", 25, "run") == ("ANCHORED", None)  # no hint on ``$any``
    # ``$h`` is also assigned from a call: every definition must declare the class.
    assert h.ref("src/Models/Cart.php", 21, "run") == ("ANCHORED", None)
    assert h.ref("src/Models/Cart.php", 27, "run") == ("ANCHORED", None)
    # A parent outside the repository might declare ``touch``; the class's own ``mine`` overrides anything.
    assert h.ref("src/Models/Legacy.php", 6, "touch") == ("ANCHORED", None)
    assert h.ref("src/Models/Legacy.php", 6, "mine") == ("STRONG", h.uid("App\\Models.Legacy.mine"))


def test_a_namespaced_function_wins_over_the_global_fallback(h: Harness) -> None:
    h.apply({**PHP, "src/Models/local.php": "<?php\nnamespace App\\Models;\n\nfunction global_helper(): int "
                                            "{ return 2; }\n"})
    assert h.ref("src/Models/Cart.php", 24, "global_helper") == ("STRONG", h.uid("App\\Models.global_helper"))


def test_links_follow_edits_and_equal_a_full_rebuild(h: Harness) -> None:
    h.apply(PHP)
    h.apply({}, deleted=("src/Models/Base.php",))
    assert h.ref("src/Models/Cart.php", 15, "touch") == ("ANCHORED", None)
    h.apply({"src/Support/Helper.php": PHP["src/Support/Helper.php"].replace("function run", "function walk")})
    assert h.ref("src/Models/Cart.php", 22, "run") == ("ANCHORED", None)
    final = {**{k: v for k, v in PHP.items() if k != "src/Models/Base.php"},
             "src/Support/Helper.php": PHP["src/Support/Helper.php"].replace("function run", "function walk")}
    fresh = Harness()
    try:
        fresh.apply(final)
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()


def test_the_affected_set_folds_case_and_follows_namespaces(h: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[set[str] | None] = []
    real = classdeps.affected

    def recording(conn: sqlite3.Connection, effect: BatchEffect, language: str, suffixes: tuple[str, ...], *,
                  fold: bool = False) -> set[int] | None:
        ids = real(conn, effect, language, suffixes, fold=fold)
        if language == "php":
            paths = dict(conn.execute("SELECT file_id, path FROM st_file").fetchall())
            seen.append(None if ids is None else {paths[i] for i in ids})
        return ids

    monkeypatch.setattr(classdeps, "affected", recording)
    h.apply(PHP)
    assert seen[-1] is None
    item = PHP["src/Models/Item.php"].replace("return 1;", "return 2;")
    h.apply({"src/Models/Item.php": item})  # a body edit: Item and the one file using it
    assert seen[-1] == {"src/Models/Item.php", "src/Models/Cart.php"}
    local = "<?php\nnamespace App\\Models;\n\nfunction GLOBAL_HELPER(): int { return 2; }\n"
    h.apply({"src/Models/local.php": local})
    # PHP function names are case-insensitive: the file calling ``global_helper()`` is relinked and now
    # reaches the namespaced function before the global fallback
    assert seen[-1] == {"src/Models/local.php", "src/Models/Cart.php", "src/helpers.php"}
    assert h.ref("src/Models/Cart.php", 24, "global_helper") == ("STRONG", h.uid("App\\Models.GLOBAL_HELPER"))
    arr = PHP["src/Support/Arr.php"].replace("namespace App\\Support;", "namespace App\\Other;")
    h.apply({"src/Support/Arr.php": arr})  # same simple names, another namespace
    assert seen[-1] is None or "src/Models/Cart.php" in seen[-1]
    assert h.ref("src/Models/Cart.php", 19, "A")[0] != "STRONG"
    fresh = Harness()
    try:
        fresh.apply({**PHP, "src/Models/Item.php": item, "src/Models/local.php": local, "src/Support/Arr.php": arr})
        assert h.tiers() == fresh.tiers()
    finally:
        fresh.conn.close()
