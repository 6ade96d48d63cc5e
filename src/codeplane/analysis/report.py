"""From raw changes to the answer: nesting and order, severity and risk, summary lines, the agentic hint.

Order is deterministic: by path, then each file's changes depth-first (a change is followed by the
changes nested in it), siblings by line (the new version's line, the old one's for removals), then
qualified name and change kind. A change nests under its nearest enclosing definition that also changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from codeplane.analysis.members import REQUIRED_MEMBER
from codeplane.analysis.models import (
    ADDED,
    BODY_CHANGED,
    CHANGE_KINDS,
    MOVED,
    REMOVED,
    RENAMED,
    SIGNATURE_CHANGED,
    Change,
    Impact,
)
from codeplane.analysis.moves import REEXPORTED
from codeplane.analysis.signatures import (
    ANNOTATION_SPELLING,
    PARAMETERS_CHANGED,
    python_call_compatible,
    ts_call_compatible,
)

#: Names listed per hint item / breaking summary (the counts stay exact).
MAX_NAMES = 5
_LABEL = {SIGNATURE_CHANGED: "signature changed", REMOVED: "removed", RENAMED: "renamed", MOVED: "moved",
          BODY_CHANGED: "body changed", ADDED: "added"}


def _line(change: Change) -> int:
    return change.entity.start_line


def order(changes: Sequence[Change]) -> list[Change]:
    """``changes`` nested and ordered (see the module docstring), with ``parent`` indexes set."""
    by_file: dict[str, list[Change]] = {}
    for change in changes:
        by_file.setdefault(change.path, []).append(change)
    out: list[Change] = []
    for path in sorted(by_file):
        items = sorted(by_file[path], key=lambda c: (_line(c), c.entity.start_col, c.qualified_name, c.change))
        by_name: dict[str, int] = {}
        for i, c in enumerate(items):
            by_name.setdefault(c.qualified_name, i)
            if c.old is not None:
                by_name.setdefault(c.old.lexical_path, i)
        kids: dict[int | None, list[int]] = {}
        for i, c in enumerate(items):
            kids.setdefault(_container(c, by_name, i), []).append(i)
        stack: list[tuple[int, int | None]] = [(i, None) for i in reversed(kids.get(None, []))]
        while stack:  # depth-first, children in order after their parent
            i, parent = stack.pop()
            here = len(out)
            out.append(replace(items[i], parent=parent))
            stack += [(k, here) for k in reversed(kids.get(i, []))]
    return out


def _container(change: Change, by_name: dict[str, int], me: int) -> int | None:
    name = change.qualified_name
    while "." in name:
        name = name.rpartition(".")[0]
        found = by_name.get(name)
        if found is not None and found != me:
            return found
    return None


def assess(change: Change, impact: Impact | None) -> Change:
    """Set ``structural_severity``, ``behavior_change_risk`` and the impact."""
    used = impact is not None and (impact.proven + impact.strong > 0 or bool(impact.importing_files) or (
        change.change == RENAMED and impact.anchored + impact.unknown > 0))  # uses of the old name break
    kind = change.change
    if kind == ADDED and REQUIRED_MEMBER in change.delta_tags:
        # Every literal or implementation of the type (its references, ``impact.refs_of``) lacks the new member.
        severity, risk = "breaking", "high" if used else "medium"
    elif kind == ADDED:
        severity, risk = "non_breaking", "low"
    elif kind == BODY_CHANGED:
        tag = change.delta_tags[0] if change.delta_tags else None
        severity = "non_breaking"
        risk = {"comments_only": "low", "minor_change": "low", "body_logic_changed": "medium",
                "major_change": "high"}.get(tag or "", "unknown")
    elif kind == MOVED:
        # The same text under another module: what it does is the same (unless the names it uses mean something
        # else there, which the moved file's own imports decide); whoever imports it from the old module breaks.
        # A private name is safe to move only when nothing here imports it from the old module either.
        private = impact is not None and impact.visibility == "private"
        kept = REEXPORTED in change.delta_tags  # the old module still provides it
        stale = not kept and impact is not None and bool(impact.stale_importing_files)
        severity = "breaking" if stale or not (private or kept) else "non_breaking"
        risk = "high" if stale else "low"
    elif ANNOTATION_SPELLING in change.delta_tags:
        # ``x: Optional[bool]`` -> ``x: bool | None``: the same types, spelled otherwise.
        severity, risk = "non_breaking", "low"
    elif _calls_still_bind(change):
        # ``f(x, y=1)`` -> ``f(x, y=2, *, z=None)``: every existing call still binds; what it does may differ.
        severity, risk = "non_breaking", "medium"
    else:
        severity = "breaking"
        risk = "high" if used else "medium"
    return replace(change, structural_severity=severity, behavior_change_risk=risk, impact=impact)


def _calls_still_bind(change: Change) -> bool:
    """A Python or TypeScript signature change in the parameter list alone that every old call survives."""
    old, new = change.old, change.new
    if change.change != SIGNATURE_CHANGED or change.delta_tags != (PARAMETERS_CHANGED,) or old is None or new is None:
        return False
    if change.path.endswith((".py", ".pyi")):
        return python_call_compatible(old.display_name, new.display_name, old.name, new.name)
    # An optional parameter added (``f(a)`` -> ``f(a, b?)``) is TypeScript's ``y=1``: no call breaks (QA59 F6).
    return change.path.endswith(_TS) and ts_call_compatible(old.display_name, new.display_name, old.name, new.name)


_TS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


def counts(changes: Sequence[Change]) -> dict[str, int]:
    out = {kind: 0 for kind in CHANGE_KINDS}
    for c in changes:
        out[c.change] += 1
    return out


def summary(changes: Sequence[Change], files_changed: int, non_structural: int) -> str:
    """``2 body changed in 1 file; 1 file without structural changes``: the first count is of the files that
    hold the changes (it was every file compared, so two changes in one file read as one in each of two)."""
    tally = counts(changes)
    parts = [f"{n} {_LABEL[k]}" for k, n in tally.items() if n]
    if not parts:
        return f"no structural changes in {_plural(files_changed, 'file')}"
    return f"{', '.join(parts)} in {_plural(len({c.path for c in changes}), 'file')}" + (
        f"; {_plural(non_structural, 'file')} without structural changes" if non_structural else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


#: Why a breaking change's references are unknown (``Impact.refs_unknown``), as the hint says it.
_UNKNOWN = {"file_not_in_index": "the definition's file is not in the index: moved or removed since",
            "not_in_file": "the index holds no such definition in its file: renamed or removed since",
            "not_indexed_yet": "the index has not caught up with its file yet",
            "unavailable": "the index could not be read"}


def _unknown(c: Change) -> str | None:
    """Why ``c``'s references were not counted (a ``_UNKNOWN`` key), or None when they were."""
    if c.impact is None or c.impact.reference_basis == "unknown":
        return (c.impact.refs_unknown if c.impact is not None else None) or "unavailable"
    return None


