"""A disk full while Tantivy commits is a storage error (5010), whatever way Rust prints the errno (s56).

Tantivy reports a failed segment write with the ``Debug`` form of its ``IoError`` (``Os { code: 28, kind:
StorageFull, ... }``), not the ``(os error 28)`` of ``Display``: the index update answered an unknown error instead
of 5010 (retryable), as the full-disk test saw once in CI when the segment's first write, not a later one, failed.
"""

from __future__ import annotations

import pytest

from codeplane.core.errors import ErrorCode
from codeplane.core.storage import storage_code

TANTIVY_DEBUG = ("Failed to open file for write: 'IoError { io_error: Custom { kind: StorageFull, error: PathError { "
                 "path: \"/r/.codeplane/tantivy/.tmpC13WZk\", err: Os { code: 28, kind: StorageFull, message: \"No "
                 "space left on device\" } } }, filepath: \"1500a79d.fieldnorm\" }'")


@pytest.mark.parametrize("text", [TANTIVY_DEBUG, "An IO error occurred: 'No space left on device (os error 28)'",
                                  "[Errno 28] No space left on device"])
def test_every_printed_form_of_enospc_is_storage_full(text: str) -> None:
    assert storage_code(ValueError(text)) == (ErrorCode.STORAGE_FULL, 28)


def test_a_message_without_an_errno_is_no_storage_error() -> None:
    assert storage_code(ValueError("Os {code: something else}")) is None
