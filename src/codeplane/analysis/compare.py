"""Match one file's definitions across two versions and say how each pair differs (pure, deterministic).

Identity is ``(kind, lexical_path)`` (§23.7); repeated definitions of one key pair up with an identical twin
first (own text, then signature), the rest in file order.
What is left is checked for renames: same kind, same container, and either the same own text with the
name blanked out, or the same signature (header without the name) found exactly once among the removed
and once among the added definitions of that kind in that container. A renamed container carries its
members along: their old lexical paths are re-prefixed with the new name and matched again.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from codeplane.analysis import signatures
from codeplane.analysis.facts import children_of, own_line_numbers
from codeplane.analysis.inert import comments_only
from codeplane.analysis.members import REQUIRED_MEMBER, required
from codeplane.analysis.models import (
    ADDED,
    BODY_CHANGED,
    REMOVED,
    RENAMED,
    SIGNATURE_CHANGED,
    Change,
    DefState,
)
from codeplane.analysis.pytypes import same_types

MINOR_LINES = 3
MAJOR_LINES = 20
PREVIEW_LINES = 6
PREVIEW_WIDTH = 120


@dataclass(frozen=True)
class Version:
    """One side of a file: its definitions and, when the side has text, its lines."""

    path: str
    defs: Sequence[DefState]
    lines: Sequence[str] | None


def _parent_key(lexical_path: str) -> str:
    return lexical_path.rpartition(".")[0]


Pairs = list[tuple[DefState, DefState]]


def match(old: Sequence[DefState], new: Sequence[DefState],
          data: bool = False) -> tuple[Pairs, Pairs, list[DefState], list[DefState]]:
    """(same-identity pairs, renamed pairs, removed, added); ``data``: the file is data (``DATA_SUFFIXES``)."""
    pairs: list[tuple[DefState, DefState]] = []
    renames: list[tuple[DefState, DefState]] = []
    prefix: dict[str, str] = {}  # old lexical path of a renamed container -> its new lexical path

    def translated(d: DefState) -> str:
        head = d.lexical_path
        cut = len(head)
        while cut > 0:
            moved = prefix.get(head[:cut])
            if moved is not None:
                return moved + head[cut:]
            cut = head.rfind(".", 0, cut)
        return head

    left, right = list(old), list(new)
    for _ in range(8):  # each round goes one nesting level deeper into renamed containers
        by_key: dict[tuple[str, str], list[DefState]] = {}
        for d in right:
            by_key.setdefault((d.kind, d.lexical_path), []).append(d)
        by_old_key: dict[tuple[str, str], list[DefState]] = {}
        for d in left:
            by_old_key.setdefault((d.kind, translated(d)), []).append(d)
        unmatched_old: list[DefState] = []
        for key, olds in by_old_key.items():
            found_pairs, rest = _pair_repeats(olds, by_key.get(key, []))
            pairs += found_pairs
            unmatched_old += rest
        taken = {id(n) for _, n in pairs}
        right = [d for d in right if id(d) not in taken]
        left = unmatched_old
        found = _renames(left, right, translated, data)
        if not found:
            break
        renames += found
        gone = {id(o) for o, _ in found} | {id(n) for _, n in found}
        left = [d for d in left if id(d) not in gone]
        right = [d for d in right if id(d) not in gone]
        for o, n in found:
            prefix[o.lexical_path] = n.lexical_path
    return pairs, renames, left, right


def _pair_repeats(olds: Sequence[DefState], news: Sequence[DefState]) -> tuple[list[tuple[DefState, DefState]],
                                                                              list[DefState]]:
    """Pairs of one identity's definitions, and the old ones left over. Repeats (``@overload`` stubs, a property's
    getter and setter) pair first with an identical twin, by own text, then by signature, and only then in file
    order: by position alone, one overload added above two read as three signature changes and an addition."""
    free = list(news)
    if len(olds) == 1 and len(free) == 1:
        return [(olds[0], free[0])], []
    out: list[tuple[DefState, DefState]] = []
    rest = list(olds)
    for same in (_same_text, _same_signature):
        unpaired: list[DefState] = []
        for o in rest:
            twin = next((n for n in free if same(o, n)), None)
            if twin is None:
                unpaired.append(o)
            else:
                free.remove(twin)
                out.append((o, twin))
        rest = unpaired
    paired = min(len(rest), len(free))
    out += list(zip(rest[:paired], free[:paired], strict=True))
    return out, rest[paired:]


def _same_text(o: DefState, n: DefState) -> bool:
    return o.own_hash is not None and o.own_hash == n.own_hash


def _same_signature(o: DefState, n: DefState) -> bool:
    return bool(o.signature_hash) and o.signature_hash == n.signature_hash


def _renames(removed: Sequence[DefState], added: Sequence[DefState], translated: object,
             data: bool = False) -> list[tuple[DefState, DefState]]:
    assert callable(translated)
    groups: dict[tuple[str, str], tuple[list[DefState], list[DefState]]] = {}
    for d in removed:
        groups.setdefault((d.kind, _parent_key(translated(d))), ([], []))[0].append(d)
    for d in added:
        groups.setdefault((d.kind, _parent_key(d.lexical_path)), ([], []))[1].append(d)
    out: list[tuple[DefState, DefState]] = []
    for key in sorted(groups):
        olds, news = groups[key]
        if not olds or not news:
            continue
        free = list(news)
        rest: list[DefState] = []
        for o in olds:
            twin = next((n for n in free if o.rename_hash is not None and n.rename_hash == o.rename_hash), None)
            if twin is None:
                rest.append(o)
            else:
                free.remove(twin)
                out.append((o, twin))
        # A signature found exactly once on each side of this container is the same definition renamed.
        # Compared as the header without the name: generic languages hash the name into signature_hash.
        olds_by_sig = Counter(_signature_key(d, data) for d in rest)
        news_by_sig = Counter(_signature_key(d, data) for d in free)
        for o in rest:
            sig = _signature_key(o, data)
            if sig and olds_by_sig[sig] == 1 and news_by_sig[sig] == 1:
                out.append((o, next(n for n in free if _signature_key(n, data) == sig)))
    return out


#: Data files: their definitions (TOML tables) have no callers, and their "signature" is the table's text, so an
#: edited value is a body change and two tables never pair as a rename by it.
DATA_SUFFIXES = (".toml",)


def _signature_key(d: DefState, data: bool = False) -> str:
    """The signature without the name: the header (``display_name``) with the name blanked, when it has a
    signature at all (variables, headings, data tables ... have none and never pair up this way)."""
    return signatures.unnamed(d.display_name, d.name) if d.signature_hash and not data else ""


def _own(version: Version, state: DefState, kids: dict[str, list[DefState]]) -> list[str]:
    if version.lines is None:
        return []
    numbers = own_line_numbers(version.path, version.lines, state, kids.get(state.def_uid, ()))
    return [version.lines[n - 1] for n in numbers]


def _clip(line: str) -> str:
    flat = line.rstrip()
    return flat if len(flat) <= PREVIEW_WIDTH else flat[: PREVIEW_WIDTH - 1] + "…"


def line_delta(before: Sequence[str], after: Sequence[str]) -> tuple[int, tuple[str, ...]]:
    """(changed line count, the first changed lines as ``-old``/``+new``)."""
    a = [line.rstrip() for line in before]
    b = [line.rstrip() for line in after]
    changed = 0
    preview: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        changed += max(i2 - i1, j2 - j1)
        preview += ["-" + _clip(x) for x in a[i1:i2]] + ["+" + _clip(x) for x in b[j1:j2]]
    if len(preview) > PREVIEW_LINES:
        # Said, not silently cut: a reviewer reads a preview without a mark as the whole change.
        cut = len(preview) - PREVIEW_LINES + 1
        return changed, (*preview[:PREVIEW_LINES - 1], f"… {cut} more changed lines")
    return changed, tuple(preview)


#: A body change in comments, blank lines or spacing alone: the code runs as before (:mod:`inert`).
COMMENTS_ONLY = "comments_only"


def body_tag(lines_changed: int) -> str:
    if lines_changed <= MINOR_LINES:
        return "minor_change"
    return "major_change" if lines_changed > MAJOR_LINES else "body_logic_changed"


def compare(old: Version | None, new: Version | None) -> list[Change]:
    """Every definition that differs between ``old`` and ``new`` (either may be absent: added/deleted file)."""
    old_defs = list(old.defs) if old else []
    new_defs = list(new.defs) if new else []
    path = new.path if new else old.path if old else ""
    old_path = old.path if old and new and old.path != new.path else None
    old_kids, new_kids = children_of(old_defs), children_of(new_defs)
    data = path.endswith(DATA_SUFFIXES)
    pairs, renames, removed, added = match(old_defs, new_defs, data)
    out: list[Change] = []

    def delta(o: DefState | None, n: DefState | None) -> tuple[int | None, tuple[str, ...]]:
        if (o is not None and (old is None or old.lines is None)) or (n is not None and (new is None or
                                                                                          new.lines is None)):
            return None, ()
        before = _own(old, o, old_kids) if old is not None and o is not None else []
        after = _own(new, n, new_kids) if new is not None and n is not None else []
        return line_delta(before, after)

    python = path.endswith((".py", ".pyi", ".pyw"))

    def sig_tags(o: DefState, n: DefState) -> tuple[str, ...]:
        if data:
            return ()
        before = o.display_name if old is None or old.lines is None else signatures.header(
            old.lines, o.start_line, o.start_col, o.end_line, python=python)
        after = n.display_name if new is None or new.lines is None else signatures.header(
            new.lines, n.start_line, n.start_col, n.end_line, python=python)
        if n.kind in signatures.VALUE_KINDS and o.kind == n.kind:
            # The stored header runs on into the initializer, which is the value, not the signature (QA65 F3).
            before = signatures.declared(o.display_name, o.name)
            after = signatures.declared(n.display_name, n.name)
        found = signatures.tags(before, after, o.name, n.name, n.kind)
        if found and python and n.kind not in signatures.TYPE_KINDS and same_types(before, after):
            return (signatures.ANNOTATION_SPELLING,)
        return found

    for o, n in pairs:
        # The hash is of the header's raw text: spaces inside it, or a trailing comma, change it and nothing else
        # (``def f(  x)`` was "signature_changed, breaking").
        changed = sig_tags(o, n) if o.signature_hash != n.signature_hash else ()
        if changed:
            count, preview = delta(o, n)
            out.append(Change(path, n.kind, n.name, n.lexical_path, SIGNATURE_CHANGED, o, n, old_path, count,
                              changed, preview))
        elif o.own_hash is not None and n.own_hash is not None:
            if o.own_hash != n.own_hash:
                count, preview = delta(o, n)
                inert = old is not None and new is not None and comments_only(
                    path, _own(old, o, old_kids), _own(new, n, new_kids))
                out.append(Change(path, n.kind, n.name, n.lexical_path, BODY_CHANGED, o, n, old_path, count,
                                  (COMMENTS_ONLY,) if inert else (body_tag(count or 0),), preview))
        elif o.end_line - o.start_line != n.end_line - n.start_line:
            # Epoch snapshots keep no text: a definition whose length changed certainly changed.
            out.append(Change(path, n.kind, n.name, n.lexical_path, BODY_CHANGED, o, n, old_path))
    for o, n in renames:
        count, preview = delta(o, n)
        # Generic languages hash the header with the name in it: only a change beyond the name is tagged.
        tags: tuple[str, ...] = ("symbol_renamed", *sig_tags(o, n))
        out.append(Change(path, n.kind, n.name, n.lexical_path, RENAMED, o, n, old_path, count, tags, preview))
    for o in removed:
        count, preview = delta(o, None)
        out.append(Change(path, o.kind, o.name, o.lexical_path, REMOVED, o, None, old_path, count,
                          ("symbol_removed",), preview))
    new_ones = {n.def_uid for n in added}
    containers = {d.def_uid: d for d in new_defs}
    for n in added:
        count, preview = delta(None, n)
        # A member added to a type that was there before: required, every use of the type must now supply it.
        owner = containers.get(n.parent_uid) if n.parent_uid is not None and n.parent_uid not in new_ones else None
        if owner is not None and required(path, n, owner, new.lines if new is not None else None):
            out.append(Change(path, n.kind, n.name, n.lexical_path, ADDED, None, n, old_path, count,
                              ("symbol_added", REQUIRED_MEMBER), preview, owner=owner))
            continue
        out.append(Change(path, n.kind, n.name, n.lexical_path, ADDED, None, n, old_path, count,
                          ("symbol_added",), preview))
    return out
