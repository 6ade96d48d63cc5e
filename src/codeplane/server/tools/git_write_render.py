"""Text of git writes and listings, shaped as the git CLI prints them: ``git branch -v``'s lines for branches,
``git stash list``'s for stashes, ``[new branch] main -> main`` for a push, ``M path`` for what was staged,
``pick <id> <summary>`` for a rebase plan, and the effect (HEAD and refs moved, paths with their new sha256, the
recovery point) as lines. Ids at 12 digits like the log's (every ref argument accepts them; the record has them
whole). What the caller said (the action, a commit's message) and what the effect already shows (the new HEAD)
are left to the record; an empty listing says so in words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from codeplane.git.diffs import DiffReport
from codeplane.server.answers import lean_dump, pairs, short_sha
from codeplane.server.tooling import ToolResult
from codeplane.server.tools.git_render import path_text

_OID_HEX = 12
_FULL_OID = re.compile(r"[0-9a-f]{40}")
#: Conflicted paths a write's text names (git_status pages the rest).
_CONFLICTS_SHOWN = 50


def _oid(value: object) -> str:
    return str(value)[:_OID_HEX] if value else "0"


def _short(value: Any) -> Any:
    """Every 40-digit id in ``value`` at 12 digits (recursively)."""
    if isinstance(value, str):
        return _FULL_OID.sub(lambda m: m.group(0)[:_OID_HEX], value)
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def _first_line(text: Any) -> str:
    return str(text).strip().split("\n", 1)[0]


def _branch(b: dict[str, Any]) -> str:
    line = f"{'*' if b.get('is_head') else ' '} {b.get('name')} {_oid(b.get('oid'))}"
    if b.get("upstream"):
        line += f" [{b['upstream']}: ahead {b.get('ahead', 0)}, behind {b.get('behind', 0)}]"
    return line


def _stash(e: dict[str, Any]) -> str:
    return f"{e.get('name')} {_oid(e.get('oid'))} {_first_line(e.get('message', ''))}"


def _remote(r: dict[str, Any]) -> str:
    push = f" (push {r['push_url']})" if r.get("push_url") and r.get("push_url") != r.get("url") else ""
    return f"{r.get('name')} {r.get('url') or '(no url)'}{push}"


def _worktree(w: dict[str, Any]) -> str:
    flags = [flag for flag in ("locked", "prunable") if w.get(flag)]
    name = f" ({w['name']})" if w.get("name") else ""
    branch = f" [{w['branch']}]" if w.get("branch") else " (detached HEAD)"
    return f"{path_text(str(w.get('path')))}{name} {_oid(w.get('head'))}{branch}" + "".join(f" {f}" for f in flags)


def _tag(t: dict[str, Any]) -> str:
    if t.get("annotated"):
        line = f"{t.get('name')} {_oid(t.get('oid'))} -> {_oid(t.get('target'))}"
    else:
        line = f"{t.get('name')} {_oid(t.get('target'))}"
    return line + (f" {_first_line(t['message'])}" if t.get("message", "").strip() else "")


def _recovery_point(p: dict[str, Any]) -> str:
    """Its name (which says the time and the operation) and where HEAD was."""
    at = f" on {str(p['branch']).removeprefix('refs/heads/')}" if p.get("branch") else " (detached)"
    return f"{p.get('name')} HEAD {_oid(p.get('head'))}{at}"


def _pushed(r: dict[str, Any]) -> str:
    def short(ref: Any) -> str:
        return str(ref).removeprefix("refs/heads/").removeprefix("refs/tags/")

    reason = f" ({r['reason']})" if r.get("reason") else ""
    return f"{r.get('summary') or r.get('status')} {short(r.get('local'))} -> {short(r.get('remote_ref'))}{reason}"


def _submodule(m: dict[str, Any]) -> str:
    flags = "".join(f" {f}" for f in m.get("flags", []))
    return f"{m.get('state')} {path_text(str(m.get('path')))} {_oid(m.get('workdir_oid') or m.get('head_oid'))}{flags}"


#: How a staged path's change is shown in front of it, as ``git status --short`` does (its ``R`` is a rename:
#: a conflict resolved by the commit is said in a word).
_CHANGE_LETTER = {"added": "A", "modified": "M", "deleted": "D", "resolved": "resolved"}


def _staged(e: dict[str, Any]) -> str:
    return f"{_CHANGE_LETTER.get(str(e.get('change')), e.get('change'))} {path_text(str(e.get('path')))}"


def _skipped(e: dict[str, Any]) -> str:
    return f"skipped {path_text(str(e.get('path')))}: {e.get('reason')}"


#: Record fields (a list, or one such item) shown one item per line, and what an empty list is called.
_ITEM_LINES: dict[str, tuple[Callable[[dict[str, Any]], str], str]] = {
    "branches": (_branch, "no branches"), "branch": (_branch, ""),
    "stashes": (_stash, "no stashes"), "stash": (_stash, ""),
    "remotes": (_remote, "no remotes"), "remote": (_remote, ""),
    "worktrees": (_worktree, "no worktrees"), "worktree": (_worktree, ""),
    "tags": (_tag, "no tags"), "tag": (_tag, ""),
    "recovery_points": (_recovery_point, "no recovery points"), "restored": (_recovery_point, ""),
    "refs": (_pushed, ""), "submodules": (_submodule, "no submodules"),
    "changed": (_staged, "nothing to stage"), "skipped": (_skipped, ""), "staged": (_staged, ""),
}


def effect_lines(effect: dict[str, Any], changes: dict[str, str] | None = None, *, hashes: bool = True,
                 head_said: bool = False) -> list[str]:
    """What a write did, as lines: HEAD and refs moved (``old..new``), paths with their new sha256 (or
    ``deleted``; ``changes``: a letter in front of a staged path), a ``3 files +12 -4`` line, and the recovery
    point whole (git_reset takes it back). ``hashes=False`` (a write that changed no file): a count and the first
    paths. ``head_said``: a line above names the commit HEAD moved to (no ``HEAD old..new`` line)."""
    changes = changes or {}
    lines = []
    if effect.get("head_before") != effect.get("head_after") and not head_said:
        lines.append(f"HEAD {_oid(effect.get('head_before'))}..{_oid(effect.get('head_after'))}")
    refs = effect.get("refs", [])
    moved = (effect.get("head_before"), effect.get("head_after"))
    # The checked-out branch moving with HEAD (a commit, a reset) is one move, said once (by the HEAD line).
    lines += [f"{r['ref']} {_oid(r.get('old'))}..{_oid(r.get('new'))}" for r in refs if not (
        moved[0] != moved[1] and r["ref"].startswith("refs/heads/") and (r.get("old"), r.get("new")) == moved)]
    if effect.get("refs_total", 0) > len(refs):
        lines.append(f"… {effect['refs_total'] - len(refs)} more refs")
    paths = effect.get("paths", [])
    if hashes:
        for p in paths:
            sha = p.get("sha256")
            state = "deleted" if sha == "" else short_sha(sha) if sha else ""
            # ``A`` before a file the write created, as write_source marks one (a deleted one says so after it).
            letter = changes.get(p["path"]) or ("A" if p.get("change") == "added" else None)
            lines.append(f"{letter + ' ' if letter else ''}{path_text(p['path'])} {state}".rstrip())
        if effect.get("paths_total", 0) > len(paths):
            lines.append(f"… {effect['paths_total'] - len(paths)} more paths")
        lines += _diffstat(effect)
    else:
        lines += _stat_lines(effect, changes)
    # The index alone is said by what the tool lists (staged paths); an operation's state or the stash list is not.
    lines += [f"changed: {what}" for what in effect.get("changed") or [] if what != "index"]
    if effect.get("recovery_point"):
        lines.append(f"recovery point {effect['recovery_point']}")
    return lines


def _diffstat(effect: dict[str, Any]) -> list[str]:
    """``3 files +12 -4`` (``git diff --shortstat`` in brief), and how many files' lines it leaves out when some
    could not be counted: a bare total would read as measured."""
    total = max(effect.get("paths_total", 0), len(effect.get("paths", [])))
    if not total:
        return []
    return [f"{total} file{'s' if total != 1 else ''} +{effect.get('insertions', 0)} -{effect.get('deletions', 0)}"
            + _uncounted(effect)]


def _uncounted(effect: dict[str, Any]) -> str:
    n = effect.get("uncounted", 0)
    return f" ({n} file{'s' if n != 1 else ''} not counted)" if n else ""


#: Paths the text of a write that changed no file names (a commit, a soft or mixed reset): the count says the
#: rest, and git_show / git_diff list them. Listing all 56 of a commit with hashes cost 2.7 KB where
#: ``git commit`` prints 80 B.
PATHS_SHOWN = 10


def _stat_lines(effect: dict[str, Any], changes: dict[str, str]) -> list[str]:
    """``git commit``'s one-line stat (``56 files changed, +56 -56``), the first :data:`PATHS_SHOWN` paths with
    their change letter (a renamed one as ``R old -> new``), and one ``… N more paths`` line counting every path
    not named."""
    paths = effect.get("paths", [])
    total = max(effect.get("paths_total", 0), len(paths))
    if not total:
        return []
    stat = f"{total} file{'s' if total != 1 else ''} changed"
    if effect.get("insertions") or effect.get("deletions"):
        stat += f", +{effect.get('insertions', 0)} -{effect.get('deletions', 0)}"
    lines = [stat + _uncounted(effect)]
    for p in paths[:PATHS_SHOWN]:
        old = p.get("old_path")
        letter = "R" if old else changes.get(p["path"])
        name = f"{path_text(old)} -> {path_text(p['path'])}" if old else path_text(p["path"])
        lines.append(f"{letter + ' ' if letter else ''}{name}")
    if total > min(len(paths), PATHS_SHOWN):
        lines.append(f"… {total - min(len(paths), PATHS_SHOWN)} more paths")
    return lines


def _git_stat(effect: dict[str, Any], stat: DiffReport) -> dict[str, Any]:
    """The effect with git's stat of the commit in place of its own: the files as git's diff pairs them (a
    rename is one file, its new path with its old one), git's counts."""
    paths = [{"path": f.path, **({"old_path": f.old_path} if f.old_path else {})} for f in stat.files]
    return {**effect, "paths": paths, "paths_total": stat.stats.files_changed, "insertions": stat.stats.insertions,
            "deletions": stat.stats.deletions, "uncounted": 0}


