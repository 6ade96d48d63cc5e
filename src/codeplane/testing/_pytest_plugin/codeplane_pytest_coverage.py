"""A pytest plugin CodePlane loads for ``run_test_targets(coverage=true)`` (``-p codeplane_pytest_coverage``).

It records, per test (node id), which code objects of the repository ran while the test ran — its setup,
call and teardown, plus what the fixtures it uses ran when they were set up (a session fixture is set up
once, in the first test that needs it; every test using it depends on that code) — and its place in the
process's order (state an earlier test left, a filled cache, can be why a later one skips code). Code that
ran outside any test (imports, collection, hooks) is recorded apart. At the end of the session it writes one JSON file
(``$CODEPLANE_COVERAGE_OUT/<pid>.json``) that CodePlane maps to the structural index's definitions.

Cheap on purpose: only the first start of each code object per test is seen. On Python ≥ 3.12
``sys.monitoring`` reports ``PY_START`` and the callback disables itself for that code object until the
next test (``restart_events``); before 3.12 a ``sys.settrace`` function sees call events only and returns
no local tracer, except for code in ``$CODEPLANE_COVERAGE_LINES`` (changed lines, a JSON object of absolute
path → ``[[first, last], ...]``), whose executed lines are recorded too.

A test that starts a process (``subprocess``, ``os.system``, ``os.fork``...), or during which something else
replaced the trace function, is marked ``unseen``: code ran that was not seen, so its evidence cannot show
what it did not run.

Standalone, like ``codeplane_pytest_events``: the standard library and pytest only, any pytest version.
Does nothing when ``$CODEPLANE_COVERAGE_OUT`` is unset.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from collections.abc import Generator
from types import CodeType, FrameType
from typing import Any

import pytest

_OUT_ENV = "CODEPLANE_COVERAGE_OUT"
_ROOT_ENV = "CODEPLANE_COVERAGE_ROOT"
_LINES_ENV = "CODEPLANE_COVERAGE_LINES"
#: Directories under the repository that hold no repository source (environments, CodePlane's own state).
_FOREIGN_DIRS = frozenset({".venv", "venv", ".tox", ".nox", ".codeplane", ".git", "site-packages", "node_modules",
                           "__pycache__"})
#: Audit events of a process being started (its code is not traced).
_SPAWN_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.spawn", "os.exec", "os.fork",
                           "os.forkpty", "pty.spawn", "os.startfile"})
_CO_OPTIMIZED = 0x1  # a function's code (not a module's or a class body's)


class _Recorder:
    """Buckets of code object ids: the one being filled is ``current``."""

    def __init__(self) -> None:
        self.codes: dict[int, CodeType] = {}  # id → code, kept alive so ids are never reused
        self.outside: set[int] = set()
        self.current: set[int] = self.outside
        self.stack: list[set[int]] = []
        self.tests: dict[str, dict[str, Any]] = {}
        self.fixtures: dict[int, set[int]] = {}
        self.fixture_defs: dict[int, Any] = {}  # id → FixtureDef, kept alive for the same reason
        self.test: str | None = None
        self.lines: set[tuple[int, int]] = set()
        self.line_scope: dict[str, list[tuple[int, int]]] = {}
        self.scoped: dict[int, bool] = {}
        self.hashes: dict[str, str] = {}
        self.backend: _Backend | None = None

    def push(self) -> set[int]:
        self.stack.append(self.current)
        self.current = set()
        if self.backend is not None:
            self.backend.restart()
        return self.current

    def pop(self, *, merge: bool) -> set[int]:
        """Back to the enclosing bucket. ``merge``: what ran in this one ran inside the enclosing one too (a
        fixture set up for a test); a test's bucket is not merged into the one outside any test."""
        done = self.current
        self.current = self.stack.pop() if self.stack else self.outside
        if merge:
            self.current |= done
        elif self.backend is not None:
            self.backend.restart()  # code disabled during the test must show up outside it again
        return done

    def in_line_scope(self, code: CodeType) -> bool:
        key = id(code)
        known = self.scoped.get(key)
        if known is None:
            ranges = self.line_scope.get(_absolute(code.co_filename)) if self.line_scope else None
            first = code.co_firstlineno
            last = max((line for line in _code_lines(code)), default=first)
            known = self.scoped[key] = bool(ranges) and bool(code.co_flags & _CO_OPTIMIZED) and any(
                a <= last and first <= b for a, b in ranges or ())
        return known


_rec = _Recorder()
_paths: dict[str, str] = {}


def _absolute(filename: str) -> str:
    path = _paths.get(filename)
    if path is None:
        path = _paths[filename] = os.path.realpath(filename) if not filename.startswith("<") else filename
    return path


def _code_lines(code: CodeType) -> list[int]:
    lines = getattr(code, "co_lines", None)
    if lines is not None:
        return [line for _, _, line in lines() if line is not None]
    import dis

    return [line for _, line in dis.findlinestarts(code)]


