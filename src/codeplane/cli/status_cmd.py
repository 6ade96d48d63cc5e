"""``cpl status``: one view of the server, the repository and the index."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from codeplane.cli.output import cli_errors, console, emit, styled
from codeplane.cli.probe import probe
from codeplane.cli.repo_context import resolve
from codeplane.core.layout import RepoLayout
from codeplane.core.redaction import redact_url, redact_urls
from codeplane.repo.workspace import head_info

if TYPE_CHECKING:
    from codeplane.index.status_view import SchemaChange

VERBOSE_LOG_LINES = 50


def _tail(layout: RepoLayout, count: int) -> list[str]:
    if not layout.log_file.is_file():
        return []
    # Lines a version before URL redaction wrote may still hold a password or a presigned URL's signature.
    return [redact_urls(line) for line in
            layout.log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-count:]]


def _redacted_source(index: Any) -> Any:
    """``index`` with its artifact URL redacted: an ``index.db`` adopted before URLs were redacted on the way in
    still holds it in clear (read offline from the file's ``origin``)."""
    source = index.get("source") if isinstance(index, dict) else None
    if not isinstance(source, dict) or not isinstance(source.get("source"), str):
        return index
    return {**index, "source": {**source, "source": redact_url(source["source"])}}


def progress_line(progress: Any) -> str:
    """``indexing 3,584/6,891 files (52.0%), 4.2 s``: a build under way, from the ``progress`` status object."""
    if not isinstance(progress, dict):
        return ""
    return (f"{progress.get('phase')} {progress.get('files_done', 0):,}/{progress.get('files_total', 0):,} files "
            f"({progress.get('percent', 0.0)}%), {progress.get('elapsed_sec', 0.0)} s")


def fetching_line(fetching: dict[str, Any]) -> str:
    """``downloading the index artifact from URL: 1.2 of 4.5 MB, 3.1 s; it listens once the download ends``."""
    done, total = fetching.get("bytes") or 0, fetching.get("total")
    scale, unit = (1e6, "MB") if max(done, total or 0) >= 1e6 else (1e3, "KB")
    amount = f"{done / scale:.1f}{f' of {total / scale:.1f}' if isinstance(total, int) else ''} {unit}"
    return (f"downloading the index artifact from {fetching.get('source')}: {amount}, "
            f"{fetching.get('elapsed_sec', 0)} s; it listens once the download ends")


def _render_index(index: Any) -> None:
    building = progress_line(index.get("progress")) if isinstance(index, dict) else ""
    if not isinstance(index, dict) or "epoch" not in index:
        console.print(f"  index:  {index.get('state') if isinstance(index, dict) else 'unknown'}"
                      f"{' - ' + str(index.get('note')) if isinstance(index, dict) and index.get('note') else ''}"
                      f"{'   ' + building if building else ''}")
        return
    if building:
        console.print(f"          building: {building}")
    console.print(f"  index:  {index.get('state')}   epoch {index['epoch']}   files {index.get('file_count', 0)} "
                  f"({index.get('indexed_files', 0)} indexed, {index.get('binary_files', 0)} binary, "
                  f"{index.get('oversized_files', 0)} oversized)")
    if index.get("unnamed_files"):
        console.print(f"          left out: {index['unnamed_files']} names not valid UTF-8 "
                      f"({', '.join(index.get('unnamed_examples', []))})")
    _render_source(index.get("source"))
    last = index.get("last_reconcile") or index.get("last_epoch")
    if isinstance(last, dict):
        console.print(f"          last reconcile {last.get('at')} ({last.get('duration_ms')} ms, "
                      f"{last.get('reason')})")
    update = index.get("last_update")
    if isinstance(update, dict) and isinstance(last, dict) and update.get("at") != last.get("at"):
        console.print(f"          last update {update.get('at')} ({update.get('reason')}, epoch {update.get('epoch')})")
    if "pending_changes" in index:
        console.print(f"          pending changes {index['pending_changes']}   watcher {index.get('watcher')}   "
                      f"primary language {index.get('primary_language') or '-'}")
    for warning in index.get("warnings") or []:
        console.print(styled("          ", ("warning", "yellow"), f": {warning}"))


def _render_source(source: Any) -> None:
    """Where the index came from: built here, or a shared artifact (``index/artifact_adopt.py``)."""
    if not isinstance(source, dict):
        return
    if source.get("kind") == "artifact":
        console.print(f"          source: artifact of {str(source.get('commit'))[:12]} from {source.get('source')} "
                      f"(sha256 {source.get('sha256')}, adopted {source.get('adopted_at')})")
        check = source.get("integrity_check")
        if isinstance(check, dict):  # SQLite's integrity check, run after ready for a pinned artifact
            console.print(f"          integrity check after ready: {check.get('state')}")
    else:
        rebuilt = source.get("rebuilt_from_disk")
        console.print("          source: built from this checkout"
                      + (f" (rebuilt from disk: {rebuilt})" if rebuilt else ""))
    refused = source.get("artifact_refused")
    if isinstance(refused, dict):
        console.print(styled("          ", ("artifact refused", "yellow"),
                             f" ({refused.get('code')} {refused.get('error')}): {refused.get('message')}"))


def _stale(structural: dict[str, object], changes: list[SchemaChange]) -> dict[str, object]:
    """The offline ``structural`` section, with a warning when another version's schema built its facts: the counts
    are that version's, and the next start drops and refills them."""
    lines = [c.line() for c in changes if c.store == "structural"]
    return {**structural, "warnings": lines} if lines else structural


def _render_structural(structural: Any) -> None:
    if not isinstance(structural, dict) or structural.get("state") != "ready":
        return
    languages = structural.get("by_language") or {}
    parsed = ", ".join(f"{lang} {counts.get('parsed', 0)}" for lang, counts in sorted(languages.items())
                       if counts.get("parsed"))
    grammars = structural.get("grammars") or {}
    facts = (f"{structural.get('defs', '?')} defs, {structural.get('refs', '?')} refs"
             + (" (counting)" if structural.get("counts_pending") else ""))
    console.print(f"  structural: {facts}   parsed: {parsed or '-'}")
    skipped = structural.get("skipped") or {}
    contexts = ", ".join(f"{count} {state}" for state, count in sorted((structural.get("contexts") or {}).items()))
    reasons = ", ".join(f"{count} {reason}" for reason, count in sorted(skipped.items()))
    console.print(f"          skipped {sum(skipped.values())}{f' ({reasons})' if reasons else ''}   "
                  f"contexts: {contexts or '-'}   "
                  f"tree-sitter {grammars.get('tree_sitter')} / language pack "
                  f"{grammars.get('tree_sitter_language_pack')}")
    for warning in structural.get("warnings") or []:
        console.print(styled("          ", ("warning", "yellow"), f": {warning}"))


def _render_tasks(tasks: Any) -> None:
    if not isinstance(tasks, dict):
        console.print("  tasks:  no ledger yet")
        return
    ledger = tasks.get("ledger")
    refused = ledger.get("refused") if isinstance(ledger, dict) else None
    unreadable = ledger.get("unreadable") if isinstance(ledger, dict) else None
    if isinstance(refused, dict):  # a newer version's ledger: the server refuses to start on it
        console.print(styled("  ledger: ", ("refused", "red"), f" ({refused.get('code')} {refused.get('error')}): "
                             f"{refused.get('message')}"))
    elif unreadable:
        console.print(styled("  ledger: ", ("unreadable", "red"), f": {unreadable} (`cpl doctor` explains)"))
    open_tasks = tasks.get("open_tasks") or []
    total = int(tasks.get("open_task_count") or len(open_tasks))
    shown = f" (the {len(open_tasks)} newest shown)" if total > len(open_tasks) else ""
    console.print(f"  open tasks: {total}{shown}")
    for task in open_tasks:
        console.print(f"    {task['task_id']}  session {task['session_id']}  {task.get('budget', '')}")
    recent = tasks.get("recent_operations") or []
    if recent:
        console.print("  last operations:")
    for op in recent:
        outcome = "ok" if op.get("success") else f"error {op.get('error_code') or ''}".rstrip()
        parts = [f"#{op.get('op_id') or '-'}", op["timestamp"], op["op_type"], outcome,
                 f"{op.get('duration_ms') or 0} ms"]
        if op.get("limit_triggered"):
            parts.append(f"limit={op['limit_triggered']}")
        parts += [flag for flag in ("no_op", "non_progress") if op.get(flag)]
        console.print("    " + " ".join(parts))


def status(
    path: Annotated[Path | None, typer.Argument(help="Path inside the git work tree (default: cwd).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Add the last 50 log lines.")] = False,
    follow: Annotated[bool, typer.Option(
        "--follow", "-f", help="Live picture of the running server (calls, latency, index freshness, tasks, test "
                               "runs, log tail) until Ctrl+C; with --json one JSON line per second.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show whether the server runs, its port/pid, HEAD/branch, index state and the last error."""
    from codeplane.index.artifact_progress import in_progress
    from codeplane.index.overview import index_overview
    from codeplane.index.status_view import schema_changes
    from codeplane.index.structural.status import structural_status
    from codeplane.tasks.inspection import ledger_overview, quarantine_warnings

    with cli_errors(as_json):
        ctx = resolve(path, tolerant=True)  # status needs only the root; a config error is shown, not fatal
    if follow:
        from codeplane.cli.live_view import follow as follow_live

        follow_live(ctx.layout, as_json=as_json)
        return
    result = probe(ctx.layout)
    # `cpl up` downloads a URL artifact before it listens (QA62 #5): no port yet, but not "not running" either.
    fetching = None if result.running else in_progress(ctx.layout.state_dir)
    head = head_info(ctx.root)
    server_status: dict[str, Any] = result.status or {}
    last_error = server_status.get("last_error")
    if last_error is None and ctx.layout.last_error_file.is_file():
        last_error = ctx.layout.last_error_file.read_text(encoding="utf-8").strip() or None
    # No server to ask: read the index straight from index.db (read-only).
    index: Any = _redacted_source(server_status.get("index") or index_overview(ctx.layout.index_db))
    if not result.running and isinstance(index, dict) and index.get("head") and index["head"] != head.head:
        # Offline, the index is of the tree at its last reconcile: say that HEAD moved since (spec §4.2).
        moved = f"reconciled at {index['head'][:12]}, HEAD is now {(head.head or '(unborn)')[:12]}"
        index = {**index, "warnings": [*(index.get("warnings") or []),
                                       f"{moved}: the next `cpl up` reindexes what changed"]}
    # Offline, the figures are those another version left: say which stores the next start rebuilds (Tantivy here,
    # an indexer's facts under ``structural``).
    changes = [] if result.running else schema_changes(ctx.layout.index_db, ctx.layout.tantivy_dir)
    lexical = [c.line() for c in changes if c.store == "tantivy"]
    if lexical and isinstance(index, dict):
        index = {**index, "warnings": [*(index.get("warnings") or []), *lexical]}
    if server_status.get("phase") == "starting" and isinstance(index, dict):
        # The server answers while its stack boots; index.db alone would say "stopped".
        index = {**index, "state": "starting"}
    payload: dict[str, Any] = {
        "running": result.running, "answering": result.answering, "pid": result.pid, "port": result.port,
        "repo": str(ctx.root), "initialized": ctx.layout.state_dir.is_dir(),
        "branch": head.branch, "head": head.head, "detached": head.detached,
        "index": index, "last_error": last_error, "server": server_status or None,
        "structural": server_status.get("structural") or _stale(structural_status(ctx.layout.index_db), changes),
        "config_error": ctx.config_error.to_payload() if ctx.config_error else None,
    }
    # init, up, clear and export refuse with 2007 while something else is at .codeplane; status named nothing and
    # sent the user to `cpl init` (QA64 F4).
    place = ctx.layout.state_dir_problem()
    if place is not None:
        payload["state_dir_error"] = place.to_payload()
        if isinstance(index, dict) and index.get("state") == "not_built":
            index = payload["index"] = {**index, "note": f"no index; `cpl init` and `cpl up` refuse ({place.code}) "
                                                         "until .codeplane is a directory"}
    if fetching is not None:
        payload["fetching_artifact"] = fetching
    for section in ("tasks",):
        if section in server_status:
            payload[section] = server_status[section]
    if "tasks" not in payload:
        # No server to ask: read open tasks and the last operations straight from the ledger file.
        payload["tasks"] = ledger_overview(ctx.layout.ledger_db)
    # Damage the last start repaired (a running server) or evidence still awaiting the user (offline).
    payload["storage"] = server_status.get("storage") or {"warnings": quarantine_warnings(ctx.layout.state_dir)}
    if verbose:
        payload["log_tail"] = _tail(ctx.layout, VERBOSE_LOG_LINES)

    def render() -> None:
        state = ("running", "green") if result.running and result.answering else (
            ("running, not answering", "yellow") if result.running else
            ("starting, not listening yet", "yellow") if fetching else ("not running", "dim"))
        console.print(styled("CodePlane: ", state))
        console.print(f"  repo:   {ctx.root}")
        if fetching is not None:
            console.print(f"  pid:    {fetching.get('pid')}   {fetching_line(fetching)}")
        if ctx.config_error is not None:
            console.print(f"  config error {ctx.config_error.code}: {ctx.config_error.message}",
                          style="red")
        if place is not None:
            console.print(f"  state error {place.code}: {place.message}", style="red")
        if result.running:
            console.print(f"  pid:    {result.pid}   port: {result.port}   url: http://127.0.0.1:{result.port}/mcp")
        console.print(f"  branch: {head.branch or '(detached)'}   HEAD: {head.head or '(unborn)'}")
        _render_index(index)
        _render_structural(payload["structural"])
        for warning in (payload["storage"] or {}).get("warnings", []):
            console.print(f"  storage: {warning}", style="yellow")
        console.print(f"  last error: {last_error or 'none'}")
        _render_tasks(payload.get("tasks"))
        for line in payload.get("log_tail", []):
            console.print(line)

    emit(payload, as_json, render)
