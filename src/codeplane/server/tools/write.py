"""``write_source`` (§23.7): atomic multi-file edits through the mutation engine, answered with a delta."""

from __future__ import annotations

import re
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codeplane.core.calls import MutationReport
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.mutation import CreateFile, DeleteFile, Delta, Edit, MoveFile, ReplaceText, UpdateSpan
from codeplane.mutation.delta import FileDelta, LineSpan
from codeplane.repo.universe import quoted_path
from codeplane.server.answers import short_sha, tests_affected_line
from codeplane.server.services import Services
from codeplane.server.tooling import (
    LINE_MAX,
    ToolContext,
    ToolExample,
    ToolKind,
    ToolParams,
    ToolResult,
    ToolSpec,
)

#: Which optional fields each action may carry (anything else set is a mistake worth reporting).
_FIELDS: dict[str, frozenset[str]] = {
    "create": frozenset({"content", "overwrite", "expected_file_sha256"}),
    "update": frozenset({"start_line", "end_line", "new_content", "expected_content", "old_text", "new_text",
                         "replace_all", "expected_file_sha256"}),
    "delete": frozenset({"expected_file_sha256"}),
    "move": frozenset({"to", "overwrite", "expected_file_sha256"}),
}


class WriteEdit(BaseModel):
    """One edit. ``action`` decides which other fields apply; left out, the fields given decide it."""

    # defer_build: built by the warm-up after /ready (server/app.py), or on first use
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    path: str = Field(description="Repo-relative POSIX path.")
    action: Literal["create", "update", "delete", "move"] | None = Field(
        default=None, description="Default: old_text or start_line → update, content → create, to → move; "
                                  "delete must be named.")
    content: str | None = Field(default=None, description="create: the full file content.")
    overwrite: bool = Field(default=False, description="create/move: replace an existing file.")
    start_line: int | None = Field(default=None, ge=1, le=LINE_MAX, description="update by span: first line (1-based).")
    end_line: int | None = Field(
        default=None, ge=0, le=LINE_MAX,
        description="update by span: last line, inclusive (default start_line); start_line - 1 inserts.")
    new_content: str | None = Field(default=None, description="update by span: replacement lines.")
    expected_content: str | None = Field(
        default=None, description="update by span: the text now at the span; re-anchors a drifted span.")
    old_text: str | None = Field(default=None, description="update by text: exact text to replace.")
    new_text: str | None = Field(default=None, description="update by text: replacement text.")
    replace_all: bool = Field(default=False, description="update by text: replace every occurrence.")
    to: str | None = Field(default=None, description="move: destination path.")
    expected_file_sha256: str | None = Field(
        default=None, description=("file_sha256 from read_source (or its first 12+ hex digits, as answers show "
                                   "it); the edit is refused if the file changed."))


class WriteSourceParams(ToolParams):
    #: No max_length: mutation.max_batch_edits (config, up to 10,000) is the cap, checked by the engine.
    edits: list[WriteEdit] = Field(min_length=1)
    dry_run: bool = Field(default=False, description="Plan and diff only; nothing is written.")
    allow: list[str] | None = Field(
        default=None, description="Gitignore-style patterns the batch's paths must match (e.g. ['src/']).")


class WriteSourceResult(ToolResult):
    """The delta, whether it was applied, and the one-line summary the spec's answer carries."""

    applied: bool
    dry_run: bool = False
    summary: str
    delta: Delta

    def mutation_report(self) -> MutationReport | None:
        if not self.applied or self.delta.files_changed == 0:
            return None
        return self.delta.mutation_report()


def _invalid(index: int, message: str, field: str | None = None) -> CodePlaneError:
    where = f"edits.{index}" + (f".{field}" if field else "")
    return CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"{where}: {message}",
                          details={"field": where, "edit_index": index})


#: The fields that name an action an edit leaves out (agents often do: one call saved per slip). Delete is never
#: inferred: an edit with only a path is more likely a mistake than a request to remove the file.
_IMPLIED = (("update", frozenset({"old_text", "new_text", "start_line", "end_line", "new_content",
                                  "expected_content", "replace_all"})),
            ("create", frozenset({"content"})),
            ("move", frozenset({"to"})))


def _given(raw: WriteEdit) -> set[str]:
    return {name for name in raw.model_fields_set
            if name not in ("path", "action") and getattr(raw, name) != WriteEdit.model_fields[name].default}


def action_of(index: int, raw: WriteEdit) -> str:
    """``raw.action``, or the one action its fields imply; 1003 when none or several do."""
    if raw.action is not None:
        return raw.action
    given = _given(raw)
    implied = [action for action, fields in _IMPLIED if given & fields]
    if len(implied) == 1:
        return implied[0]
    found = f"fields {', '.join(sorted(given))} fit {' and '.join(implied)}" if implied else "no field names one"
    raise _invalid(index, f"action is missing and {found}: give action (create, update, delete or move)", "action")


