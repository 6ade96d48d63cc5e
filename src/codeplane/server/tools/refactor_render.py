"""Text renderings of refactor previews and applies, written for the decision an agent makes from them.

A preview is one head line (what, status, how many edits in how many files, the ``refactor_id``), then the
edits: those of high certainty only as ``edit_id:line`` per file (they are applied by default and need no
judgment; ``refactor_inspect`` shows their lines), medium and low ones each on a line with reason, position,
old → new and the source line, which is what deciding ``include``/``exclude`` needs. A plan that needs a
decision (candidates, witness, capsules) is shown as its lean record: every part of it is needed there. An
apply is a diffstat with each file's new hash, like ``write_source``. A rename or move asked to ``apply`` answers
as ``refactor_apply`` does when it was applied (the symbol, new name or paths restate the call's own arguments;
the moves are listed), else as the preview plus why it was not."""

from __future__ import annotations

from codeplane.refactor.models import ApplyOutcome, ImpactReport, InspectPage, PlannedEdit, RefactorPreview, SymbolRef
from codeplane.repo.universe import quoted_path
from codeplane.server.answers import short_sha, tests_affected_line

# A qualified name holds its module's, which comes from the file's path: a newline there made the name read as
# two lines. It is quoted as a path is, only when it holds a control character.
from codeplane.server.tools.git_render import path_text as shown_name

#: Affected tests an impact answer names, at most (``run_test_targets(affected_by=...)`` runs them all).
_TESTS_NAMED = 20


def _named(what: str, paths: list[str], total: int) -> str:
    """``what (N): a b c (+M more)``: the first 20 named, the count whole (the record lists the first 100)."""
    total = max(total, len(paths))
    more = total - min(len(paths), _TESTS_NAMED)
    return f"{what} ({total}): {' '.join(quoted_path(p) for p in paths[:_TESTS_NAMED])}" + (
        f" (+{more} more; {len(paths)} in the record)" if more > 0 else "")


def _position(position: str) -> str:
    """A ``path:line:column`` position (a coverage list's) with its path quoted as every path in a text is."""
    parts = position.rsplit(":", 2)
    return f"{quoted_path(parts[0])}:{parts[1]}:{parts[2]}" if len(parts) == 3 else position


#: Coverage reasons of mentions the doc sweep handles (``refactor/sweep.py``).
_DOC_REASONS = {"comment", "docstring", "doc_file", "doctest"}
#: An edit's old/new text in the text answer, at most; a moved definition is named by its first line.
_EDIT_TEXT_CHARS = 80


def _short(text: str) -> str:
    """The text's first line that is not blank (an inserted import or definition starts with newlines), and how
    many lines follow it."""
    stripped = text.lstrip("\n")
    lines = stripped.splitlines() or [""]
    first = lines[0] if len(lines[0]) <= _EDIT_TEXT_CHARS else lines[0][:_EDIT_TEXT_CHARS] + "…"
    return repr(first) + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "") if first != stripped else first


def _change(old: str, new: str) -> str:
    """``old -> new``; an insertion as ``+ new``, a removal as ``- old``."""
    if not old:
        return f"+ {_short(new)}"
    return f"- {_short(old)}" if not new else f"{_short(old)} -> {_short(new)}"


def _edit_line(edit: PlannedEdit, usual: tuple[str, str] | None) -> str:
    """``id certainty reason path:line [old -> new] | source line``; the change is left out when it is the
    plan's usual one (a rename's old → new name), which the head line states once."""
    line = f"  {edit.edit_id} {edit.certainty} {edit.reason} {quoted_path(edit.path)}:{edit.line}"
    if edit.kind == "doc" and "doc" not in edit.reason:  # ``doc_file … doc`` said it twice
        line += " doc"
    if (edit.old_text, edit.new_text) != usual:
        line += f" {_change(edit.old_text, edit.new_text)}"
    return line + (f" | {edit.snippet.strip()}" if edit.snippet else "")


def _sure_edits(edits: list[PlannedEdit], usual: tuple[str, str] | None) -> list[str]:
    """High-certainty code edits of the usual change as ``path e1:40 e2:1398``, one line per file in plan
    order; any other high edit (a moved definition, an import rewritten) on its own line."""
    by_path: dict[str, list[str]] = {}
    lines: list[str] = []
    for edit in edits:
        if edit.kind == "doc" or (edit.old_text, edit.new_text) != usual:
            lines.append(_edit_line(edit, usual))
        else:
            by_path.setdefault(edit.path, []).append(f"{edit.edit_id}:{edit.line}")
    return [f"  {quoted_path(path)} {' '.join(ids)}" for path, ids in by_path.items()] + lines


