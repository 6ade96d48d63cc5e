"""A new name as PHP writes it: a variable keeps its ``$`` (QA18 #1).

The index names a PHP local or parameter with its sigil (``$a``) and a property without it (``count``: ``$this->count``
and ``self::$count`` spell it so). ``b`` and ``$b`` both rename ``$a`` to ``$b``; without this, ``b`` wrote
``function g(int b)``, a parse error, and ``$b`` was refused as no identifier. A property accepts ``$n`` the same
way and is written ``n``. Reserved words are legal variable and property names (``$class``, ``$this->list``);
only ``$this`` is not a variable a function may bind.
"""

from __future__ import annotations

import re

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.facts import Def
from codeplane.refactor.identifiers import validate_identifier

#: PHP's label: ASCII letters, digits, ``_`` and any byte from 0x80 (any non-ASCII character).
_LABEL = re.compile(r"[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*\Z")


def checked_new_name(target: Def, new_name: str) -> str:
    """``new_name`` as it is written at ``target``'s sites; 4006 ``REFACTOR_INVALID_NAME`` when it cannot be one."""
    variable = target.name.startswith("$")
    if target.language != "php" or not (variable or target.kind == "field"):
        validate_identifier(target.language, new_name)
        return new_name
    bare = new_name[1:] if new_name.startswith("$") else new_name
    problem = None
    if not _LABEL.match(bare):
        problem = f"{new_name!r} is not a {'variable' if variable else 'property'} name in php"
    elif variable and bare == "this":
        problem = "$this cannot be reassigned in php"
    if problem is not None:
        raise CodePlaneError(ErrorCode.REFACTOR_INVALID_NAME, problem,
                             details={"new_name": new_name, "language": "php"})
    return f"${bare}" if variable else bare
