"""Which paths a batch may touch (spec §9.4, DECISIONS D4).

A target must pass, in order: the one canonicaliser (``resolve_in_repo``: relative, no ``..``, no NUL,
inside the repo after symlinks, never ``.git/`` or ``.codeplane/``), not be the repo root, a directory
or a symlink itself, not be outside CodePlane's universe (``.cplignore``, pruned directories) and match
the call's allow-list if one is given. Every refusal is 5001 and happens before anything is written.
Git-ignored paths are allowed but flagged.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec
import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import RepoPath, resolve_in_repo
from codeplane.repo.ignore import IgnoreRules


@dataclass(frozen=True)
class Target:
    """A path the batch may write. ``rel`` has symlinked directories resolved, so two spellings of
    one file share one lock, one journal entry and one delta entry."""

    rel: str
    abs: Path
    git_ignored: bool


def _refuse(path: str, reason: str, **extra: object) -> CodePlaneError:
    return CodePlaneError(ErrorCode.MUTATION_SCOPE_VIOLATION, f"path {path!r} is refused: {reason}",
                          details={"path": path, "reason": reason, **extra})


class AllowList:
    """Gitignore-style patterns (``src/``, ``*.py``, ``tests/**/test_*.py``) a call limits itself to."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        if not self.patterns:  # "no limit" is leaving allow out; an empty list allowed every path (it failed open)
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, "allow is empty, so no path could match; give "
                                 "patterns such as ['src/'], or leave allow out for no limit",
                                 details={"field": "allow"})
        try:
            self._spec = pathspec.GitIgnoreSpec.from_lines(self.patterns)
        except (ValueError, TypeError) as exc:
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"invalid allow pattern: {exc}",
                                 details={"field": "allow", "patterns": list(self.patterns)}) from exc
        # pathspec compiles a pattern that can match nothing (``[`` unclosed, blank, a ``#`` comment) to no regex:
        # accepted silently, it narrowed the batch to nothing without saying why.
        for index, compiled in enumerate(self._spec.patterns):
            if compiled.regex is None:
                raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS,
                                     f"invalid allow pattern {self.patterns[index][:200]!r}: it matches no path "
                                     "(an unclosed '[', a blank line or a '#' comment)",
                                     details={"field": f"allow.{index}"})

    def allows(self, rel: str) -> bool:
        return bool(self._spec.match_file(rel))


class Scope:
    """Resolves and vets targets for one repository. Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._lock = threading.Lock()
        self._rules: IgnoreRules | None = None
        self._rules_key: tuple[int, int] | None = None
        self._repo: pygit2.Repository | None = None

    def target(self, path: str, allow: AllowList | None = None) -> Target:
        """The vetted target for ``path``; raises 5001 naming the path and the reason."""
        rel = resolve_in_repo(self.root, path)
        if not rel.rel:
            raise _refuse(path, "the repository root is not a file")
        lexical = rel.absolute(self.root)
        try:
            real = lexical.parent.resolve() / lexical.name
            real_rel = RepoPath(real.relative_to(self.root).as_posix())
        except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop before Python 3.13
            raise _refuse(path, "resolves outside the repository") from exc
        if real_rel.is_protected:
            raise _refuse(path, "resolves into a protected directory (symlink)")
        if real.is_symlink():
            target = os.readlink(real)
            raise _refuse(path, f"is a symbolic link (to {target}); edit the file it points to",
                          link_target=target)
        if real.is_dir():
            raise _refuse(path, "is a directory")
        if not os.path.lexists(real) and any(ord(c) < 32 or c == "\x7f" for c in rel.rel):
            # A new name with a newline reads as two entries in every line-based listing (git status, search hits,
            # list_files): a crafted one can fake entries in what a model reads. An existing one can be edited.
            raise _refuse(path, "a new file's name may not contain a control character (a newline, a tab)")
        rules = self._ignore_rules()
        for candidate in dict.fromkeys((rel.rel, real_rel.rel)):
            if rules.excludes(candidate):
                raise _refuse(path, "is excluded by .cplignore (or is in a pruned directory such as "
                                    "node_modules/); CodePlane does not write there")
            if allow is not None and not allow.allows(candidate):
                raise _refuse(path, "is not matched by this call's allow-list", allow=list(allow.patterns))
        return Target(rel=real_rel.rel, abs=self.root.joinpath(*real_rel.parts),
                      git_ignored=self._git_ignored(real_rel.rel))

    def _ignore_rules(self) -> IgnoreRules:
        # .cplignore can change while the server runs; reload when its stat changes.
        try:
            st = (self.root / ".cplignore").stat()
            key = (st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            key = (0, -1)
        with self._lock:
            if self._rules is None or key != self._rules_key:
                self._rules, self._rules_key = IgnoreRules.load(self.root), key
            return self._rules

    def _git_ignored(self, rel: str) -> bool:
        with self._lock:
            try:
                if self._repo is None:
                    self._repo = pygit2.Repository(str(self.root))
                return bool(self._repo.path_is_ignored(rel))
            except (pygit2.GitError, KeyError, ValueError):
                return False