def to_edit(index: int, raw: WriteEdit) -> Edit:
    """The engine edit for one tool edit; 1003 naming the field when the combination makes no sense."""
    action, given = action_of(index, raw), _given(raw)
    stray = sorted(given - _FIELDS[action])
    if stray:
        verb = "does" if len(stray) == 1 else "do"
        raise _invalid(index, f"{', '.join(stray)} {verb} not apply to action={action!r}", stray[0])
    common: dict[str, Any] = {"path": raw.path, "expected_file_sha256": raw.expected_file_sha256}
    try:
        if action == "create":
            if raw.content is None:
                raise _invalid(index, "create needs content", "content")
            return CreateFile(**common, content=raw.content, overwrite=raw.overwrite)
        if action == "delete":
            return DeleteFile(**common)
        if action == "move":
            if raw.to is None:
                raise _invalid(index, "move needs to", "to")
            return MoveFile(**common, to=raw.to, overwrite=raw.overwrite)
        if raw.old_text is not None:
            span = sorted(given & {"start_line", "end_line", "new_content", "expected_content"})
            if span:
                raise _invalid(index, "use either old_text/new_text or a line span, not both", span[0])
            if raw.new_text is None:
                raise _invalid(index, "old_text needs new_text", "new_text")
            return ReplaceText(**common, old_text=raw.old_text, new_text=raw.new_text, replace_all=raw.replace_all)
        if raw.start_line is None or raw.new_content is None:
            raise _invalid(index, "update needs start_line and new_content (or old_text and new_text)",
                           "start_line" if raw.start_line is None else "new_content")
        return UpdateSpan(**common, start_line=raw.start_line,
                          end_line=raw.start_line if raw.end_line is None else raw.end_line,
                          new_content=raw.new_content, expected_content=raw.expected_content)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        raise _invalid(index, first["msg"], field) from exc


def _summary(delta: Delta, dry_run: bool) -> str:
    counts: dict[str, int] = {}
    for f in delta.files:
        counts[f.action] = counts.get(f.action, 0) + 1
    parts = [f"{n} {action}" for action, n in sorted(counts.items())]
    head = "would change" if dry_run else "changed"
    text = f"{head} {delta.files_changed} file(s) (+{delta.insertions} -{delta.deletions}): {', '.join(parts)}"
    corrections = sum(len(f.line_corrections) for f in delta.files)
    if corrections:
        text += f"; {corrections} span(s) re-anchored, see line_corrections"
    return text


def _indent(indent: str) -> str:
    tabs, spaces = indent.count("\t"), indent.count(" ")
    return " and ".join(part for part in (f"{tabs} tab(s)" if tabs else "", f"{spaces} space(s)" if spaces else "")
                        if part) or repr(indent)


async def _write_source(ctx: ToolContext, params: WriteSourceParams) -> WriteSourceResult:
    engine = ctx.services.mutation
    engine.check_batch_size(len(params.edits))  # before any edit's own refusal: the batch's size is the problem
    try:
        edits = [to_edit(i, raw) for i, raw in enumerate(params.edits)]
    except CodePlaneError as exc:
        if len(params.edits) == 1:  # the only edit: its index says nothing (as the engine's refusals)
            exc.details.pop("edit_index", None)
        raise
    delta = await anyio.to_thread.run_sync(lambda: engine.apply(edits, dry_run=params.dry_run, allow=params.allow))
    return WriteSourceResult(applied=not params.dry_run, dry_run=params.dry_run,
                             summary=_summary(delta, params.dry_run), delta=delta)


def _kind(params: WriteSourceParams) -> ToolKind:
    return "read" if params.dry_run else "mutation"


def _detail(params: WriteSourceParams) -> str:
    actions: set[str] = set()
    for index, edit in enumerate(params.edits):
        try:
            actions.add(action_of(index, edit))
        except CodePlaneError:
            actions.add("?")
    return f"edits={len(params.edits)} actions={','.join(sorted(actions))} dry_run={str(params.dry_run).lower()}"


_ACTION_MARK = {"created": "A", "create": "A", "updated": "M", "update": "M", "deleted": "D", "delete": "D",
                "moved": "R", "move": "R"}


