"""Secrets out of URLs a user configured, before they are shown, logged or stored.

One rule for every layer (git remotes, ``index.artifact``, ``observability.otlp_endpoint``): the password of
``scheme://user:password@host`` becomes ``***`` (the user name stays: it tells which account is used), and
so does the value of a query parameter that carries a credential — a presigned URL's signature
(``X-Amz-Signature``, ``X-Goog-Signature``, Azure's ``sig``), a session token, a secret or an API key. The
rest of the URL stays as written, so a redacted URL still says where a download or an export went.
Redaction is textual and idempotent: ``redact_url(redact_url(u)) == redact_url(u)``.
"""

from __future__ import annotations

import re

MASK = "***"
# The userinfo rule git/remotes.py has always applied: a password only when a user name precedes it.
_USERINFO = re.compile(r"(?P<head>\b[a-zA-Z][\w+.-]*://[^/:@\s?#]+):[^/@\s?#]*@")
# A query parameter (after ``?`` or ``&``) whose name ends with one of these words, compared without case and
# separators (``X-Amz-Security-Token`` -> ``xamzsecuritytoken``). ``AWSAccessKeyId`` and ``X-Amz-Credential``'s
# key id are not secrets by themselves but sign nothing without the signature, which is masked.
_SECRET_NAMES = ("sig", "signature", "token", "secret", "password", "passwd", "apikey", "key")
_PARAM = re.compile(r"(?P<sep>[?&])(?P<name>[^=&#\s'\"<>]+)=(?P<value>[^&#\s'\"<>]*)")
_URL = re.compile(r"\b[a-zA-Z][\w+.-]*://[^\s'\"<>]+")


def _is_secret(name: str) -> bool:
    folded = re.sub(r"[^a-z0-9]", "", name.lower())
    return folded.endswith(_SECRET_NAMES) and not folded.endswith("keyid")


def _mask_param(match: re.Match[str]) -> str:
    if not _is_secret(match["name"]) or not match["value"] or match["value"] == MASK:
        return match[0]
    return f"{match['sep']}{match['name']}={MASK}"


def redact_url(url: str) -> str:
    """``https://u:pw@host/a?X-Amz-Signature=abc&x=1`` -> ``https://u:***@host/a?X-Amz-Signature=***&x=1``."""
    url = _USERINFO.sub(lambda m: f"{m['head']}:{MASK}@", url)
    query = url.find("?")
    if query < 0:
        return url
    return url[:query] + _PARAM.sub(_mask_param, url[query:])


def redact_urls(text: str) -> str:
    """Every URL in a free text (an error message, a log line) redacted as :func:`redact_url` does."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m[0]), text)
