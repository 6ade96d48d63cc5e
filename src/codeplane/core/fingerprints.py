"""Deterministic fingerprints for convergence controls (§12.3).

The failure normaliser is a standalone function so the tests subsystem computes the same fingerprint the
tasks subsystem compares: line numbers, memory addresses, temp paths, timestamps and durations are
removed so two runs of the same failure hash equal.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"0x[0-9a-fA-F]{4,}"), "0xADDR"),
    (re.compile(r"(?:/tmp|/var/folders|/private/var)/[^\s:'\"]+"), "<tmp>"),
    (re.compile(r"\bpytest-of-[^/\s]+/pytest-\d+\b"), "<pytest-tmp>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "<ts>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b"), "<dur>"),
    (re.compile(r"(line |:)\d+\b"), r"\1N"),
    (re.compile(r"[ \t]+"), " "),
)


def normalize_failure_text(text: str) -> str:
    """Strip run-specific noise from an exception message or stack trace."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def failure_fingerprint(failing_tests: Iterable[str], exception_type: str, stack: str,
                        exit_code: int | None) -> str:
    """hash(sorted failing test ids, normalised exception type, normalised stack, exit code)."""
    payload = {
        "tests": sorted(set(failing_tests)),
        "exception": normalize_failure_text(exception_type),
        "stack": normalize_failure_text(stack),
        "exit_code": exit_code,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return "ff_" + hashlib.sha256(blob).hexdigest()[:32]


def mutation_fingerprint(changed_paths: Iterable[tuple[str, str]], insertions: int, deletions: int,
                         symbols_changed: Iterable[str]) -> str:
    """hash(sorted changed paths with new hashes, diff stats, symbol changes)."""
    payload = {
        "paths": sorted(changed_paths),
        "diff_stats": [insertions, deletions],
        "symbols": sorted(set(symbols_changed)),
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    return "mf_" + hashlib.sha256(blob).hexdigest()[:32]