def render_write(result: WriteSourceResult) -> str:
    """What a write changed, as little as the next step needs: ``path <new short sha>`` per file (the hash
    is the precondition of its next write; ``A``/``D``/``R`` before a created, deleted or moved file, an
    update, the usual case, unmarked; +/- counts are in the record: the caller wrote the edits and knows
    them), any re-anchored span, the affected tests, warnings. A dry run or an empty batch adds the summary
    line (with the counts), a dry run its diff and ``now <sha> -> after <sha>`` (nothing was written: the
    hash to pass back is the one on disk now)."""
    delta = result.delta
    # The mutation id stays in the record (no tool takes it).
    lines = [result.summary] if delta.diff or not result.applied or not delta.files else []
    for f in delta.files:
        mark = _ACTION_MARK.get(str(f.action), str(f.action))
        mark = "" if mark == "M" else f"{mark} "
        name = f"{quoted_path(f.old_path)} -> {quoted_path(f.path)}" if f.old_path else quoted_path(f.path)
        sha = _dry_shas(f) if result.dry_run else f" {short_sha(f.file_sha256)}" if f.file_sha256 else ""
        extra = "".join(f"; span {_span(c.original)} re-anchored to {_span(c.corrected)}" for c in f.line_corrections)
        extra += "".join(f"; old_text of edit {r.edit_index} found at line {r.line} with its later lines indented "
                         f"{_indent(r.indent)} more (new_text indented alike)" for r in f.reindented)
        lines.append(f"{mark}{name}{sha}{extra}")
    tests = tests_affected_line(delta)
    if tests:
        lines.append(tests)
    lines += [f"warning: {w}" for w in delta.warnings]
    shown = _shown_diff(delta.diff) if delta.diff else ""
    if shown or delta.diff_truncated:
        lines.append(shown.rstrip("\n") + ("\n… diff truncated" if delta.diff_truncated else ""))
    return "\n".join(lines)


def _shown_diff(diff: str) -> str:
    """The dry run's diff as the text shows it: a deleted file's removed lines (its ``D`` line and the ``-N``
    count say it: 69 lines of ``-`` for one ``git rm``) and a bare rename's ``rename from/to`` (its ``R`` line)
    are left to the record's diff. Hunk lines are counted by their ``@@`` header, so a removed ``-- x`` line
    (``--- x``) is never read as a file's header."""
    kept: list[str] = []
    skipping = False
    old = new = 0  # lines of the current hunk still to come
    lines = diff.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if old > 0 or new > 0:
            old -= line[:1] in (" ", "-")
            new -= line[:1] in (" ", "+")
        elif line.startswith("@@ "):
            found = _HUNK.match(line)
            if found:
                old, new = (int(found[n]) if found[n] is not None else 1 for n in (1, 2))
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            skipping = lines[i + 1].rstrip("\n") == "+++ /dev/null"
        elif line.startswith(("rename from ", "Binary file ")):
            skipping = line.startswith("rename from ")
        if not skipping:
            kept.append(line)
    return "".join(kept)


#: A hunk header's line counts (``@@ -3,7 +3,8 @@``; a count left out is 1).
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _dry_shas(f: FileDelta) -> str:
    """`` now <sha> -> after <sha>``: a dry run changed nothing, so the precondition of applying it is the hash
    on disk now (a bare hash, as a real write shows, would read as that precondition and be refused)."""
    now = f.old_sha256 or (f.file_sha256 if f.action != "created" else None)
    parts = ([f"now {short_sha(now)}"] if now else []) + \
        ([f"after {short_sha(f.file_sha256)}"] if f.file_sha256 and f.file_sha256 != now else [])
    return " " + " -> ".join(parts) if parts else ""


def _span(span: LineSpan) -> str:
    """``2761-2778`` (a span's first and last line; an insertion's one place)."""
    return str(span.start_line) if span.end_line <= span.start_line else f"{span.start_line}-{span.end_line}"


def tools(services: Services) -> list[ToolSpec]:
    return [
        ToolSpec(
            name="write_source",
            category="files",
            summary=(
                "Atomic multi-file edits: create, update (line span or exact text), delete, move. Every "
                "precondition is checked before anything is written; the batch is all-or-nothing even across "
                "a crash. Returns a delta per file (old/new sha256, +/- lines, edited ranges, re-anchored "
                "spans) and the index already reflects the change when it returns."
            ),
            params=WriteSourceParams,
            result=WriteSourceResult,
            handler=_write_source,
            render=render_write,
            kind="mutation",
            kind_for=_kind,
            detail_for=_detail,
            read_only=False,
            destructive=True,
            idempotent=False,
            when_to_use=(
                "changing, creating, deleting or moving files in the repository",
                "several related edits that must land together (one call, one batch)",
                "previewing a change as a unified diff (dry_run)",
            ),
            when_not_to_use=(
                "renaming a symbol across files (use the refactor tools)",
                "staging or committing (use the git tools)",
            ),
            examples=(
                ToolExample("replace lines 10-12, guarded by the hash read_source returned", {
                    "edits": [{"path": "src/app.py", "action": "update", "start_line": 10, "end_line": 12,
                               "new_content": "def main():\n    run()\n",
                               "expected_content": "def main():\n    pass\n\n",
                               "expected_file_sha256": "<file_sha256 from read_source>"}]}),
                ToolExample("exact text replacement", {
                    "edits": [{"path": "README.md", "action": "update", "old_text": "v1.2", "new_text": "v1.3"}]}),
                ToolExample("create one file and move another, previewed", {
                    "edits": [{"path": "src/new.py", "action": "create", "content": "X = 1\n"},
                              {"path": "src/old.py", "action": "move", "to": "src/legacy/old.py"}],
                    "dry_run": True}),
            ),
        )
    ]
