"""The mutation engine (spec §9, DECISIONS D8): atomic, crash-safe multi-file edits with structured deltas.

Public surface: build a :class:`MutationEngine` once per repository, call :meth:`MutationEngine.recover`
at startup, then :meth:`MutationEngine.apply` with a sequence of :data:`Edit` values. Hashes are
SHA-256 of the exact bytes on disk (``codeplane.core.hashing.sha256_bytes``), the same value
``read_source`` returns.
"""

from codeplane.mutation.delta import Delta, EditRange, FileDelta, LineCorrection, LineSpan
from codeplane.mutation.edits import CreateFile, DeleteFile, Edit, MoveFile, ReplaceText, UpdateSpan
from codeplane.mutation.engine import PAUSE_ENV, MutationEngine

__all__ = [
    "PAUSE_ENV",
    "CreateFile",
    "DeleteFile",
    "Delta",
    "Edit",
    "EditRange",
    "FileDelta",
    "LineCorrection",
    "LineSpan",
    "MoveFile",
    "MutationEngine",
    "ReplaceText",
    "UpdateSpan",
]
