"""Start-up hook of CodePlane's pytest processes: their bytecode cache also reads what an install compiled.

This directory is on the test processes' ``PYTHONPATH`` (for ``-p codeplane_pytest_events``), so Python imports
this module at start-up, before pytest. Where the environment forbids writing bytecode, CodePlane gives the
processes ``PYTHONPYCACHEPREFIX=.codeplane/pycache`` (``core.bytecode``). Under a prefix CPython reads bytecode
from that tree only: the ``__pycache__`` an installer compiled beside the standard library, pytest and every
plugin is ignored, and a cold tree makes the first run compile all of them again (~380 modules for click's
tests: that run cost twice what ``pytest`` did). With ``$CODEPLANE_PYCACHE_BESIDE`` set, a ``.pyc`` missing
from the tree is read from beside its source instead. CPython checks it as it checks any ``.pyc`` (magic
number, the source's mtime and size), so a stale one is compiled again and written to the tree: nothing is
ever written beside a source, which is what the setting protects.

Standalone and defensive: it runs in the repository's interpreter, imports only the standard library, and
any failure leaves imports as CPython does them. A ``sitecustomize`` later on ``sys.path`` (the environment's
own) still runs, after this one.
"""

import os
import sys

_ENV = "CODEPLANE_PYCACHE_BESIDE"


def _read_beside() -> None:
    prefix = getattr(sys, "pycache_prefix", None)
    if not prefix or os.environ.get(_ENV) != "1":
        return
    from importlib.machinery import SourceFileLoader

    root = os.path.join(prefix, "")
    original = SourceFileLoader.get_data

    def get_data(self, path):  # type: ignore[no-untyped-def]
        try:
            return original(self, path)
        except OSError:
            # <prefix>/<source dir without its leading separator>/<name>.pyc → <source dir>/__pycache__/<name>.pyc
            if not (isinstance(path, str) and path.endswith(".pyc") and path.startswith(root)):
                raise
            head, name = os.path.split(path[len(root) - 1:])
            return original(self, os.path.join(head, "__pycache__", name))

    SourceFileLoader.get_data = get_data  # type: ignore[method-assign]


def _chain() -> None:
    """Run the next ``sitecustomize`` on ``sys.path``: this one shadows it."""
    import importlib.util
    from importlib.machinery import PathFinder

    # Real paths: this directory reached through a symlink must not find this module again.
    here = os.path.dirname(os.path.realpath(__file__))
    others = [p for p in sys.path if os.path.realpath(p or os.curdir) != here]
    spec = PathFinder.find_spec(__name__, others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module
    spec.loader.exec_module(module)


try:
    _read_beside()
except Exception:  # noqa: BLE001 - never break the interpreter's start-up; imports then work as usual
    pass
_chain()
