"""The file watcher's own process: inotify set-up and event collection, away from the server's interpreter.

Why a process and not a thread: watchfiles' ``RustNotify`` adds an inotify watch per directory with the
interpreter held. On a 133k-file tree (45k directories) that took ~1.4 s, during which every other thread of the
server ran about a hundred times slower; a warm restart there took 3.7-3.9 s with the watcher and 2.2-2.3 s
without it. In a child the server's threads lose nothing, and the set-up runs on the other core.

The child runs what the watcher thread used to: one watch of the plan's directories alone, one of the rest with
all below, re-planned when the root gains or loses a directory (:func:`watch_plan`). A re-plan loses nothing: the
new tree watch is live before the old one ends, the old one ends only once what it still holds arrived after that
(:class:`_WatchStop`), and the batch naming the new directories (for the server to walk) follows the new watch's
set-up. It reports on stdout, in frames of a 4-byte little-endian length and a ``marshal``'d tuple:

- ``("live",)`` once: every watch of the first plan is in place, so a change from then on is reported;
- ``("batch", [(change, absolute path), ...], [relative path of a directory the root gained, ...])``;
- ``("rescan",)``: changes may have gone unreported (an event on a name that is not UTF-8, or a re-plan whose
  new tree watch fit inotify's limits only once the old one had closed);
- ``("error", "Type: message")`` before it exits on a failure.

It ends when its stdin closes: the server closed it to stop the watcher, or the server died. It imports only
watchfiles and the ignore rules' constants (about 60 ms), never the server's modules.
"""

from __future__ import annotations

import contextlib
import marshal
import math
import os
import signal
import struct
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from codeplane.repo.ignore import IgnoreRules

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

#: Tries at a tree watch while its directories keep vanishing under it.
_WATCH_ATTEMPTS = 5
#: Tries, 50 ms apart, at a tree watch that did not fit beside the one it replaces, once that one is closed.
_FREED_ATTEMPTS = 20
_HEADER = struct.Struct("<I")


def watch_plan(root: Path, rules: IgnoreRules | None = None) -> tuple[tuple[Path, ...], tuple[Path, ...]]:
    """What to watch: ``(alone, with all below)``.

    Alone: the root (its files and which directories it has) and git's directory (HEAD, index, packed-refs...).
    With all below: each top-level directory of the universe, and git's ``refs/`` and ``modules/``. Not watched at
    all: ``.codeplane/`` (every page SQLite writes to its WAL was an inotify event: ~3 s of the watcher's CPU in a
    1,000-file checkout of a 133k-file tree), the rest of ``.git/`` (objects), the other PRUNABLE_DIRS and the
    top-level directories ``.cplignore`` excludes (``rules``, else read from ``root``: inotify watches are a
    bounded resource, and gitignore rules cannot re-include anything below an excluded directory), none of which
    the universe holds. A ``.cplignore`` change is an event on the root: the plan is made again then. Symlinked
    directories are listed, never followed, like the walk.
    """
    if rules is None:
        try:
            rules = IgnoreRules.load(root)
        except OSError:
            rules = IgnoreRules.from_text("")
    alone = [root]
    below: list[Path] = []
    git_dir = root / ".git"
    if git_dir.is_dir() and not git_dir.is_symlink():
        alone.append(git_dir)
        below.extend(git_dir / sub for sub in ("modules", "refs") if (git_dir / sub).is_dir())
    try:
        with os.scandir(root) as entries:
            below.extend(Path(e.path) for e in entries
                         if e.is_dir(follow_symlinks=False) and not rules.ignores(e.name, is_dir=True))
    except OSError:
        pass
    return tuple(alone), tuple(sorted(below))


def write_frame(out: IO[bytes], message: tuple[Any, ...]) -> None:
    data = marshal.dumps(message)
    out.write(_HEADER.pack(len(data)) + data)
    out.flush()


def read_frame(source: IO[bytes]) -> tuple[Any, ...] | None:
    """The next frame, ``None`` at the end of the stream (the child ended)."""
    header = source.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    size = _HEADER.unpack(header)[0]
    data = source.read(size)
    if len(data) < size:
        return None
    message = marshal.loads(data)
    return message if isinstance(message, tuple) else None


def _notify_options() -> tuple[bool, bool, int, bool]:
    """(debug, force polling, poll delay ms, ignore permission denied) as ``watchfiles.watch`` would default
    them: its ``WATCHFILES_*`` environment variables, polling on WSL."""
    try:
        from watchfiles.main import (
            _default_debug,
            _default_force_polling,
            _default_ignore_permission_denied,
            _default_poll_delay_ms,
        )
    except ImportError:  # another watchfiles: its plain defaults
        return False, False, 300, False
    return (_default_debug(None), _default_force_polling(None), _default_poll_delay_ms(300),
            _default_ignore_permission_denied(None))


