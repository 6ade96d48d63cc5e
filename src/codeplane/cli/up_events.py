"""``cpl up --json``'s second line: the index is up, so answers are exact from now on.

The first line (``ready``) says the server listens; MCP calls made before the index is built wait for it or get
progress (D9). A supervisor starting agents wants the moment ``/ready`` turns 200 without polling it itself: a
daemon thread asks ``/ready?wait=`` and prints ``{"event": "index_ready", "seconds": ...}`` once, counted from the
``ready`` line. It prints nothing if the server stops first. Each ask holds the answer for a short while only
(``_HOLD_SEC``): a stop waits for the requests in flight, and one held until the first build ended let that build
finish and publish instead of being rolled back by the stop.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.error
import urllib.request

from codeplane.cli.probe import auth_headers
from codeplane.core.layout import RepoLayout


def announce_index_ready(base_url: str, layout: RepoLayout) -> threading.Thread:
    """Print the ``index_ready`` JSON line when ``base_url``'s ``/ready`` answers 200; returns the thread. ``layout``:
    the served repository's, whose token (``server.require_token``) the asks carry: without it ``/ready`` answered
    401 and the line never came."""
    thread = threading.Thread(target=_wait_and_print, args=(base_url, auth_headers(layout), time.monotonic()),
                              name="codeplane-index-ready", daemon=True)
    thread.start()
    return thread


#: How long one ``/ready`` ask may be held by the server (seconds).
_HOLD_SEC = 1.0


def _wait_and_print(base_url: str, headers: dict[str, str], since: float) -> None:
    url = f"{base_url}/ready?wait={_HOLD_SEC:g}"
    while True:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                        timeout=_HOLD_SEC + 30) as answer:
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
        time.sleep(0.05)  # 503 after the hold: still building; ask again
