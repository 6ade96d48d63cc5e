"""``cpl init`` builds the first index with a summary; ``cpl status`` shows the index with or without a server."""

from __future__ import annotations

from pathlib import Path

from tests.builders import cpl, cpl_json, make_repo, running_server


def test_init_builds_the_index_and_status_reports_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n", "b.md": "# b\n", "logo.png": b"\x00\x01"})
    first = cpl_json("init", cwd=repo)
    index = first["index"]
    assert index["built"] and index["epoch"] == 1 and index["added"] == 4  # + .cplignore written by init
    assert index["files"] == 4 and index["skipped_binary"] == 1 and index["primary_language"] == "python"
    stopped = cpl("status", cwd=repo).stdout  # no server: read from index.db
    assert "index:  stopped   epoch 1   files 4" in stopped and "init" in stopped
    checks = {c["name"]: c for c in cpl_json("doctor", cwd=repo)["checks"]}
    assert checks["index.db"]["ok"] and checks["tantivy"]["ok"] and "3 documents" in checks["tantivy"]["detail"]

    with running_server(repo) as server:
        booting = cpl_json("status", cwd=repo)["index"]
        assert booting["state"] in ("starting", "ready")
        server.wait_serving()
        live = cpl_json("status", cwd=repo)["index"]
        assert live["state"] == "ready" and live["file_count"] == 4 and live["pending_changes"] == 0
        assert live["last_reconcile"]["reason"] == "startup"
        skipped = cpl_json("init", cwd=repo)["index"]
        assert skipped["built"] is False and "server is running" in skipped["reason"]