def _what(result: RefactorPreview) -> tuple[str, tuple[str, str] | None]:
    """``kind qualified.name #uid [-> new]`` and/or ``from -> to``, and the rename's usual (old, new) change;
    where the definition is when no edit of the preview shows it."""
    what = ""
    usual = None
    if result.symbol is not None:
        sym = result.symbol
        what = f"{sym.kind} {shown_name(sym.qualified_name)} #{sym.def_uid}"
        if not any(e.reason == "definition" for e in result.edits):
            what += f" ({quoted_path(sym.path)}:{sym.line})"
        if result.new_name:
            what += f" -> {result.new_name}"
            usual = (sym.name, result.new_name)
    if result.move is not None:
        what = f"{what} {quoted_path(result.move.from_path)} -> {quoted_path(result.move.to_path)}".strip()
    return what, usual


def render_plan(result: RefactorPreview) -> str:
    """``refactor_rename``/``refactor_move``: the apply's answer when ``apply`` applied the plan, else the preview
    (with why ``apply`` did not apply it)."""
    applied = getattr(result, "applied", None)
    if isinstance(applied, ApplyOutcome):
        return render_apply(applied)
    text = render_preview(result)
    reason = getattr(result, "not_applied", None)
    return f"{text}\nnot applied: {reason}" if reason else text


