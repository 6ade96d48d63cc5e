"""A changed ``index.max_file_bytes`` applies at the next start to files whose stat did not change.

The reconcile trusts an unchanged stat, so before the limit was recorded a raised limit left an 84 KB file
"oversized" (no document, no definitions) and a lowered one kept a 114 KB file indexed, unlike a cold index of the
same tree and config (QA30 finding 1)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from codeplane.core.layout import RepoLayout
from codeplane.index.reconcile import RACY_NS
from tests.builders import make_repo
from tests.index_helpers import running_index

BIG = "".join(f"def qa_big_func_{n}():\n    return {n}\n\n" for n in range(3000))  # ~84 KB
SMALL = "def small():\n    return 1\n"


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"pkg/big.py": BIG, "pkg/small.py": SMALL, "blob.bin": b"\x00" * 70_000})
    # The stat's stamp is the later of mtime and ctime: past the racy window, a restart trusts an unchanged stat.
    time.sleep(RACY_NS / 1e9 + 0.2)
    return repo


def _kinds(repo: Path, limit: int) -> tuple[dict[str, str], dict[str, object]]:
    with running_index(repo, max_file_bytes=limit) as index:
        kinds = {}
        for path in ("pkg/big.py", "pkg/small.py", "blob.bin"):
            record = index.file_record(path)
            assert record is not None
            kinds[path] = record.kind
        status = index.status()
    counts: dict[str, object] = {key: status[key] for key in ("indexed_files", "oversized_files")}
    return kinds, counts


def _cold(repo: Path, tmp_path: Path, limit: int) -> tuple[dict[str, str], dict[str, object]]:
    copy = tmp_path / f"cold{limit}"
    shutil.copytree(repo, copy, symlinks=True)
    shutil.rmtree(RepoLayout(copy).state_dir, ignore_errors=True)
    return _kinds(copy, limit)


def test_a_raised_limit_indexes_the_files_now_under_it_at_the_next_start(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert _kinds(repo, 50_000)[0] == {"pkg/big.py": "oversized", "pkg/small.py": "text", "blob.bin": "oversized"}
    restarted = _kinds(repo, 2_097_152)
    assert restarted[0] == {"pkg/big.py": "text", "pkg/small.py": "text", "blob.bin": "binary"}
    assert restarted == _cold(repo, tmp_path, 2_097_152)


def test_a_lowered_limit_makes_the_files_now_over_it_oversized_at_the_next_start(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    assert _kinds(repo, 2_097_152)[0]["pkg/big.py"] == "text"
    restarted = _kinds(repo, 50_000)
    assert restarted[0] == {"pkg/big.py": "oversized", "pkg/small.py": "text", "blob.bin": "oversized"}
    assert restarted == _cold(repo, tmp_path, 50_000)
