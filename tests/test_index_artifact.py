"""Shared index artifacts: export, fetch, verify, adopt, reconcile (index/artifact_*.py).

Everything is real: git repositories in temp dirs, real SQLite/Tantivy/tree-sitter, a real HTTP server
(stdlib, in a thread) for downloads, and tampered artifacts built by unpacking and repacking real ones.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import io
import json
import os
import sqlite3
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import zstandard

from codeplane.core.config import IndexConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.layout import RepoLayout
from codeplane.core.paths import canonicalize
from codeplane.index.artifact_export import export_artifact
from codeplane.index.artifact_fetch import fetch_artifact
from codeplane.index.artifact_format import is_canonical
from codeplane.index.artifact_restat import git_clean_state, restat_clean_files
from codeplane.index.artifact_verify import unpack_verified
from codeplane.index.lexical import LexicalIndex
from codeplane.index.reconcile import diff
from codeplane.index.search import LexicalScope
from codeplane.index.service import IndexService
from codeplane.index.service_models import LexicalRequest
from codeplane.index.store import FileRecord
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.index.structural.service import StructuralService, SymbolRequest
from codeplane.repo.content import load_content
from codeplane.repo.universe import DiskEntry
from tests.builders import call, cpl, cpl_json, git, make_repo, mcp_client, running_server, write_files

FILES: dict[str, str] = {
    "pkg/__init__.py": "from pkg.core import Engine, start\n__all__ = ['Engine', 'start']\n",
    "pkg/core.py": ("import os\n\n\nclass Engine:\n    def __init__(self, name):\n        self.name = name\n\n"
                    "    def run(self, steps):\n        return [helper(s) for s in steps]\n\n\n"
                    "def helper(step):\n    return os.path.join('x', str(step))\n\n\n"
                    "def start():\n    return Engine('main').run([1, 2])\n"),
    "pkg/util.py": "from pkg.core import helper\n\n\ndef twice(x):\n    return helper(x) + helper(x)\n",
    "pkg/old_name.py": "VALUE = 42\n\n\ndef value():\n    return VALUE\n",
    "pkg/gone.py": "def obsolete():\n    return 'obsolete'\n",
    "tests/test_core.py": "from pkg.core import Engine\n\n\ndef test_run():\n    assert Engine('t').run([])  == []\n",
    "web/app.js": "import { helper } from './lib.js';\nexport function main() { return helper(2); }\n",
    "web/lib.js": "export function helper(x) { return x * 2; }\n",
    "README.md": "# Demo\n\nEngine runs steps; see `pkg/core.py`.\n",
    "data/blob.bin": "\x00\x01\x02binary",
}
QUERIES = ("Engine", "helper", "run", "VALUE", "obsolete", "twice", "steps", "main")
INDEXERS = [StructuralIndexer()]


def _service(root: Path, **config: Any) -> IndexService:
    service = IndexService(root, RepoLayout(root), IndexConfig(watch=False, **config))
    service.register_indexer(StructuralIndexer())
    return service


@contextmanager
def _running(root: Path, **config: Any) -> Iterator[IndexService]:
    service = _service(root, **config)
    service.start()
    try:
        assert service.wait_ready(60), service.status()
        yield service
    finally:
        service.stop()


def _status(service: IndexService) -> dict[str, Any]:
    return dict(service.status())


def _clone(source: Path, dest: Path) -> Path:
    git(source.parent, "clone", "-q", str(source), str(dest))
    git(dest, "config", "user.name", "Test")
    git(dest, "config", "user.email", "test@example.com")
    return dest


def _export(root: Path, out: Path) -> Path:
    _service(root).build()
    export_artifact(root, RepoLayout(root), INDEXERS, out, max_bytes=IndexConfig().max_file_bytes)
    return out


def _strip(value: Any) -> Any:
    """Answers without what legitimately differs between two equal indexes: epochs and row ids."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items()
                if k not in ("epoch", "id", "next_cursor") and not k.endswith("_id")}
    if isinstance(value, list | tuple):
        return [_strip(v) for v in value]
    return value


