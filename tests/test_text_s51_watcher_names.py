"""A file name that is not UTF-8 no longer kills the file watcher.

watchfiles cannot turn such a name into ``str``: the batch holding the event raised, and kept raising, so every
event on the file ended the watcher process (three appends, three restarts, periodic reconcile in between). The
watch is now set up again in place (the new one before the old one closes, so nothing falls between) and the
server is told to rescan, since the lost batch's other paths are unknown; later changes are reported as before.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from codeplane.repo.ignore import IgnoreRules
from codeplane.repo.watcher import RepoWatcher
from tests.builders import make_repo
from tests.test_repo_watcher import Seen


def test_events_on_a_name_that_is_not_utf8_keep_the_watcher_running(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"top.py": "x = 1\n", "src/a.py": "a = 1\n"})
    seen = Seen()
    watcher = RepoWatcher(repo, seen, lambda: IgnoreRules.load(repo), debounce_ms=20)
    watcher.start()
    try:
        assert watcher.wait_live(15)
        for where in (b"", b"src/"):  # the root's own watch and the tree watch
            bad = os.fsencode(repo) + b"/" + where + b"bad\xffname.txt"
            for n in range(3):
                with open(bad, "ab") as handle:
                    handle.write(b"%d\n" % n)
                time.sleep(0.15)
        seen.wait_for("a rescan", lambda: any(b.rescan for b in seen.batches))
        (repo / "src" / "a.py").write_text("a = 2\n")
        (repo / "top.py").write_text("x = 2\n")
        seen.wait_for("the changes after it", lambda: {"src/a.py", "top.py"} <= seen.paths())
        assert watcher.state == "running" and watcher.restarts == 0 and watcher.error is None
    finally:
        watcher.stop()
