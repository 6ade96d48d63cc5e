"""Typed wrappers for pygit2's checkout calls (pygit2 ships them without annotations).

A checkout that writes files also keeps Python's bytecode caches honest (``core.bytecode``): libgit2
notifies each file it is about to update, its current stat is kept, and after the checkout a same-size
rewrite within that second has its cached bytecode dropped. libgit2's other work-tree writers (reset,
stash, merge, cherry-pick, revert) take no checkout callbacks: their callers name the paths the operation
may rewrite (:func:`settling`), a superset from the trees involved and the dirty paths.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pygit2
from pygit2.enums import CheckoutNotify, CheckoutStrategy, FileMode

from codeplane.core.bytecode import cache_prefixes, drop_cached_bytecode, indistinct


class _Rewrites(pygit2.CheckoutCallbacks):
    """Records, before libgit2 writes them, the size and mtime of the ``.py`` files a checkout updates."""

    def __init__(self, workdir: str) -> None:
        super().__init__()
        self.workdir = workdir
        self.before: dict[str, tuple[int, int]] = {}

    def checkout_notify_flags(self) -> CheckoutNotify:
        return CheckoutNotify.UPDATED | CheckoutNotify.DIRTY

    def checkout_notify(self, why: CheckoutNotify, path: str, baseline: object, target: object,
                        workdir: object) -> None:
        self.record(path)

    def record(self, path: str) -> None:
        if path in self.before or not path.endswith(".py"):
            return
        try:
            st = os.lstat(os.path.join(self.workdir, path))
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):
            self.before[path] = (st.st_size, st.st_mtime_ns)

    def settle(self) -> None:
        prefixes = cache_prefixes(Path(self.workdir)) if self.before else ()
        for path, (size, mtime_ns) in self.before.items():
            full = os.path.join(self.workdir, path)
            try:
                st = os.lstat(full)
            except OSError:
                continue  # the checkout removed it
            if stat.S_ISREG(st.st_mode) and indistinct(size, mtime_ns, st.st_size, st.st_mtime_ns):
                drop_cached_bytecode(Path(full), prefixes)


def _recorder(repo: pygit2.Repository, strategy: CheckoutStrategy) -> _Rewrites | None:
    if repo.workdir is None or strategy & CheckoutStrategy.DRY_RUN:
        return None
    return _Rewrites(repo.workdir)


def checkout_tree(repo: pygit2.Repository, tree: pygit2.Tree, strategy: CheckoutStrategy, *,
                  paths: Sequence[str] | None = None, callbacks: pygit2.CheckoutCallbacks | None = None) -> None:
    """Write ``tree`` into the working tree and index as ``strategy`` allows (SAFE refuses to overwrite).
    With ``callbacks`` (a dry run's collision report) the caller observes instead, and nothing is settled."""
    kwargs: dict[str, object] = {"strategy": strategy}
    if paths is not None:
        kwargs["paths"] = list(paths)
    recorder = _recorder(repo, strategy) if callbacks is None else None
    if callbacks is not None or recorder is not None:
        kwargs["callbacks"] = callbacks if callbacks is not None else recorder
    repo.checkout_tree(tree, **kwargs)  # type: ignore[no-untyped-call]
    if recorder is not None:
        recorder.settle()


def checkout_index(repo: pygit2.Repository, strategy: CheckoutStrategy, *, paths: Sequence[str] | None = None) -> None:
    """Write the index's entries into the working tree."""
    kwargs: dict[str, object] = {"strategy": strategy}
    if paths is not None:
        kwargs["paths"] = list(paths)
    recorder = _recorder(repo, strategy)
    if recorder is not None:
        kwargs["callbacks"] = recorder
    repo.checkout_index(**kwargs)  # type: ignore[no-untyped-call]
    if recorder is not None:
        recorder.settle()


@contextmanager
def settling(repo: pygit2.Repository, paths: Iterable[str]) -> Iterator[None]:
    """Around a libgit2 call that rewrites some of ``paths`` without checkout callbacks."""
    if repo.workdir is None:
        yield
        return
    recorder = _Rewrites(repo.workdir)
    for path in paths:
        recorder.record(path)
    try:
        yield
    finally:
        recorder.settle()


def tree_delta_paths(old: pygit2.Tree, new: pygit2.Tree) -> set[str]:
    """Paths that differ between two trees, on either side of a rename."""
    paths: set[str] = set()
    for delta in old.diff_to_tree(new).deltas:
        paths.update((delta.old_file.path, delta.new_file.path))
    return paths


def leading_links(root: Path, paths: Iterable[str]) -> list[str]:
    """The symbolic links standing where a leading directory of one of ``paths`` belongs, outermost only, sorted.

    libgit2 writes ``link/a.py`` through a symlink ``link`` when the checkout does not also replace ``link`` itself
    (a path-limited checkout, or an index that already lacks it): into the link's target, another directory of the
    repository or one outside it. git replaces the link by a real directory (:func:`replace_links`)."""
    kinds: dict[str, int] = {}  # leading path -> its lstat mode (0: absent)
    found: set[str] = set()
    for path in paths:
        prefix = ""
        for part in path.split("/")[:-1]:
            prefix = f"{prefix}/{part}" if prefix else part
            if prefix not in kinds:
                try:
                    kinds[prefix] = os.lstat(os.path.join(root, prefix)).st_mode
                except OSError:
                    kinds[prefix] = 0
            mode = kinds[prefix]
            if stat.S_ISLNK(mode):
                found.add(prefix)
            if not stat.S_ISDIR(mode):
                break  # below a link, a file or nothing there is no other link to find
    return sorted(found)


def replace_links(root: Path, links: Iterable[str]) -> None:
    """Remove the links :func:`leading_links` found, so the checkout that follows creates real directories there
    (never writing through them). Only the link goes; its target is not touched."""
    for link in links:
        full = root / link
        if full.is_symlink():
            full.unlink()


def write_blob(repo: pygit2.Repository, root: Path, path: str, blob: pygit2.Oid, mode: int) -> None:
    """The blob's bytes at ``path``, keeping the file's permissions but the executable bits ``mode`` says."""
    full = root / path
    data = repo[blob].peel(pygit2.Blob).data
    replace_links(root, leading_links(root, [path]))  # written into a real directory, never through a link
    full.parent.mkdir(parents=True, exist_ok=True)
    if full.is_dir() and not full.is_symlink():
        # A directory where the blob goes (a symlink coming back over one): empty once its tracked files went, as
        # git's checkout needs it; one still holding other files fails here rather than lose them.
        full.rmdir()
    elif full.is_symlink() or (mode == FileMode.LINK and os.path.lexists(full)):
        full.unlink()
    if mode == FileMode.LINK:
        os.symlink(os.fsdecode(data), full)
        return
    full.write_bytes(data)
    bits = stat.S_IMODE(full.stat().st_mode)
    readable = (bits & 0o444) >> 2  # an executable bit wherever the file is readable, as git checks one out
    full.chmod(bits | readable if mode == FileMode.BLOB_EXECUTABLE else bits & ~0o111)


def path_as_in(repo: pygit2.Repository, root: Path, tree: pygit2.Tree, path: str) -> None:
    """``path`` as ``tree`` has it, in the index and the work tree; gone from both when ``tree`` has none (the
    caller writes the index)."""
    index = repo.index
    try:
        entry = tree[path]
    except KeyError:
        if path in index:
            index.remove(path)
        if not leading_links(root, [path]):  # below a link the file is another one (the link's target's)
            (root / path).unlink(missing_ok=True)
            prune_empty(root, path)
        return
    index.add(pygit2.IndexEntry(path, entry.id, entry.filemode))
    write_blob(repo, root, path, entry.id, entry.filemode)


def prune_empty(root: Path, path: str) -> None:
    """Remove the directories above ``path`` it leaves empty, as git does after removing untracked files."""
    parent = (root / path).parent
    while parent != root:
        try:
            parent.rmdir()
        except OSError:  # not empty (an ignored file stays), or gone
            return
        parent = parent.parent