def _answers(service: IndexService, root: Path, *, keep_ids: bool = False, ranking: bool = True) -> str:
    """Every kind of answer the index gives, as one JSON string. ``ranking=False`` compares lexical hits as
    a set without BM25 scores: Tantivy counts deleted documents in its statistics until segments merge,
    so an index that was updated (any long-lived one) ranks slightly differently from a cold build."""
    structural = StructuralService(service, root, RepoLayout(root).index_db)
    answers: dict[str, Any] = {"files": service.list_files("", limit=1000)}
    for query in QUERIES:
        page = service.search_lexical(
            LexicalRequest(query=query, syntax="identifier", scope=LexicalScope(), context_lines=1), limit=500)
        answers[f"lexical:{query}"] = page if ranking else sorted(
            (dataclasses.replace(h, score=0.0) for h in page.hits), key=lambda h: (h.path, h.line, h.column))
        for mode in ("definitions", "references"):
            try:
                answers[f"{mode}:{query}"] = structural.search(SymbolRequest(mode=mode, query=query), limit=500)
            except CodePlaneError as exc:
                answers[f"{mode}:{query}"] = exc.to_payload()
    answers["map"] = structural.map_repo(("structure", "languages", "entry_points", "public_api"), depth=4,
                                         limit=500)
    rendered = {k: (json.loads(json.dumps(dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v,  # type: ignore[arg-type]
                                          default=str)) if keep_ids else _strip(v)) for k, v in answers.items()}
    return json.dumps(rendered, sort_keys=True, default=str)


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "origin", FILES)


@pytest.fixture
def artifact(origin: Path, tmp_path: Path) -> Path:
    builder = _clone(origin, tmp_path / "ci")
    return _export(builder, tmp_path / "out" / "index.tar.zst")


# -- export ---------------------------------------------------------------------------------------------------
def test_export_gives_the_same_bytes_for_the_same_commit(origin: Path, artifact: Path, tmp_path: Path) -> None:
    again = _export(_clone(origin, tmp_path / "ci2"), tmp_path / "out2" / "index.tar.zst")
    assert artifact.read_bytes() == again.read_bytes()
    sidecar = artifact.with_name("index.tar.zst.sha256").read_text()
    assert sidecar == f"{hashlib.sha256(artifact.read_bytes()).hexdigest()}  index.tar.zst\n"
    with tarfile.open(fileobj=io.BytesIO(_unzstd(artifact))) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
        assert all(m.mtime == 0 and m.uid == 0 and m.isreg() for m in tar.getmembers())
    assert names[:2] == ["manifest.json", "index.db"]
    assert manifest["commit"] == git(origin, "rev-parse", "HEAD").stdout.strip()
    assert [f[0] for f in manifest["files"]] == sorted(FILES)
    blob = git(origin, "rev-parse", "HEAD:pkg/core.py").stdout.strip()
    assert ["pkg/core.py", blob, hashlib.sha256(FILES["pkg/core.py"].encode()).hexdigest()] in manifest["files"]
    assert set(manifest["parts"]) == set(names[1:])


def test_an_index_that_saw_an_untracked_file_come_and_go_exports_no_trace_of_it(origin: Path, artifact: Path,
                                                                                  tmp_path: Path) -> None:
    """A scratch file indexed, then deleted: the export kept its definitions and its name in the snapshot history
    (and the epochs it lived through), so a file that never was committed left the machine, and the same commit
    gave other bytes each time. Now it is what a cold build of the commit exports."""
    root = _clone(origin, tmp_path / "dev")
    _service(root).build()
    write_files(root, {"scratch_secret.py": "def leaked_helper():\n    return 'hunter2'\n"})
    _service(root).build()
    (root / "scratch_secret.py").unlink()
    _service(root).build()
    again = _export(root, tmp_path / "dev-out" / "index.tar.zst")
    raw = _unzstd(again)
    assert b"scratch_secret" not in raw and b"leaked_helper" not in raw
    assert again.read_bytes() == artifact.read_bytes()