class _Watches:
    """The child's two watches and the re-planning; every frame goes through :meth:`send`."""

    def __init__(self, root: Path, debounce_ms: int, out: IO[bytes]) -> None:
        self.root = root
        self.debounce_ms = max(debounce_ms, 1)
        self.out = out
        self.stop = threading.Event()
        self._send_lock = threading.Lock()
        self._deep: tuple[threading.Thread, _WatchStop] | None = None
        #: The tree watch a re-plan replaced, ending once nothing it holds can be lost (at most one: see _replan).
        self._retiring: threading.Thread | None = None
        self._deep_paths: tuple[Path, ...] = ()
        self._options = _notify_options()

    def send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock:
            write_frame(self.out, message)

    def _notify(self, paths: tuple[Path, ...], *, recursive: bool) -> RustNotify:
        from watchfiles._rust_notify import RustNotify

        debug, polling, delay, denied = self._options
        return RustNotify([str(p) for p in paths], debug, polling, delay, recursive, denied)

    def run(self) -> None:
        alone, below = watch_plan(self.root)
        deep_live = threading.Event()
        self._start_deep(below, deep_live)
        notify = self._notify(alone, recursive=False)
        # Both watches first (the tree's takes long on a big tree): "live" promises every change is seen from now.
        while not (deep_live.wait(0.05) or self.stop.is_set()):
            pass
        if self.stop.is_set():
            return
        self.send(("live",))
        try:
            self._loop(notify, _WatchStop(self.stop), recursive=False,
                       again=lambda: self._notify(alone, recursive=False))
        finally:
            self._stop_deep()

    @property
    def _step_ms(self) -> int:
        return min(self.debounce_ms, 20)

    def _loop(self, notify: RustNotify | None, stop: _WatchStop, *, recursive: bool,
              again: Callable[[], RustNotify | None]) -> None:
        debounce, step = self.debounce_ms, self._step_ms
        try:
            while notify is not None and not self.stop.is_set():
                try:
                    # No timeout: watchfiles clears what it holds when one expires, and a change arriving just
                    # then was lost. ``stop`` is asked at every step; it ends the watch (see _WatchStop).
                    raw = notify.watch(debounce, step, 0, stop)
                except RuntimeError as exc:
                    if not _undecodable(exc):
                        raise
                    # An event on a name that is not UTF-8 poisons the watch: watchfiles keeps the batch it
                    # cannot turn into str, and every later call fails on it again. A new watch, set up before
                    # the old one closes so no change falls between; the lost batch's paths are unknown, so the
                    # server rescans (such names are left out of the universe; the others are not).
                    fresh = again()
                    notify.close()
                    notify = fresh
                    if not recursive:
                        self._replan()  # the lost batch may have held a directory the root gained
                    self.send(("rescan",))
                    continue
                if raw == "stop":
                    break
                if not isinstance(raw, set):
                    continue  # 'signal'
                added: list[str] = []
                if not recursive and any(Path(p).parent == self.root for _, p in raw):
                    added = self._replan()
                self.send(("batch", sorted(raw), added))
        finally:
            if notify is not None:
                notify.close()

    def _start_deep(self, paths: tuple[Path, ...], live: threading.Event | None = None,
                    ready: RustNotify | None = None) -> None:
        """The tree watch of ``paths`` in its own thread: ``ready`` if set up already, else set up there (``live``
        is set once it is in place)."""
        self._deep_paths = paths
        self._deep = None
        if not paths:
            if live is not None:
                live.set()
            return
        stop = _WatchStop(self.stop)

        def watch() -> None:
            notify = ready
            try:
                if notify is None:
                    notify = self._notify_existing(paths)
            finally:
                if live is not None:
                    live.set()  # on a failure too: it is reported (``_guarded``), nothing waits for it
            if notify is not None:
                self._loop(notify, stop, recursive=True, again=lambda: self._notify_existing(paths))

        thread = threading.Thread(target=self._guarded, args=(watch, stop), name="codeplane-watch-tree",
                                  daemon=True)
        self._deep = (thread, stop)
        thread.start()

    def _notify_existing(self, paths: tuple[Path, ...]) -> RustNotify | None:
        """The tree watch of those of ``paths`` that still exist: a directory deleted between the plan and the
        watch (a build's scratch directory, a branch switch) made watchfiles refuse the whole set ("No path was
        found"), and the watcher failed for good. Its deletion is an event on the root: the plan is made again."""
        for attempt in range(_WATCH_ATTEMPTS):
            existing = tuple(p for p in paths if p.is_dir())
            if not existing:
                return None
            try:
                return self._notify(existing, recursive=True)
            except FileNotFoundError:
                if attempt == _WATCH_ATTEMPTS - 1:
                    raise
        return None

    def _notify_once_freed(self, paths: tuple[Path, ...]) -> RustNotify | None:
        """The tree watch of ``paths`` once a closed one's inotify instance is gone: watchfiles frees it in a
        thread of its own, moments after ``close``. A failure past that fails the child, as at start."""
        for attempt in range(_FREED_ATTEMPTS):
            try:
                return self._notify_existing(paths)
            except (OSError, RuntimeError):
                if attempt == _FREED_ATTEMPTS - 1 or self.stop.wait(0.05):
                    raise
        return None

    def _guarded(self, body: Callable[[], None], stop: _WatchStop) -> None:
        try:
            body()
        except Exception as exc:  # noqa: BLE001 - reported to the server, which falls back to polling
            if stop.retired and not self.stop.is_set():
                # A replaced tree watch failed as it wound down: its successor is live, but watchfiles dropped
                # what the failing one held, so everything is reconciled (a walk from now on misses nothing).
                with contextlib.suppress(OSError):
                    self.send(("rescan",))
                return
            self.fail(exc)

    def _stop_deep(self, timeout: float = 5.0) -> None:
        """Join the tree watches (``self.stop`` is set: they end at their next step)."""
        deep, self._deep = self._deep, None
        retiring, self._retiring = self._retiring, None
        for thread in (deep[0] if deep is not None else None, retiring):
            if thread is not None:
                thread.join(timeout)

    def _replan(self) -> list[str]:
        """Replace the tree watch if the root's directories changed; the new ones' paths (to be walked).

        The new watch is live before the old one retires, so every change in the gap is seen by one or both
        (a path reported twice is refreshed twice, harmlessly); the new directories' paths are returned only then,
        so the server's walk of them follows their watch and what is written meanwhile is seen by one or the other.
        The root's own watch keeps collecting while this waits."""
        _, below = watch_plan(self.root)
        if below == self._deep_paths or self.stop.is_set():
            return []
        added = set(below) - set(self._deep_paths)
        # At most two tree watches at once (inotify watches and instances are a bounded resource): the one the
        # last re-plan retired ends within a debounce of its successor going live, well before a new re-plan.
        if self._retiring is not None:
            self._retiring.join()
            self._retiring = None
        old = self._deep
        try:
            fresh = self._notify_existing(below)
        except (OSError, RuntimeError):
            if old is None:
                raise
            # Both watches at once do not fit inotify's limits (watches or instances per user): the old one goes
            # first, and what changed until the new one is live is unknown, so everything is reconciled after.
            old[1].retire(0)
            old[0].join()
            fresh = self._notify_once_freed(below)
            self._start_deep(below, ready=fresh)
            self.send(("rescan",))
        else:
            self._start_deep(below, ready=fresh)
            if old is not None:
                old[1].retire(math.ceil(self.debounce_ms / self._step_ms) + 3)
                self._retiring = old[0]
        return sorted(p.relative_to(self.root).as_posix() for p in added if p.parent == self.root)

    def fail(self, exc: BaseException) -> None:
        try:
            self.send(("error", f"{type(exc).__name__}: {exc}"))
        except OSError:
            pass  # the server is gone
        self.stop.set()


