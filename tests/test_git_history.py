"""git_log, blame, file/line history, show and tags against the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.errors import CodePlaneError
from codeplane.git import GitService
from tests.builders import make_repo, write_files
from tests.git_oracle import blame_lines, log_records, run_git

_T0 = 1_700_000_000


def _commit(root: Path, message: str, n: int, files: dict[str, str], tz: str = "+0000") -> None:
    write_files(root, files)
    run_git(root, "add", "-A")
    stamp = f"{_T0 + n * 3600} {tz}"
    run_git(root, "commit", "-q", "-m", message, env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Branches, a merge, a rename and multi-line messages, with distinct commit dates."""
    root = make_repo(tmp_path_factory.mktemp("story") / "r")
    body = [f"def f{i}():\n    return {i}\n" for i in range(10)]
    _commit(root, "start", 1, {"app.py": "".join(body), "README": "hi\n"})
    _commit(root, "tweak f3\n\nLonger body\nwith lines.", 2, {"app.py": "".join(body).replace("return 3", "return 33")})
    run_git(root, "checkout", "-q", "-b", "side")
    _commit(root, "side work", 3, {"side.txt": "s\n"}, tz="+0530")
    _commit(root, "side tweak f8", 5, {"app.py": "".join(body).replace("return 3", "return 33")
                                       .replace("return 8", "return 88")}, tz="-0700")
    run_git(root, "checkout", "-q", "main")
    _commit(root, "main readme", 4, {"README": "hello\n"})
    stamp = f"{_T0 + 6 * 3600} +0000"
    run_git(root, "merge", "-q", "--no-edit", "side", env={"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
    run_git(root, "mv", "app.py", "core.py")
    _commit(root, "rename app to core", 7, {})
    _commit(root, "edit f1 in core", 8, {"core.py": (root / "core.py").read_text().replace("return 1\n",
                                                                                            "return 100\n")})
    for i in range(9, 40):
        _commit(root, f"bump {i}", i, {"counter.txt": f"{i}\n"})
    run_git(root, "tag", "v1", "HEAD~5")
    run_git(root, "tag", "-a", "v2", "-m", "release two")
    return root


def test_log_matches_git_log_fields_and_order(story: Path) -> None:
    page = GitService(story).log(limit=200)
    expected = log_records(story)
    assert [c.oid for c in page.commits] == [r["oid"] for r in expected]
    for commit, rec in zip(page.commits, expected, strict=True):
        assert commit.parents == rec["parents"]
        assert (commit.author.name, commit.author.email, commit.author.time) == rec["author"]
        assert commit.committer.time == rec["committer_time"]
        assert commit.message.rstrip("\n") == str(rec["message"]).rstrip("\n")
    assert page.pagination.next_cursor is None


def test_log_filters_by_path_ref_and_dates(story: Path) -> None:
    git = GitService(story)
    by_path = git.log(paths=["README"], limit=50)
    assert [c.oid for c in by_path.commits] == [r["oid"] for r in log_records(story, "--", "README")]
    on_side = git.log(ref="side", limit=50)
    assert [c.oid for c in on_side.commits] == [r["oid"] for r in log_records(story, "side")]
    since, until = "2023-11-15T00:00:00Z", "2023-11-15T10:00:00+00:00"
    window = git.log(since=since, until=until, limit=100)
    assert [c.oid for c in window.commits] == [r["oid"] for r in log_records(story, f"--since={since}",
                                                                              f"--until={until}")]


@pytest.mark.parametrize("spec", ["*.py", "*.txt", "co?e.py", "[RS]*", "app.py"])
def test_log_path_globs_match_git_log(story: Path, spec: str) -> None:
    # git_log took every path literally: ``*.py`` matched nothing and the answer was an empty history.
    found = GitService(story).log(paths=[spec], limit=100)
    expected = [r["oid"] for r in log_records(story, "--", spec)]
    assert expected and [c.oid for c in found.commits] == expected


def test_log_pages_are_stable_when_new_commits_arrive(story: Path, tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"x": "0\n"})
    for i in range(1, 12):
        _commit(root, f"c{i}", i, {"x": f"{i}\n"})
    git = GitService(root)
    first = git.log(limit=5)
    _commit(root, "late", 50, {"x": "late\n"})
    oids = [c.oid for c in first.commits]
    cursor = first.pagination.next_cursor
    while cursor:
        page = git.log(limit=5, cursor=cursor)
        oids += [c.oid for c in page.commits]
        cursor = page.pagination.next_cursor
    assert oids == [r["oid"] for r in log_records(root, "HEAD~1")]
    with pytest.raises(CodePlaneError) as bad:
        git.log(limit=5, cursor=first.pagination.next_cursor[:-3] + "xyz")  # type: ignore[index]
    assert bad.value.code == 1005
    with pytest.raises(CodePlaneError) as other_query:
        git.log(limit=5, paths=["x"], cursor=first.pagination.next_cursor)
    assert other_query.value.code == 1005


def test_log_of_empty_repository_is_empty(tmp_path: Path) -> None:
    assert GitService(make_repo(tmp_path / "e")).log().commits == []


def test_blame_matches_git_blame_porcelain_across_pages(story: Path) -> None:
    git = GitService(story)
    expected = blame_lines(story, "core.py")
    got: list[str] = []
    page = git.blame("core.py", limit=7)
    while True:
        for hunk in page.hunks:
            assert hunk.start_line == len(got) + 1
            got += [hunk.commit] * hunk.lines
        if not page.pagination.next_cursor:
            break
        page = git.blame("core.py", limit=7, cursor=page.pagination.next_cursor)
    assert got == expected and page.total_lines == len(expected)
    window = git.blame("core.py", line_range=(3, 6))
    assert [h.commit for h in window.hunks for _ in range(h.lines)] == expected[2:6]
    with pytest.raises(CodePlaneError) as missing:
        git.blame("nope.py")
    assert missing.value.code == 5004


def test_file_history_follows_the_rename(story: Path) -> None:
    git = GitService(story)
    expected = run_git(story, "log", "--follow", "--format=%H", "--", "core.py").decode().split()
    page = git.history("core.py", limit=3)
    oids = [e.oid for e in page.entries]
    while page.pagination.next_cursor:
        page = git.history("core.py", limit=3, cursor=page.pagination.next_cursor)
        oids += [e.oid for e in page.entries]
    assert oids == expected
    full = git.history("core.py", limit=50).entries
    assert full[-1].change == "added" and full[-1].path == "app.py"
    assert any(e.change == "renamed" and e.old_path == "app.py" for e in full)


@pytest.mark.parametrize("lines", [(3, 4), (17, 18), (1, 20)])
def test_line_history_matches_git_log_L(story: Path, lines: tuple[int, int]) -> None:
    a, b = lines
    expected = run_git(story, "log", "--first-parent", f"-L{a},{b}:core.py", "--format=%H", "-s").decode().split()
    got = [e.oid for e in GitService(story).history("core.py", line_range=lines, limit=100).entries]
    assert got == expected


def test_show_commit_tag_and_blob(story: Path) -> None:
    git = GitService(story)
    head = git.show()
    assert head.kind == "commit" and head.commit and head.diff
    assert head.commit.oid == run_git(story, "rev-parse", "HEAD").decode().strip()
    assert [f.path for f in head.diff.files] == ["counter.txt"]
    tag = git.show("v2")
    assert tag.kind == "tag" and tag.tag and tag.tag.message == "release two\n"
    root_commit = run_git(story, "rev-list", "--max-parents=0", "HEAD").decode().split()[-1]
    blob = git.show(root_commit, "README")
    assert blob.kind == "blob" and blob.blob and blob.blob.text == "hi\n"


def test_tags_list_matches_git(story: Path) -> None:
    tags, total = GitService(story).tags()
    out = run_git(story, "tag", "-l", "--format=%(refname:short) %(objectname) %(*objectname)").decode().split("\n")
    expected = {line.split()[0]: line.split()[1:] for line in out if line}
    assert total == 2 and [t.name for t in tags] == sorted(expected)
    for tag in tags:
        oid, *peeled = expected[tag.name]
        assert tag.oid == oid and tag.target == (peeled[0] if peeled else oid)
        assert tag.annotated == bool(peeled)
