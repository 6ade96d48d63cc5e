"""The work tree as a batch writes it: through directory descriptors, so a racing symlink cannot redirect a write.

The scope (``scope.py``) proves, by name, that every directory above a target is a real directory inside the
repository, and hands the commit that real path. Another program can replace one of those directories with a
symlink to anywhere between that check and the write (a second agent, a build, a sync tool); a write by full
path then follows it out of the repository. So the commit and its rollback never write, rename, delete or
create by full path: :class:`ConfinedTree` opens the root, then each directory below it one component at a time
relative to its parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY``, and every operation names its file
relative to the final descriptor (the ``*at`` system calls).

Invariants:

- a component that is no longer a real directory (a symlink, a file or nothing stands there now) fails the
  open: :class:`DirectoryChanged`, which the commit answers as 5002 (retryable) after rolling the batch back;
- a descriptor, once open, names the directory that was checked whatever later happens to its name, so a swap
  after the open moves nothing out: the write lands in that directory (as if the swap came just after it);
- the descriptor of each directory asked for is kept for the tree's life (one batch), so a 20-file batch in one
  directory opens it once; the root itself is trusted (the engine resolved it at start).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from pathlib import Path
from types import TracebackType

from codeplane.core.errors import CodePlaneError, ErrorCode

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
#: A symlink with ``O_NOFOLLOW | O_DIRECTORY`` gives ENOTDIR on Linux, ELOOP elsewhere.
_NOT_A_DIRECTORY = (errno.ENOTDIR, errno.ELOOP)


class DirectoryChanged(Exception):
    """A directory above ``path`` is not a real directory of the work tree any more, or was removed (with what the
    batch had put in it) while its descriptor was open."""

    def __init__(self, path: str, directory: str, *, missing: bool) -> None:
        self.path = path
        self.directory = directory
        #: Nothing stands there (rather than a symlink or a file).
        self.missing = missing
        super().__init__(f"{directory} is {'gone' if missing else 'not a directory'} (writing {path})")

    def refusal(self) -> CodePlaneError:
        """The caller's answer once the batch is rolled back: retryable, as the directory may be back by then."""
        now = "removed it, or a file the batch wrote in it" if self.missing else "put a symbolic link or a file there"
        return CodePlaneError(
            ErrorCode.MUTATION_PRECONDITION_FAILED,
            f"{self.path}: another program changed directory {self.directory} while the batch was being written "
            f"({now}); nothing was written: check the directory and retry",
            details={"path": self.path, "directory": self.directory, "reason": "changed during apply"},
            retryable=True,
        )


def split(rel: str) -> tuple[str, str]:
    """``("a/b", "c.py")`` for ``a/b/c.py``; the directory of a top-level name is ``""`` (the root)."""
    head, _, name = rel.rpartition("/")
    return head, name


class ConfinedTree:
    """Directory descriptors of one work tree, opened from its root down without following symlinks.

    Thread-safe. Use as a context manager: every descriptor is closed on exit."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._fds: dict[str, int] = {"": os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)}

    def __enter__(self) -> ConfinedTree:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()

    def directory(self, rel_dir: str, *, path: str | None = None) -> int:
        """The descriptor of ``rel_dir`` (``""``: the root). :class:`DirectoryChanged` naming ``path`` (default
        ``rel_dir``) when a component is missing or is not a real directory."""
        with self._lock:
            return self._open(rel_dir, rel_dir if path is None else path)

    def parent(self, rel: str) -> tuple[int, str]:
        """The descriptor of the directory holding ``rel``, and ``rel``'s name in it."""
        head, name = split(rel)
        return self.directory(head, path=rel), name

    def lstat(self, rel: str) -> os.stat_result | None:
        """``rel``'s own status (a symlink is not followed); ``None`` when it, or a directory above it, is missing.
        :class:`DirectoryChanged` when a directory above it is a symlink or a file."""
        try:
            fd, name = self.parent(rel)
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except DirectoryChanged as exc:
            if exc.missing:
                return None
            raise
        except (FileNotFoundError, NotADirectoryError):
            return None

    def read(self, rel: str) -> bytes | None:
        """The bytes of the regular file ``rel``; ``None`` for anything else (missing, a symlink, a directory)."""
        st = self.lstat(rel)
        if st is None or not stat.S_ISREG(st.st_mode):
            return None
        fd, name = self.parent(rel)
        try:
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in _NOT_A_DIRECTORY:  # replaced by a symlink since the stat
                return None
            raise
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                return None
            chunks = []
            while chunk := os.read(handle, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(handle)

    def mkdir(self, rel_dir: str, *, path: str) -> None:
        """Create ``rel_dir`` (its parent must exist) for ``path``; one that exists already must be a real
        directory."""
        head, name = split(rel_dir)
        parent = self.directory(head, path=path)
        try:
            os.mkdir(name, dir_fd=parent)
        except FileExistsError:
            pass  # made meanwhile by someone else: the open below proves it is a real directory
        except FileNotFoundError as exc:  # the parent was removed since its descriptor was opened
            raise DirectoryChanged(path, head, missing=True) from exc
        self.directory(rel_dir, path=path)

    def rmdir(self, rel_dir: str) -> None:
        """Remove the empty directory ``rel_dir`` (``OSError`` if it is not empty, not a directory or gone)."""
        fd, name = self.parent(rel_dir)
        os.rmdir(name, dir_fd=fd)
        with self._lock:
            cached = self._fds.pop(rel_dir, None)
        if cached is not None:
            os.close(cached)

    def _open(self, rel_dir: str, path: str) -> int:
        fd = self._fds.get(rel_dir)
        if fd is not None:
            return fd
        parts = rel_dir.split("/")
        start = len(parts) - 1  # below the deepest directory already open
        while start > 0 and "/".join(parts[:start]) not in self._fds:
            start -= 1
        base = self._fds["/".join(parts[:start])]
        current = base
        try:
            for depth in range(start, len(parts)):
                step = self._step(current, parts[depth], path, "/".join(parts[:depth + 1]))
                if current != base:
                    os.close(current)
                current = step
        except BaseException:
            if current != base:
                os.close(current)
            raise
        # Only what a caller asked for stays open (the directories holding the batch's files, at most one per
        # file), not every directory walked through: a batch of files in deep, distinct directories would
        # otherwise hold several descriptors per file.
        self._fds[rel_dir] = current
        return current

    @staticmethod
    def _step(parent: int, name: str, path: str, rel_dir: str) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError as exc:
            raise DirectoryChanged(path, rel_dir, missing=True) from exc
        except OSError as exc:
            if exc.errno in _NOT_A_DIRECTORY:
                raise DirectoryChanged(path, rel_dir, missing=False) from exc
            raise