def render_commit(result: ToolResult) -> str:
    """A commit as ``git commit`` says it: ``[main 83b11c57f692] summary``, HEAD's move, a one-line stat and the
    first paths, from git's own stat of the commit when it may hold a rename (``CommitResult.stat``: ``R Foo.py ->
    foo.py``, ``1 file changed``, not a delete and an add). Without the paths' sha256: a commit changes no file, so
    each is the hash the caller already had (the record's effect keeps them for the call observer)."""
    return render_git_write(result, hashes=False, stat=getattr(result, "stat", None))


def render_reset(result: ToolResult) -> str:
    """A reset: ``mode`` is the caller's own argument (or says a recovery point, which ``restored`` names); a
    soft or mixed reset changes no file, so its paths are counted and named without hashes."""
    return render_git_write(result, hashes=getattr(result, "mode", None) not in ("soft", "mixed"), drop=("mode",))


def render_git_write(result: ToolResult, *, hashes: bool = True, drop: tuple[str, ...] = (),
                     stat: DiffReport | None = None) -> str:
    """A git write or listing: its outcome (items as lines, the rest as ``key=value`` pairs with 12-digit ids),
    then its effect as lines. A nested result repeating the outer effect, ``short_oid`` beside ``oid``, and an id
    the ``HEAD old..new`` line shows are left to the record; so are the fields ``drop`` names, and with
    ``hashes=False`` the paths' sha256 (:func:`_stat_lines`, from ``stat`` when given: a commit's own diff)."""
    record = lean_dump(result)
    for key in drop:
        record.pop(key, None)
    effect = record.pop("effect", {})
    if stat is not None and effect:
        effect = _git_stat(effect, stat)
    nested = record.get("result")
    if isinstance(nested, dict):  # a stash's or a rebase's outcome: one level is enough
        record.pop("result")
        nested.pop("effect", None)
        record = {**nested, **record}
    if record.get("aborted") is True:
        del record["aborted"]  # the caller asked for it (action=abort): the state line and recovery point say so
    # A pop or drop removing its entry is what the caller asked for (``dropped=true`` above its stash line); a pop
    # that stopped on conflicts keeps the entry, as git says.
    if isinstance(record.get("stash"), dict) and record.get("action") in ("pop", "drop") and \
            record.pop("dropped", False) is not True and record.get("action") == "pop":
        record["kept"] = True
    record.pop("action", None)  # the caller's own argument
    record.pop("operation", None)
    if record.get("created_branch") is not None and record.get("created_branch") == record.get("branch"):
        del record["created_branch"]  # its ref line says it was created
    if "oid" in record:
        record.pop("short_oid", None)
    warnings = [f"warning: {w}" for w in record.pop("warnings", None) or [] if isinstance(w, str)]
    changes = _take_staged(record, effect) if hashes else _take_letters(record)
    restored, changes_restored = _take_restored(record, effect, "restored_paths" in result.model_fields_set)
    changes.update(changes_restored)
    if "restored_paths" in result.model_fields_set and effect.get("head_before") == effect.get("head_after") and \
            isinstance(record.get("branch"), str):
        del record["branch"]  # paths restored on the branch checked out: ``branch=main`` named nothing that moved
    _name_branch(record, effect)
    if record.get("parents") == [effect.get("head_before")]:
        del record["parents"]  # the ``HEAD old..new`` line shows the one parent
    conflicts = _take_conflicts(record)
    if isinstance(record.get("stash"), dict):
        effect = _without_stash_moves(effect)
    new_commit = record.get("oid")
    commit = _take_commit(record)
    # ``[main 53207031fe0f] summary`` says where HEAD went, as git commit does: a ``HEAD old..new`` line said the
    # new id again (the parent stays in the record).
    head_said = bool(commit) and new_commit is not None and new_commit == effect.get("head_after")
    head = _restated_head(record, effect)
    items = _take_items(record)
    plan = _take_plan(record)
    _drop_said(record, head)
    pulled = _pulled(record, head)
    if pulled is not None:
        return pulled
    lines = warnings + commit + ([pairs(_short(record))] if record else []) + items + restored + plan + conflicts
    lines += effect_lines(effect, changes, hashes=hashes, head_said=head_said)
    if lines:
        return "\n".join(lines)
    # The listing asked for: an inspect result has every kind of list, ``tags`` first ("no tags" for no recovery
    # points); the one the action filled is the one set.
    empty = sorted((name not in result.model_fields_set, said) for name, (_, said) in _ITEM_LINES.items()
                   if said and isinstance(getattr(result, name, None), list))
    return empty[0][1] if empty else "nothing changed"


