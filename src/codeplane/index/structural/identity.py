"""Stable identities (§7.4): ``def_uid`` and ``import_uid``.

``def_uid = sha256(language:kind:path:lexical_path:signature_hash:disambiguator)[:16]``. It differs from
the spec's recipe in one deliberate way: the file path replaces ``unit_id``. Two files of one build unit
may both define ``main``; with the path the uid is unique without a repo-wide disambiguator, and a context
(unit) change never renames every definition. The disambiguator is the ordinal among same-file siblings
with equal kind, lexical path and signature (conditional or repeated definitions).

Known limits (§7.4): definitions produced by macros, conditional compilation, ``setattr`` or monkey
patching have no or unstable identity; a moved file gets new uids.
"""

from __future__ import annotations

import hashlib


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def signature_hash(signature: str) -> str:
    """Hash of a syntactic signature with whitespace collapsed (formatting never changes it)."""
    return short_hash(" ".join(signature.split())) if signature else ""


class UidAllocator:
    """Assigns uids for one file, counting siblings so repeated definitions stay distinct."""

    def __init__(self, language: str, path: str) -> None:
        self._prefix = f"{language}:"
        self._path = path
        self._seen: dict[tuple[str, str, str], int] = {}
        self._imports = 0

    def def_uid(self, kind: str, lexical_path: str, sig_hash: str) -> str:
        key = (kind, lexical_path, sig_hash)
        ordinal = self._seen.get(key, 0)
        self._seen[key] = ordinal + 1
        return short_hash(f"{self._prefix}{kind}:{self._path}:{lexical_path}:{sig_hash}:{ordinal}")

    def import_uid(self, source: str | None, name: str, alias: str | None) -> str:
        self._imports += 1
        return short_hash(f"import:{self._path}:{source}:{name}:{alias}:{self._imports}")
