"""The one path canonicaliser (DECISIONS D4).

Every path that comes from a caller goes through :func:`resolve_in_repo` before anything touches the
filesystem. A path is accepted only if it is relative, contains no NUL byte and no ``..`` component,
and still lies inside the repository after every symlink is resolved. Rejections raise error 5001
naming the offending path; nothing is read or written first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from codeplane.core.errors import CodePlaneError, ErrorCode

#: Directories that belong to git or to CodePlane itself; file tools never write into them. ``.codeplane`` is the
#: root's; a ``.git`` is git's at any depth (a submodule's or a worktree's gitlink file, a nested clone's
#: directory) and in any case, as git itself refuses to track any path with such a component.
PROTECTED_DIRS: frozenset[str] = frozenset({".git", ".codeplane"})


@dataclass(frozen=True, order=True)
class RepoPath:
    """A canonical POSIX path relative to the repository root (no leading ``./``, no ``..``)."""

    rel: str

    def __str__(self) -> str:
        return self.rel

    @property
    def parts(self) -> tuple[str, ...]:
        return PurePosixPath(self.rel).parts

    def absolute(self, root: Path) -> Path:
        return root.joinpath(*self.parts) if self.rel else root

    @property
    def protected_part(self) -> str | None:
        """The component that makes this path git's or CodePlane's (``.git`` anywhere, ``.codeplane`` at the root)."""
        parts = self.parts
        if parts and parts[0] == ".codeplane":
            return parts[0]
        return next((part for part in parts if part.lower() == ".git"), None)

    @property
    def is_protected(self) -> bool:
        return self.protected_part is not None


#: Linux's NAME_MAX and (about) PATH_MAX: beyond, the file system refuses the name.
NAME_MAX = 255
PATH_MAX = 4000


def _reject(path: str, reason: str) -> CodePlaneError:
    # The path whole, however long: every error is bounded once, where it becomes an answer
    # (``server.answers.bounded_error``: 200 characters in the message, 400 in the details, each with its length).
    # A cut here as well (120 characters, no length) answered a shorter echo than every other value's.
    return CodePlaneError(
        ErrorCode.MUTATION_SCOPE_VIOLATION,
        f"path {path!r} is refused: {reason}",
        details={"path": path, "reason": reason},
    )


def canonicalize(path: str) -> RepoPath:
    """Lexically canonicalise a caller-supplied relative path (no filesystem access)."""
    if "\x00" in path:
        raise _reject(path.replace("\x00", "\\0"), "contains a NUL byte")
    text = path.replace("\\", "/") if os.sep == "\\" else path
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise _reject(path, "absolute paths are not accepted; use a path relative to the repo root")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise _reject(path, "'..' components are not accepted")
    joined = "/".join(parts)
    if any(len(p.encode("utf-8", "surrogateescape")) > NAME_MAX for p in parts) or len(
            joined.encode("utf-8", "surrogateescape")) > PATH_MAX:  # (it was 9001: "[Errno 36] File name too long")
        raise _reject(path, f"a name longer than {NAME_MAX} bytes, or a path longer than {PATH_MAX}, is more than file "
                      "systems hold")
    return RepoPath(joined)


def resolve_in_repo(root: Path, path: str, *, allow_protected: bool = False) -> RepoPath:
    """Canonicalise ``path`` and prove it stays inside ``root`` after resolving symlinks.

    The target need not exist; the deepest existing ancestor is resolved instead.
    Raises 5001 for escapes and, unless ``allow_protected``, for paths in ``.git/`` or ``.codeplane/``.
    """
    rel = canonicalize(path)
    part = rel.protected_part
    if part is not None and not allow_protected:
        raise _reject(path, f"{part} is managed by {'CodePlane' if part == '.codeplane' else 'git'}")
    real_root = root.resolve()
    candidate = rel.absolute(real_root)
    try:
        resolved = candidate.resolve(strict=False)
    except (RuntimeError, OSError) as exc:  # a symlink loop: RuntimeError before Python 3.13, OSError since
        raise _reject(path, "is a symbolic link that never resolves (a loop)") from exc
    if resolved != real_root and real_root not in resolved.parents:
        raise _reject(path, "resolves outside the repository (symlink)")
    inner = resolved.relative_to(real_root).as_posix() if resolved != real_root else ""
    resolved_rel = RepoPath("" if inner == "." else inner)
    if resolved_rel.is_protected and not allow_protected:
        raise _reject(path, "resolves into a protected directory (symlink)")
    return rel


def to_repo_path(root: Path, absolute: Path) -> RepoPath:
    """The canonical form of an absolute path known to be under ``root`` (no symlink resolution)."""
    return RepoPath(absolute.relative_to(root).as_posix())
