"""The Python adapter's shortcuts give the facts the plain way would: an all-ASCII file's text and spans, the
nodes the walk skips as inert, and name resolution worked out once per (scope, name)."""

from __future__ import annotations

from codeplane.index.structural.extract import PARSED, extract_file
from codeplane.index.structural.facts import PROVEN, FileFacts

_MODULE = '''\
"""Docstring."""
import os.path as osp
from . import util
__all__ = ["Box", "make", "missing"]
width = 8


class Box:
    __secret = 1

    def show(self, value, *, pad=width):
        label = f"{value!r:>{width}} {self.__secret} {osp.sep}" + "plain" + f"{{braces}} {pad}"
        total = [n for n in range(3) if n] or 0
        match value:
            case {"k": int(kind)} if (size := kind) > 1:
                return label, size, total
            case _:
                return None

    def mangled(self):
        return self.__secret, __secret


def make():
    width = 3
    global util
    return Box().show(width), util, 1.5, None, True, ...
'''


def _facts(text: str) -> FileFacts:
    outcome = extract_file("pkg/mod.py", text)
    assert outcome.status == PARSED and outcome.facts is not None, outcome
    return outcome.facts


def test_an_ascii_file_has_the_facts_of_the_same_code_with_wide_text_elsewhere() -> None:
    ascii_facts = _facts(_MODULE)
    # One non-ASCII letter in the docstring: the file takes the character-column path, its facts do not change.
    wide_facts = _facts(_MODULE.replace("Docstring", "Docstrïng"))
    assert len(ascii_facts.refs) > 40
    assert ascii_facts == wide_facts


def test_names_inside_f_strings_and_patterns_are_references() -> None:
    refs = _facts(_MODULE).refs
    # Only interpolations are walked inside strings: the f-string's names (its nested format spec's ``width`` too)
    # are references, its literal text is not.
    assert {r.token_text for r in refs if r.start_line == 12} == {
        "label", "value", "width", "self", "__secret", "osp", "sep", "pad"}
    assert sorted(r.token_text for r in refs if r.start_line == 15 and r.role == "DEFINITION") == ["kind", "size"]


def test_one_name_in_several_scopes_resolves_per_scope() -> None:
    facts = _facts(_MODULE)
    binds = facts.binds
    width = sorted((r.start_line, binds[r.bind].scope) for r in facts.refs if r.token_text == "width" and r.bind >= 0)
    # The module's ``width``, read by a default and inside a method's f-string; ``make``'s own local one.
    assert width == [(5, 0), (11, 0), (12, 0), (25, 1), (27, 1)]
    assert all(r.ref_tier == PROVEN for r in facts.refs if r.token_text == "width")
    secret = {(r.start_line, r.scope): (binds[r.bind].name if r.bind >= 0 else None) for r in facts.refs
              if r.token_text == "__secret" and not r.is_member}
    # Mangled in the class; the bare name in a method is not the class's (class scopes are invisible there).
    assert secret == {(9, 2): "_Box__secret", (21, 3): None}
    util = {r.start_line: binds[r.bind] for r in facts.refs if r.token_text == "util"}
    assert util[27] == util[26] == util[3] and util[3].scope == 0
