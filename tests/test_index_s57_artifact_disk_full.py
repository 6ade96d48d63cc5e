"""A disk that fills while an artifact is unpacked or downloaded is 5010 STORAGE_FULL (retryable), as everywhere
else in CodePlane, not a malformed artifact (3104) nor an unhandled OSError (QA62 #3): the artifact is fine and
freeing space fixes it. The full disk is the file-size limit (``ulimit -f``: EFBIG, the same catalog entry as ENOSPC
and EDQUOT), set in a child process once everything is imported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from codeplane.core.errors import ErrorCode
from tests.builders import cpl_env, make_repo
from tests.test_index_artifact import FILES, _clone, _export, _http_server

#: Below the artifact (≈16 KB) and its index.db (≈240 KB), above its manifest (≈4 KB).
_LIMIT = 8192

_SCRIPT = textwrap.dedent("""
    import json, resource, sys
    from pathlib import Path
    import httpx  # imported by the fetch on first use: before the limit, like everything else
    from codeplane.core.config import IndexConfig
    from codeplane.core.layout import RepoLayout
    from codeplane.index.artifact_adopt import adopt_configured
    from codeplane.index.artifact_fetch import fetch_artifact
    from codeplane.index.artifact_verify import unpack_verified
    from codeplane.index.structural.indexer import StructuralIndexer

    artifact, url, root, scratch = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    sha = artifact.with_name(artifact.name + ".sha256").read_text().split()[0]
    indexers = [StructuralIndexer()]
    # Every fresh store's schema is built before the limit: only the artifact's own writes meet it.
    RepoLayout(root).state_dir.mkdir(parents=True, exist_ok=True)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[5]), resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    def attempt(run):
        try:
            run()
            return {"raised": None}
        except Exception as exc:
            payload = getattr(exc, "to_payload", None)
            return payload() if payload else {"raised": f"{type(exc).__name__}: {exc}"}

    found = {
        "unpack": attempt(lambda: unpack_verified(artifact, sha, scratch / "staging", indexers)),
        "download": attempt(lambda: fetch_artifact(url, root=root, cache_dir=scratch / "cache", retries=0)),
    }
    outcome = adopt_configured(root, RepoLayout(root), IndexConfig(watch=False, artifact=str(artifact)), indexers)
    found["adopt"] = outcome.error or {"result": outcome.result}
    found["left_in_cache"] = sorted(p.name for p in (scratch / "cache").iterdir())
    print(json.dumps(found))
""")


@pytest.fixture(scope="module")
def under_limit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("disk-full")
    origin = make_repo(base / "origin", FILES)
    artifact = _export(_clone(origin, base / "ci"), base / "out" / "index.tar.zst")
    assert artifact.stat().st_size > _LIMIT
    root = _clone(origin, base / "dev")
    with _http_server(artifact.parent) as (url, _behaviour):
        proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(artifact), f"{url}/index.tar.zst", str(root),
                               str(base / "scratch"), str(_LIMIT)],
                              check=False, capture_output=True, text=True, timeout=120, env=cpl_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    found: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("step", ["unpack", "download", "adopt"])
def test_a_full_disk_while_taking_in_an_artifact_is_storage_full(under_limit: dict[str, Any], step: str) -> None:
    error = under_limit[step]
    assert error.get("code") == ErrorCode.STORAGE_FULL.code and error.get("retryable"), error
    assert error["details"]["errno"] == "EFBIG", error
    assert "file-size limit" in error["message"], error
    if step == "download":
        assert under_limit["left_in_cache"] == [], under_limit["left_in_cache"]  # the partial download is removed