def _without_stash_moves(effect: dict[str, Any]) -> dict[str, Any]:
    """The effect without ``refs/stash old..new`` and ``changed: stash list``: the stash line of the answer names
    the entry pushed, popped or dropped (push said the stash three ways)."""
    refs = [r for r in effect.get("refs", []) if r.get("ref") != "refs/stash"]
    kept = {**effect, "refs": refs, "changed": [c for c in effect.get("changed") or [] if c != "stash list"]}
    if "refs_total" in effect:
        kept["refs_total"] = effect["refs_total"] - (len(effect.get("refs", [])) - len(refs))
    return kept


def _take_commit(record: dict[str, Any]) -> list[str]:
    """A new commit as ``git commit`` announces it: ``[main 83b11c57f692] summary``."""
    oid, summary, branch = record.get("oid"), record.get("summary"), record.get("branch")
    if not isinstance(oid, str) or not isinstance(summary, str) or not isinstance(branch, str | None):
        return []
    for key in ("oid", "summary", "branch"):
        record.pop(key, None)
    return [f"[{branch or 'detached HEAD'} {_oid(oid)}] {_first_line(summary)}"]


def _restated_head(record: dict[str, Any], effect: dict[str, Any]) -> str | None:
    """The commit HEAD is at after the write, when the record names it (``oid``, ``head``, ``commit``)."""
    return effect.get("head_after") or next(
        (v for k in ("head", "new_head") if isinstance(v := record.get(k), str)), None)


