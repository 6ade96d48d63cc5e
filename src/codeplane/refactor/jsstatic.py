"""JavaScript/TypeScript classes keep static and instance members apart: ``static count`` lives on the class
(``A.count``), ``count`` on each instance (``this.count`` in an instance method, ``a.count``), and one class may
declare both. Renaming one renamed the other as its "overload", and every use of either as certain.

The side of a declaration is read from its line (``static`` among the modifiers before its name); the side of a
use from its receiver: the class itself (evidence ``class``) or ``this`` in a static method is the static side,
an instance (constructed, assigned, annotated) or ``this`` in an instance method the instance side. A use whose
side cannot be told is left to the ordinary classification.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from codeplane.refactor.facts import Def, Ref
from codeplane.refactor.spans import SourceText

#: ``static`` and the modifiers that may follow it up to the member's name (``static async *gen``,
#: ``public static readonly x``, ``static get x``, ``static #secret``).
_STATIC_BEFORE = re.compile(
    r"\bstatic\s+(?:(?:readonly|async|override|declare|accessor|get|set|public|private|protected)\s+|\*\s*)*#?$")
_INSTANCE_EVIDENCE = frozenset({"constructed", "assigned", "annotated", "declared"})
_MEMBER_KINDS = frozenset({"field", "method", "property", "getter", "setter"})

Text = Callable[[str], SourceText | None]


def static_member(text: Text, d: Def) -> bool | None:
    """Whether the JS/TS class member ``d`` is declared ``static`` (None: not one, or its file is unreadable)."""
    if d.language != "javascript" or d.kind not in _MEMBER_KINDS:
        return None
    src = text(d.path)
    if src is None:
        return None
    return bool(_STATIC_BEFORE.search(src.line_text(d.name_line)[:d.name_column]))


def apart(text: Text, one: Def, other: Def) -> bool:
    """``one`` and ``other`` (of one name) are two symbols: a static and an instance member."""
    sides = static_member(text, one), static_member(text, other)
    return None not in sides and sides[0] != sides[1]


def use_side(text: Text, ref: Ref, evidence: str | None, enclosing_method: Def | None) -> bool | None:
    """Whether the member use ``ref`` reaches the static side (True), the instance side (False), or cannot say."""
    if evidence == "class":
        return True
    if evidence in _INSTANCE_EVIDENCE:
        return False
    if (ref.receiver_shape or "").rstrip("$") == "this." and enclosing_method is not None:
        return static_member(text, enclosing_method)
    return None