def test_export_refuses_untracked_and_unindexed_changes(origin: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    write_files(root, {"secret.env": "TOKEN=hunter2\n"})
    _service(root).build()
    with pytest.raises(CodePlaneError) as caught:
        export_artifact(root, RepoLayout(root), INDEXERS, tmp_path / "x.tar.zst", max_bytes=1 << 20)
    assert caught.value.error is ErrorCode.ARTIFACT_EXPORT_REFUSED
    assert "secret.env" in caught.value.message
    (root / "secret.env").unlink()
    _service(root).build()
    write_files(root, {"pkg/util.py": "changed = 1\n"})  # on disk, not yet in the index
    with pytest.raises(CodePlaneError, match="changed since they were indexed"):
        export_artifact(root, RepoLayout(root), INDEXERS, tmp_path / "x.tar.zst", max_bytes=1 << 20)
    assert not (tmp_path / "x.tar.zst").exists()
    assert not [p for p in (root / ".codeplane").iterdir() if p.name.startswith("export-")]


def test_files_checked_out_through_an_eol_filter_export_and_adopt(tmp_path: Path) -> None:
    """``eol=crlf`` files: the checkout's bytes are not the blob's, git calls them clean, so they export with
    HEAD's blob, and a clone adopting the artifact finds nothing to reindex."""
    files = {".gitattributes": "*.bat text eol=crlf\n", "tools/make.bat": "@echo off\nset X=1\n",
             "pkg/mod.py": "def run():\n    return 1\n"}
    origin = make_repo(tmp_path / "origin", files)
    builder = _clone(origin, tmp_path / "ci")
    assert (builder / "tools" / "make.bat").read_bytes() == b"@echo off\r\nset X=1\r\n"  # the filter ran
    artifact = _export(builder, tmp_path / "store" / "index.tar.zst")
    adopted_root = _clone(origin, tmp_path / "adopted")
    with _running(adopted_root, artifact=str(artifact)) as adopted:
        status = _status(adopted)
        assert status["source"]["kind"] == "artifact"
        last = status["last_reconcile"]
        assert (last["added"], last["modified"], last["deleted"], last["renamed"]) == (0, 0, 0, 0)
        # Every row is vouched for by git or hashed and found equal (touched): none is reindexed.
        assert last["touched"] + status["source"]["stat_from_git"] == status["file_count"] and status["epoch"] == 1
    write_files(builder, {"tools/make.bat": "@echo off\r\nset X=2\r\n"})  # a real change is still refused
    _service(builder).build()
    with pytest.raises(CodePlaneError, match="untracked or differ from HEAD"):
        export_artifact(builder, RepoLayout(builder), INDEXERS, tmp_path / "x.tar.zst", max_bytes=1 << 20)


def test_cli_export_writes_the_artifact_and_sidecar(origin: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "ci")
    out = tmp_path / "cli" / "index.tar.zst"
    result = cpl_json("index", "export", str(root), "--out", str(out), cwd=root)
    assert result["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert result["commit"] == git(root, "rev-parse", "HEAD").stdout.strip()
    assert result["files"] == len(FILES) + 1  # and the .cplignore `cpl` wrote (CodePlane's own, shareable)
    assert out.with_name("index.tar.zst.sha256").is_file()
    # A directory (was 9001 after the whole export), a directory that cannot be made (under a file) or cannot hold a
    # file (9001 after the whole export too) or CodePlane's own state (``--out .codeplane/index.db`` replaced the
    # live index with the archive) is refused before anything is built.
    before = (root / ".codeplane" / "index.db").read_bytes()
    for bad in (tmp_path / "cli", out / "x.tar.zst", Path("/proc/x.tar.zst"),
                root / ".codeplane" / "index.db", root / ".codeplane"):
        proc = cpl("index", "export", str(root), "--out", str(bad), "--json", cwd=root)
        assert proc.returncode != 0 and json.loads(proc.stdout)["error"]["code"] == 1003, (bad, proc.stdout)
    assert (root / ".codeplane" / "index.db").read_bytes() == before
    # No default: one in the current directory put the artifact into the work tree, and the next export refused it.
    missing = cpl("index", "export", str(root), cwd=root)
    assert missing.returncode == 2 and "--out" in missing.stdout + missing.stderr


# -- adopt and reconcile -------------------------------------------------------------------------------------
def test_adopted_artifact_answers_exactly_like_a_cold_build(origin: Path, artifact: Path, tmp_path: Path) -> None:
    adopted_root = _clone(origin, tmp_path / "adopted")
    cold_root = _clone(origin, tmp_path / "cold")
    with _running(adopted_root, artifact=str(artifact)) as adopted:
        status = _status(adopted)
        assert status["source"]["kind"] == "artifact"
        assert status["source"]["commit"] == git(origin, "rev-parse", "HEAD").stdout.strip()
        last = status["last_reconcile"]
        # A new clone: every stat differs, no content does. Git vouches for most files (their rows get the
        # clone's stat); the others are hashed and only touched. Nothing is reindexed, no epoch published.
        assert (last["added"], last["modified"], last["deleted"], last["renamed"]) == (0, 0, 0, 0)
        assert last["touched"] + status["source"]["stat_from_git"] == len(FILES) and status["epoch"] == 1
        adopted_answers = _answers(adopted, adopted_root, keep_ids=True)
    with sqlite3.connect(RepoLayout(adopted_root).index_db) as conn:  # the reconcile's racy-git reference
        reference = conn.execute("SELECT value FROM meta WHERE key = 'stat_reference_ns'").fetchone()
    assert reference is not None and 0 < int(reference[0]) <= (adopted_root / ".git" / "index").stat().st_mtime_ns
    with _running(cold_root) as cold:
        assert _status(cold)["source"] == {"kind": "local"}
        assert _answers(cold, cold_root, keep_ids=True) == adopted_answers


def test_clone_ahead_of_the_artifact_reindexes_exactly_what_changed(origin: Path, artifact: Path,
                                                                    tmp_path: Path) -> None:
    def advance(root: Path) -> None:
        write_files(root, {
            "pkg/core.py": FILES["pkg/core.py"].replace("def start", "def begin"),
            "pkg/util.py": FILES["pkg/util.py"] + "\n\ndef thrice(x):\n    return twice(x) + helper(x)\n",
            "pkg/new.py": "from pkg.util import twice\n\n\ndef quad(x):\n    return twice(twice(x))\n",
        })
        git(root, "mv", "pkg/old_name.py", "pkg/new_name.py")
        git(root, "rm", "-q", "pkg/gone.py")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "ahead")

    ahead = _clone(origin, tmp_path / "ahead")
    advance(ahead)
    cold_root = _clone(origin, tmp_path / "cold")
    advance(cold_root)
    for root in (ahead, cold_root):  # and an edit not committed yet: git does not vouch for it
        write_files(root, {"web/lib.js": "export function helper(x) { return x * 3; }\n"})
    with _running(ahead, artifact=str(artifact)) as adopted:
        last = _status(adopted)["last_reconcile"]
        assert (last["added"], last["modified"], last["deleted"], last["renamed"]) == (1, 3, 1, 1)
        assert last["touched"] + _status(adopted)["source"]["stat_from_git"] == len(FILES) - 5
        assert _status(adopted)["epoch"] == 2
        adopted_answers = _answers(adopted, ahead, ranking=False)
    with _running(cold_root) as cold:
        cold_answers = _answers(cold, cold_root, ranking=False)
    assert cold_answers == adopted_answers


def test_git_vouches_only_for_clean_files_older_than_its_index(origin: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "clone")
    for path in FILES:  # a checkout's last files may share the index's timestamp: make them all older
        os.utime(root / path, ns=(10**18, 10**18))
    # ``utime`` sets each file's ctime to now, and the stamp compared is the later of mtime and ctime: a refresh in
    # the same kernel clock tick gave the index that very timestamp, and the files looked racily clean (1 run in 5).
    time.sleep(0.05)
    git(root, "update-index", "-q", "--refresh")  # rewrites the index with that stat (git hashes and agrees)
    index_mtime = (root / ".git" / "index").stat().st_mtime_ns
    assert index_mtime > 10**18
    # Same size, other bytes, stat kept older than the index: only git status can tell; it must.
    edited = root / "pkg" / "old_name.py"
    before = edited.stat()
    edited.write_text(FILES["pkg/old_name.py"].replace("42", "43"))
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    # Unchanged bytes, but "racily clean" (mtime not older than the index): git would re-read it; so do we.
    racy = root / "pkg" / "gone.py"
    os.utime(racy, ns=(index_mtime, index_mtime))
    state = git_clean_state(root)
    assert state is not None
    assert "pkg/old_name.py" not in state.stats and "pkg/gone.py" not in state.stats
    assert state.stats["pkg/core.py"].st_mtime_ns == 10**18
    assert set(state.stats) == set(FILES) - {"pkg/old_name.py", "pkg/gone.py"}
    assert state.reference_ns == index_mtime  # read before the stats: a racy-git reference for the reconcile


def test_only_this_checkouts_git_sets_the_stat_reference(artifact: Path, tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    manifest = unpack_verified(artifact, hashlib.sha256(artifact.read_bytes()).hexdigest(), staging, INDEXERS)
    with sqlite3.connect(staging / "index.db") as conn:  # as an artifact could carry it, to switch racy-git off
        conn.execute("INSERT INTO meta(key, value) VALUES ('stat_reference_ns', ?)", (str(2**62),))
    assert restat_clean_files(staging / "index.db", manifest, None) == 0  # git vouches for nothing here
    with sqlite3.connect(staging / "index.db") as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'stat_reference_ns'").fetchone() is None


def test_racy_rows_are_rehashed_unless_older_than_the_stat_reference(tmp_path: Path) -> None:
    """A row stat'ed within the last two seconds is re-read even when its stat is unchanged (a rewrite in the
    same timestamp tick keeps it) — unless its mtime is below a file timestamp observed before the stat was
    taken (what adoption records from ``.git/index``), where no later write can keep it."""
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    recorded = load_content(path, is_symlink=False, max_bytes=1 << 20)
    assert recorded is not None
    path.write_text("x = 2\n")  # same size; the row below keeps the old content's hashes with today's stat
    st = path.stat()
    record = FileRecord(1, "a.py", recorded.kind, "python", st.st_size, st.st_mtime_ns, st.st_ino,
                        recorded.content_hash, recorded.file_sha256, 1, 1)
    disk = {"a.py": DiskEntry("a.py", st.st_size, st.st_mtime_ns, st.st_ino, False)}
    racy = diff(tmp_path, {"a.py": record}, disk, max_bytes=1 << 20)
    assert [u.entry.path for u in racy.upserts] == ["a.py"]  # recent: re-read, and the change is found
    trusted = diff(tmp_path, {"a.py": record}, disk, max_bytes=1 << 20, stat_reference_ns=st.st_mtime_ns + 1)
    assert trusted.empty  # below the reference: the stat is trusted as for any older row
    assert diff(tmp_path, {"a.py": record}, disk, max_bytes=1 << 20, stat_reference_ns=st.st_mtime_ns).upserts


def test_local_index_is_kept_unless_asked_to_replace_it(origin: Path, artifact: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    _service(root).build()
    with _running(root, artifact=str(artifact)) as service:
        assert _status(service)["source"] == {"kind": "local"}
    with _running(root, artifact=str(artifact), artifact_adopt="always") as service:
        assert _status(service)["source"]["kind"] == "artifact"
    with _running(root, artifact=str(artifact), artifact_adopt="always") as service:
        assert service.artifact is not None and service.artifact.result == "skipped"
        assert "already came from this artifact" in service.artifact.reason


# -- fetching over HTTP ---------------------------------------------------------------------------------------
class _Behaviour:
    def __init__(self) -> None:
        self.delay = 0.0
        self.failures = 0
        self.requests: list[str] = []


@contextmanager
def _http_server(directory: Path) -> Iterator[tuple[str, _Behaviour]]:
    behaviour = _Behaviour()

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            behaviour.requests.append(self.path)
            if behaviour.delay:
                time.sleep(behaviour.delay)
            if behaviour.failures > 0:
                behaviour.failures -= 1
                self.send_error(503, "try later")
                return
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", behaviour
    finally:
        server.shutdown()
        server.server_close()


def test_artifact_served_over_http_is_adopted(origin: Path, artifact: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with _http_server(artifact.parent) as (base, behaviour):
        url = f"{base}/index.tar.zst"
        with _running(root, artifact=url) as service:
            source = _status(service)["source"]
        assert source["kind"] == "artifact" and source["source"] == url
        assert not list((root / ".codeplane" / "artifact-cache").glob("*.tar.zst"))  # not kept once adopted
        assert source["sha256"] == hashlib.sha256(artifact.read_bytes()).hexdigest()
        assert behaviour.requests == ["/index.tar.zst.sha256", "/index.tar.zst"]


def test_commit_template_finds_the_newest_ancestor_with_an_artifact(origin: Path, artifact: Path,
                                                                    tmp_path: Path) -> None:
    commit = git(origin, "rev-parse", "HEAD").stdout.strip()
    published = tmp_path / "store"
    published.mkdir()
    (published / f"{commit}.tar.zst").write_bytes(artifact.read_bytes())
    (published / f"{commit}.tar.zst.sha256").write_text(artifact.with_name("index.tar.zst.sha256").read_text())
    root = _clone(origin, tmp_path / "dev")
    write_files(root, {"pkg/extra.py": "X = 1\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one ahead")
    with _http_server(published) as (base, behaviour), \
            _running(root, artifact=base + "/{commit}.tar.zst") as service:
        status = _status(service)
    assert status["source"]["commit"] == commit
    assert status["last_reconcile"]["added"] == 1
    assert len(behaviour.requests) == 3  # HEAD's sidecar (404), the parent's sidecar, the parent's artifact


def test_slow_server_times_out_after_retries(artifact: Path, tmp_path: Path) -> None:
    with _http_server(artifact.parent) as (base, behaviour):
        behaviour.delay = 2.0
        started = time.monotonic()
        with pytest.raises(CodePlaneError) as caught:
            fetch_artifact(f"{base}/index.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache", timeout=0.3,
                           retries=1)
        elapsed = time.monotonic() - started
    assert caught.value.error is ErrorCode.ARTIFACT_FETCH_FAILED and caught.value.retryable
    # 0.3 s is the whole fetch's deadline: the first attempt spends it, so no retry is begun.
    assert "timed out" in caught.value.message and "0.3 s for the whole fetch" in caught.value.message
    assert elapsed < 2.0


def test_failing_server_is_retried_then_reported(artifact: Path, tmp_path: Path) -> None:
    with _http_server(artifact.parent) as (base, behaviour):
        behaviour.failures = 2
        fetched = fetch_artifact(f"{base}/index.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache", retries=2)
        assert fetched.path.read_bytes() == artifact.read_bytes()
        behaviour.failures = 100
        (tmp_path / "cache").joinpath(f"{fetched.sha256}.tar.zst").unlink()
        with pytest.raises(CodePlaneError) as caught:
            fetch_artifact(f"{base}/index.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache", retries=1)
    assert caught.value.error is ErrorCode.ARTIFACT_FETCH_FAILED
    assert "HTTP 503" in caught.value.message and "2 attempts" in caught.value.message
    with pytest.raises(CodePlaneError) as refused:
        fetch_artifact("http://example.com/index.tar.zst", root=tmp_path, cache_dir=tmp_path / "cache")
    assert "https://" in refused.value.message


def test_unreachable_server_falls_back_to_a_cold_build(origin: Path, artifact: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with _http_server(artifact.parent) as (base, _behaviour):
        url = f"{base}/index.tar.zst"
    with _running(root, artifact=url, artifact_retries=0, artifact_timeout_sec=1) as service:
        status = _status(service)
    assert status["source"]["kind"] == "local"
    assert status["source"]["artifact_refused"]["code"] == ErrorCode.ARTIFACT_FETCH_FAILED.code
    assert status["file_count"] == len(FILES)


# -- untrusted input ------------------------------------------------------------------------------------------
def _unzstd(artifact: Path) -> bytes:
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(artifact.read_bytes())) as stream:
        return stream.read()


def _repack(artifact: Path, out: Path, mutate: Callable[[dict[str, bytes]], None], *,
            reseal: bool = True, extra: Callable[[tarfile.TarFile], None] | None = None) -> Path:
    """Unpack ``artifact``, let ``mutate`` change its parts, repack (with a fresh, matching manifest and
    sidecar when ``reseal``): an attacker controls every byte, sidecar included."""
    with tarfile.open(fileobj=io.BytesIO(_unzstd(artifact))) as tar:
        parts = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    mutate(parts)
    if reseal:
        manifest = json.loads(parts["manifest.json"])
        manifest["parts"] = {name: {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
                             for name, data in parts.items() if name != "manifest.json"}
        parts["manifest.json"] = json.dumps(manifest).encode()
    plain = io.BytesIO()
    with tarfile.open(fileobj=plain, mode="w") as tar:
        for name, data in parts.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if extra is not None:
            extra(tar)
    packed = zstandard.ZstdCompressor().compress(plain.getvalue())
    out.write_bytes(packed)
    out.with_name(out.name + ".sha256").write_text(hashlib.sha256(packed).hexdigest() + "\n")
    return out


def _with_trigger(parts: dict[str, bytes]) -> None:
    _edit_db(parts, "CREATE TRIGGER evil AFTER INSERT ON files BEGIN DELETE FROM meta; END")


def _fact_path_escape(parts: dict[str, bytes]) -> None:
    _edit_db(parts, "UPDATE st_file SET path = '../outside.py' WHERE path = 'pkg/core.py'")


def _edit_db(parts: dict[str, bytes], sql: str) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        db = Path(scratch) / "index.db"
        db.write_bytes(parts["index.db"])
        conn = sqlite3.connect(db)
        conn.execute(sql)
        conn.commit()
        conn.close()
        parts["index.db"] = db.read_bytes()


def _tantivy_escape(parts: dict[str, bytes]) -> None:
    """Replace pkg/core.py's Tantivy document by one naming a path outside the repository (same count)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        (work / "tantivy").mkdir()
        for name, data in parts.items():
            if name.startswith("tantivy/") or name == "index.db":
                (work / name).write_bytes(data)
        conn = sqlite3.connect(work / "index.db")
        file_id = conn.execute("SELECT id FROM files WHERE path = 'pkg/core.py'").fetchone()[0]
        lexical = LexicalIndex(work / "tantivy", threads=1)
        lexical.open()
        lexical.delete("pkg/core.py")
        lexical.add(file_id, "../outside.py", "python", "class Engine: pass")
        opstamp = lexical.commit()
        lexical.close()
        conn.execute("UPDATE meta SET value = ? WHERE key = 'tantivy_opstamp'", (str(opstamp),))
        conn.commit()
        conn.close()
        for name in [n for n in parts if n.startswith("tantivy/")]:
            del parts[name]
        parts["index.db"] = (work / "index.db").read_bytes()
        for path in (work / "tantivy").iterdir():
            if not path.name.endswith(".lock"):
                parts[f"tantivy/{path.name}"] = path.read_bytes()


def _corrupt_page(parts: dict[str, bytes]) -> None:
    """Garbage over the last page of index.db (a b-tree page; the header and schema pages stay intact)."""
    data = bytearray(parts["index.db"])
    page = int.from_bytes(data[16:18], "big") or 65536
    start = (len(data) // page - 1) * page
    data[start:start + page] = b"\xa5" * page
    parts["index.db"] = bytes(data)


def _set_manifest(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, bytes]], None]:
    def mutate(parts: dict[str, bytes]) -> None:
        manifest = json.loads(parts["manifest.json"])
        change(manifest)
        parts["manifest.json"] = json.dumps(manifest).encode()
    return mutate


def _swap_part(parts: dict[str, bytes]) -> None:
    segment = sorted(n for n in parts if n.endswith(".term"))[0]
    parts[segment] = parts[sorted(n for n in parts if n.endswith(".idx"))[0]]


def _symlink_member(tar: tarfile.TarFile) -> None:
    info = tarfile.TarInfo("tantivy/link")
    info.type = tarfile.SYMTYPE
    info.linkname = "/etc/passwd"
    tar.addfile(info)


def _dotdot_member(tar: tarfile.TarFile) -> None:
    info = tarfile.TarInfo("tantivy/../../escape")
    info.size = 1
    tar.addfile(info, io.BytesIO(b"x"))


TAMPERINGS: dict[str, tuple[dict[str, Any], ErrorCode, str]] = {
    "swapped part": ({"mutate": _swap_part, "reseal": False}, ErrorCode.ARTIFACT_INVALID, "the manifest says"),
    "extra trigger": ({"mutate": _with_trigger}, ErrorCode.ARTIFACT_INVALID, "schema is not CodePlane's"),
    "path escape in manifest": ({"mutate": _set_manifest(lambda m: m["files"].insert(0, [
        "../outside.py", "0" * 40, "0" * 64]))}, ErrorCode.ARTIFACT_INVALID, "escapes the repository"),
    "corrupt page in index.db": ({"mutate": _corrupt_page}, ErrorCode.ARTIFACT_INVALID, "index.db"),
    "path escape in index.db": ({"mutate": _fact_path_escape}, ErrorCode.ARTIFACT_INVALID, "st_file.path"),
    "path escape in tantivy": ({"mutate": _tantivy_escape}, ErrorCode.ARTIFACT_INVALID, "'../outside.py'"),
    "malformed layout": ({"mutate": _set_manifest(lambda m: m.update(index_db_layout=[["st_ref", True]]))},
                         ErrorCode.ARTIFACT_INVALID, "index_db_layout"),
    "newer format": ({"mutate": _set_manifest(lambda m: m.update(format_version=3))},
                     ErrorCode.ARTIFACT_INCOMPATIBLE, "newer"),
    "other schema": ({"mutate": _set_manifest(lambda m: m["versions"].update(store_schema=99))},
                     ErrorCode.ARTIFACT_INCOMPATIBLE, "store_schema"),
    "symlink member": ({"mutate": lambda p: None, "extra": _symlink_member}, ErrorCode.ARTIFACT_INVALID,
                       "not a regular file"),
    "dot-dot member": ({"mutate": lambda p: None, "extra": _dotdot_member}, ErrorCode.ARTIFACT_INVALID,
                       "outside the artifact's layout"),
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampered_artifact_is_refused_and_a_cold_build_follows(name: str, origin: Path, artifact: Path,
                                                              tmp_path: Path) -> None:
    how, code, message = TAMPERINGS[name]
    bad = _repack(artifact, tmp_path / "bad.tar.zst", how["mutate"], reseal=how.get("reseal", True),
                  extra=how.get("extra"))
    sha = bad.with_name("bad.tar.zst.sha256").read_text().split()[0]
    with pytest.raises(CodePlaneError) as caught:
        unpack_verified(bad, sha, tmp_path / "staging", INDEXERS)
    assert caught.value.error is code and message in caught.value.message, caught.value.message
    assert not (tmp_path / "escape").exists()
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad)) as service:
        status = _status(service)
        assert status["source"]["artifact_refused"]["code"] == code.code
        assert status["file_count"] == len(FILES) and status["last_reconcile"]["added"] == len(FILES)
        hits = service.search_lexical(LexicalRequest(query="Engine", syntax="identifier"), limit=50)
        assert {h.path for h in hits.hits} == {"pkg/__init__.py", "pkg/core.py", "tests/test_core.py", "README.md"}
    state = sorted(p.name for p in (root / ".codeplane").iterdir())
    assert "artifact-staging" not in state and not [n for n in state if n.startswith("index-replaced")]


@pytest.mark.parametrize("path", ["a", "a/b.py", ".a/b", "a/.b", "a..b/c", "...", "x/...", "a b/c:d", "a//b",
                                  "a/./b", "a/../b", "../a", "./a", "a/.", "a/..", "/a", "a/", "", ".", "..", "c:x",
                                  "a\x00b", "dir/"])
def test_the_fast_canonical_check_agrees_with_the_canonicaliser(path: str) -> None:
    try:
        canonical = canonicalize(path).rel == path and path != ""
    except CodePlaneError:
        canonical = False
    assert is_canonical(path) == canonical


def test_flipped_byte_fails_the_checksum(origin: Path, artifact: Path, tmp_path: Path) -> None:
    data = bytearray(artifact.read_bytes())
    data[len(data) // 2] ^= 0x01
    bad = tmp_path / "flipped.tar.zst"
    bad.write_bytes(bytes(data))
    bad.with_name("flipped.tar.zst.sha256").write_text(artifact.with_name("index.tar.zst.sha256").read_text())
    root = _clone(origin, tmp_path / "dev")
    with _running(root, artifact=str(bad)) as service:
        refused = _status(service)["source"]["artifact_refused"]
    assert refused["code"] == ErrorCode.ARTIFACT_CHECKSUM_MISMATCH.code
    with _running(_clone(origin, tmp_path / "pinned"), artifact=str(artifact), artifact_sha256="0" * 64) as service:
        assert _status(service)["source"]["artifact_refused"]["code"] == ErrorCode.ARTIFACT_CHECKSUM_MISMATCH.code
    (tmp_path / "nosidecar.tar.zst").write_bytes(artifact.read_bytes())
    with _running(_clone(origin, tmp_path / "unverified"), artifact=str(tmp_path / "nosidecar.tar.zst")) as service:
        assert _status(service)["source"]["artifact_refused"]["code"] == ErrorCode.ARTIFACT_UNVERIFIED.code


def test_a_gzipped_format_1_archive_is_refused_as_unreadable(artifact: Path, tmp_path: Path) -> None:
    """An artifact written by an older CodePlane (tar.gz) with a matching checksum: refused as malformed
    (3104), not crashed on; the caller then builds cold."""
    old = tmp_path / "old.tar.gz"
    old.write_bytes(gzip.compress(_unzstd(artifact), mtime=0))
    with pytest.raises(CodePlaneError) as caught:
        unpack_verified(old, hashlib.sha256(old.read_bytes()).hexdigest(), tmp_path / "staging", INDEXERS)
    assert caught.value.error is ErrorCode.ARTIFACT_INVALID and "not a readable .tar.zst" in caught.value.message


# -- the real server -----------------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_cpl_up_index_from_serves_the_artifact_and_says_so(origin: Path, artifact: Path,
                                                                 tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with running_server(root, "--index-from", str(artifact)) as server:
        server.wait_serving()
        source = server.get("/status").json()["index"]["source"]
        async with mcp_client(server) as client:
            described = await call(client, "describe", {})
            found = await call(client, "search", {"query": "Engine", "syntax": "identifier"})
    sha = hashlib.sha256(artifact.read_bytes()).hexdigest()
    assert source["kind"] == "artifact" and source["sha256"] == sha and source["source"] == str(artifact)
    assert described["status"]["index"]["source"]["sha256"] == sha
    assert {h["path"] for h in found["results"]} == {"pkg/__init__.py", "pkg/core.py", "tests/test_core.py",
                                                      "README.md"}
    status = cpl_json("status", str(root), cwd=root)
    assert status["index"]["source"]["sha256"] == sha


def test_cpl_up_with_an_unreachable_artifact_builds_from_disk(origin: Path, artifact: Path, tmp_path: Path) -> None:
    root = _clone(origin, tmp_path / "dev")
    with _http_server(artifact.parent) as (base, _behaviour):
        url = f"{base}/index.tar.zst"  # the server stops here: the port refuses connections
    with running_server(root, "--index-from", url, "--set", "index.artifact_retries=0") as server:
        server.wait_serving()
        index = server.get("/status").json()["index"]
    assert index["source"]["kind"] == "local" and index["file_count"] == len(FILES) + 1  # + .cplignore