def _drop_said(record: dict[str, Any], head: str | None) -> None:
    """Values the text says otherwise: the id HEAD is at (the effect's line or git_status), ``false`` flags (but a
    failure), a successful outcome, and a message beyond its first line."""
    for key in ("oid", "head", "commit", "new_head"):
        if head is not None and record.get(key) == head:
            del record[key]
    for key in [k for k, v in record.items() if v is False and k != "success"]:
        del record[key]
    if record.get("success") is True:
        del record["success"]
    for key in ("message", "summary"):
        if isinstance(record.get(key), str):
            record[key] = _first_line(record[key])
    for value in record.values():
        if isinstance(value, dict):  # a pull's merge repeats ``success``/``state`` the answer says already
            for key in [k for k in value if k in record and record[k] == value[k]]:
                del value[key]


def _pulled(record: dict[str, Any], head: str | None) -> str | None:
    """A pull as git says it: ``Already up to date.`` or how it integrated (``merge: fastforward=true``)."""
    for key in ("merge", "rebase"):
        inner = record.get(key)
        if not isinstance(inner, dict):
            continue
        if inner.get("up_to_date"):
            return f"already up to date with {record.get('upstream', 'the upstream')}"
        del record[key]
        inner = {k: v for k, v in inner.items() if not (k == "operation" and v == key)
                 and not (k in ("commit", "new_head") and v == head)}
        if inner:
            record[key] = pairs(_short(inner))
    return None