def _decision(result: RefactorPreview) -> str:
    """An ambiguous target: each candidate on a line with what choosing it would change, and how to choose."""
    lines = [f"{result.operation} -> {result.new_name}: needs_decision, {len(result.candidates)} definitions match "
             f"[{result.refactor_id}]"]
    for c in result.candidates:
        counts = ", ".join(f"{k} {v}" for k, v in c.counts.items() if v)
        sym = c.symbol
        where = f"{sym.kind} {shown_name(sym.qualified_name)} #{sym.def_uid} {quoted_path(sym.path)}:{sym.line}" \
            if sym else c.description
        lines.append(f"  {c.candidate_id} {where}: {counts or 'no edits'} in {c.files} files")
    lines.append(f"choose: refactor_apply(refactor_id={result.refactor_id!r}, candidate_id=...) (refactor_inspect "
                 "with candidate_id lists its edits), or rename by qualified name")
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def render_preview(result: RefactorPreview) -> str:
    if result.status == "needs_decision":
        return _decision(result)
    what, usual = _what(result)
    counts = result.counts
    # The files the applied edits change; doc edits and low proposals say their own (a move's doc file was
    # counted here while no edit of the count was in it).
    told = f"{result.matches} edits in {result.edited_files_total} files"
    if counts.get("medium"):
        told += f" (high {counts.get('high', 0)}, medium {counts['medium']})"
    if counts.get("low"):
        told += f", {counts['low']} low proposed"
    # A plan whose new name collides is refused by refactor_apply (4007): the head says so, not "ready".
    status = f"{len(result.collisions)} collision(s), refused unless accept_collisions: true" \
        if result.collisions else result.status
    lines = [f"{result.operation} {what}: {status}, {told} [{result.refactor_id}]"]
    sure = [e for e in result.edits if e.certainty == "high"]
    lines += _sure_edits(sure, usual)
    lines += [_edit_line(e, usual) for e in result.edits if e.certainty != "high"]
    if result.edits_truncated:
        lines.append(f"  … more edits: refactor_inspect(refactor_id={result.refactor_id!r})")
    if result.doc_edits.count:
        docs = result.doc_edits
        held = docs.count - docs.applies
        # What apply_docs applies, then what it leaves: the sweep's whole count read as the applied one (38 said,
        # 10 applied on attrs' Attribute.evolve).
        parts = [f"{docs.applies} in {docs.applies_files} files"
                 + (" (applied by default)" if docs.auto_apply else " (apply_docs: true to apply)")] \
            if docs.applies else []
        parts += [f"{held} below {docs.min_confidence} left unless included by id"] if held else []
        lines.append("doc edits: " + ", ".join(parts))
    lines += [f"collision: {quoted_path(c.path)}:{c.line}:{c.column} {c.kind} {c.detail}" for c in result.collisions]
    cov = result.coverage
    if cov is not None:
        # Mentions in comments and docs are the doc edits' (listed above) unless those are off.
        apart = {"other_symbol"} | (_DOC_REASONS if result.doc_edits.count else set())
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(cov.by_reason.items()) if k not in apart)
        other = cov.by_reason.get("other_symbol", 0)
        lines.append(f"covers {cov.in_plan}/{cov.lexical_occurrences} occurrences"
                     + (f", {cov.low_candidates} low ({reasons})" if cov.low_candidates else "")
                     + (f", {other} of other symbols ({_other_symbols(result.symbol)})"
                        if other and result.symbol is not None else ""))
        if cov.kept_count:
            more = f" (+{cov.kept_count - len(cov.kept)} more)" if cov.kept_count > len(cov.kept) else ""
            kept = " ".join(_position(p) for p in cov.kept)
            lines.append(f"kept as they are (an aliased import keeps the name): {kept}{more}")
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def render_apply(result: ApplyOutcome) -> str:
    extra = ", ".join(part for part in (f"{result.applied_doc_edits} doc" if result.applied_doc_edits else "",
                                        f"{result.skipped_low} low skipped" if result.skipped_low else "") if part)
    # The refactor and candidate ids by their own prefixes (``rf_``, ``c``): refactor_inspect still takes one.
    lines = [f"applied {result.applied_edits} edits{f' ({extra})' if extra else ''} "
             f"[{result.refactor_id} {result.candidate_id}]"]
    # A moved file is one line, its move and its new hash (``path <sha>`` then ``R from -> path`` said it twice).
    moved = {m.to_path: m.from_path for m in result.moves}
    lines += [f"R {quoted_path(moved[f.path])} -> {quoted_path(f.path)} {short_sha(f.sha256)}" if f.path in moved
              else f"{quoted_path(f.path)} {short_sha(f.sha256)}" for f in result.files]
    lines += [f"R {quoted_path(m.from_path)} -> {quoted_path(m.to_path)}" for m in result.moves
              if all(m.to_path != f.path for f in result.files)]
    lines += [f"D {quoted_path(path)}" for path in result.deleted]
    if result.delta is not None:
        lines += [f"{quoted_path(f.path)} {short_sha(f.file_sha256)}" for f in result.delta.files
                  if f.file_sha256 and all(f.path != a.path for a in result.files)]
        tests = tests_affected_line(result.delta)
        if tests:
            lines.append(tests)
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def render_impact(result: ImpactReport) -> str:
    """What depends on a definition or file: a head line (what, where, how many references by tier, the
    tag most of them share), the references as ``line:[tier certainty] text`` under their file's path like a
    search (the shared tag left out), the importers, the affected tests, and the deletion plan's id
    (``refactor_apply`` deletes it)."""
    if result.symbol is not None:
        sym = result.symbol
        what = f"{sym.kind} {shown_name(sym.qualified_name)} #{sym.def_uid} ({quoted_path(sym.path)}:{sym.line})"
    else:
        what = f"file {quoted_path(str(result.path))}"
    tiers = ", ".join(f"{tier} {n}" for tier, n in sorted(result.by_tier.items()))
    head = f"{what}: {result.references_total} references" + (f" ({tiers})" if tiers else "")
    if result.lexical_mentions:
        # A count of files (the lexical index answers which files spell the name), not of mentions.
        head += f", {result.lexical_mentions} more file{'s' if result.lexical_mentions != 1 else ''} spelling the name"
    tags = [ref.tier if ref.certainty == "high" else f"{ref.tier} {ref.certainty}" for ref in result.references]
    # The tag most references share is said once, like search's usual role: a method called on receivers
    # the index cannot type had ``[unresolved_receiver low]`` on nearly every line.
    usual = max(set(tags), key=lambda t: (tags.count(t), t)) if len(tags) > 1 else ""
    usual = usual if tags.count(usual) > 1 else ""
    lines = [head + (f"; {usual} unless marked" if usual else "")]
    by_path: dict[str, dict[int, list[tuple[int, str, str]]]] = {}
    for ref, tag in zip(result.references, tags, strict=True):
        by_path.setdefault(ref.path, {}).setdefault(ref.line, []).append((ref.column, tag, ref.snippet.strip()))
    lines += [line for path, refs in by_path.items() for line in (quoted_path(path), *_impact_lines(refs, usual))]
    if result.next_cursor:
        lines.append(f"next cursor: {result.next_cursor}")
    if result.importing_files:
        lines.append(_named("imported by", result.importing_files, result.importing_files_total))
    if result.affected_tests:
        lines.append(_named("tests affected", result.affected_tests, result.affected_tests_total))
    if result.affected_tests_note:
        lines.append(result.affected_tests_note)
    if result.delete_refactor_id:
        lines.append(f"delete plan: {result.delete_refactor_id}" + (" (safe)" if result.safe_to_delete else ""))
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def _impact_lines(by_line: dict[int, list[tuple[int, str, str]]], usual: str) -> list[str]:
    """One line per source line, ``line:[tag] text``. A line holding several references says their columns,
    ``line:col,col:``, each column with its own tag when they differ (two ``line:text`` rows alike read as one
    reference listed twice)."""
    out: list[str] = []
    for line, refs in by_line.items():
        tags = {tag for _, tag, _ in refs}
        shared = tags.pop() if len(tags) == 1 else None
        mark = "" if shared is None or shared == usual else f"[{shared}] "
        if len(refs) == 1:
            out.append(f"{line}:{mark}{refs[0][2]}")
            continue
        columns = ",".join(str(col) + ("" if shared is not None or tag == usual else f"[{tag}]")
                           for col, tag, _ in sorted(refs))
        # References whose texts differ (a file's impact names each imported name: ``PY_3_10_PLUS, PY_3_14_PLUS``)
        # say each text; the first alone hid the second name.
        texts = list(dict.fromkeys(text for _, _, text in sorted(refs)))
        out.append(f"{line}:{columns}:{mark}{', '.join(texts)}")
    return out