def _names(changes: Sequence[Change], detail: bool = False, candidates: bool = False) -> str:
    shown = []
    for c in changes[:MAX_NAMES]:
        text = c.qualified_name
        if candidates and c.impact is not None:
            text += f" ({c.impact.anchored + c.impact.unknown})"
        if detail and c.impact is not None and _refs(c):
            text += f" ({c.impact.refs_of}: " if c.impact.refs_of else " ("
            text += f"{c.impact.proven} proven, {c.impact.strong} strong"
            if c.change == RENAMED and c.impact.anchored + c.impact.unknown:
                text += f", {c.impact.anchored + c.impact.unknown} same-name unresolved"
            if c.change == RENAMED and c.old is not None and c.impact.stale_importing_files_total:
                text += f"; imported as {c.old.name} by {_plural(c.impact.stale_importing_files_total, 'file')}"
            if c.impact.indexed_at:
                # The target revision's file is gone: these are the references of the definition found there now.
                text += f"; counted in {c.impact.indexed_at}, where it is now"
            text += ")"
        shown.append(text)
    more = len(changes) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def breaking_summary(changes: Sequence[Change]) -> str | None:
    breaking = [c for c in changes if c.structural_severity == "breaking"]
    if not breaking:
        return None
    return f"{_plural(len(breaking), 'breaking change')}: {_names(breaking)}"