class _Backend:
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def restart(self) -> None: ...

    def intact(self) -> bool:
        """Whether nothing replaced the tracing while a test ran (a test that sets its own trace function)."""
        return True


class _Settrace(_Backend):
    """Python < 3.12: a global trace function that sees call events and declines line events, except for
    code in the line scope."""

    def start(self) -> None:
        rec = _rec
        codes = rec.codes
        lines = rec.lines

        def line(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                lines.add((id(frame.f_code), frame.f_lineno))
            return line

        def call(frame: FrameType, event: str, arg: Any) -> Any:
            code = frame.f_code
            key = id(code)
            bucket = rec.current
            if key not in bucket:
                bucket.add(key)
                if key not in codes:
                    codes[key] = code
            return line if rec.line_scope and rec.in_line_scope(code) else None

        self._call = call
        threading.settrace(call)
        sys.settrace(call)

    def stop(self) -> None:
        sys.settrace(None)
        threading.settrace(None)

    def intact(self) -> bool:
        if sys.gettrace() is self._call:
            return True
        sys.settrace(self._call)
        return False


class _Monitoring(_Backend):
    """Python ≥ 3.12: ``PY_START``/``PY_RESUME`` once per code object per bucket (then disabled until the
    next ``restart_events``), ``LINE`` only in code of the line scope."""

    def __init__(self, tool: int) -> None:
        self.tool = tool

    def start(self) -> None:
        mon = sys.monitoring  # type: ignore[attr-defined]
        rec = _rec
        codes = rec.codes
        lines = rec.lines
        disable = mon.DISABLE
        tool = self.tool

        def started(code: CodeType, offset: int) -> Any:
            key = id(code)
            rec.current.add(key)
            if key not in codes:
                codes[key] = code
                if rec.line_scope and rec.in_line_scope(code):
                    mon.set_local_events(tool, code, mon.events.LINE)
            return disable

        def line(code: CodeType, number: int) -> Any:
            lines.add((id(code), number))
            return disable

        mon.use_tool_id(tool, "codeplane-coverage")
        mon.register_callback(tool, mon.events.PY_START, started)
        mon.register_callback(tool, mon.events.PY_RESUME, started)
        mon.register_callback(tool, mon.events.LINE, line)
        mon.set_events(tool, mon.events.PY_START | mon.events.PY_RESUME)

    def stop(self) -> None:
        mon = sys.monitoring  # type: ignore[attr-defined]
        mon.set_events(self.tool, 0)
        for code in _rec.codes.values():
            if _rec.scoped.get(id(code)):
                mon.set_local_events(self.tool, code, 0)
        for event in (mon.events.PY_START, mon.events.PY_RESUME, mon.events.LINE):
            mon.register_callback(self.tool, event, None)
        mon.free_tool_id(self.tool)

    def restart(self) -> None:
        sys.monitoring.restart_events()  # type: ignore[attr-defined]


def _backend() -> _Backend:
    mon = getattr(sys, "monitoring", None)
    if mon is not None:
        for tool in (mon.COVERAGE_ID, 3, 4, mon.PROFILER_ID):
            if mon.get_tool(tool) is None:  # another coverage tool (pytest-cov) may hold the first
                return _Monitoring(tool)
    return _Settrace()


def _audit(event: str, args: Any) -> None:
    if event in _SPAWN_EVENTS and _rec.test is not None:
        entry = _rec.tests.get(_rec.test)
        if entry is not None:
            entry["unseen"] = True


def _load_line_scope() -> None:
    path = os.environ.get(_LINES_ENV)
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as handle:
            raw = json.load(handle)
        _rec.line_scope = {os.path.realpath(p): [(int(a), int(b)) for a, b in spans] for p, spans in raw.items()}
    except (OSError, ValueError, TypeError):
        _rec.line_scope = {}


def _start() -> None:
    if not os.environ.get(_OUT_ENV) or _rec.backend is not None:
        return
    _load_line_scope()
    _rec.backend = _backend()
    _rec.backend.start()
    if hasattr(sys, "addaudithook"):
        sys.addaudithook(_audit)


# Started when the plugin is imported (``-p`` loads it before conftest.py files and test modules), so their
# imports are recorded as code that ran outside any test.
_start()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: Any, nextitem: Any) -> Generator[None, Any, None]:
    if _rec.backend is None:
        yield
        return
    nodeid = item.nodeid
    entry = _rec.tests.get(nodeid)
    if entry is None:
        path = getattr(item, "path", None) or getattr(item, "fspath", "")
        entry = _rec.tests[nodeid] = {"file": os.path.realpath(str(path)), "outcome": "passed", "unseen": False,
                                      "codes": set(), "fixtures": set(), "seq": len(_rec.tests)}
    _rec.test = nodeid
    bucket = _rec.push()
    try:
        yield
    finally:
        _rec.pop(merge=False)
        _rec.test = None
        entry["codes"] |= bucket
        entry["fixtures"] |= _fixture_ids(item)
        if not _rec.backend.intact():
            entry["unseen"] = True  # something else traced part of it: what ran is not known


