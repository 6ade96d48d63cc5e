"""The "no silent misses" sweep: every whole-identifier occurrence of the old name, planned or explained.

Candidate files come from the index's lexical search (complete by construction) plus the files the plan
already touches. Each occurrence the structural plan does not cover becomes a ``low`` candidate with its
reason, or a documentation edit (§8.11) when it sits in a comment, docstring or documentation file. A
``.cplignore``'d file is never indexed; :mod:`excluded` reports its mentions separately.

A documentation file is one of ``refactor.doc_sweep.scan_extensions`` and nothing else: another file without code
structure (``.gitignore``, JSON, YAML, a ``Makefile``) gets ``low`` ``unindexed`` candidates, which nothing applies
unless included by id. Such a file is configuration as often as prose, and ``apply_docs`` once rewrote ``*.log`` in
``.gitignore`` while renaming a ``log`` method (QA59 F3). A glob's extension there (``*.log``) names files, not the
symbol: it is no occurrence at all.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from codeplane.core.config import DocSweepConfig
from codeplane.index.structural.cprogram import SUFFIXES as C_FAMILY_SUFFIXES
from codeplane.refactor.assemble import Draft
from codeplane.refactor.docsweep import (
    code_block_lines,
    doctest_lines,
    is_doc_file,
    is_glob_suffix,
    mention_confidence,
    names_another,
    names_another_class,
    qualifier,
    rust_doctest_not_symbol,
)
from codeplane.refactor.facts import DynamicSite, Ref
from codeplane.refactor.gopackage import GoPackageTarget
from codeplane.refactor.lexical import classify, find_offsets, grammar_for, line_starts
from codeplane.refactor.models import KEPT_LISTED, Certainty, Coverage
from codeplane.refactor.spans import SourceText, SpanEdit
from codeplane.refactor.typedkeys import member_keys

_DOC_REASONS = {"comment": "comment", "docstring": "docstring"}


@dataclass(frozen=True)
class SweepInput:
    name: str
    new_name: str
    sources: Mapping[str, SourceText]
    #: Reference facts named ``name`` in the swept files (to tell other bindings from unresolved ones).
    refs: Iterable[Ref]
    dynamic: Iterable[DynamicSite]
    structural_paths: frozenset[str]
    docs: DocSweepConfig
    truncated: bool = False
    #: Class names whose typed object-literal keys are the member being renamed (``typedkeys.py``).
    key_owners: frozenset[str] = frozenset()
    #: Whether the JSX tag name at ``(path, line, column)`` is a component whose props the family types
    #: (``jsxprops.py``): its attributes are keys of the member.
    typed_component: Callable[[str, int, int], bool] | None = None
    #: ``(path, name line, name)`` of the renamed member's family classes: ``{ name } = this`` in one is the member.
    this_classes: frozenset[tuple[str, int, str]] = frozenset()
    #: The type a renamed Rust method or field belongs to: in a doctest, ``Other::name`` is not it.
    member_owner: str | None = None
    #: Other types declare a member of the same name: in a doctest, ``x.name`` may be theirs.
    member_twins: bool = False
    #: A Go package-level target: occurrences that cannot be it are counted, not proposed (``gopackage.py``).
    go_package: GoPackageTarget | None = None
    #: The target's qualified name: a doc mention qualified by another package's path is ``low``.
    qualified_name: str = ""
    #: For a member of a Python class: the kind of a reference's scope (``file``, ``class``, ``function``...). A bare
    #: name outside a class body (in a function, a lambda, a comprehension, at module level) never denotes a class
    #: member: Python looks it up in functions, the module and the builtins, so it is set aside, not proposed.
    python_member_scope: Callable[[int], str | None] | None = None
    #: For a class member: the names of its class and the subclasses; a doc mention qualified by another class's
    #: name (``Context.invoke``) is that class's member.
    member_classes: frozenset[str] = frozenset()
    #: For a Rust or Java field or method: a use its syntax says is the other member (``x.len()`` of a field
    #: ``len``) is set aside like a Go ``other_symbol`` (``memberkinds.py``).
    other_kind: Callable[[str, int, int, Ref | None], bool] | None = None
    #: Whether a doc mention's qualifier (``attrs`` in ``attrs.evolve``) names an owner other than the target's
    #: (``docowners.py``): such a mention is another symbol's, ``low``.
    other_owner: Callable[[str], bool] | None = None


#: A doctest line of a Python docstring: a ``>>>`` prompt or its ``...`` continuation.
_DOCTEST_LINE = re.compile(r"\s*(?:>>>|\.\.\.)(?:\s|$)")
_PYTHON = (".py", ".pyi", ".pyw")

def _whole_qualified_string(line: str, col: int, data: SweepInput) -> bool:
    """Whether the string around ``col`` is exactly the target's qualified name (``"pkg.core.helper"``, what
    ``mock.patch`` and ``importlib`` take): it names this definition and nothing else, unlike a bare word."""
    qualified = data.qualified_name
    if not qualified.endswith("." + data.name):
        return False
    prefix = qualified[: -len(data.name)]
    start, end = col - len(prefix), col + len(data.name)
    if start < 1 or line[start:col] != prefix:
        return False
    quote = line[start - 1]
    return quote in "'\"" and line[end:end + 1] == quote


def _other_owner(before: str, names_other: Callable[[str], bool] | None) -> bool:
    written = qualifier(before) if names_other is not None else None
    return names_other is not None and written is not None and names_other(written)


#: Scopes whose bare names never reach a class attribute (a class body's own statements are in ``class``).
_NOT_CLASS_SCOPES = frozenset({"file", "function", "lambda", "comprehension"})


def _bare_outside_class(ref: Ref | None, scope_kind: Callable[[int], str | None] | None) -> bool:
    return scope_kind is not None and ref is not None and not ref.is_member and ref.scope_id is not None and (
        scope_kind(ref.scope_id) in _NOT_CLASS_SCOPES)


def _code_reason(ref: Ref | None, path: str, structural: frozenset[str], line_dynamic: bool) -> str:
    if line_dynamic:
        return "dynamic_access"
    if ref is None:
        return "unresolved" if path in structural else "unindexed"
    if ref.target_uid is not None or ref.bind_id is not None:
        return "other_binding"
    if ref.receiver_shape == "kwarg=":
        return "keyword_argument"
    if ref.is_member:
        return "unresolved_receiver"
    return "unresolved"


_TYPE_PATH = re.compile(r"\b([A-Z]\w*)\s*::\s*$")


_LITERAL_LOOKBACK = 2_000


def _block_start(lines: set[int], line: int, starts: list[int]) -> int:
    """Offset of the first line of the run of ``lines`` holding ``line`` (a doctest's first line)."""
    while line - 1 in lines:
        line -= 1
    return starts[line - 1]
_OPENING = re.compile(r"([A-Za-z_]\w*)\s*$")


def _literal_type(text: str, offset: int, floor: int) -> str | None:
    """The name before the innermost ``{`` still open at ``offset`` (``Version {`` for a key in it), looking back
    no further than ``floor`` (the doctest's first line)."""
    depth = 0
    for index in range(offset - 1, max(floor, offset - _LITERAL_LOOKBACK) - 1, -1):
        char = text[index]
        depth += char == "}"
        if char == "{":
            if depth == 0:
                match = _OPENING.search(text[max(floor, index - 200):index])
                return match.group(1) if match else None
            depth -= 1
    return None


def _not_the_owners(text: str, offset: int, floor: int, before: str, data: SweepInput) -> bool:
    """A doctest mention of a Rust member that is, by its syntax, another type's — or may be, when another type
    has a member of the name: ``Other::name``; then ``x.name``, and a key or word outside an ``Owner { }``."""
    owner = data.member_owner
    if owner is None:
        return False
    path = _TYPE_PATH.search(before)
    if path is not None:
        return path.group(1) not in (owner, "Self")
    if not data.member_twins:
        return False
    if before.rstrip().endswith("."):
        return True
    return _literal_type(text, offset, floor) not in (owner, "Self")


def _shorthand_key(text: str, offset: int, floor: int, data: SweepInput) -> bool:
    """A renamed field written as a shorthand key of its own struct's literal in a doctest (``Owner { name, }``)."""
    after = text[offset + len(data.name):offset + len(data.name) + 8].lstrip(" \t")
    before = re.sub(r"(?://[/!]|\*)\s*$", "", text[max(floor, offset - 40):offset].rstrip()).rstrip()
    return data.member_owner is not None and after[:1] in (",", "}", "\n") and before[-1:] in ("{", ",") \
        and _literal_type(text, offset, floor) in (data.member_owner, "Self")


_DEFINE = re.compile(r"\s*#\s*define\s")


def _in_macro_body(src: SourceText, line: int) -> bool:
    """Whether ``line`` belongs to a ``#define`` (its first line or a ``\\`` continuation)."""
    while line > 1 and src.line_text(line - 1).rstrip().endswith("\\"):
        line -= 1
    return _DEFINE.match(src.line_text(line)) is not None


def _tag_judge(data: SweepInput, src: SourceText) -> Callable[[int], bool] | None:
    """``data.typed_component`` for a character offset of ``src``."""
    judge = data.typed_component
    return None if judge is None else lambda offset: judge(src.path, *src.position(offset))


def sweep(draft: Draft, data: SweepInput) -> Coverage:
    """Add every unplanned occurrence to ``draft`` (low code candidates or doc edits) and count coverage."""
    planned = draft.planned_positions()
    planned_paths = {e.path for e, certainty in draft.code if certainty != "low"}
    refs_at = {(r.path, r.line, r.column): r for r in data.refs}
    dynamic_lines = {(d.path, d.line) for d in data.dynamic if data.name in d.literals}
    # The structural plan's own low candidates (``other_binding``, ``unresolved_receiver`` of a member) count too:
    # the preview's "N low (reasons)" said "7 low ()" when all of them were the plan's.
    by_reason: Counter[str] = Counter(e.reason for e, certainty in draft.code if certainty == "low")
    aside: list[tuple[str, int, int]] = []
    occurrences = in_plan = 0
    unindexed: set[str] = set()
    for path in sorted(data.sources):
        src = data.sources[path]
        offsets = find_offsets(src.text, data.name, php=path.endswith((".php", ".phtml")))
        doc_file = is_doc_file(path, data.docs)
        if not doc_file and grammar_for(path) is None and path not in data.structural_paths:
            offsets = [o for o in offsets if not is_glob_suffix(src.text, o)]
        if not offsets:
            continue
        starts = line_starts(src.text)
        positions: list[tuple[int, int, int]] = []
        line_idx = 0
        for off in offsets:
            while line_idx + 1 < len(starts) and starts[line_idx + 1] <= off:
                line_idx += 1
            positions.append((off, line_idx + 1, off - starts[line_idx]))
        occurrences += len(positions)
        todo = [p for p in positions if (path, p[1], p[2]) not in planned]
        in_plan += len(positions) - len(todo)
        if not todo:
            continue
        contexts = ["doc"] * len(todo) if doc_file else classify(src.text, path, [p[0] for p in todo])
        fenced = code_block_lines(src.text) if doc_file else set()
        doctests = doctest_lines(src.text) if path.endswith(".rs") else set()
        # A doctest's own locals (``let left = ...``) and string contents are not the symbol (QA 45 F8).
        doctest_other = rust_doctest_not_symbol(src.text, doctests, data.name) \
            if any(p[1] in doctests for p in todo) else set()
        if path not in data.structural_paths and not doc_file:
            unindexed.add(path)
        keys = {} if doc_file else member_keys(
            src.text, path, [p[0] for p in todo], data.key_owners,
            frozenset((line, name) for where, line, name in data.this_classes if where == path),
            typed_component=_tag_judge(data, src))
        for (offset, line, col), context in zip(todo, contexts, strict=True):
            edit_line = src.line_text(line)
            if context in ("doc", "comment", "docstring"):
                reason = "doc_file" if context == "doc" else _DOC_REASONS[context]
                if context == "comment" and line in doctests:
                    reason = "doctest"  # compiled by ``cargo test``: code in a comment
                # ``>>> Version("1.2").is_prerelease`` in a Python docstring: code doctest runs.
                python_doctest = context == "docstring" and path.endswith(_PYTHON) and _DOCTEST_LINE.match(edit_line)
                if python_doctest:
                    reason = "doctest"
                by_reason[reason] += 1
                confidence: Certainty = mention_confidence(edit_line, col, data.name, in_code_block=bool(
                    line in fenced or line in doctests or python_doctest))
                if (data.qualified_name and names_another(edit_line[:col], data.qualified_name)) or \
                        names_another_class(edit_line[:col], data.member_classes) or \
                        _other_owner(edit_line[:col], data.other_owner):
                    # ``wsgiref.headers.Headers.get_all``, ``Context.invoke``, ``attrs.evolve``: not this one
                    confidence = "low"
                elif data.python_member_scope is not None and (python_doctest or (
                        context == "doc" and _DOCTEST_LINE.match(edit_line))) and not edit_line[:col].endswith("."):
                    # A doctest's bare name is module-level code (``>>> evolve(i1)``, ``>>> from attrs import
                    # evolve``): never a class member, as the code sweep sets such names aside.
                    confidence = "low"
                new_text = data.new_name
                if reason == "doctest" and line in doctests:
                    floor = _block_start(doctests, line, starts)
                    if offset in doctest_other:
                        confidence = "low"
                    elif _not_the_owners(src.text, offset, floor, edit_line[:col], data):
                        confidence = "low"  # ``VersionReq::parse`` / ``r.major`` while renaming ``Version``'s
                    elif _shorthand_key(src.text, offset, floor, data):
                        new_text = f"{data.new_name}: {data.name}"  # ``Version { major, .. }``: the variable stays
                edit = SpanEdit(path, line, col, line, col + len(data.name), data.name, new_text, reason)
                if data.docs.enabled:
                    draft.docs.append((edit, confidence))
                else:
                    draft.code.append((edit, "low"))
                continue
            certainty: Certainty = "low"
            if context == "string":
                reason = "dynamic_access" if (path, line) in dynamic_lines else "string"
                if reason == "string" and path.endswith(_PYTHON) and _whole_qualified_string(edit_line, col, data):
                    reason, certainty = "qualified_string", "medium"  # ``mock.patch("pkg.core.helper")``
            elif offset in keys:
                certainty, reason = keys[offset]
            elif (data.go_package is not None and data.go_package.other_symbol(
                    path, refs_at.get((path, line, col)), edit_line[:col])) or _bare_outside_class(
                    refs_at.get((path, line, col)), data.python_member_scope) or (
                    data.other_kind is not None and data.other_kind(path, line, col, refs_at.get((path, line, col)))):
                by_reason["other_symbol"] += 1
                aside.append((path, line, col))
                continue
            elif path in planned_paths and path.endswith(C_FAMILY_SUFFIXES) and refs_at.get((path, line, col)) is None \
                    and _in_macro_body(src, line):
                # A ``#define`` body is text the parser does not read; in a file where the plan renames the symbol
                # (its own file, or one seeing its declaration), a use in a macro there is probably it.
                reason, certainty = "macro_body", "medium"
            else:
                reason = _code_reason(refs_at.get((path, line, col)), path, data.structural_paths,
                                      (path, line) in dynamic_lines)
            # ``by_reason`` explains the low candidates: a medium or high edit found here is covered by the plan
            # (the summary read "3 low (..., typed_object_key 2)" with the two medium keys among the lows).
            if certainty == "low":
                by_reason[reason] += 1
            else:
                in_plan += 1
            draft.code.append((SpanEdit(path, line, col, line, col + len(data.name), data.name, data.new_name,
                                        reason), certainty))
    low = sum(1 for _, c in draft.code if c == "low")
    kept = sorted((e.path, e.line, e.column) for e, _ in draft.code if e.old_text == e.new_text)
    return Coverage(
        kept_count=len(kept), kept=[f"{p}:{line}:{col}" for p, line, col in kept[:KEPT_LISTED]],
        set_aside=[f"{p}:{line}:{col}" for p, line, col in aside[:KEPT_LISTED]],
        files_scanned=len(data.sources), lexical_occurrences=occurrences, in_plan=in_plan, low_candidates=low,
        by_reason=dict(sorted(by_reason.items())), unindexed_files=len(unindexed), truncated=data.truncated,
    )
