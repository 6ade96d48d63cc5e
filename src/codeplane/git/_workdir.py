"""Typed wrappers for pygit2's checkout calls (pygit2 ships them without annotations)."""

from __future__ import annotations

from collections.abc import Sequence

import pygit2
from pygit2.enums import CheckoutStrategy


def checkout_tree(repo: pygit2.Repository, tree: pygit2.Tree, strategy: CheckoutStrategy, *,
                  paths: Sequence[str] | None = None, callbacks: pygit2.CheckoutCallbacks | None = None) -> None:
    """Write ``tree`` into the working tree and index as ``strategy`` allows (SAFE refuses to overwrite)."""
    kwargs: dict[str, object] = {"strategy": strategy}
    if paths is not None:
        kwargs["paths"] = list(paths)
    if callbacks is not None:
        kwargs["callbacks"] = callbacks
    repo.checkout_tree(tree, **kwargs)  # type: ignore[no-untyped-call]


def checkout_index(repo: pygit2.Repository, strategy: CheckoutStrategy, *, paths: Sequence[str] | None = None) -> None:
    """Write the index's entries into the working tree."""
    kwargs: dict[str, object] = {"strategy": strategy}
    if paths is not None:
        kwargs["paths"] = list(paths)
    repo.checkout_index(**kwargs)  # type: ignore[no-untyped-call]