def _fixture_ids(item: Any) -> set[int]:
    """The fixture definitions ``item`` uses (its closure, overridden ones included: a fixture may request
    the one it overrides)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = getattr(info, "name2fixturedefs", None) or {}
    found = set()
    for name in getattr(item, "fixturenames", ()):
        for fixturedef in defs.get(name, ()):
            found.add(id(fixturedef))
    return found


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Generator[None, Any, None]:
    if _rec.backend is None:
        yield
        return
    bucket = _rec.push()
    try:
        yield
    finally:
        _rec.pop(merge=True)
        _rec.fixtures.setdefault(id(fixturedef), set()).update(bucket)
        _rec.fixture_defs[id(fixturedef)] = fixturedef


def pytest_runtest_logreport(report: Any) -> None:
    entry = _rec.tests.get(report.nodeid)
    if entry is None:
        return
    if report.failed:
        entry["outcome"] = "failed"
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"


def pytest_collection_finish(session: Any) -> None:
    """Hash the files seen so far now, close to when they were imported (an edit during the run would
    otherwise stamp the evidence with content that did not run)."""
    if _rec.backend is not None:
        root = _root()
        for code in list(_rec.codes.values()):
            _hash(_absolute(code.co_filename), root)


def _root() -> str:
    return os.path.realpath(os.environ.get(_ROOT_ENV) or os.getcwd())


def _in_repo(path: str, root: str) -> bool:
    if not path.startswith(root + os.sep) or not path.endswith((".py", ".pyw")):
        return False
    return not any(part in _FOREIGN_DIRS for part in path[len(root) + 1:].split(os.sep)[:-1])


def _hash(path: str, root: str) -> str | None:
    if not _in_repo(path, root):
        return None
    known = _rec.hashes.get(path)
    if known is None:
        try:
            with open(path, "rb") as handle:
                known = hashlib.sha256(handle.read()).hexdigest()
        except OSError:
            known = ""
        _rec.hashes[path] = known
    return known or None


def _executable(path: str, spans: list[tuple[int, int]]) -> list[int]:
    """Lines of function code (the bodies) inside ``spans``: what line coverage of a change counts."""
    try:
        with open(path, "rb") as handle:
            top = compile(handle.read(), path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return []
    found: set[int] = set()
    todo = [top]
    while todo:
        code = todo.pop()
        todo.extend(c for c in code.co_consts if isinstance(c, CodeType))
        if code.co_flags & _CO_OPTIMIZED:
            found.update(n for n in _code_lines(code) if n != code.co_firstlineno)
    return sorted(n for n in found if any(a <= n <= b for a, b in spans))


def _write(out_dir: str) -> None:
    root = _root()
    files: dict[str, int] = {}
    file_rows: list[list[Any]] = []
    code_index: dict[int, int] = {}
    code_rows: list[list[Any]] = []
    for key, code in _rec.codes.items():
        path = _absolute(code.co_filename)
        sha = _hash(path, root)
        if sha is None:
            continue
        if path not in files:
            files[path] = len(file_rows)
            file_rows.append([path, sha])
        code_index[key] = len(code_rows)
        code_rows.append([files[path], code.co_firstlineno, code.co_name, code.co_flags & _CO_OPTIMIZED])

    def indexed(ids: set[int]) -> list[int]:
        return sorted(code_index[i] for i in ids if i in code_index)

    tests = []
    for nodeid, entry in _rec.tests.items():
        ran = set(entry["codes"])
        for fixture in entry["fixtures"]:
            ran |= _rec.fixtures.get(fixture, set())
        tests.append([nodeid, entry["file"], entry["outcome"], entry["unseen"], indexed(ran), entry["seq"]])
    lines: dict[str, list[int]] = {}
    for key, number in _rec.lines:
        traced = _rec.codes.get(key)
        if traced is not None:
            lines.setdefault(_absolute(traced.co_filename), []).append(number)
    scope = {path: _executable(path, spans) for path, spans in _rec.line_scope.items()}
    payload = {"v": 1, "pid": os.getpid(), "files": file_rows, "codes": code_rows, "outside": indexed(_rec.outside),
               "tests": tests, "lines": {p: sorted(set(n)) for p, n in lines.items()}, "executable": scope}
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, f"{os.getpid()}.json")
    with open(target + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(payload, handle, separators=(",", ":"))
    os.replace(target + ".tmp", target)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    backend = _rec.backend
    out_dir = os.environ.get(_OUT_ENV)
    if backend is None or not out_dir:
        return
    backend.stop()
    _rec.backend = None
    _write(out_dir)