def _undecodable(exc: RuntimeError) -> bool:
    """watchfiles' error for an event path that is not UTF-8 (``WatchfilesRustInternalError``, a RuntimeError)."""
    return type(exc).__name__ == "WatchfilesRustInternalError" and "Unable to decode path" in str(exc)


class _WatchStop:
    """The ``stop_event`` of one watch's ``RustNotify.watch`` calls: set when the child stops, or when the watch,
    retired by a re-plan, can end without losing a change.

    watchfiles drops what a watch holds when it stops, so a retired watch may stop only once all it holds arrived
    after its successor went live (:meth:`retire` is called then). ``RustNotify.watch`` asks ``is_set`` once per
    step, just before it looks at its changes, and returns them at most ``debounce / step + 2`` steps after it
    first sees one (each step sleeps at least ``step``). So a change held at retirement is returned before the
    ``retire(steps)``-th ask after it, and what is dropped then arrived later, where the successor saw it too.
    Counting asks, not time, keeps this true on a starved machine."""

    def __init__(self, shutdown: threading.Event) -> None:
        self._shutdown = shutdown
        self._asks_left: int | None = None

    def retire(self, steps: int) -> None:
        self._asks_left = steps

    @property
    def retired(self) -> bool:
        return self._asks_left is not None

    def is_set(self) -> bool:
        if self._shutdown.is_set():
            return True
        left = self._asks_left
        if left is None:
            return False
        if left > 0:  # only the watch's own thread asks: no lost update
            self._asks_left = left - 1
        return left <= 0


def main(argv: list[str]) -> int:
    # Ctrl+C in the server's terminal reaches this process too: the server stops it (stdin), not the signal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    root, debounce_ms = Path(argv[1]), int(argv[2])
    watches = _Watches(root, debounce_ms, sys.stdout.buffer)

    def until_stdin_closes() -> None:
        while sys.stdin.buffer.read(4096):
            pass
        watches.stop.set()

    threading.Thread(target=until_stdin_closes, name="codeplane-watch-stdin", daemon=True).start()
    try:
        watches.run()
    except Exception as exc:  # noqa: BLE001 - reported to the server, which falls back to polling
        watches.fail(exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
