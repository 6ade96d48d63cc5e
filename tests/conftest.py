from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from codeplane.testing import TestingService


@pytest.fixture(autouse=True)
def _isolated_global_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read the developer's ~/.config/codeplane during tests."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("CODEPLANE__"):
            monkeypatch.delenv(name)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"



@pytest.fixture
def lean_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixture repos run pytest without this checkout's plugins (hypothesis, anyio): faster, same results."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def services() -> Iterator[list[TestingService]]:
    """Testing services a test made, closed after it (their runs cancelled, their processes killed)."""
    made: list[TestingService] = []
    yield made
    for service in made:
        service.close()
