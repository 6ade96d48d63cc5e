"""``commit.gpgsign``: CodePlane writes commits through libgit2, which cannot sign them as git does (gpg, ssh or
x509 through ``gpg.program``). A repository that asks for signed commits gets a refusal before anything changes,
never an unsigned commit that looks like a signed one was asked for."""

from __future__ import annotations

import pygit2

from codeplane.core.errors import CodePlaneError, ErrorCode


def signing_required(repo: pygit2.Repository) -> bool:
    try:
        return repo.config.get_bool("commit.gpgsign")
    except (KeyError, ValueError, pygit2.GitError):
        return False


def refuse_signing(repo: pygit2.Repository, what: str) -> None:
    """8005 when ``commit.gpgsign`` is true: ``what`` would create a commit that git signs and CodePlane cannot."""
    if signing_required(repo):
        raise CodePlaneError(ErrorCode.GIT_INVALID_STATE, f"commit.gpgsign is true: git signs every commit, and "
                             f"CodePlane cannot sign, so the {what} was refused and nothing changed; run the "
                             "git CLI for signed commits, or set commit.gpgsign false",
                             details={"config": "commit.gpgsign"})
