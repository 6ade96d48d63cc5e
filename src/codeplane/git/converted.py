"""The work tree of the paths git converts and libgit2 does not, as git sees it.

A ``.gitattributes`` filter driver (git-lfs) or a ``working-tree-encoding`` (:mod:`codeplane.git.filters`) makes
the blob hold the converted ("cleaned") bytes while the work tree holds the smudged ones. git compares a file whose
stat data changed by converting it first; libgit2 runs neither conversion and compares the raw bytes, so a file
that was only touched (a build tool, an editor, a copy) read as modified, its diff was the smudged file against
the cleaned blob, and ``all`` staging and stashes were refused over it.

For those paths only, and only those libgit2 calls changed in the work tree, git itself is asked, read-only: ``git
status --no-optional-locks`` (which, unlike ``git diff``, then leaves the index it refreshed in memory unwritten)
says which really differ (:func:`settle`), and their patch is ``git diff-files -p`` / ``git diff-index -p <base>``
(:func:`worktree_diff`), what ``git diff`` prints: plumbing that refreshes nothing, and prints nothing for a file
whose converted content is unchanged. One process per few thousand paths. Every other path stays on libgit2. When
git is missing, fails or times out, libgit2's verdict stands: the path reads as modified, as before.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileStatus

from codeplane.core.errors import CodePlaneError
from codeplane.git.cli import run_git
from codeplane.git.filters import filtered_paths

#: A conversion is the user's program (git-lfs hashes whole files): git status waits for it as long.
_TIMEOUT_S = 120.0
#: Bytes of paths per git process, well inside the kernel's argument limit.
_ARGV_BYTES = 64 * 1024
#: A patch as git prints it however the user configured diffs: a/ b/ prefixes, no colour, no external or textconv
#: program (CodePlane's other diffs compare content as stored), full object ids.
_PLAIN = ("--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--full-index")


def converted(repo: pygit2.Repository, paths: Iterable[str]) -> list[str]:
    """The ``paths`` git runs a conversion on that libgit2 does not (a configured filter driver, a
    working-tree encoding), sorted."""
    return sorted(filtered_paths(repo, paths))


def settle(repo: pygit2.Repository, flags: Mapping[str, FileStatus], *,
           refresh: bool = False) -> dict[str, FileStatus]:
    """``flags`` (libgit2's status) with ``WT_MODIFIED`` cleared on the converted paths whose converted content and
    mode git finds equal to the index (a path left with no flag is dropped).

    ``refresh`` (a write, before it changes anything): when there are such paths, git's index is also refreshed
    (``git update-index --refresh``, what git's own write commands do first), so their cached stat data matches
    again and libgit2 too leaves them alone: its stash stored the smudged bytes as a change and its checkouts
    (reset, stash) wrote the raw blob over them."""
    suspects = set(converted(repo, (p for p, f in flags.items()
                                    if f & FileStatus.WT_MODIFIED and not f & FileStatus.CONFLICTED)))
    if not suspects:
        return dict(flags)
    differing = _differing(repo, sorted(suspects))
    if differing is None:
        return dict(flags)
    if refresh and not differing.issuperset(suspects) and not _refresh(repo):
        return dict(flags)  # libgit2 still sees them changed: the writers' refusal of converted paths must see it
    out: dict[str, FileStatus] = {}
    for path, flag in flags.items():
        kept = flag if path not in suspects or path in differing else FileStatus(flag & ~FileStatus.WT_MODIFIED)
        if kept:
            out[path] = kept
    return out


def _refresh(repo: pygit2.Repository) -> bool:
    """git's index refresh, which converts as git does; whether it ran."""
    if repo.workdir is None:
        return False
    try:
        # -q: a file that really changed is no error; the refresh goes on and writes what it refreshed.
        result = run_git(Path(repo.workdir), ["update-index", "-q", "--refresh"], timeout_s=_TIMEOUT_S)
    except CodePlaneError:
        return False
    repo.index.read(False)  # reload only if git rewrote it
    return result.ok


def _differing(repo: pygit2.Repository, paths: Sequence[str]) -> set[str] | None:
    """Which of ``paths`` git's status calls changed in the work tree (porcelain v2, ``-z``: ``1 XY … path``)."""
    out = _git(repo, ["status", "--porcelain=v2", "-z", "--no-renames", "--untracked-files=no",
                      "--ignore-submodules=all"], paths)
    if out is None:
        return None
    found: set[str] = set()
    for record in out.split(b"\0"):
        if record.startswith(b"1 ") and record[3:4] != b".":
            found.add(os.fsdecode(record.split(b" ", 8)[8]))
    return found


def worktree_diff(repo: pygit2.Repository, paths: Sequence[str], *, base: pygit2.Oid | None,
                  context_lines: int) -> pygit2.Diff | None:
    """What ``git diff [<base>] -- paths`` prints (renames found among them, git's 50%), parsed; ``None`` when git
    fails."""
    command = ["diff-index", "-M"] if base is not None else ["diff-files"]
    out = _git(repo, [*command, "-p", *_PLAIN, f"-U{context_lines}", *([str(base)] if base is not None else [])],
               paths)
    if out is None:
        return None
    try:
        return pygit2.Diff.parse_diff(out)
    except (pygit2.GitError, ValueError):
        return None


def _git(repo: pygit2.Repository, args: Sequence[str], paths: Sequence[str]) -> bytes | None:
    """``git <args> -- paths`` in chunks, output joined; ``None`` when any chunk fails."""
    if repo.workdir is None:
        return None
    root = Path(repo.workdir)
    out: list[bytes] = []
    for chunk in _chunks(paths):
        try:
            # Literal pathspecs: a name is a name here, not a glob or magic.
            result = run_git(root, ["--no-optional-locks", "--literal-pathspecs", *args, "--", *chunk],
                             timeout_s=_TIMEOUT_S)
        except CodePlaneError:
            return None
        if not result.ok:
            return None
        out.append(result.stdout)
    return b"".join(out)


def _chunks(paths: Sequence[str]) -> Iterable[list[str]]:
    chunk: list[str] = []
    size = 0
    for path in paths:
        length = len(os.fsencode(path)) + 1
        if chunk and size + length > _ARGV_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(path)
        size += length
    if chunk:
        yield chunk