def render_inspect(result: InspectPage) -> str:
    """A page of a plan's edits, like ``rg --heading -C``: a head line (ids, how many, the filters, the change
    most edits make, said once), then per file its path once and its edits in blocks. A block is the edits
    whose context windows overlap or touch, as ``e1:40 high strong, e2:41 …`` (an edit's own change only when
    it is not the usual one), then the merged window: the edited lines ``line:text``, the others ``line-text``.
    Each of three adjacent edits printed the same five lines, and the path and the rename on every edit."""
    usual = _usual_change([item.edit for item in result.items])
    head = (f"{result.refactor_id} {result.candidate_id}: {result.total} edits "
            f"({', '.join(result.certainties)}; {', '.join(result.kinds)})")
    if usual is not None:
        head += f"; each {_change(*usual)} unless shown"
    lines = [head + (f"; next cursor: {result.next_cursor}" if result.next_cursor else "")]
    by_path: dict[str, list[tuple[PlannedEdit, list[tuple[int, str]]]]] = {}
    for item in result.items:
        by_path.setdefault(item.edit.path, []).append((item.edit, list(item.context)))
    for path, items in by_path.items():
        lines.append(quoted_path(path))
        for block in _blocks(sorted(items, key=lambda i: (i[0].line, i[0].column, i[0].edit_id))):
            edits = [edit for edit, _ in block]
            window = dict(sorted(line for _, context in block for line in context))
            tags = ", ".join(_edit_tag(edit, usual, snippet=not window) for edit in edits)
            lines.append(f"  {tags}")
            edited = {n for edit in edits for n in range(edit.line, max(edit.line, edit.end_line) + 1)}
            lines += [f"{n}{':' if n in edited else '-'}{text}" for n, text in window.items()]
    return "\n".join(lines)


def _usual_change(edits: list[PlannedEdit]) -> tuple[str, str] | None:
    """The (old, new) text most of the page's edits share (a rename's names), when two or more do."""
    counts: dict[tuple[str, str], int] = {}
    for edit in edits:
        counts[(edit.old_text, edit.new_text)] = counts.get((edit.old_text, edit.new_text), 0) + 1
    best = max(counts.items(), key=lambda kv: (kv[1], kv[0]), default=None)
    return best[0] if best is not None and best[1] > 1 else None


def _edit_tag(edit: PlannedEdit, usual: tuple[str, str] | None, *, snippet: bool) -> str:
    """``e3:41 high strong`` (a doc edit's reason says doc once: ``d1:7 medium doc_file``), its change when it
    is not the usual one, its source line when no context window shows it."""
    tag = f"{edit.edit_id}:{edit.line} {edit.certainty} {edit.reason}"
    if edit.kind == "doc" and "doc" not in edit.reason:
        tag += " doc"
    if (edit.old_text, edit.new_text) != usual:
        tag += f" {_change(edit.old_text, edit.new_text)}"
    return tag + (f" | {edit.snippet.strip()}" if snippet and edit.snippet else "")


def _blocks(items: list[tuple[PlannedEdit, list[tuple[int, str]]]]) -> list[list[tuple[PlannedEdit,
                                                                                    list[tuple[int, str]]]]]:
    """Edits of one file in line order, grouped while their windows overlap or touch (an edit without context
    lines spans its own lines)."""
    blocks: list[list[tuple[PlannedEdit, list[tuple[int, str]]]]] = []
    last = -2
    for edit, context in items:
        first = min([n for n, _ in context] or [edit.line])
        end = max([n for n, _ in context] or [max(edit.line, edit.end_line)])
        if blocks and first <= last + 1:
            blocks[-1].append((edit, context))
            last = max(last, end)
        else:
            blocks.append([(edit, context)])
            last = end
    return blocks


def _other_symbols(symbol: SymbolRef) -> str:
    """What the sweep set aside as other symbols' occurrences, in the target language's terms."""
    if symbol.path.endswith(".go"):
        return f"x.{symbol.name} of another value or package"
    return f"bare {symbol.name} outside a class body: never a member"
