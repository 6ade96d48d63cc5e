"""Typed wrappers for pygit2's checkout calls (pygit2 ships them without annotations).

A checkout that writes files also keeps (whole-second mtime, size) caches honest (``core.mtimes``): libgit2
notifies each file it is about to update, its current stat is kept, and after the checkout a same-size
rewrite within that second gets the next one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence

import pygit2
from pygit2.enums import CheckoutNotify, CheckoutStrategy

from codeplane.core.mtimes import distinct_mtime_ns


class _Rewrites(pygit2.CheckoutCallbacks):
    """Records, before libgit2 writes them, the size and mtime of the files a checkout updates."""

    def __init__(self, workdir: str) -> None:
        super().__init__()
        self.workdir = workdir
        self.before: dict[str, tuple[int, int]] = {}

    def checkout_notify_flags(self) -> CheckoutNotify:
        return CheckoutNotify.UPDATED | CheckoutNotify.DIRTY

    def checkout_notify(self, why: CheckoutNotify, path: str, baseline: object, target: object,
                        workdir: object) -> None:
        if path in self.before:
            return
        try:
            st = os.lstat(os.path.join(self.workdir, path))
        except OSError:
            return
        if stat.S_ISREG(st.st_mode):
            self.before[path] = (st.st_size, st.st_mtime_ns)

    def restamp(self) -> None:
        for path, (size, mtime_ns) in self.before.items():
            full = os.path.join(self.workdir, path)
            try:
                st = os.lstat(full)
            except OSError:
                continue  # the checkout removed it
            if not stat.S_ISREG(st.st_mode):
                continue
            mtime = distinct_mtime_ns(size, mtime_ns, st.st_size, st.st_mtime_ns)
            if mtime is not None:
                os.utime(full, ns=(st.st_atime_ns, mtime), follow_symlinks=False)


def _recorder(repo: pygit2.Repository, strategy: CheckoutStrategy) -> _Rewrites | None:
    if repo.workdir is None or strategy & CheckoutStrategy.DRY_RUN:
        return None
    return _Rewrites(repo.workdir)


def checkout_tree(repo: pygit2.Repository, tree: pygit2.Tree, strategy: CheckoutStrategy, *,
                  paths: Sequence[str] | None = None, callbacks: pygit2.CheckoutCallbacks | None = None) -> None:
    """Write ``tree`` into the working tree and index as ``strategy`` allows (SAFE refuses to overwrite).
    With ``callbacks`` (a dry run's collision report) the caller observes instead, and nothing is restamped."""
    kwargs: dict[str, object] = {"strategy": strategy}
    if paths is not None:
        kwargs["paths"] = list(paths)
    recorder = _recorder(repo, strategy) if callbacks is None else None
    if callbacks is not None or recorder is not None:
        kwargs["callbacks"] = callbacks if callbacks is not None else recorder
    repo.checkout_tree(tree, **kwargs)  # type: ignore[no-untyped-call]
    if recorder is not None:
        recorder.restamp()


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
        recorder.restamp()
