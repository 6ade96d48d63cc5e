"""A pytest plugin CodePlane loads into the repository's own pytest (``-p codeplane_pytest_events``).

It writes one JSON object per line to ``$CODEPLANE_PYTEST_EVENTS`` as the session runs: what was collected
(and how long each file took to collect), which test starts, each phase report, collection errors, the exit
status. CodePlane reads the file while pytest runs, for progress and per-file timeouts, and parses results
from it (a machine format, like pytest-reportlog, which the repository may not have installed).

With ``$CODEPLANE_PYTEST_POOL`` set (a directory, see CodePlane's ``testing/pool.py``), the files it lists
are shared with other processes: this one runs its own files first, then takes listed files one by one
(``<index>.claim`` created with ``O_EXCL``) until none is left, and says which (``pool``, ``claimed``).

With ``$CODEPLANE_PYTEST_SELECT`` set (a JSON file: absolute test file path → cases, ``test_x``,
``TestC::test_x`` or ``TestC``), only those cases of those files run (with their parameters); the rest of such
a file is deselected. The file is collected once, where a node id argument per case would collect it again for
each one.

Standalone on purpose: it runs inside the repository's interpreter, so it imports nothing but the
standard library and pytest, and works on old pytest versions. It does nothing when the variable is unset.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import IO, Any

import pytest

_ENV = "CODEPLANE_PYTEST_EVENTS"
_POOL_ENV = "CODEPLANE_PYTEST_POOL"
_SELECT_ENV = "CODEPLANE_PYTEST_SELECT"
_LONGREPR_CHARS = 6_000
#: ``collect_t``: when each collector started; ``collect_s``: seconds spent collecting, per file. (Failed tests
#: are not re-run in this process: state the first attempt left behind made them pass; CodePlane retries them in a
#: fresh one.)
_state: dict[str, Any] = {"out": None, "root": None, "collect_t": {}, "collect_s": {}, "files": {}}


def _emit(event: dict[str, Any]) -> None:
    path = _state.get("path", os.environ.get(_ENV))
    if not path or _state.get("worker"):
        return
    out: IO[str] | None = _state["out"]
    if out is None:
        out = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the session
        _state["out"] = out
    event["t"] = time.time()
    out.write(json.dumps(event, default=str) + "\n")
    # CodePlane reads the file live. A test's start flushes everything before it (what the per-file
    # watchdog and progress need); reports alone wait for the next start, saving a write per phase.
    if event["ev"] != "report":
        out.flush()


def _file_of(nodeid: str) -> str:
    """Absolute path of the file a node id belongs to (node ids are relative to pytest's rootdir)."""
    rel = nodeid.split("::", 1)[0]
    known: dict[str, str] = _state["files"]
    path = known.get(rel)
    if path is None:
        root = _state["root"] or os.getcwd()
        path = known[rel] = os.path.normpath(os.path.join(str(root), rel))
    return path


def _clip(text: str) -> str:
    return text if len(text) <= _LONGREPR_CHARS else "…" + text[-_LONGREPR_CHARS:]


def pytest_configure(config: Any) -> None:
    _state["root"] = getattr(config, "rootpath", None) or getattr(config, "rootdir", None)
    _state["files"] = {}
    _state["path"] = os.environ.get(_ENV)
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


def _selection() -> dict[str, list[str]]:
    """``$CODEPLANE_PYTEST_SELECT``: real path of a test file → the cases of it to run (unreadable: none)."""
    path = os.environ.get(_SELECT_ENV)
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
        return {os.path.realpath(str(f)): [str(c) for c in cases] for f, cases in raw.items() if cases}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}  # everything runs: more than asked, never less


#: Case names an ``unmatched`` event carries at most (a file of generated parameters may hold tens of thousands).
_HELD_NAMES = 5000


def _chosen(nodeid: str, cases: list[str]) -> bool:
    rest = nodeid.split("::", 1)[1] if "::" in nodeid else ""
    return any(rest == c or rest.startswith((c + "::", c + "[")) for c in cases)


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    verdicts: dict[str, bool] = {}
    keep: list[Any] = []
    dropped: list[Any] = []
    wanted = _selection()
    real: dict[str, str] = {}
    matched: dict[str, set[str]] = {}
    held: dict[str, list[str]] = {}
    for item in items:
        path = _file_of(item.nodeid)
        if path not in verdicts:
            verdicts[path] = _ignored(config, path)
            real[path] = os.path.realpath(path) if wanted else path
        cases = wanted.get(real[path])
        chosen = True
        if cases is not None:  # only files run case by case pay for this
            hits = [c for c in cases if _chosen(item.nodeid, [c])]
            matched.setdefault(path, set()).update(hits)
            chosen = bool(hits)
            if "::" in item.nodeid:
                # All of them: the parser lists those nearest the name asked for and counts the rest.
                held.setdefault(path, []).append(item.nodeid.split("::", 1)[1])
        (dropped if verdicts[path] or not chosen else keep).append(item)
    for path, found in sorted(matched.items()):
        # A case asked for by name that the file does not hold (a typo, a renamed test) must not read as passed.
        missing = [c for c in wanted.get(real[path], []) if c not in found]
        if missing and not verdicts[path]:
            names = held.get(path, [])
            _emit({"ev": "unmatched", "file": path, "cases": missing, "held": names[:_HELD_NAMES],
                   "held_total": len(names)})
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
    collect_s = {path: round(seconds, 4) for path, seconds in _state["collect_s"].items() if path.endswith(".py")}
    _emit({"ev": "collected", "files": files, "collect_s": collect_s})
    outside = _imported_from_elsewhere()
    if outside:
        _emit({"ev": "outside", "modules": outside})


