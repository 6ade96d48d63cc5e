"""``cpl up --json``'s second line: the index is up, so answers are exact from now on.

The first line (``ready``) says the server listens; MCP calls made before the index is built wait for it or get
progress (D9). A supervisor starting agents wants the moment ``/ready`` turns 200 without polling it itself: a
daemon thread holds ``/ready?wait=`` open and prints ``{"event": "index_ready", "seconds": ...}`` once, counted
from the ``ready`` line. It prints nothing if the server stops first.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request


def announce_index_ready(base_url: str) -> threading.Thread:
    """Print the ``index_ready`` JSON line when ``base_url``'s ``/ready`` answers 200; returns the thread."""
    thread = threading.Thread(target=_wait_and_print, args=(base_url, time.monotonic()),
                              name="codeplane-index-ready", daemon=True)
    thread.start()
    return thread


def _wait_and_print(base_url: str, since: float) -> None:
    from codeplane.server.staged import MAX_READY_WAIT_SEC  # the server's module: loaded by then

    url = f"{base_url}/ready?wait={MAX_READY_WAIT_SEC:g}"
    while True:
        try:
            with urllib.request.urlopen(url, timeout=MAX_READY_WAIT_SEC + 30) as answer:
                ready = answer.status == 200
        except urllib.error.HTTPError as refused:
            ready = False
            refused.close()
            if refused.code != 503:
                return
        except (OSError, ValueError):
            return  # the server stopped (or never came up): there is no index to announce
        if ready:
            sys.stdout.write(json.dumps({"event": "index_ready", "seconds": round(time.monotonic() - since, 2)})
                             + "\n")
            sys.stdout.flush()
            return
        time.sleep(0.5)  # 503 after the whole wait: still building (a long first index); ask again
