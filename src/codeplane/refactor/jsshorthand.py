"""Shorthand keys of JavaScript/TypeScript object literals and patterns in a rename (``{ merge }``).

``{ merge }`` is two names in one token: the key ``merge`` and the variable ``merge`` (in a literal, the value it
reads; in a destructuring pattern or a parameter, the local it declares). Renaming the token in place renames
both, and the key is what other code sees: ``module.exports = { merge }`` renamed to ``{ combine }`` makes every
``utils.merge(...)`` of an importer fail. So a shorthand splits into ``key: variable`` and only the renamed half
changes:

- the target is a variable, function or class (what the token resolves to): ``{ merge: combine }``, the key
  and everything that reads it stay as they are;
- the target is a member (a method or field of a class or interface, whose key a typed literal spells):
  ``{ combine: merge }``, the variable keeps its name.

Low candidates of a variable rename (another binding of the same name, an unresolved receiver) are left as the
sweep proposed them: which half the agent means is its decision.
"""

from __future__ import annotations

from collections.abc import Mapping

from codeplane.refactor.assemble import Draft
from codeplane.refactor.lexical import grammar_for, syntax_root
from codeplane.refactor.spans import SourceText, SpanEdit

_SHORTHANDS = frozenset({"shorthand_property_identifier", "shorthand_property_identifier_pattern"})
_ECMASCRIPT = frozenset({"javascript", "typescript", "tsx"})
#: The reason of a rename edit already written as ``key: variable`` (a ``require`` destructuring's key).
REQUIRE_KEY = "require_key"
#: Definition kinds that are a key of their owner's objects, not a variable.
MEMBER_KINDS = frozenset({"method", "field", "property"})


def split_shorthands(draft: Draft, sources: Mapping[str, SourceText], *, member: bool) -> int:
    """Rewrite ``draft``'s rename edits that fall on a shorthand key (above); how many were rewritten."""
    by_path: dict[str, list[int]] = {}
    for index, (edit, certainty) in enumerate(draft.code):
        if grammar_for(edit.path) in _ECMASCRIPT and (member or certainty != "low") and edit.line == edit.end_line \
                and edit.reason != REQUIRE_KEY:
            by_path.setdefault(edit.path, []).append(index)
    rewritten = 0
    for path, indexes in sorted(by_path.items()):
        src = sources.get(path)
        root = syntax_root(src.data, path) if src is not None else None
        if src is None or root is None:
            continue
        line_bytes = [0]
        for text in src.lines:
            line_bytes.append(line_bytes[-1] + len(text.encode("utf-8")) + 1)
        for index in indexes:
            edit, certainty = draft.code[index]
            start = line_bytes[edit.line - 1] + len(src.line_text(edit.line)[:edit.column].encode("utf-8"))
            node = root.descendant_for_byte_range(start, start + len(edit.old_text.encode("utf-8")))
            if node is None or node.type not in _SHORTHANDS or node.start_byte != start or node.end_byte != (
                    start + len(edit.old_text.encode("utf-8"))):
                continue
            pair = f"{edit.new_text}: {edit.old_text}" if member else f"{edit.old_text}: {edit.new_text}"
            draft.code[index] = (SpanEdit(edit.path, edit.line, edit.column, edit.end_line, edit.end_column,
                                          edit.old_text, pair, edit.reason), certainty)
            rewritten += 1
    return rewritten
