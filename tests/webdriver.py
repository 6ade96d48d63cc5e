"""A headless Chromium driven over the W3C WebDriver protocol (chromedriver + httpx; no Selenium).

The few commands a dashboard test needs: open a page, find elements by CSS, read their text, click,
pick an option, run a script, take a screenshot. ``browser()`` skips the test when Chromium or its driver
is not installed (Debian: ``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import base64
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1600"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Browser:
    def __init__(self, url: str, session_id: str) -> None:
        self._http = httpx.Client(base_url=f"{url}/session/{session_id}", timeout=60)

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self._http.request(method, path, json=body if method == "POST" else None)
        payload = response.json()
        if response.status_code != 200:
            raise RuntimeError(f"webdriver {method} {path}: {payload.get('value')}")
        return payload.get("value")

    def open(self, url: str) -> None:
        self._call("POST", "/url", {"url": url})

    def find_all(self, css: str) -> list[str]:
        return [e[ELEMENT] for e in self._call("POST", "/elements", {"using": "css selector", "value": css})]

    def text(self, element: str) -> str:
        value: str = self._call("GET", f"/element/{element}/text")
        return value

    def texts(self, css: str) -> list[str]:
        return [self.text(e) for e in self.find_all(css)]

    def click(self, css: str) -> None:
        found = self.find_all(css)
        assert found, f"nothing matches {css!r}"
        self._call("POST", f"/element/{found[0]}/click", {})

    def script(self, source: str, *args: Any) -> Any:
        return self._call("POST", "/execute/sync", {"script": source, "args": list(args)})

    def select(self, css: str, value: str) -> None:
        """Choose ``value`` in a ``<select>`` the way a person does (the page sees a change event)."""
        self.script("const s = document.querySelector(arguments[0]); s.value = arguments[1];"
                    "s.dispatchEvent(new Event('change'));", css, value)

    def screenshot(self, path: Path) -> Path:
        path.write_bytes(base64.b64decode(self._call("GET", "/screenshot")))
        return path

    def wait_for(self, what: str, check: Callable[[], Any], timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = check()
            except (RuntimeError, AssertionError, IndexError) as exc:
                last = exc
            else:
                if last:
                    return last
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}: last {last!r}")


@contextmanager
def browser(profile_dir: Path) -> Iterator[Browser]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("Chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    port = _free_port()
    proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    session_id = None
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{url}/status", timeout=2).json()["value"]["ready"]:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "chromedriver did not start"
            time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": chromium, "args": [*CHROME_FLAGS, f"--user-data-dir={profile_dir}"]}}}}
        created = httpx.post(f"{url}/session", json=caps, timeout=60).json()["value"]
        session_id = created["sessionId"]
        yield Browser(url, session_id)
    finally:
        if session_id is not None:
            try:
                httpx.delete(f"{url}/session/{session_id}", timeout=30)
            except httpx.HTTPError:
                pass
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
