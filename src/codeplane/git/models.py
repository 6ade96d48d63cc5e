"""Frozen models shared by several git operations (people, conflicts, ref and path effects).

Every model crossing the ``git`` boundary is a frozen pydantic model so the server can wrap it in a tool
result unchanged. Paths and names (refs, branches, tags, worktrees) are display strings: UTF-8 as is, other bytes
as ``\\xNN`` escapes (see :mod:`codeplane.git.pathspecs`), written once here for every model so no answer holds a
string UTF-8 cannot carry; code that reads a name back from a model as a ref maps it with ``raw_ref``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from codeplane.core.calls import MutationReport
from codeplane.git.pathspecs import shown


class GitModel(BaseModel):
    """Base of every git model: immutable, unknown fields rejected."""

    # defer_build: built on first use, or by the server's warm-up after /ready (issue 19's warm restart)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _shown_names(cls, data: Any) -> Any:
        """Every string as :func:`shown` writes it: pygit2 hands a name that is not UTF-8 (``git branch
        $'br\\xff'``, a tag, a worktree's directory) as lone surrogates, which made the answer 8001/9001."""
        return _shown_strings(data) if isinstance(data, dict) else data


def _shown_strings(value: Any) -> Any:
    if isinstance(value, str):
        return value if value.isascii() else shown(value)
    if isinstance(value, dict):
        return {_shown_strings(k): _shown_strings(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_shown_strings(v) for v in value)
    return value  # a model (its strings shown when it was built), a number, None


class Person(GitModel):
    name: str
    email: str
    #: ISO 8601 with the recorded UTC offset (same as ``git log --format=%aI``).
    time: str


class Conflict(GitModel):
    """One conflicted path; an oid is absent when that side has no version (added/deleted)."""

    path: str
    ancestor_oid: str | None = None
    ours_oid: str | None = None
    theirs_oid: str | None = None


class RefChange(GitModel):
    ref: str
    old: str | None = None
    new: str | None = None


class PathChange(GitModel):
    path: str
    #: SHA-256 of the bytes now on disk; ``""`` when the file is gone, ``None`` when not hashed (too big).
    sha256: str | None = None
    #: What the write did to the file (``git/numstat.py``); a file it changed in place is the default.
    change: Literal["added", "modified", "deleted"] = "modified"
    #: SHA-256 of its bytes before the write (as write_source's ``old_sha256``): absent for an added file or when
    #: not read (too big, or a dirty file past what the tracker keeps).
    old_sha256: str | None = None


#: At most this many paths are listed (and hashed) in an :class:`Effect`; ``paths_total`` has the rest.
EFFECT_PATH_LIMIT = 100
#: At most this many ref changes are listed in an :class:`Effect`.
EFFECT_REF_LIMIT = 50


def cap_listed(data: Any, *names: str, limit: int = EFFECT_PATH_LIMIT) -> Any:
    """A model's input keeping the first ``limit`` items of each list field ``names``, the count in
    ``<name>_total`` (a "before" validator): a stage of 1,500 files answered 23-112 KB of paths (every answer is
    bounded; ``git_status`` lists them all, by pages)."""
    if not isinstance(data, dict):
        return data
    for name in names:
        items = data.get(name)
        if isinstance(items, list) and len(items) > limit and f"{name}_total" not in data:
            data = {**data, name: items[:limit], f"{name}_total": len(items)}
    return data


class Effect(GitModel):
    """What a write did to the repository: HEAD, refs, working-tree paths, and its recovery point."""

    head_before: str | None = None
    head_after: str | None = None
    refs: list[RefChange] = []
    refs_total: int = 0
    paths: list[PathChange] = []
    paths_total: int = 0
    #: Lines inserted and deleted in the changed files (``git diff --numstat`` between their contents before and
    #: after; binary files and submodules have none), except the ``uncounted`` files.
    insertions: int = 0
    deletions: int = 0
    #: Changed files whose lines are not in ``insertions``/``deletions`` (their content before or after was out of
    #: reach): the totals are then a lower bound, not a measured 0.
    uncounted: int = 0
    #: ``refs/codeplane/recovery/...`` recorded before the operation, if it could discard work.
    recovery_point: str | None = None
    #: Set only when the operation switched what HEAD names: the branch's ref before and after (``None``: detached).
    head_ref_before: str | None = None
    head_ref_after: str | None = None
    #: What else changed that names no path or ref: ``index`` (staged entries, a submodule's commit, conflict
    #: stages), ``state merge -> none`` (an operation begun or ended), ``stash list`` (an entry dropped).
    changed: list[str] = []

    @property
    def switched(self) -> bool:
        return self.head_ref_before != self.head_ref_after

    def mutation_report(self) -> MutationReport:
        """The call-observer view (§12.3): changed paths with hashes, ref moves and a switch of branch (a branch
        created or a checkout of a branch at the same commit changes no file, and is no no-op), and a short diff."""
        changed = tuple((p.path, p.sha256 or "") for p in self.paths)
        moved = [(r.ref, r.new or "") for r in self.refs]
        if self.switched:
            moved.append(("HEAD", self.head_ref_after or "(detached)"))
        moved += [("(repository)", what) for what in self.changed]
        lines = [f"{r.ref} {(r.old or '0')[:12]}..{(r.new or '0')[:12]}" for r in self.refs]
        if self.switched:
            lines.append(f"HEAD {self.head_ref_before or '(detached)'} -> {self.head_ref_after or '(detached)'}")
        if self.refs_total > len(self.refs):
            lines.append(f"... {self.refs_total - len(self.refs)} more ref changes")
        if self.paths_total > len(self.paths):
            lines.append(f"... {self.paths_total - len(self.paths)} more changed paths")
        if self.paths_total:
            lines.append(f"{self.paths_total} files +{self.insertions} -{self.deletions}"
                         + (f" ({self.uncounted} not counted)" if self.uncounted else ""))
        lines += self.changed
        if self.recovery_point:
            lines.append(f"recovery point {self.recovery_point}")
        return MutationReport(
            changed_paths=changed,
            insertions=self.insertions,
            deletions=self.deletions,
            short_diff="\n".join(lines)[:2000],
            repo_before=self.head_before or "",
            repo_after=self.head_after or "",
            head_only=True,
            files_changed=self.paths_total, uncounted=self.uncounted,
            refs_moved=tuple(sorted(moved)),
            # The ledger's summary marks them ``+`` (``-`` is said by the "" hash of a deleted file).
            created_paths=tuple(sorted(p.path for p in self.paths if p.change == "added")),
        )


class WriteResult(GitModel):
    """Base of results of operations that change the repository."""

    effect: Effect = Effect()

    def mutation_report(self) -> MutationReport | None:
        return self.effect.mutation_report()


class Page(GitModel):
    """§23.6 pagination block: ``next_cursor`` is absent when everything was returned."""

    next_cursor: str | None = None
    total_estimate: int | None = None