def _take_items(record: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, (line, _) in _ITEM_LINES.items():
        value = record.get(name, [] if f"{name}_total" in record else None)
        if isinstance(value, list) and all(isinstance(v, dict) for v in value):
            lines += [line(v) for v in value]
            if name in _CAPPED:
                lines += _more(record, name, len(value))
                continue
            record.pop(name, None)
            if record.get(f"{name}_total") == len(value):
                del record[f"{name}_total"]  # all of them are listed (else the total and the cursor say more)
        elif isinstance(value, dict):
            lines.append(line(value))
            del record[name]
    return lines


def _take_restored(record: dict[str, Any], effect: dict[str, Any], asked: bool) -> tuple[list[str], dict[str, str]]:
    """A path restore's paths (only those that differed): ``restored <path> <sha>`` on the effect's own line for
    each it lists, a ``restored <path>`` line for the rest; ``nothing to restore`` when ``asked`` and none
    differed (as ``git checkout -- .`` prints nothing)."""
    restored = record.get("restored_paths", [])
    if not isinstance(restored, list) or not (restored or asked):
        return [], {}
    listed = {p.get("path") for p in effect.get("paths", [])}
    lines = [f"restored {path_text(path)}" for path in restored if path not in listed]
    total = record.get("restored_paths_total", len(restored))
    more = _more(record, "restored_paths", len(restored))
    if not lines and effect.get("paths_total", len(listed)) >= total:
        more = []  # the effect's "… N more paths" counts them
    lines += more
    return lines or ([] if restored else ["nothing to restore"]), {p: "restored" for p in restored if p in listed}


#: Lists a write's answer cuts (``cap_listed``), with no cursor: the state they come from is git_status's.
_CAPPED = frozenset({"changed", "skipped", "staged", "restored_paths"})


def _more(record: dict[str, Any], name: str, shown: int) -> list[str]:
    """Drop a listed field (and its total); a line for what the list left out."""
    record.pop(name, None)
    total = record.pop(f"{name}_total", shown)
    return [f"… {total - shown} more (git_status lists the repository's state)"] if total > shown else []


def _take_plan(record: dict[str, Any]) -> list[str]:
    """A rebase plan as ``git rebase -i`` shows it: ``pick <id> <summary>``, under what it replays onto."""
    plan = record.get("plan")
    if not isinstance(plan, dict) or not isinstance(plan.get("steps"), list):
        return []
    del record["plan"]
    head = f"onto {_oid(plan.get('onto'))}" + (f" (upstream {_oid(plan['upstream'])})"
                                                if plan.get("upstream") != plan.get("onto") else "")
    steps = [f"{s.get('action', 'pick')} {_oid(s.get('commit_sha'))} {_first_line(s.get('message', ''))}"
             for s in plan["steps"] if isinstance(s, dict)]
    return [head, *steps] if steps else [head, "nothing to replay"]


def _name_branch(record: dict[str, Any], effect: dict[str, Any]) -> None:
    """A created, renamed or deleted local branch is said by its ref line (where it pointed and points)."""
    branch = record.get("branch")
    moved = {r.get("ref"): (r.get("old"), r.get("new")) for r in effect.get("refs", [])}
    if isinstance(branch, dict) and branch.get("oid") in moved.get(branch.get("ref"), ()) and not branch.get("remote"):
        del record["branch"]


def _take_staged(record: dict[str, Any], effect: dict[str, Any]) -> dict[str, str]:
    """A commit's staged paths as letters for the effect's path lines (``A pkg/b.py 0abae1e0ae72``), when the
    effect lists every one of them; otherwise they stay in the record (a path the effect's cap left out)."""
    staged = record.get("staged")
    listed = {p.get("path") for p in effect.get("paths", [])}
    if not isinstance(staged, list) or not staged or not all(
            isinstance(e, dict) and e.get("path") in listed and e.get("change") in _CHANGE_LETTER for e in staged):
        return {}
    del record["staged"]
    return {str(e["path"]): _CHANGE_LETTER[str(e["change"])] for e in staged}


def _take_letters(record: dict[str, Any]) -> dict[str, str]:
    """A commit's staged paths as letters for the paths its stat names; the list and its total leave the text
    (the stat counts the paths: a second "… 300 more" beside it counted the same paths again)."""
    staged = record.pop("staged", None)
    record.pop("staged_total", None)
    if not isinstance(staged, list):
        return {}
    return {str(e["path"]): _CHANGE_LETTER.get(str(e.get("change")), str(e.get("change")))
            for e in staged if isinstance(e, dict) and "path" in e}


def _take_conflicts(record: dict[str, Any]) -> list[str]:
    """A stopped merge's (pull's, rebase's) conflicts as ``CONFLICT path`` lines, as git prints them, instead of
    compact JSON with three 40-digit ids each (git_status shows the ids; the record keeps them)."""
    holders = [record] + [v for v in record.values() if isinstance(v, dict)]
    paths: dict[str, None] = {}  # a pull's answer holds its merge's conflicts twice
    for holder in holders:
        found = holder.pop("conflicts", None)
        if isinstance(found, list):
            paths.update((str(c.get("path")), None) for c in found if isinstance(c, dict))
    lines = [f"CONFLICT {path_text(path)}" for path in list(paths)[:_CONFLICTS_SHOWN]]
    if len(paths) > _CONFLICTS_SHOWN:
        lines.append(f"… {len(paths) - _CONFLICTS_SHOWN} more conflicts (git_status lists them)")
    return lines
