"""Structured logging (spec §4.2): structlog events fanned out to several outputs, each with its level.

JSON lines carry ``ts`` (ISO 8601, ms, UTC), ``level`` and ``event``, plus correlation fields
(``request_id``, ``op_id``, ``task_id``) bound with :func:`bind_correlation`. File outputs rotate.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import sys
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from codeplane.core.clock import iso_utc
from codeplane.core.config import LoggingConfig, LogOutput

#: With rich installed (the CLI's output uses it), structlog's import also loads ``rich.traceback`` and ``rich.pretty``
#: (pygments, attrs): ~25 ms of CPU on every ``cpl`` start, a warm ``cpl up``'s included (issue 19), only for its rich
#: exception formatter, which CodePlane never uses (console output renders plain tracebacks, below). They are hidden
#: while structlog imports (``None`` in ``sys.modules``: "not importable"), so it formats exceptions as it does without
#: rich; anything that imports them later gets them as usual.
_HIDDEN = [name for name in ("rich.traceback", "rich.pretty") if name not in sys.modules]
sys.modules.update(dict.fromkeys(_HIDDEN))  # type: ignore[arg-type]  # None: the import system's marker
try:
    import structlog
finally:
    for _name in _HIDDEN:
        if _name in sys.modules and sys.modules[_name] is None:
            del sys.modules[_name]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR}
_ROOT_NAME = "codeplane"

if not structlog.is_configured():
    # Before configure_logging (a CLI command that never calls it, or code run before it does), structlog's
    # default prints every event to stdout, which corrupts `--json` output. Warnings and worse go to stderr.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr),
                        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


def _timestamp(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    event["ts"] = iso_utc()
    return event


def _normalise_level(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    if event.get("level") == "warning":
        event["level"] = "warn"
    return event


_STDERR_CONSOLE = LogOutput(format="console", destination="stderr")


class _FileOutput(logging.handlers.RotatingFileHandler):
    """A log file that fails while the server runs (a full disk) is left for stderr once, with one warning.

    logging's default ``handleError`` printed "--- Logging error ---" and a traceback for every record after
    that. The first failure closes the file; its records then go to ``fallback`` (a formatted stderr output)
    unless another output already writes to stderr, and later records are not tried on the file again.
    """

    def __init__(self, path: Path, config: LoggingConfig, fallback: logging.Handler) -> None:
        super().__init__(path, maxBytes=config.file_max_bytes, backupCount=config.file_backups, encoding="utf-8")
        self._fallback = fallback
        self._failed = False
        self._to_stderr = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self._failed:
            super().emit(record)  # a failure calls handleError, below
        elif self._to_stderr:
            self._fallback.handle(record)

    def handleError(self, record: logging.LogRecord) -> None:
        if self._failed:
            return
        self._failed = True
        problem = sys.exc_info()[1]
        with contextlib.suppress(Exception):
            self.close()
        logger = logging.getLogger(_ROOT_NAME)
        self._to_stderr = not any(_writes_stderr(h) for h in logger.handlers if h is not self)
        self._fallback.handle(logging.makeLogRecord({
            "name": _ROOT_NAME, "levelno": logging.WARNING, "levelname": "WARNING",
            "msg": f"the log file {self.baseFilename} cannot be written ({problem}); logging to stderr only"}))
        if self._to_stderr:
            self._fallback.handle(record)


def _writes_stderr(handler: logging.Handler) -> bool:
    return (isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler)
            and handler.stream is sys.stderr)


def _handler_for(output: LogOutput, config: LoggingConfig, repo_root: Path | None) -> logging.Handler:
    handler: logging.Handler
    if output.destination == "stderr":
        handler = logging.StreamHandler(sys.stderr)
    elif output.destination == "stdout":
        handler = logging.StreamHandler(sys.stdout)
    else:
        path = Path(output.destination)
        if not path.is_absolute():
            path = (repo_root or Path.cwd()) / path
        path.parent.mkdir(parents=True, exist_ok=True)
        fallback = _handler_for(_STDERR_CONSOLE, config, repo_root)
        fallback.setLevel(logging.DEBUG)  # the file output's own level is applied before emit
        handler = _FileOutput(path, config, fallback)
    renderer: Any = (
        structlog.processors.JSONRenderer(sort_keys=False)
        if output.format == "json"
        # Plain tracebacks: rich's boxed ones with locals run to hundreds of lines per exception.
        else structlog.dev.ConsoleRenderer(colors=False, timestamp_key="ts",
                                           exception_formatter=structlog.dev.plain_traceback)
    )
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_log_level, _timestamp, _normalise_level],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    handler.setLevel(_LEVELS[output.effective_level(config.level)])
    return handler


def configure_logging(config: LoggingConfig, repo_root: Path | None = None,
                      *, console_only: bool = False) -> None:
    """Install the configured outputs on the ``codeplane`` logger (idempotent: replaces handlers).

    ``console_only`` keeps only stream outputs, for short CLI commands that must not write log files.
    """
    outputs = [o for o in config.outputs if not console_only or o.destination in ("stderr", "stdout")]
    root = logging.getLogger(_ROOT_NAME)
    for old in list(root.handlers):
        root.removeHandler(old)
        old.close()
    unwritable: list[str] = []
    for output in outputs:
        try:
            root.addHandler(_handler_for(output, config, repo_root))
        except OSError as exc:  # a log file that cannot be written (read-only, full) must not stop the command
            unwritable.append(f"{output.destination}: {exc.strerror or exc}")
    if unwritable and not any(isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)
                              for h in root.handlers):
        root.addHandler(_handler_for(_STDERR_CONSOLE, config, repo_root))  # formatted, not raw event dicts
    levels = [_LEVELS[o.effective_level(config.level)] for o in outputs] or [logging.WARNING]
    root.setLevel(min(levels))
    root.propagate = False
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.stdlib.add_log_level,
            _timestamp,
            _normalise_level,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    for problem in unwritable:
        get_logger(__name__).warning("a log output cannot be written; logging without it", output=problem)


def get_logger(name: str) -> Any:
    """A structlog logger under the ``codeplane`` namespace (``name`` is usually ``__name__``)."""
    qualified = name if name.startswith(_ROOT_NAME) else f"{_ROOT_NAME}.{name}"
    return structlog.get_logger(qualified)


@contextmanager
def bind_correlation(**fields: str | None) -> Iterator[None]:
    """Bind ``request_id`` / ``op_id`` / ``task_id`` for every log event inside the block."""
    present = {k: v for k, v in fields.items() if v is not None}
    tokens = structlog.contextvars.bind_contextvars(**present)
    try:
        yield
    finally:
        structlog.contextvars.reset_contextvars(**tokens)
