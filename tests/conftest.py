from __future__ import annotations

import os

import pytest


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

