"""The failure normaliser and fingerprints the tests and tasks subsystems share (§12.3)."""

from __future__ import annotations

import tempfile

from codeplane.core.fingerprints import (
    failure_fingerprint,
    mutation_fingerprint,
    normalize_exception_type,
    normalize_failure_text,
)

RUN_ONE = f"""\x1b[31mTraceback (most recent call last):\x1b[0m
  File "{tempfile.gettempdir()}/pytest-of-ci/pytest-12/test_x0/app.py", line 41, in handler
    raise ValueError(f"bad {{obj}}")
ValueError: bad <Widget object at 0x7f3a2b1c9d00> at 2024-05-01T10:11:12.345Z after 0.52s (pid 4242)
request 123e4567-e89b-12d3-a456-426614174000 at 10:11:12
"""
RUN_TWO = f"""Traceback (most recent call last):
  File "{tempfile.gettempdir()}/pytest-of-ci/pytest-97/test_x0/app.py", line 44, in handler
    raise ValueError(f"bad {{obj}}")
ValueError: bad <Widget object at 0x55d0a1b2c3e4> at 2025-01-09 23:59:01,001 after 12 ms (pid 99)
request 9f0e4567-e89b-12d3-a456-426614174999 at 23:59:01
"""


def test_same_failure_in_two_runs_normalises_to_the_same_text() -> None:
    one, two = normalize_failure_text(RUN_ONE), normalize_failure_text(RUN_TWO)
    assert one == two
    for noise in ("0x7f3a", "line 41", "pytest-12", "4242", "0.52s", "2024-05-01", "123e4567", "\x1b["):
        assert noise not in one


def test_failure_fingerprint_ignores_noise_but_not_substance() -> None:
    base = failure_fingerprint(["t::b", "t::a"], "builtins.ValueError", RUN_ONE, 1)
    assert base == failure_fingerprint(["t::a", "t::b"], "ValueError", RUN_TWO, 1)
    assert base.startswith("ff_")
    assert base != failure_fingerprint(["t::a", "t::b"], "TypeError", RUN_TWO, 1)
    assert base != failure_fingerprint(["t::a"], "ValueError", RUN_TWO, 1)
    assert base != failure_fingerprint(["t::a", "t::b"], "ValueError", RUN_TWO, 2)
    assert base != failure_fingerprint(["t::a", "t::b"], "ValueError", RUN_TWO.replace("bad", "worse"), 1)
    assert normalize_exception_type(" builtins.KeyError ") == "KeyError"


def test_mutation_fingerprint_is_order_independent_and_content_sensitive() -> None:
    one = mutation_fingerprint([("b.py", "2"), ("a.py", "1")], 3, 1, ["a.py:function:f"])
    assert one == mutation_fingerprint([("a.py", "1"), ("b.py", "2")], 3, 1, ["a.py:function:f"])
    assert one != mutation_fingerprint([("a.py", "1"), ("b.py", "3")], 3, 1, ["a.py:function:f"])
    assert one != mutation_fingerprint([("a.py", "1"), ("b.py", "2")], 3, 2, ["a.py:function:f"])
    assert one != mutation_fingerprint([("a.py", "1"), ("b.py", "2")], 3, 1, [])
