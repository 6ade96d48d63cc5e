"""Refusals name what went wrong with the artifact: one adopted and then found unusable keeps its identity in
``source.artifact_refused`` (QA62 #7: ``/status`` said only "local, rebuilt from disk", pointing at the local disk),
and a URL with no artifact behind it is "not found" (3101), not "no sidecar" (3102, QA62 #8)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.artifact_fetch import fetch_artifact
from tests.builders import git, make_repo
from tests.test_index_artifact import FILES, _clone, _corrupt_page, _export, _http_server, _repack, _running, _status
from tests.test_index_artifact_integrity import _corrupt_table, _pinned


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("attribution")
    origin = make_repo(base / "origin", FILES)
    return origin, _export(_clone(origin, base / "ci"), base / "out" / "index.tar.zst")


def _names_the_artifact(refused: dict[str, Any], bad: Path, origin: Path) -> None:
    assert refused["code"] == ErrorCode.ARTIFACT_INVALID.code, refused
    assert refused["details"]["source"] == str(bad), refused
    assert refused["details"]["sha256"] == _pinned(bad), refused
    assert refused["details"]["commit"] == git(origin, "rev-parse", "HEAD").stdout.strip(), refused


def test_a_pinned_artifact_the_store_finds_unusable_after_the_swap_is_refused_naming_it(
        published: tuple[Path, Path], tmp_path: Path) -> None:
    """A damaged table no check before the swap reads (a pinned artifact's full check runs after ready): the store's
    own open finds it first and rebuilds from disk; the artifact is what was unusable, and ``source`` says so."""
    origin, artifact = published
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_table("st_export_surface"))
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad), artifact_sha256=_pinned(bad)) as service:
        status = _status(service)
    source = status["source"]
    assert source["kind"] == "local" and source["rebuilt_from_disk"].startswith("index.db was unusable"), source
    _names_the_artifact(source["artifact_refused"], bad, origin)
    assert "index.db is unusable" in source["artifact_refused"]["message"], source
    assert any("index artifact refused after adoption" in w for w in status["warnings"]), status["warnings"]
    assert status["file_count"] == len(FILES)


def test_a_pinned_artifact_failing_its_check_after_ready_is_refused_naming_it(published: tuple[Path, Path],
                                                                             tmp_path: Path) -> None:
    origin, artifact = published
    bad = _repack(artifact, tmp_path / "bad.tar.zst", _corrupt_page)
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad), artifact_sha256=_pinned(bad)) as service:
        deadline = time.monotonic() + 30
        while (source := _status(service)["source"])["kind"] != "local":
            assert time.monotonic() < deadline, source
            time.sleep(0.05)
    _names_the_artifact(source["artifact_refused"], bad, origin)


def test_a_url_with_no_artifact_is_not_found_and_one_without_a_sidecar_is_unverified(
        published: tuple[Path, Path], tmp_path: Path) -> None:
    _origin, artifact = published
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(artifact, served / "bare.tar.zst")  # no sidecar beside it
    with _http_server(served) as (base, behaviour):
        with pytest.raises(CodePlaneError) as missing:
            fetch_artifact(f"{base}/missing.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache", retries=0)
        with pytest.raises(CodePlaneError) as bare:
            fetch_artifact(f"{base}/bare.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache", retries=0)
    assert missing.value.error is ErrorCode.ARTIFACT_FETCH_FAILED, missing.value
    assert f"no artifact found at {base}/missing.tar.zst" in missing.value.message, missing.value
    assert bare.value.error is ErrorCode.ARTIFACT_UNVERIFIED and "sidecar" in bare.value.message, bare.value
    assert "/missing.tar.zst" in behaviour.requests and "/bare.tar.zst" in behaviour.requests, behaviour.requests