def _imported_from_elsewhere() -> dict[str, str]:
    """Top-level modules the tests imported from outside the project although the project holds their source
    (``src/click/`` beside an installed click): the tests then ran someone else's copy, not the code in the
    repository. Where a module was loaded from, once the tests are collected (their imports are done)."""
    bases = {os.path.realpath(str(base)) for base in (_state["root"] or os.getcwd(), os.getcwd())}
    held: set[str] = set()  # what the project holds: ``name.py`` and packages, at its top and under ``src/``
    for directory in sorted({os.path.join(base, sub) for base in bases for sub in ("", "src")}):
        try:
            entries = os.listdir(directory)
        except OSError:
            continue
        for entry in entries:
            if entry.endswith(".py"):
                held.add(entry[:-3])
            elif os.path.isfile(os.path.join(directory, entry, "__init__.py")):
                held.add(entry)
    found: dict[str, str] = {}
    for name in sorted(held):
        file = getattr(sys.modules.get(name), "__file__", None)
        where = os.path.realpath(file) if file else None
        if where is not None and not any(where.startswith(base + os.sep) for base in bases):
            found[name] = where
    return found


def pytest_collectstart(collector: Any) -> None:
    _state["collect_t"][collector.nodeid] = time.perf_counter()
    path = str(getattr(collector, "path", "") or "")
    if isinstance(collector, pytest.Module) and path.endswith(".py"):
        # Which file is importing: a module that hangs at import is then named, not every file of the process.
        _emit({"ev": "collecting", "file": os.path.normpath(path)})


def pytest_collectreport(report: Any) -> None:
    # Inside one file, collectors do not nest in time (pytest reports a node before collecting its children),
    # so the time between a node's start and its report is its own: the module's import, a class's params.
    began = _state["collect_t"].pop(report.nodeid, None)
    if began is not None:
        path = _file_of(report.nodeid)
        _state["collect_s"][path] = _state["collect_s"].get(path, 0.0) + time.perf_counter() - began
    if report.failed:
        _emit({"ev": "collect_error", "file": _file_of(report.nodeid), "nodeid": report.nodeid,
               "longrepr": _clip(str(report.longrepr))})
    elif report.skipped and report.nodeid:  # ``pytest.importorskip``/``skip(allow_module_level=True)`` at import
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
        _emit({"ev": "collect_skip", "file": _file_of(report.nodeid), "nodeid": report.nodeid,
               "reason": _clip(str(reason).removeprefix("Skipped: "))})


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    _state.setdefault("started", set()).add(nodeid)
    _emit({"ev": "start", "nodeid": nodeid, "file": _file_of(nodeid)})


def pytest_keyboard_interrupt(excinfo: Any) -> None:
    """``KeyboardInterrupt`` or ``pytest.exit()`` ended the session (a test raising it gets no report):
    why, and the collected tests that never started."""
    session = _state.get("session")
    items = getattr(session, "items", None) or []
    started = _state.get("started", set())
    not_run = [[_file_of(item.nodeid), item.nodeid] for item in items if item.nodeid not in started]
    value = getattr(excinfo, "value", None)
    kind = type(value).__name__ if value is not None else "KeyboardInterrupt"
    if kind == "Exit":
        kind = "pytest.exit()"
    reason = str(getattr(value, "msg", "") or value or "")
    _emit({"ev": "interrupted", "kind": kind, "reason": _clip(reason), "not_run": not_run[:200],
           "not_run_total": len(not_run)})


