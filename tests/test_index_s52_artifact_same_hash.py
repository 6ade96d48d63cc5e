"""``--index-from`` a damaged file whose ``.sha256`` names the index already adopted (QA44 §6): it was "already
adopted" and skipped without being read, so nobody heard that the file was broken. The file is hashed; a copy that
is not what its sidecar says is refused (3103) as on a fresh clone, and an intact one is still skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

from codeplane.core.config import IndexConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.artifact_export import export_artifact
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from tests.builders import make_repo


def _service(root: Path, artifact: Path) -> IndexService:
    service = IndexService(root, RepoLayout(root), IndexConfig(watch=False, artifact=str(artifact),
                                                               artifact_adopt="always"))
    service.register_indexer(StructuralIndexer())
    return service


def _start(root: Path, artifact: Path) -> IndexService:
    service = _service(root, artifact)
    service.start()
    assert service.wait_ready(60), service.status()
    return service


def test_a_truncated_copy_of_the_adopted_artifact_is_refused_not_skipped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "def alpha():\n    return 1\n", "b.py": "BETA = 2\n"})
    builder = IndexService(repo, RepoLayout(repo), IndexConfig(watch=False))
    builder.register_indexer(StructuralIndexer())
    builder.build()
    artifact = tmp_path / "art" / "index.tar.zst"
    export_artifact(repo, RepoLayout(repo), [StructuralIndexer()], artifact, max_bytes=IndexConfig().max_file_bytes)
    adopted = _start(repo, artifact)
    adopted.stop()
    assert adopted.artifact is not None and adopted.artifact.result == "adopted", adopted.artifact

    intact = _start(repo, artifact)  # the same file again: skipped, as before (hashing it found nothing wrong)
    intact.stop()
    assert intact.artifact is not None and intact.artifact.result == "skipped", intact.artifact

    truncated = tmp_path / "art" / "trunc.tar.zst"
    truncated.write_bytes(artifact.read_bytes()[: artifact.stat().st_size // 2])
    shutil.copy(Path(f"{artifact}.sha256"), Path(f"{truncated}.sha256"))
    service = _start(repo, truncated)
    try:
        outcome = service.artifact
        assert outcome is not None and outcome.result == "refused", outcome
        assert outcome.error is not None and outcome.error["code"] == 3103, outcome.error
        source = service.status()["source"]
        assert isinstance(source, dict) and source["artifact_refused"]["code"] == 3103, source
        assert source["kind"] == "artifact", source  # the index adopted before is kept, as for any refusal
    finally:
        service.stop()