def _refs(c: Change) -> int:
    """The callers to update: resolved references, and for a rename those spelled with the old name too (the
    index resolves them to nothing now, so they are no more than candidates, but each one breaks)."""
    if c.impact is None:
        return 0
    return c.impact.proven + c.impact.strong + (
        c.impact.anchored + c.impact.unknown + c.impact.stale_importing_files_total if c.change == RENAMED else 0)


def _callers_all_in(change: Change, touched: set[str]) -> bool:
    """Whether every file referencing ``change`` is one the diff changes (known only when the list is whole)."""
    impact = change.impact
    if impact is None or not impact.referencing_files or impact.stale_importing_files_total:
        return False
    if change.change == RENAMED and impact.anchored + impact.unknown:
        return False  # the old name's unresolved uses are in no file list
    return (impact.referencing_files_total <= len(impact.referencing_files)
            and set(impact.referencing_files) <= touched)


def agentic_hint(changes: Sequence[Change], tests: Sequence[str]) -> str:
    """§23.7's priority list, computed from every change (not just the page) and every test file they affect."""
    steps: list[str] = []
    signature = sorted((c for c in changes if c.change in (SIGNATURE_CHANGED, RENAMED) and _refs(c)
                        and c.structural_severity == "breaking"),
                       key=lambda c: (-_refs(c), c.path, c.qualified_name))
    touched = {c.path for c in changes} | {c.old_path for c in changes if c.old_path}
    in_diff = [c for c in signature if _callers_all_in(c, touched)]
    signature = [c for c in signature if c not in in_diff]
    if signature:
        steps.append(f"update the callers of {_plural(len(signature), 'changed signature/name')}: "
                     f"{_names(signature, True)}")
    if in_diff:
        # Not "update the callers": a diff that changes a signature and its callers together asked for that step
        # to be done again (click's ``term_len``: all 10 callers were in the same commit).
        steps.append(f"check the callers of {_plural(len(in_diff), 'changed signature/name')}, every one in a file "
                     f"this diff also changes: {_names(in_diff, True)}")
    required = sorted((c for c in changes if REQUIRED_MEMBER in c.delta_tags and _refs(c)),
                      key=lambda c: (-_refs(c), c.path, c.qualified_name))
    if required:
        checked = all(_callers_all_in(c, touched) for c in required)
        steps.append(f"{'check' if checked else 'supply'} {_plural(len(required), 'new required member')} wherever "
                     f"{'its type is' if len(required) == 1 else 'their types are'} built or implemented (one without "
                     f"it no longer compiles{', every use in a file this diff also changes' if checked else ''}): "
                     f"{_names(required, True)}")
    removed = sorted((c for c in changes if c.change == REMOVED),
                     key=lambda c: (-(c.impact.reference_count if c.impact else 0), c.path, c.qualified_name))
    if removed:
        steps.append(f"check references to {_plural(len(removed), 'removed symbol')}: {_names(removed, True)}")
    moved = sorted((c for c in changes if c.change == MOVED and c.structural_severity == "breaking"),
                   key=lambda c: (c.old_path or "", c.path, c.qualified_name))
    imported = [c for c in moved if c.impact is not None and c.impact.stale_importing_files]
    if imported:
        shown = [f"{c.qualified_name} ({c.old_path} -> {c.path}; imported from {c.old_path} by "
                 f"{', '.join(c.impact.stale_importing_files[:MAX_NAMES])}"
                 + (f" and {c.impact.stale_importing_files_total - MAX_NAMES} more"
                    if c.impact.stale_importing_files_total > MAX_NAMES else "") + ")"
                 for c in imported[:MAX_NAMES] if c.impact is not None]
        more = len(imported) - len(shown)
        steps.append(f"update the imports of {_plural(len(imported), 'moved definition')} the repository still "
                     f"imports from the old module (or re-export them there): {', '.join(shown)}"
                     + (f" and {more} more" if more > 0 else ""))
        moved = [c for c in moved if c not in imported]
    if moved:
        shown = [f"{c.qualified_name} ({c.old_path} -> {c.path})" for c in moved[:MAX_NAMES]]
        more = len(moved) - len(shown)
        steps.append(f"{_plural(len(moved), 'definition')} moved unchanged (an import of the old module outside "
                     f"the repository breaks unless it re-exports them): {', '.join(shown)}"
                     + (f" and {more} more" if more > 0 else ""))
    breaking = [c for c in changes if c.structural_severity == "breaking"
                and (c.change in (SIGNATURE_CHANGED, RENAMED) or REQUIRED_MEMBER in c.delta_tags) and not _refs(c)]
    for why, said in _UNKNOWN.items():
        unknown = sorted((c for c in breaking if _unknown(c) == why), key=lambda c: (c.path, c.qualified_name))
        if unknown:
            # Not "no reference": nothing was counted (QA59 F7 read a moved file's callers as none).
            steps.append(f"references unknown for {_plural(len(unknown), 'breaking change')} ({said}; search their "
                         f"names before relying on them): {_names(unknown)}")
    known = [c for c in breaking if _unknown(c) is None]
    guessed = sorted((c for c in known if c.impact is not None and c.impact.anchored + c.impact.unknown),
                     key=lambda c: (c.path, c.qualified_name))
    if guessed:
        # Member accesses the index could not tie to a type: candidates, not proof of "no reference".
        steps.append(f"{_plural(len(guessed), 'breaking change')} with no resolved reference, only same-named uses "
                     f"the index could not resolve (check them): " + _names(guessed, candidates=True))
    unsure = {id(c) for c in guessed}
    unreferenced = sorted((c for c in known if id(c) not in unsure), key=lambda c: (c.path, c.qualified_name))
    if unreferenced:
        # Not "nothing to act on" beside "N breaking changes": no caller here, but one outside would break.
        steps.append(f"{_plural(len(unreferenced), 'breaking change')} with no reference in the repository "
                     f"(a caller outside it would break): {_names(unreferenced)}")
    rank = {"high": 0, "medium": 1, "unknown": 2, "low": 3}
    body = sorted((c for c in changes if c.change == BODY_CHANGED and c.delta_tags != ("comments_only",)),
                  key=lambda c: (rank[c.behavior_change_risk], c.path, c.qualified_name))
    inert = sorted((c for c in changes if c.delta_tags == ("comments_only",)), key=lambda c: (c.path, c.qualified_name))
    if inert:
        # Not "review for correctness": nothing of them runs differently (a docstring change is no comment: it is
        # ``__doc__``, and doctests read it).
        steps.append(f"{_plural(len(inert), 'body change')} only in comments or spacing (the code is the same): "
                     f"{_names(inert)}")
    if body:
        risky = sum(1 for c in body if c.behavior_change_risk in ("high", "medium"))
        steps.append(f"review {_plural(len(body), 'body change')} for correctness ({risky} medium/high risk): "
                     f"{_names(body)}")
    if tests:
        more = len(tests) - MAX_NAMES
        steps.append(f"re-run {_plural(len(tests), 'affected test target')}: {', '.join(tests[:MAX_NAMES])}"
                     + (f" and {more} more" if more > 0 else ""))
    if not steps:
        return "nothing to act on"
    return "; ".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
