"""The commit an index was reconciled at (QA50 #7, spec §4.2: doctor checks "commit hash matches Git HEAD", and the
playbook's "stale revision: `cpl status` shows mismatch"): while no server runs, `cpl status` and `cpl doctor` say
when HEAD moved since, and that the next start reindexes what changed."""

from __future__ import annotations

from pathlib import Path

from codeplane.index.doctor import check_index
from tests.builders import cpl, cpl_json, git, make_repo


def test_offline_status_and_doctor_name_a_head_that_moved_since_the_index(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    assert cpl("init", str(repo), cwd=repo).returncode == 0
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    status = cpl_json("status", str(repo), cwd=repo)
    assert status["index"]["head"] == head and not status["index"].get("warnings")
    assert [r.detail for r in check_index(repo) if r.name == "index HEAD"] == [f"reconciled at HEAD {head[:12]}"]

    (repo / "b.py").write_text("y = 2\n")
    git(repo, "add", "b.py")
    git(repo, "commit", "-q", "-m", "second")
    moved = git(repo, "rev-parse", "HEAD").stdout.strip()
    status = cpl_json("status", str(repo), cwd=repo)
    assert status["index"]["warnings"] == [f"reconciled at {head[:12]}, HEAD is now {moved[:12]}: the next "
                                           "`cpl up` reindexes what changed"]
    [result] = [r for r in check_index(repo) if r.name == "index HEAD"]
    assert result.ok and f"HEAD is now {moved[:12]}" in result.detail
