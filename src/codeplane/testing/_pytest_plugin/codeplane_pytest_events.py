"""A pytest plugin CodePlane loads into the repository's own pytest (``-p codeplane_pytest_events``).

It writes one JSON object per line to ``$CODEPLANE_PYTEST_EVENTS`` as the session runs: what was collected,
which test starts, each phase report, collection errors, the exit status. CodePlane reads the file while
pytest runs, for progress and per-file timeouts, and parses results from it (a machine format, like
pytest-reportlog, which the repository may not have installed).

Standalone on purpose: it runs inside the repository's interpreter, so it imports nothing but the
standard library and pytest, and works on old pytest versions. It does nothing when the variable is unset.
"""

from __future__ import annotations

import json
import os
import time
from typing import IO, Any

_ENV = "CODEPLANE_PYTEST_EVENTS"
_LONGREPR_CHARS = 6_000
_state: dict[str, Any] = {"out": None, "root": None}


def _emit(event: dict[str, Any]) -> None:
    path = os.environ.get(_ENV)
    if not path or _state.get("worker"):
        return
    out: IO[str] | None = _state["out"]
    if out is None:
        out = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 - open for the session
        _state["out"] = out
    event["t"] = time.time()
    out.write(json.dumps(event, default=str) + "\n")


def _file_of(nodeid: str) -> str:
    """Absolute path of the file a node id belongs to (node ids are relative to pytest's rootdir)."""
    rel = nodeid.split("::", 1)[0]
    root = _state["root"] or os.getcwd()
    return os.path.normpath(os.path.join(str(root), rel))


def _clip(text: str) -> str:
    return text if len(text) <= _LONGREPR_CHARS else "…" + text[-_LONGREPR_CHARS:]


def pytest_configure(config: Any) -> None:
    _state["root"] = getattr(config, "rootpath", None) or getattr(config, "rootdir", None)
    # Under pytest-xdist the controller receives every worker's reports: only it writes events.
    _state["worker"] = hasattr(config, "workerinput")


def _ignored(config: Any, path: str) -> bool:
    """Whether pytest would skip ``path`` when walking directories (``collect_ignore`` in a conftest.py,
    ``--ignore``). CodePlane names files explicitly, and pytest never applies those rules to explicit
    arguments; asking the hook keeps a batch equivalent to a plain ``pytest`` run."""
    from pathlib import Path

    try:
        return bool(config.hook.pytest_ignore_collect(collection_path=Path(path), config=config))
    except Exception:  # noqa: BLE001 - an old pytest with another hook signature: run the file as given
        return False


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    verdicts: dict[str, bool] = {}
    keep: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        path = _file_of(item.nodeid)
        if path not in verdicts:
            verdicts[path] = _ignored(config, path)
        (dropped if verdicts[path] else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
        for path in sorted(p for p, ignored in verdicts.items() if ignored):
            _emit({"ev": "ignored", "file": path})


def pytest_collection_finish(session: Any) -> None:
    files: dict[str, int] = {}
    for item in session.items:
        path = _file_of(item.nodeid)
        files[path] = files.get(path, 0) + 1
    _emit({"ev": "collected", "files": files})


def pytest_collectreport(report: Any) -> None:
    if report.failed:
        _emit({"ev": "collect_error", "file": _file_of(report.nodeid), "nodeid": report.nodeid,
               "longrepr": _clip(str(report.longrepr))})


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _emit({"ev": "start", "nodeid": nodeid, "file": _file_of(nodeid)})


def pytest_runtest_logreport(report: Any) -> None:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    longrepr = report.longrepr
    skip_reason = ""
    if report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        skip_reason = str(longrepr[2])
    _emit({
        "ev": "report", "nodeid": report.nodeid, "file": _file_of(report.nodeid), "when": report.when,
        "outcome": report.outcome, "duration": getattr(report, "duration", 0.0),
        "wasxfail": getattr(report, "wasxfail", None),
        "crash": getattr(crash, "message", "") if crash is not None else "",
        "longrepr": _clip(getattr(report, "longreprtext", "") or "") if report.failed else "",
        "skip_reason": skip_reason,
    })


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    _emit({"ev": "finish", "exitstatus": int(exitstatus)})
    out = _state["out"]
    if out is not None:
        out.close()
        _state["out"] = None