def pytest_runtest_logreport(report: Any) -> None:
    event = {"ev": "report", "nodeid": report.nodeid, "file": _file_of(report.nodeid), "when": report.when,
             "outcome": report.outcome, "duration": getattr(report, "duration", 0.0)}
    # Only what is there: most reports are passed setup/teardown phases, and they are most of the file.
    wasxfail = getattr(report, "wasxfail", None)
    if wasxfail is not None:
        event["wasxfail"] = wasxfail
    describe = getattr(report, "_sub_test_description", None)
    if callable(describe) and hasattr(report, "context"):  # a subtest's report (unittest subTest, ``subtests``)
        try:
            event["subtest"] = str(describe())
        except Exception:  # noqa: BLE001 - a private helper of pytest's: without it, the parent's report
            pass
    longrepr = report.longrepr
    if report.failed:
        crash = getattr(longrepr, "reprcrash", None)
        event["crash"] = getattr(crash, "message", "") if crash is not None else ""
        event["longrepr"] = _clip(getattr(report, "longreprtext", "") or "")
    elif report.skipped and isinstance(longrepr, tuple) and len(longrepr) == 3:
        event["skip_reason"] = str(longrepr[2])
    _emit(event)


def _claim(directory: str, index: int) -> bool:
    try:
        handle = os.open(os.path.join(directory, f"{index}.claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(handle, str(os.getpid()).encode())
    os.close(handle)
    return True


def _pooled_order(session: Any, directory: str) -> Iterator[Any] | None:
    """This process's items in run order: its own files, then each shared file it manages to take."""
    try:
        with open(os.path.join(directory, "pool.txt"), encoding="utf-8") as handle:
            shared = [os.path.realpath(line.strip()) for line in handle if line.strip()]
    except OSError:
        return None
    position = {path: index for index, path in enumerate(shared)}
    own: list[Any] = []
    taken: dict[int, list[Any]] = {}
    for item in session.items:
        index = position.get(os.path.realpath(_file_of(item.nodeid)))
        if index is None:
            own.append(item)
        else:
            taken.setdefault(index, []).append(item)
    _emit({"ev": "pool", "files": shared})

    def order() -> Iterator[Any]:
        yield from own
        for index, path in enumerate(shared):
            if _claim(directory, index):
                _emit({"ev": "claimed", "file": path})
                yield from taken.get(index, ())
    return order()


def _loop_is_pytests(config: Any) -> bool:
    """No plugin but pytest's own runs the test loop (xdist, or a conftest's loop: theirs must run as is)."""
    for impl in config.hook.pytest_runtestloop.get_hookimpls():
        if impl.hookwrapper or getattr(impl, "wrapper", False):
            continue
        if getattr(impl.plugin, "__name__", "") not in ("_pytest.main", __name__):
            return False
    return True


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: Any) -> bool | None:
    """pytest's own loop over a reordered item list, when this process shares a pool (else pytest's)."""
    directory = os.environ.get(_POOL_ENV)
    config = session.config
    if (not directory or _state.get("worker") or not _loop_is_pytests(config) or config.option.collectonly
            or (session.testsfailed and not config.option.continue_on_collection_errors)):
        return None
    order = _pooled_order(session, directory)
    if order is None:
        return None
    item = next(order, None)
    while item is not None:
        # The next item is taken before this one runs: teardown needs it to keep shared fixtures alive.
        following = next(order, None)
        item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
        if session.shouldfail:
            raise session.Failed(session.shouldfail)
        if session.shouldstop:
            raise session.Interrupted(session.shouldstop)
        item = following
    return True


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: Any) -> None:
    """Spare the interpreter's teardown its repeated full garbage collections over everything the session
    built (≈0.15 s of a 0.2 s exit on attrs, per process): no test runs after this hook, so collect once —
    garbage with finalizers is still finalized — and freeze what survives. What differs from a plain exit:
    a reference cycle that first becomes garbage after this point (a module's globals cleared at teardown)
    is not collected, which Python never promises at exit either.

    pytest ≥ 8.4 has just run a full collection in this phase (its unraisable-exception check); a second
    one (≈60 ms on attrs, on the run's critical path) would only find garbage made since, which is young,
    so the young generations are collected instead. The one case that adds to the hole above: a cycle of
    objects older than pytest's collection, unlinked by another plugin's unconfigure hook after it."""
    if not os.environ.get(_ENV) or not hasattr(gc, "freeze"):
        return
    full_since_session = gc.get_stats()[2]["collections"] > _state.get("full_collections", sys.maxsize)
    gc.collect(1 if full_since_session else 2)
    gc.freeze()


def pytest_sessionstart(session: Any) -> None:
    _state["session"] = session
    _state["started"] = set()


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    _state["full_collections"] = gc.get_stats()[2]["collections"]
    event: dict[str, Any] = {"ev": "finish", "exitstatus": int(exitstatus)}
    # ``-x``/``--maxfail`` in the repository's options: the tests after the stop never ran (not skipped).
    stop = getattr(session, "shouldfail", False) or getattr(session, "shouldstop", False)
    if stop:
        event["stopped"] = str(stop)
    _emit(event)
    out = _state["out"]
    if out is not None:
        out.close()
        _state["out"] = None
