"""Deterministic fingerprints for convergence controls (§12.3).

The failure normaliser is a standalone function so the tests subsystem computes the same fingerprint the
tasks subsystem compares: line numbers, memory addresses, temp paths, timestamps and durations are
removed so two runs of the same failure hash equal.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable


def _temp_roots() -> str:
    # The configured temp dir too (TMPDIR may point anywhere), not only the usual locations.
    roots = {"/tmp", "/var/folders", "/private/var", "/private/tmp", tempfile.gettempdir()}
    roots |= {os.environ[name] for name in ("TMPDIR", "TEMP", "TMP") if os.environ.get(name)}
    usable = sorted((r.rstrip("/\\") for r in roots if len(r.rstrip("/\\")) > 1), key=len, reverse=True)
    return "|".join(re.escape(r) for r in usable)


# Order matters: colour codes go first, paths before line numbers (a temp path may contain digits),
# timestamps before the generic ``:N`` rule (``12:30:01`` would otherwise become ``12:N:N``).
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\x1b\[[0-9;]*[A-Za-z]"), ""),
    (re.compile(r"0x[0-9a-fA-F]{4,}"), "0xADDR"),
    (re.compile(rf"(?:{_temp_roots()})[/\\][^\s:'\"]+"), "<tmp>"),
    (re.compile(r"[A-Za-z]:\\[^\s:'\"]*\\(?:Temp|tmp)\\[^\s:'\"]+"), "<tmp>"),
    (re.compile(r"\bpytest-of-[^/\s]+/pytest-\d+\b"), "<pytest-tmp>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<uuid>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<ts>"),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<ts>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b"), "<dur>"),
    (re.compile(r"\b(pid[ =:]?)\d+\b", re.IGNORECASE), r"\1N"),
    (re.compile(r"(line |:)\d+\b"), r"\1N"),
    (re.compile(r"[ \t]+"), " "),
)


def normalize_failure_text(text: str) -> str:
    """Strip run-specific noise from an exception message or stack trace.

    Removed: ANSI colours, memory addresses, temp paths (including ``$TMPDIR``), UUIDs, timestamps,
    durations, pids, line and column numbers, runs of blanks and trailing blanks. The same failure
    seen in two runs therefore normalises to the same text; a different message or frame does not.
    """
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def normalize_exception_type(name: str) -> str:
    """``builtins.AssertionError`` and ``AssertionError`` are the same type for fingerprinting."""
    return normalize_failure_text(name).removeprefix("builtins.")


def failure_fingerprint(failing_tests: Iterable[str], exception_type: str, stack: str,
                        exit_code: int | None) -> str:
    """hash(sorted failing test ids, normalised exception type, normalised stack, exit code)."""
    payload = {
        "tests": sorted(set(failing_tests)),
        "exception": normalize_exception_type(exception_type),
        "stack": normalize_failure_text(stack),
        "exit_code": exit_code,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return "ff_" + hashlib.sha256(blob).hexdigest()[:32]


def mutation_fingerprint(changed_paths: Iterable[tuple[str, str]], insertions: int, deletions: int,
                         symbols_changed: Iterable[str], refs_moved: Iterable[tuple[str, str]] = ()) -> str:
    """hash(sorted changed paths with new hashes, diff stats, symbol changes[, refs moved with their targets])."""
    payload: dict[str, object] = {
        "paths": sorted(changed_paths),
        "diff_stats": [insertions, deletions],
        "symbols": sorted(set(symbols_changed)),
    }
    refs = sorted(refs_moved)
    if refs:  # only git operations move refs; every other fingerprint stays what it was
        payload["refs"] = refs
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return "mf_" + hashlib.sha256(blob).hexdigest()[:32]
