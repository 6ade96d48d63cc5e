"""The mutation engine on real git repositories, without a server: edit kinds, formats, preconditions,
scope, atomicity and concurrency."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.hashing import sha256_bytes
from codeplane.core.layout import RepoLayout
from codeplane.mutation import (
    PAUSE_ENV,
    CreateFile,
    DeleteFile,
    Edit,
    MoveFile,
    MutationEngine,
    ReplaceText,
    UpdateSpan,
    git_index,
)
from codeplane.mutation.doctor import check_journal
from codeplane.mutation.journal import Journal, JournalMove, Original, temp_path
from codeplane.mutation.locks import PathLocks
from codeplane.repo.content import is_binary
from codeplane.server.tools.write import WriteSourceResult, render_write
from tests.builders import git, make_repo

PY = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


def engine_for(root: Path, **config: object) -> MutationEngine:
    return MutationEngine(root, MutationConfig.model_validate(config))


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file outside .git/ (and .codeplane/), by path."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", ".codeplane/")) or rel in (".git", ".codeplane") or not path.is_file():
            continue
        out[rel] = path.read_bytes()
    return out


def refused(engine: MutationEngine, edits: Sequence[Edit], code: int, **kwargs: object) -> CodePlaneError:
    with pytest.raises(CodePlaneError) as info:
        engine.apply(edits, **kwargs)  # type: ignore[arg-type]
    assert info.value.code == code, info.value.to_payload()
    return info.value


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"src/a.py": PY, "README.md": "# title\n\nbody\n"})


def test_every_edit_kind_applies_and_reports(repo: Path) -> None:
    engine = engine_for(repo)
    old_readme = (repo / "README.md").read_bytes()
    delta = engine.apply([
        UpdateSpan(path="src/a.py", start_line=2, end_line=2, new_content="    return 10"),
        ReplaceText(path="src/a.py", old_text="return 2", new_text="return 20"),
        CreateFile(path="src/pkg/new.py", content="X = 1\n"),
        MoveFile(path="README.md", to="docs/README.md"),
    ])
    assert (repo / "src/a.py").read_text() == PY.replace("return 1", "return 10").replace("return 2", "return 20")
    assert (repo / "src/pkg/new.py").read_text() == "X = 1\n"
    assert not (repo / "README.md").exists()
    assert (repo / "docs/README.md").read_bytes() == old_readme
    by_path = {f.path: f for f in delta.files}
    assert [f.path for f in delta.files] == sorted(by_path)
    assert by_path["src/a.py"].action == "updated"
    assert (by_path["src/a.py"].insertions, by_path["src/a.py"].deletions) == (2, 2)
    assert [(r.old_start, r.old_end) for r in by_path["src/a.py"].edit_ranges] == [(2, 2), (6, 6)]
    assert by_path["src/a.py"].file_sha256 == sha256_bytes((repo / "src/a.py").read_bytes())
    assert by_path["src/a.py"].old_sha256 == sha256_bytes(PY.encode())
    created = by_path["src/pkg/new.py"]
    assert created.action == "created" and created.old_sha256 is None and created.insertions == 1
    assert created.edit_ranges == (), "a new file's one range is its whole text: insertions says it"
    moved = by_path["docs/README.md"]
    assert moved.action == "moved" and moved.old_path == "README.md" and moved.git_mv is True
    # A move keeps its bytes: their hash is said once, as the next edit's precondition.
    assert moved.file_sha256 == sha256_bytes(old_readme) and moved.old_sha256 is None
    assert delta.files_changed == 3 and delta.mutation_id.startswith("mut_")
    status = git(repo, "status", "--porcelain").stdout
    assert "R  README.md -> docs/README.md" in status  # git mv-equivalent: the rename is staged
    delta = engine.apply([DeleteFile(path="src/pkg/new.py")])
    gone = delta.files[0]
    assert gone.action == "deleted" and gone.deletions == 1 and gone.edit_ranges == ()
    assert gone.old_sha256 == sha256_bytes(b"X = 1\n") and gone.file_sha256 is None
    assert not (repo / "src/pkg/new.py").exists()
    assert not list((repo / ".codeplane/journal").iterdir())


def test_span_insert_append_and_delete_lines(repo: Path) -> None:
    engine = engine_for(repo)
    engine.apply([UpdateSpan(path="src/a.py", start_line=1, end_line=0, new_content="import os"),
                  UpdateSpan(path="src/a.py", start_line=7, end_line=6, new_content="# end"),
                  UpdateSpan(path="src/a.py", start_line=3, end_line=4, new_content="")])
    assert (repo / "src/a.py").read_text() == ("import os\ndef a():\n    return 1\ndef b():\n    return 2\n"
                                               "# end\n")


def test_insertion_with_expected_content_is_invalid() -> None:
    with pytest.raises(ValueError, match="insertion"):
        UpdateSpan(path="a.py", start_line=3, end_line=2, new_content="x", expected_content="y")


def test_crlf_and_bom_files_round_trip_byte_exactly_outside_the_span(tmp_path: Path) -> None:
    crlf = b"line1\r\nline2\r\nline3\r\n"
    bom = b"\xef\xbb\xbfalpha\nbeta\ngamma\n"
    utf16 = "one\r\ntwo\r\n".encode("utf-16")
    repo = make_repo(tmp_path / "r", {"w.txt": crlf, "b.txt": bom, "u.txt": utf16})
    engine = engine_for(repo)
    delta = engine.apply([UpdateSpan(path="w.txt", start_line=2, end_line=2, new_content="NEW\nNEW2\n"),
                          ReplaceText(path="b.txt", old_text="beta\ngamma", new_text="BETA\nGAMMA"),
                          ReplaceText(path="u.txt", old_text="two", new_text="TWO")])
    assert (repo / "w.txt").read_bytes() == b"line1\r\nNEW\r\nNEW2\r\nline3\r\n"
    assert (repo / "b.txt").read_bytes() == b"\xef\xbb\xbfalpha\nBETA\nGAMMA\n"
    assert (repo / "u.txt").read_bytes() == "one\r\nTWO\r\n".encode("utf-16")
    by_path = {f.path: f for f in delta.files}
    assert by_path["w.txt"].line_ending == "CRLF" and by_path["b.txt"].encoding == "utf-8-bom"
    assert by_path["u.txt"].encoding == "utf-16-le-bom"


def test_a_replaced_line_of_a_mixed_ending_file_keeps_its_own_terminator(tmp_path: Path) -> None:
    """``line2`` ended in CRLF in a mostly-LF file: replacing it wrote LF (the file's majority)."""
    repo = make_repo(tmp_path / "r", {"m.txt": b"LINE1 lf\nline2 crlf\r\nline3 cr\rline4 lf\n"})
    engine_for(repo).apply([UpdateSpan(path="m.txt", start_line=2, end_line=2, new_content="line2 changed\n")])
    assert (repo / "m.txt").read_bytes() == b"LINE1 lf\nline2 changed\r\nline3 cr\rline4 lf\n"
    engine_for(repo).apply([UpdateSpan(path="m.txt", start_line=1, end_line=2, new_content="a\nb\n")])
    assert (repo / "m.txt").read_bytes() == b"a\nb\nline3 cr\rline4 lf\n", "mixed span: the file's ending"


def test_an_edit_that_breaks_a_python_files_syntax_is_written_and_warned_about(tmp_path: Path) -> None:
    """An off-by-one span left a stray indented line: the answer said only the new hash."""
    repo = make_repo(tmp_path / "r", {"m.py": "def f():\n    return 1\n\n\nX = 2\n", "bad.py": "def (:\n"})
    delta = engine_for(repo).apply([UpdateSpan(path="m.py", start_line=1, end_line=1, new_content="def g():")])
    assert delta.warnings == (), "still parses: nothing to say"
    delta = engine_for(repo).apply([UpdateSpan(path="m.py", start_line=2, end_line=2, new_content="    return 1\n  y")])
    assert (repo / "m.py").read_text().startswith("def g():\n    return 1\n  y\n"), "written all the same"
    assert delta.warnings == ("m.py does not parse after this edit: IndentationError: unindent does not match any "
                              "outer indentation level (line 3)",), delta.warnings
    already = engine_for(repo).apply([ReplaceText(path="bad.py", old_text="def (:", new_text="def (:  # x")])
    assert already.warnings == (), "it did not parse before either"


def test_unterminated_last_line_and_non_utf8_bytes_survive(tmp_path: Path) -> None:
    latin = b"caf\xe9\nsecond\nlast without newline"
    repo = make_repo(tmp_path / "r", {"l.txt": latin})
    engine_for(repo).apply([UpdateSpan(path="l.txt", start_line=2, end_line=2, new_content="2nd")])
    assert (repo / "l.txt").read_bytes() == b"caf\xe9\n2nd\nlast without newline"
    engine_for(repo).apply([UpdateSpan(path="l.txt", start_line=4, end_line=3, new_content="appended")])
    assert (repo / "l.txt").read_bytes() == b"caf\xe9\n2nd\nlast without newline\nappended"


def test_new_files_get_the_repository_line_ending(tmp_path: Path) -> None:
    files = {f"f{i}.txt": b"a\r\nb\r\n" for i in range(5)}
    repo = make_repo(tmp_path / "r", files)
    delta = engine_for(repo).apply([CreateFile(path="new.txt", content="x\ny\n")])
    assert (repo / "new.txt").read_bytes() == b"x\r\ny\r\n"
    assert delta.files[0].line_ending == "CRLF"


def test_mode_bits_are_kept(repo: Path) -> None:
    script = repo / "run.sh"
    script.write_text("echo hi\n")
    script.chmod(0o755)
    engine = engine_for(repo)
    engine.apply([ReplaceText(path="run.sh", old_text="hi", new_text="hello")])
    assert script.stat().st_mode & 0o777 == 0o755
    engine.apply([MoveFile(path="run.sh", to="bin/run.sh")])
    assert (repo / "bin/run.sh").stat().st_mode & 0o777 == 0o755
    engine.apply([CreateFile(path="plain.txt", content="x\n")])
    assert (repo / "plain.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_batch_is_untouched_when_last_precondition_fails(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {f"m/f{i:02}.py": f"value = {i}\n" for i in range(20)})
    before = snapshot(repo)
    edits: list[Edit] = [ReplaceText(path=f"m/f{i:02}.py", old_text=f"= {i}", new_text=f"= {i + 100}",
                                     expected_file_sha256=sha256_bytes(before[f"m/f{i:02}.py"]))
                         for i in range(19)]
    edits.append(ReplaceText(path="m/f19.py", old_text="= 19", new_text="= 119", expected_file_sha256="0" * 64))
    err = refused(engine_for(repo), edits, 5002)
    assert err.details["path"] == "m/f19.py" and err.details["actual_file_sha256"] == sha256_bytes(before["m/f19.py"])
    assert snapshot(repo) == before
    assert not list((repo / ".codeplane/journal").glob("*")) if (repo / ".codeplane/journal").exists() else True


@pytest.mark.parametrize("bad", [
    "../outside.txt", "/etc/passwd", "a/../../x", ".git/config", ".codeplane/config.yaml", "src/\x00x.py",
    "link_out/passwd", "link_git/config", "link_file", "", "src",
    # A name over the file system's limit (was 9001 "File name too long"), a path over PATH_MAX, and a new name
    # with a control character (it read as two entries in every listing).
    "n" * 300 + ".py", "/".join(["d" * 200] * 30) + "/x.py", "new\nline.py", "tab\there.py",
])
def test_path_escapes_are_refused_with_nothing_written(tmp_path: Path, bad: str) -> None:
    repo = make_repo(tmp_path / "r", {"src/a.py": PY})
    (repo / "link_out").symlink_to("/etc")
    (repo / "link_git").symlink_to(".git")
    (repo / "link_file").symlink_to("src/a.py")
    before = snapshot(repo)
    git_config = (repo / ".git/config").read_bytes()
    engine = engine_for(repo)
    for edit in (CreateFile(path=bad or "x", content="pwned\n", overwrite=True) if bad else None,
                 MoveFile(path="src/a.py", to=bad) if bad else None):
        if edit is not None:
            err = refused(engine, [ReplaceText(path="src/a.py", old_text="a", new_text="b"), edit], 5001)
            assert "refused" in err.message
    if not bad:
        with pytest.raises(ValueError):
            CreateFile(path=bad, content="x")
    assert snapshot(repo) == before
    assert (repo / ".git/config").read_bytes() == git_config


def test_cplignore_and_allow_list_refuse_and_git_ignored_is_flagged(repo: Path) -> None:
    (repo / ".cplignore").write_text("secret/\n")
    (repo / ".gitignore").write_text("*.log\n")
    engine = engine_for(repo)
    refused(engine, [CreateFile(path="secret/k.txt", content="x")], 5001)
    refused(engine, [CreateFile(path="node_modules/p/i.js", content="x")], 5001)
    err = refused(engine, [CreateFile(path="docs/x.md", content="x")], 5001, allow=["src/"])
    assert err.details["allow"] == ["src/"]
    delta = engine.apply([CreateFile(path="src/ok.py", content="x\n")], allow=["src/"])
    assert delta.files[0].git_ignored is False
    delta = engine.apply([CreateFile(path="run.log", content="x\n")])
    assert delta.files[0].git_ignored is True
    assert any("ignored by git" in w for w in delta.warnings)


def test_overlapping_and_contradicting_edits_are_rejected_before_anything_runs(repo: Path) -> None:
    engine = engine_for(repo)
    before = snapshot(repo)
    refused(engine, [UpdateSpan(path="src/a.py", start_line=1, end_line=2, new_content="x"),
                     UpdateSpan(path="src/a.py", start_line=2, end_line=3, new_content="y")], 5006)
    refused(engine, [ReplaceText(path="src/a.py", old_text="return 1", new_text="x"),
                     UpdateSpan(path="src/a.py", start_line=2, end_line=2, new_content="y")], 5006)
    refused(engine, [UpdateSpan(path="src/a.py", start_line=1, end_line=0, new_content="x"),
                     UpdateSpan(path="src/a.py", start_line=1, end_line=0, new_content="y")], 5006)
    refused(engine, [DeleteFile(path="src/a.py"),
                     ReplaceText(path="src/a.py", old_text="return", new_text="yield")], 5006)
    refused(engine, [MoveFile(path="src/a.py", to="b.py"), CreateFile(path="b.py", content="")], 5006)
    refused(engine, [MoveFile(path="src/a.py", to="src/a.py")], 5006)
    assert snapshot(repo) == before


def test_a_batch_that_would_put_a_file_where_a_directory_is_needed_is_refused_before_writing(repo: Path) -> None:
    """A file and a path under it in one batch, a file under an existing file: each could only fail halfway
    through the commit (the rename into place finds a directory, a parent cannot be made), and
    did so with an internal error that left the engine refusing every later write. Refused up front, dry run or
    not, and the next batch writes."""
    (repo / "pkg").mkdir()
    (repo / "pkg/keep.py").write_text("K = 1\n")
    engine = engine_for(repo)
    before = snapshot(repo)
    for dry_run in (True, False):
        err = refused(engine, [CreateFile(path="a/b", content="x"), CreateFile(path="a/b/c", content="y")], 5006,
                      dry_run=dry_run)
        assert err.details["file"] == "a/b" and err.details["edits"] == [0, 1], err.details
        refused(engine, [CreateFile(path="a/b/c", content="y"), MoveFile(path="src/a.py", to="a/b")], 5006,
                dry_run=dry_run)
        err = refused(engine, [CreateFile(path="README.md/x", content="y")], 5005, dry_run=dry_run)
        assert err.details["blocking_path"] == "README.md"
        refused(engine, [MoveFile(path="src/a.py", to="README.md/deeper/a.py")], 5005, dry_run=dry_run)
        refused(engine, [CreateFile(path="pkg", content="y")], 5001, dry_run=dry_run)  # a directory: the scope's
        refused(engine, [ReplaceText(path="README.md/x", old_text="a", new_text="b")], 5004, dry_run=dry_run)
    assert snapshot(repo) == before and not (repo / "a").exists()
    delta = engine.apply([CreateFile(path="a/b/c", content="y\n")])
    assert delta.files[0].action == "created" and (repo / "a/b/c").read_text() == "y\n"


def test_a_hash_precondition_in_upper_case_hex_is_the_same_hash(repo: Path) -> None:
    """``expected_file_sha256`` in upper case (as some tools print hex) was refused by the schema (1003)."""
    sha = sha256_bytes((repo / "src/a.py").read_bytes())
    engine = engine_for(repo)
    delta = engine.apply([ReplaceText(path="src/a.py", old_text="return 1", new_text="return 11",
                                      expected_file_sha256=sha[:12].upper())])
    assert delta.files_changed == 1
    refused(engine, [ReplaceText(path="src/a.py", old_text="return 11", new_text="return 1",
                                 expected_file_sha256=sha.upper())], 5002)  # the old hash, in any case, is stale


def test_missing_existing_binary_and_ambiguous_targets(repo: Path) -> None:
    (repo / "blob.bin").write_bytes(b"\x00\x01\x02")
    engine = engine_for(repo)
    refused(engine, [DeleteFile(path="nope.py")], 5004)
    refused(engine, [ReplaceText(path="nope.py", old_text="a", new_text="b")], 5004)
    refused(engine, [CreateFile(path="src/a.py", content="x")], 5005)
    refused(engine, [MoveFile(path="src/a.py", to="README.md")], 5005)
    refused(engine, [ReplaceText(path="blob.bin", old_text="a", new_text="b")], 5008)
    err = refused(engine, [ReplaceText(path="src/a.py", old_text="return", new_text="yield")], 5002)
    assert err.details["candidates"] == [2, 6]
    delta = engine.apply([ReplaceText(path="src/a.py", old_text="return", new_text="yield", replace_all=True)])
    assert (repo / "src/a.py").read_text().count("yield") == 2 and delta.files[0].insertions == 2
    engine.apply([DeleteFile(path="blob.bin")])  # binary files can still be deleted and moved
    refused(engine_for(repo, max_file_bytes=10), [ReplaceText(path="src/a.py", old_text="a", new_text="b")], 5007)


def test_a_file_the_index_calls_text_is_editable_whatever_follows_its_first_8_kib(repo: Path) -> None:
    # git and the index decide "binary" by the first 8 KiB; the engine used to refuse any NUL anywhere (5008),
    # so a file search and read_source served could not be edited.
    data = b"VALUE = 1\n" + b"# padding\n" * 900 + b"\x00tail\n"
    assert len(data) > 8192 and not is_binary(data)
    (repo / "late_nul.py").write_bytes(data)
    engine_for(repo).apply([ReplaceText(path="late_nul.py", old_text="VALUE = 1", new_text="VALUE = 2")])
    assert (repo / "late_nul.py").read_bytes() == data.replace(b"VALUE = 1", b"VALUE = 2", 1)


def test_drifted_span_is_re_anchored_and_reported(repo: Path) -> None:
    engine = engine_for(repo)
    original = (repo / "src/a.py").read_bytes()
    engine.apply([UpdateSpan(path="src/a.py", start_line=1, end_line=0, new_content="# one\n# two\n")])
    delta = engine.apply([UpdateSpan(path="src/a.py", start_line=5, end_line=6, new_content="def b():\n    return 3",
                                     expected_content="def b():\n    return 2\n",
                                     expected_file_sha256=None)])
    fix = delta.files[0].line_corrections[0]
    assert (fix.original.start_line, fix.original.end_line) == (5, 6)
    assert (fix.corrected.start_line, fix.corrected.end_line) == (7, 8)
    assert (repo / "src/a.py").read_bytes() == b"# one\n# two\n" + original.replace(b"return 2", b"return 3")
    # The text names both spans (it said "line 5 re-anchored to 7", hiding a span that also grew or shrank).
    text = render_write(WriteSourceResult(applied=True, summary="", delta=delta))
    assert text.splitlines()[0].endswith("; span 5-6 re-anchored to 7-8"), text


def test_missing_or_ambiguous_expected_content_shows_the_current_text(repo: Path) -> None:
    engine = engine_for(repo)
    err = refused(engine, [UpdateSpan(path="src/a.py", start_line=2, end_line=2, new_content="x",
                                      expected_content="    return 99")], 5002)
    assert err.details["reason"] == "was not found near the span"
    assert {"line": 2, "text": "    return 1"} in err.details["current"]
    (repo / "dup.py").write_text("x = 1\ny = 2\nx = 1\n")
    err = refused(engine, [UpdateSpan(path="dup.py", start_line=2, end_line=2, new_content="z",
                                      expected_content="x = 1")], 5002)
    assert err.details["candidates"] == [1, 3]


def test_dry_run_returns_a_diff_and_touches_nothing(repo: Path) -> None:
    engine = engine_for(repo)
    before = snapshot(repo)
    delta = engine.apply([ReplaceText(path="src/a.py", old_text="return 1", new_text="return 42"),
                          CreateFile(path="n.txt", content="hi\n"), DeleteFile(path="README.md")], dry_run=True)
    assert snapshot(repo) == before
    assert delta.diff is not None
    assert "-    return 1\n+    return 42\n" in delta.diff
    assert "--- /dev/null\n+++ b/n.txt\n" in delta.diff and "+++ /dev/null" in delta.diff
    assert delta.files_changed == 3 and delta.repo_fingerprint and delta.repo_fingerprint_before is None


def test_unchanged_edit_is_reported_without_a_write(repo: Path) -> None:
    engine = engine_for(repo)
    stat_before = (repo / "src/a.py").stat().st_mtime_ns
    delta = engine.apply([ReplaceText(path="src/a.py", old_text="return 1", new_text="return 1")])
    assert delta.files[0].action == "unchanged" and delta.files_changed == 0
    assert (repo / "src/a.py").stat().st_mtime_ns == stat_before


def _make_unwritable(target: Path) -> Callable[[], object] | None:
    """Make replacing ``target`` fail: an immutable file as root (``os.replace`` onto it gets EPERM after
    the earlier targets were replaced), else a read-only directory (its temp file cannot be created)."""
    if os.geteuid() != 0:
        target.parent.chmod(0o555)
        return lambda: target.parent.chmod(0o755)
    if subprocess.run(["chattr", "+i", str(target)], capture_output=True, check=False).returncode != 0:
        return None
    return lambda: subprocess.run(["chattr", "-i", str(target)], check=True)


def test_a_failing_replace_rolls_the_batch_back_in_process(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a/x.txt": "a\n", "b/y.txt": "b\n", "c/z.txt": "c\n"})
    before = snapshot(repo)
    mtime = (repo / "a/x.txt").stat().st_mtime_ns
    undo = _make_unwritable(repo / "c/z.txt")
    if undo is None:
        pytest.skip("cannot make a file unwritable here (root without chattr)")
    try:
        with pytest.raises(CodePlaneError) as info:
            engine_for(repo).apply([ReplaceText(path=p, old_text=p[0], new_text="NEW")
                                    for p in ("a/x.txt", "b/y.txt", "c/z.txt")])
    finally:
        undo()
    # A storage failure is a catalogued error naming the path and saying nothing changed (issue 24).
    assert info.value.code == 5012 and info.value.details["path"] == str(repo / "c/z.txt")  # the target, not the temp
    assert "nothing was changed" in info.value.message
    assert snapshot(repo) == before
    if os.geteuid() == 0:  # a/x.txt really was replaced, then restored from the journal
        assert (repo / "a/x.txt").stat().st_mtime_ns != mtime
    assert not list((repo / ".codeplane/journal").iterdir())
    assert not list(repo.rglob("*.cpl-*"))


def test_overlapping_batches_wait_then_fail_retryably_while_disjoint_ones_run(repo: Path) -> None:
    engine = engine_for(repo, lock_timeout_ms=100)
    held = PathLocks(repo / ".codeplane/locks", 1.0).acquire(["src/a.py"])
    try:
        err = refused(engine, [ReplaceText(path="src/a.py", old_text="return 1", new_text="return 5")], 5003)
        assert err.retryable and err.details["path"] == "src/a.py"
        engine.apply([ReplaceText(path="README.md", old_text="body", new_text="text")])  # disjoint: runs
    finally:
        held.release()
    errors: list[Exception] = []
    # Disjoint batches still take the work tree's shared lock for a moment each: with 100 ms a loaded CI machine
    # refused some (5003); the point here is that none waits on another's paths, not the timeout.
    patient = engine_for(repo, lock_timeout_ms=10_000)

    def bump(i: int) -> None:
        try:
            patient.apply([CreateFile(path=f"par/{i}.txt", content=f"{i}\n")])
        except (CodePlaneError, OSError) as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=bump, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(list((repo / "par").iterdir())) == 8


def test_overlapping_batches_from_many_threads_serialise_without_lost_updates(repo: Path) -> None:
    (repo / "log.txt").write_text("END\n")
    engine = engine_for(repo, lock_timeout_ms=10_000)

    def append(tag: str) -> None:
        for k in range(8):
            engine.apply([ReplaceText(path="log.txt", old_text="END", new_text=f"{tag}{k}\nEND")])

    threads = [threading.Thread(target=append, args=(tag,)) for tag in "abc"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (repo / "log.txt").read_text().splitlines()
    assert lines[-1] == "END" and sorted(lines[:-1]) == sorted(f"{t}{k}" for t in "abc" for k in range(8))


def test_after_write_sees_the_new_content_and_symbols_and_tests_are_collected(repo: Path) -> None:
    seen: list[tuple[str, bytes]] = []
    calls: list[tuple[str, list[tuple[int, int]]]] = []

    def after_write(paths: Sequence[str]) -> None:
        seen.extend((p, (repo / p).read_bytes()) for p in paths if (repo / p).exists())

    def symbols_for(path: str, ranges: list[tuple[int, int]], /, *, sha256: str | None = None) -> list[str]:
        calls.append((path, ranges))
        return [f"{path}:function:b"] if any(s <= 5 <= e for s, e in ranges) else []

    engine = MutationEngine(repo, MutationConfig(), after_write=after_write, symbols_for=symbols_for,
                            tests_for=lambda paths: [f"tests/test_{Path(p).stem}.py" for p in paths])
    delta = engine.apply([UpdateSpan(path="src/a.py", start_line=5, end_line=5, new_content="def b2():")])
    assert seen == [("src/a.py", (repo / "src/a.py").read_bytes())]
    assert delta.symbols_changed == ("src/a.py:function:b",)
    assert delta.tests_affected == ("tests/test_a.py",)
    assert calls == [("src/a.py", [(5, 5)]), ("src/a.py", [(5, 5)])]
    report = delta.mutation_report()
    assert report.changed_paths == (("src/a.py", delta.files[0].file_sha256),)
    assert "-def b():\n+def b2():" in report.short_diff
    assert delta.repo_fingerprint_before and delta.repo_fingerprint != delta.repo_fingerprint_before
    assert report.repo_before == delta.repo_fingerprint_before


def test_startup_recovery_rolls_back_a_committed_journal_and_drops_the_rest(repo: Path) -> None:
    journal_dir = repo / ".codeplane/journal"
    original = (repo / "src/a.py").read_bytes()
    # A batch that crashed after replacing src/a.py and creating new/n.py (with its directory).
    journal = Journal.write(repo, journal_dir, "mut_crashed", [
        Original("src/a.py", original, 0o644, temp_path("src/a.py", "mut_crashed")),
        Original("new/n.py", None, 0, temp_path("new/n.py", "mut_crashed")),
    ], created_dirs=["new"], moves=[])
    (repo / "src/a.py").write_text("half-applied\n")
    (repo / "new").mkdir()
    (repo / "new/n.py").write_text("created\n")
    (repo / temp_path("src/a.py", "mut_crashed")).write_text("temp\n")
    (journal_dir / "mut_uncommitted").mkdir()  # crashed before its manifest: nothing was replaced
    (journal_dir / "mut_old.retired").mkdir()  # finished, deletion interrupted
    engine = engine_for(repo)
    assert engine.recover() == ["mut_crashed"]
    assert (repo / "src/a.py").read_bytes() == original
    assert not (repo / "new").exists()
    assert not list(journal_dir.iterdir()) and not list(repo.rglob("*.cpl-*"))
    assert journal.entries[0].existed and engine.recover() == []


def test_rollback_leaves_a_directory_where_the_batch_meant_a_new_file(repo: Path) -> None:
    """A batch that created ``a/b/c`` (making ``a/b`` a directory) and planned a file ``a/b`` crashed on that
    rename: rolling back unlinked the directory ``a/b``, failed, and every later start refused to serve. The
    directory goes with the batch's other created directories once its temp files are gone."""
    journal_dir = repo / ".codeplane/journal"
    Journal.write(repo, journal_dir, "mut_clash", [
        Original("a/b", None, 0, temp_path("a/b", "mut_clash")),
        Original("a/b/c", None, 0, temp_path("a/b/c", "mut_clash")),
    ], created_dirs=["a", "a/b"], moves=[])
    (repo / "a/b").mkdir(parents=True)
    (repo / temp_path("a/b", "mut_clash")).write_text("x")
    (repo / temp_path("a/b/c", "mut_clash")).write_text("y")
    assert engine_for(repo).recover() == ["mut_clash"]
    assert not (repo / "a").exists() and not list(journal_dir.iterdir())


def test_a_journal_that_cannot_be_rolled_back_stops_startup_and_is_kept(repo: Path) -> None:
    journal_dir = repo / ".codeplane/journal"
    Journal.write(repo, journal_dir, "mut_broken", [Original("src/a.py", b"x", 0o644, None)],
                  created_dirs=[], moves=[])
    (journal_dir / "mut_broken/originals.bin").unlink()
    with pytest.raises(CodePlaneError) as info:
        engine_for(repo).recover()
    assert info.value.code == 9001 and "mut_broken" in info.value.message
    assert (journal_dir / "mut_broken/manifest.json").exists()


def test_recovery_undoes_a_recorded_git_move(repo: Path) -> None:
    journal_dir = repo / ".codeplane/journal"
    data = (repo / "README.md").read_bytes()
    # Crashed after moving README.md -> docs/README.md and recording the move in git's index.
    Journal.write(repo, journal_dir, "mut_moved", [
        Original("README.md", data, 0o644, None),
        Original("docs/README.md", None, 0, temp_path("docs/README.md", "mut_moved")),
    ], created_dirs=["docs"], moves=[JournalMove("README.md", "docs/README.md")])
    (repo / "docs").mkdir()
    os.replace(repo / "README.md", repo / "docs/README.md")
    git_index.record_move(repo, "README.md", "docs/README.md")
    assert "R  README.md -> docs/README.md" in git(repo, "status", "--porcelain").stdout
    engine_for(repo).recover()
    assert (repo / "README.md").read_bytes() == data and not (repo / "docs").exists()
    assert git(repo, "status", "--porcelain").stdout == ""


def test_doctor_flags_a_batch_left_unfinished_by_a_crash(repo: Path) -> None:
    journal_dir = repo / ".codeplane/journal"
    assert check_journal(repo)[0].ok
    (journal_dir / "mut_live").mkdir(parents=True)  # a batch in flight right now is fine
    (journal_dir / "mut_done.retired").mkdir()
    assert check_journal(repo)[0].ok
    stale = journal_dir / "mut_crashed"
    stale.mkdir()
    os.utime(stale, (0, 0))
    result = check_journal(repo)[0]
    assert not result.ok and "mut_crashed" in result.detail and "cpl up" in result.fix


def test_a_failed_rollback_blocks_further_writes_until_restart(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a/x.txt": "a\n", "b/y.txt": "b\n", "c/z.txt": "c\n"})
    engine = MutationEngine(repo, MutationConfig(), environ={PAUSE_ENV: "100"})
    failures: list[Exception] = []

    def run() -> None:
        try:
            engine.apply([ReplaceText(path=p, old_text=p[0], new_text="NEW")
                          for p in ("a/x.txt", "b/y.txt", "c/z.txt")])
        except (CodePlaneError, OSError) as exc:
            failures.append(exc)

    writer = threading.Thread(target=run)
    writer.start()
    journal_dir = repo / ".codeplane/journal"
    deadline = time.monotonic() + 20
    while not list(repo.glob("c/.z.txt.*.cpl-tmp")) and time.monotonic() < deadline:
        time.sleep(0.002)
    # Sabotage: the last replace loses its temp file and the rollback loses the originals.
    for temp in repo.glob("c/.z.txt.*.cpl-tmp"):
        temp.unlink()
    for originals in journal_dir.glob("*/originals.bin"):
        originals.unlink()
    writer.join()
    # A catalogued error naming the cause and the restart (the raw FileNotFoundError leaked before), and the
    # engine saying why it refuses writes (``/status`` shows ``broken`` and it as ``last_error``).
    assert failures and isinstance(failures[0], CodePlaneError) and failures[0].code == 9001, failures
    assert "FileNotFoundError" in failures[0].message and "restart" in failures[0].message
    assert engine.broken is not None and "restart the server" in engine.broken
    err = refused(engine, [CreateFile(path="other.txt", content="x")], 9001)
    assert "restart" in err.message and not (repo / "other.txt").exists()
    assert list(journal_dir.iterdir())  # kept for startup recovery, which reports it cannot proceed
    with pytest.raises(CodePlaneError):
        MutationEngine(repo, MutationConfig()).recover()


@pytest.mark.parametrize("cache", ["__pycache__", "codeplane prefix", "user prefix"])
def test_a_same_size_rewrite_within_the_second_is_not_served_from_stale_bytecode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str) -> None:
    root = make_repo(tmp_path / "repo", {"settings.py": "X = 1\n"})
    engine = engine_for(root)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    if cache == "codeplane prefix":  # where test runs keep bytecode under PYTHONDONTWRITEBYTECODE
        env["PYTHONPYCACHEPREFIX"] = str(RepoLayout(root).pycache_dir)
    elif cache == "user prefix":  # the server's own environment names a prefix its test processes inherit
        env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
        monkeypatch.setenv("PYTHONPYCACHEPREFIX", env["PYTHONPYCACHEPREFIX"])

    def imported() -> str:
        run = subprocess.run([sys.executable, "-c", "import settings; print(settings.X)"], cwd=root, env=env,
                             capture_output=True, text=True, check=True)
        return run.stdout.strip()

    for _ in range(5):  # the import and the write must fall in the second the old version was written in
        time.sleep(1 - time.time() % 1 + 0.01)
        old = "X = 1\n" if (root / "settings.py").read_text() == "X = 2\n" else "X = 2\n"
        (root / "settings.py").write_text(old)  # written now: compiled below with this second as its stamp
        second = (root / "settings.py").stat().st_mtime_ns // 1_000_000_000
        assert imported() == old[4], "the import compiles and caches this version"
        prefix = env.get("PYTHONPYCACHEPREFIX")
        cached = Path(prefix, *root.parts[1:]) if prefix else root / "__pycache__"
        assert list(cached.glob("settings.*.pyc")), f"no bytecode cached in {cached}"
        new = "X = 1\n" if old == "X = 2\n" else "X = 2\n"
        engine.apply([ReplaceText(path="settings.py", old_text=old.strip(), new_text=new.strip())])
        if int(time.time()) == second:
            break  # all within one second: the case that matters
    else:
        pytest.skip("the machine was too slow to write, import and rewrite within one second")
    assert imported() == new[4], "the cached bytecode of the replaced version was used"
