"""The one error catalog (spec §4.2, DECISIONS D14).

Every failure that reaches a caller is a :class:`CodePlaneError` carrying an entry of this catalog.
Ranges: 1xxx request/auth, 2xxx config/lifecycle, 3xxx index, 4xxx refactor, 5xxx mutation/paths,
6xxx task/budget, 7xxx tests, 8xxx git (the pre-API edition used 8xxx for LSP, which D7 removed),
9xxx internal.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any


@dataclass(frozen=True)
class _Entry:
    code: int
    retryable: bool
    summary: str


class ErrorCode(Enum):
    """Catalog entries. The enum name is the wire ``error`` string."""

    # 1xxx request and auth
    AUTH_TOKEN_MISSING = _Entry(1001, False, "bearer token required")
    AUTH_TOKEN_INVALID = _Entry(1002, False, "bearer token does not match")
    INVALID_ARGUMENTS = _Entry(1003, False, "tool arguments do not match the input schema")
    UNKNOWN_TOOL = _Entry(1004, False, "no tool with that name")
    INVALID_CURSOR = _Entry(1005, False, "cursor is malformed, expired or from another query")
    TOOL_NOT_IN_PROFILE = _Entry(1006, False, "the server's tool profile (tools.profile) does not serve this tool")
    # 2xxx config and lifecycle
    CONFIG_PARSE_ERROR = _Entry(2001, False, "a config file is not valid YAML")
    CONFIG_INVALID_VALUE = _Entry(2002, False, "a config value is invalid")
    NOT_A_GIT_REPOSITORY = _Entry(2003, False, "path is not inside a git work tree")
    SERVER_ALREADY_RUNNING = _Entry(2004, False, "a server already runs for this repository")
    SERVER_NOT_RUNNING = _Entry(2005, False, "no server runs for this repository")
    PORT_UNAVAILABLE = _Entry(2006, True, "the requested port cannot be bound")
    NOT_INITIALIZED = _Entry(2007, False, "repository has no .codeplane/ directory")
    LEDGER_SCHEMA_NEWER = _Entry(2008, False, "the ledger was written by a newer CodePlane")
    # 3xxx index
    INDEX_CORRUPT = _Entry(3001, False, "index failed an integrity check")
    INDEX_SCHEMA_MISMATCH = _Entry(3002, False, "index schema version differs")
    INDEX_BUILD_FAILED = _Entry(3003, False, "index build failed")
    INDEX_NOT_READY = _Entry(3004, True, "index is still building")
    INDEX_FRESHNESS_TIMEOUT = _Entry(3005, True, "file was not reindexed within the freshness wait")
    INVALID_QUERY = _Entry(3006, False, "query cannot be parsed")
    SYMBOL_NOT_FOUND = _Entry(3007, False, "no definition matches the symbol")
    #: Shared index artifacts (``index/artifact_*.py``): every refusal falls back to a cold build.
    ARTIFACT_FETCH_FAILED = _Entry(3101, True, "the index artifact could not be fetched")
    ARTIFACT_UNVERIFIED = _Entry(3102, False, "no sha256 to verify the index artifact against (sidecar or pin)")
    ARTIFACT_CHECKSUM_MISMATCH = _Entry(3103, False, "the index artifact's sha256 does not match")
    ARTIFACT_INVALID = _Entry(3104, False, "the index artifact is malformed or disagrees with its manifest")
    ARTIFACT_INCOMPATIBLE = _Entry(3105, False, "the index artifact was built by an incompatible version")
    ARTIFACT_EXPORT_REFUSED = _Entry(3106, False, "the index cannot be exported as an artifact")
    ARTIFACT_FOREIGN_COMMIT = _Entry(3107, False, "the index artifact's commit is not in this repository")
    # 4xxx refactor
    REFACTOR_DIVERGENCE = _Entry(4001, False, "contexts disagree on the refactor")
    REFACTOR_TIMEOUT = _Entry(4002, True, "refactor planning timed out")
    REFACTOR_NO_CONTEXT = _Entry(4003, False, "no context contains the target")
    REFACTOR_NOT_FOUND = _Entry(4004, False, "no refactor plan with that id")
    REFACTOR_EXPIRED = _Entry(4005, False, "refactor plan expired")
    REFACTOR_INVALID_NAME = _Entry(4006, False, "new name is not valid for the language")
    REFACTOR_COLLISION = _Entry(4007, False, "new name collides with an existing binding")
    REFACTOR_UNSUPPORTED = _Entry(4008, False, "refactor not supported for this target")
    REFACTOR_CIRCULAR_IMPORT = _Entry(4009, False, "the move would make two modules import each other")
    # 5xxx mutation and paths
    MUTATION_SCOPE_VIOLATION = _Entry(5001, False, "path is outside the writable repository scope")
    MUTATION_PRECONDITION_FAILED = _Entry(5002, False, "file or span no longer matches the expectation")
    MUTATION_LOCK_TIMEOUT = _Entry(5003, True, "file is locked by another operation")
    FILE_NOT_FOUND = _Entry(5004, False, "file does not exist")
    FILE_EXISTS = _Entry(5005, False, "file already exists")
    EDIT_CONFLICT = _Entry(5006, False, "edits in one batch overlap or contradict each other")
    FILE_TOO_LARGE = _Entry(5007, False, "file exceeds the size limit for this operation")
    BINARY_FILE = _Entry(5008, False, "file is binary")
    CONFIRMATION_REQUIRED = _Entry(5009, False, "operation needs confirm: true")
    #: Storage failures (``core/storage.py``) of the work tree or ``.codeplane/``: writes, index, tests.
    STORAGE_FULL = _Entry(5010, True, "no space left (disk full or quota exceeded); free space and retry")
    STORAGE_READ_ONLY = _Entry(5011, False, "the file system is read-only")
    STORAGE_PERMISSION_DENIED = _Entry(5012, False, "permission denied writing a file or directory")
    # 6xxx task and budget
    TASK_BUDGET_EXCEEDED = _Entry(6001, False, "task budget exceeded")
    TASK_NOT_FOUND = _Entry(6002, False, "no such task")
    TASK_ALREADY_CLOSED = _Entry(6003, False, "task is closed")
    READ_BUDGET_EXCEEDED = _Entry(6004, False, "session read budget exceeded")
    # 7xxx tests
    TEST_RUNNER_NOT_FOUND = _Entry(7001, False, "test runner executable not found")
    TEST_TIMEOUT = _Entry(7002, True, "test run timed out")
    TEST_PARSE_FAILED = _Entry(7003, False, "test output could not be parsed")
    TEST_RUN_NOT_FOUND = _Entry(7004, False, "no test run with that id")
    TEST_TARGET_NOT_FOUND = _Entry(7005, False, "no test target with that id")
    # 8xxx git
    GIT_ERROR = _Entry(8001, False, "git operation failed")
    GIT_REF_NOT_FOUND = _Entry(8002, False, "ref, branch or commit not found")
    GIT_CONFLICT = _Entry(8003, False, "operation stopped on conflicts")
    GIT_DIRTY_WORKTREE = _Entry(8004, False, "working tree has changes that would be overwritten")
    GIT_INVALID_STATE = _Entry(8005, False, "repository state does not allow this operation")
    GIT_REMOTE_ERROR = _Entry(8006, True, "remote operation failed")
    GIT_HOOK_FAILED = _Entry(8007, False, "a git hook rejected the operation")
    GIT_NOTHING_TO_COMMIT = _Entry(8008, False, "nothing to commit")
    # 9xxx internal
    INTERNAL_ERROR = _Entry(9001, False, "unexpected internal error")
    INTERNAL_TIMEOUT = _Entry(9002, True, "internal operation timed out")
    SHUTTING_DOWN = _Entry(9003, True, "server is shutting down")

    @property
    def code(self) -> int:
        return self.value.code

    @property
    def retryable(self) -> bool:
        return self.value.retryable

    @property
    def summary(self) -> str:
        return self.value.summary


class CodePlaneError(Exception):
    """A failure with a catalog entry. ``details`` must be JSON-serialisable."""

    def __init__(
        self,
        error: ErrorCode,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        retryable: bool | None = None,
    ) -> None:
        self.error = error
        self.message = message or error.summary
        self.details: dict[str, Any] = details or {}
        self.retryable = error.retryable if retryable is None else retryable
        super().__init__(f"{error.code} {error.name}: {self.message}")

    @property
    def code(self) -> int:
        return self.error.code

    def to_payload(self) -> dict[str, Any]:
        """The §4.2 wire shape."""
        return {
            "code": self.error.code,
            "error": self.error.name,
            "message": self.message,
            "retryable": self.retryable,
            "details": self.details,
        }


#: Entries of the spec's catalog this version never raises, each with how the condition reaches a caller instead
#: (kept so the numbers stay the spec's; ``describe`` says so, so that no agent codes against them).
RESERVED: dict[ErrorCode, str] = {
    ErrorCode.SERVER_NOT_RUNNING: "cpl down/status say no server runs and exit 0",
    ErrorCode.INDEX_CORRUPT: "a damaged index is rebuilt; meanwhile 3004 (retryable), and /status says why",
    ErrorCode.INDEX_SCHEMA_MISMATCH: "an index of another schema is rebuilt; meanwhile 3004 (retryable)",
    ErrorCode.REFACTOR_TIMEOUT: "planning has no time bound; a refactor's coverage says what it could not settle",
    ErrorCode.REFACTOR_NO_CONTEXT: "an unresolved target is 3007, an unsettled occurrence a low-certainty edit",
    ErrorCode.TEST_TIMEOUT: "a target out of time is a run result: outcome timeout, state failed",
    ErrorCode.TEST_PARSE_FAILED: "unparsed output is a target result: outcome error, with the output's tail",
    ErrorCode.INTERNAL_TIMEOUT: "waits have their own retryable codes (3005 the index catching up, 5003 a locked file)",
}


def catalog() -> list[dict[str, Any]]:
    """Every entry, sorted by code, for docs and ``describe`` (a reserved one says how its condition is reported)."""
    return [
        {"code": e.code, "error": e.name, "retryable": e.retryable, "summary": e.summary,
         **({"reserved": RESERVED[e]} if e in RESERVED else {})}
        for e in sorted(ErrorCode, key=lambda e: e.code)
    ]
