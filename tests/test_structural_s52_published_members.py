"""References of a function the code publishes as a property of its own name (``window.f = f``) include the
member uses of that name (``opener.f()``), ANCHORED (QA46 §F8: a JS references answer listed 2 of 10 lines, and
neither it nor its hint said that the real callers went through ``opener.``/``window.``)."""

from __future__ import annotations

from codeplane.index.structural.symbols import SymbolScope, search_references
from tests.structural_tree import StructuralTree

_POPUP = """'use strict';
{
    function dismiss(win) {
        win.close();
    }
    window.dismiss = dismiss;
    function other(win) {
        opener.dismiss(win, 1);
    }
}
"""


def _lines(tree: StructuralTree, query: str) -> list[tuple[str, int, str]]:
    hits = search_references(tree.conn, query, scope=SymbolScope())
    return [(h.path, h.line, h.ref.ref_tier if h.ref else "") for h in hits]


def test_member_uses_of_a_published_function_are_its_references() -> None:
    tree = StructuralTree()
    tree.apply({"static/popup.js": _POPUP, "tests/popup.test.js": "window.dismiss(w, 2);\ndismiss(w, 3);\n"})
    found = _lines(tree, "dismiss")
    assert ("static/popup.js", 8, "ANCHORED") in found
    assert ("tests/popup.test.js", 1, "ANCHORED") in found


def test_member_uses_of_an_unpublished_function_stay_out() -> None:
    # ``o.dismiss()`` names some other object's member: without ``x.dismiss = dismiss`` it is no use of this one.
    tree = StructuralTree()
    tree.apply({"a.js": "function dismiss(w) { return w; }\nfunction use(o) { return o.dismiss(1); }\n",
                "mod.py": "def helper(x):\n    return x\n\n\ndef use(o):\n    return o.helper(1)\n"})
    assert [line for _, line, _ in _lines(tree, "dismiss")] == [1]
    assert [line for _, line, _ in _lines(tree, "helper")] == [1]
