"""Text renderings of refactor previews and applies: one head line with the ``refactor_id``, then one
line per edit (``edit_id``, certainty, reason, position, old → new, the source line), which is what an
agent needs to decide what to ``include``/``exclude``. A plan that needs a decision (candidates, witness,
capsules) is shown as its lean record: every part of it is needed there."""

from __future__ import annotations

from codeplane.refactor.models import ApplyOutcome, PlannedEdit, RefactorPreview
from codeplane.server.answers import TESTS_SHOWN, compact_json, lean_dump, short_sha
from codeplane.server.tooling import ToolResult

#: An edit's old/new text in the text answer, at most; a moved definition is named by its first line.
_EDIT_TEXT_CHARS = 80


def _short(text: str) -> str:
    lines = text.splitlines() or [""]
    first = lines[0] if len(lines[0]) <= _EDIT_TEXT_CHARS else lines[0][:_EDIT_TEXT_CHARS] + "…"
    return repr(first) + (f" (+{len(lines) - 1} lines)" if len(lines) > 1 else "") if first != text else first


def _edit_line(edit: PlannedEdit, usual: tuple[str, str] | None) -> str:
    """``id certainty reason path:line:col [old -> new] | source line``; the change is left out when it is
    the plan's usual one (a rename's old → new name), which the head line states once."""
    line = f"  {edit.edit_id} {edit.certainty} {edit.reason} {edit.path}:{edit.line}:{edit.column}"
    if edit.kind == "doc":
        line += " doc"
    if (edit.old_text, edit.new_text) != usual:
        line += f" {_short(edit.old_text)} -> {_short(edit.new_text)}"
    return line + (f" | {edit.snippet.strip()}" if edit.snippet else "")


def render_preview(result: RefactorPreview) -> str:
    if result.status == "needs_decision" and isinstance(result, ToolResult):
        return compact_json(lean_dump(result))
    what = ""
    usual = None
    if result.symbol is not None:
        sym = result.symbol
        what = f"{sym.kind} {sym.qualified_name} #{sym.def_uid} ({sym.path}:{sym.line})"
        if result.new_name:
            what += f" -> {result.new_name}"
            usual = (sym.name, result.new_name)
    if result.move is not None:
        what = f"{what} {result.move.from_path} -> {result.move.to_path}".strip()
    counts = " ".join(f"{k} {v}" for k, v in sorted(result.counts.items()) if v)
    lines = [f"{result.operation} {what}: {result.status}, {result.matches} edits to apply ({counts}) in "
             f"{len(result.affected_files)} files [refactor {result.refactor_id}]"]
    lines += [_edit_line(e, usual) for e in result.edits]
    if result.edits_truncated:
        lines.append(f"  … more edits: refactor_inspect(refactor_id={result.refactor_id!r})")
    if result.doc_edits.count:
        docs = result.doc_edits
        lines.append(f"doc edits: {docs.count} in {docs.files_changed} files"
                     + (" (applied by default)" if docs.auto_apply else " (apply_docs: true to apply)"))
    lines += [f"collision: {c.path}:{c.line}:{c.column} {c.kind} {c.detail}" for c in result.collisions]
    cov = result.coverage
    if cov is not None:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(cov.by_reason.items()))
        lines.append(f"every occurrence accounted for: {cov.in_plan}/{cov.lexical_occurrences} in the plan"
                     + (f", {cov.low_candidates} low ({reasons})" if cov.low_candidates else ""))
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def render_apply(result: ApplyOutcome) -> str:
    lines = [f"applied {result.applied_edits} edits (+{result.applied_doc_edits} doc, {result.skipped_low} low "
             f"skipped) [refactor {result.refactor_id} candidate {result.candidate_id}]"]
    lines += [f"M {f.path} {f.edits} edits sha256={short_sha(f.sha256)}" for f in result.files]
    lines += [f"R {m.from_path} -> {m.to_path}" for m in result.moves]
    lines += [f"D {path}" for path in result.deleted]
    if result.delta is not None:
        lines += [f"{f.path} sha256={short_sha(f.new_sha256)}" for f in result.delta.files
                  if f.new_sha256 and all(f.path != a.path for a in result.files)]
        tests = result.delta.tests_affected
        if tests:
            more = f" (+{len(tests) - TESTS_SHOWN} more)" if len(tests) > TESTS_SHOWN else ""
            lines.append("tests affected: " + " ".join(tests[:TESTS_SHOWN]) + more)
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)
