"""An artifact's tar members are held to its manifest from their headers (QA62 #2): the manifest comes first and lists
every part's size, so a member larger than its entry (a decompression bomb), or one it does not list, is refused
before any of its bytes is written, not after gigabytes landed in the staging directory."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import zstandard

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.index.artifact_verify import unpack_verified
from tests.builders import make_repo
from tests.test_index_artifact import FILES, INDEXERS, _clone, _export

#: The bomb's index.db: 256 MiB of zeros (a few KB compressed), against a manifest entry of a few hundred KB.
_BOMB_BYTES = 256 * 1024**2


@pytest.fixture(scope="module")
def members(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, bytes]]:
    """A genuine artifact's members, in its order (the manifest first)."""
    base = tmp_path_factory.mktemp("members")
    artifact = _export(_clone(make_repo(base / "origin", FILES), base / "ci"), base / "out" / "index.tar.zst")
    found: list[tuple[str, bytes]] = []
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(artifact.read_bytes())) as stream, \
            tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            source = tar.extractfile(member)
            assert source is not None
            found.append((member.name, source.read()))
    assert found[0][0] == "manifest.json"
    return found


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        size = min(len(buffer), self.left)
        buffer[:size] = bytes(size)
        self.left -= size
        return size


def _pack(out: Path, entries: list[tuple[str, bytes | int]]) -> str:
    """A .tar.zst of ``entries`` (an ``int`` is that many zero bytes, streamed) with its sidecar; its sha256."""
    with out.open("wb") as raw, zstandard.ZstdCompressor(level=3).stream_writer(raw) as packed, \
            tarfile.open(fileobj=packed, mode="w|") as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = data if isinstance(data, int) else len(data)
            tar.addfile(info, io.BufferedReader(_Zeros(data)) if isinstance(data, int) else io.BytesIO(data))
    sha = hashlib.sha256(out.read_bytes()).hexdigest()
    out.with_name(out.name + ".sha256").write_text(f"{sha}  {out.name}\n")
    return sha


def _refused(tmp_path: Path, entries: list[tuple[str, bytes | int]]) -> tuple[CodePlaneError, Path]:
    archive = tmp_path / "bad.tar.zst"
    sha = _pack(archive, entries)
    staging = tmp_path / "staging"
    with pytest.raises(CodePlaneError) as caught:
        unpack_verified(archive, sha, staging, INDEXERS)
    return caught.value, staging


def _written(staging: Path) -> int:
    return sum(p.stat().st_size for p in staging.rglob("*") if p.is_file())


def test_a_part_larger_than_its_manifest_entry_is_refused_before_it_is_written(members: list[tuple[str, bytes]],
                                                                              tmp_path: Path) -> None:
    listed = dict(members)
    error, staging = _refused(tmp_path, [(n, _BOMB_BYTES if n == "index.db" else d) for n, d in members])
    assert error.error is ErrorCode.ARTIFACT_INVALID, error
    assert f"part index.db is {_BOMB_BYTES} bytes in the archive; the manifest says {len(listed['index.db'])}" \
        in error.message, error.message
    assert not (staging / "index.db").exists()
    assert _written(staging) == len(listed["manifest.json"]), sorted(staging.rglob("*"))  # the manifest alone


def test_a_part_the_manifest_does_not_list_is_refused_before_it_is_written(members: list[tuple[str, bytes]],
                                                                          tmp_path: Path) -> None:
    error, staging = _refused(tmp_path, [*members, ("tantivy/extra.store", _BOMB_BYTES)])
    assert error.error is ErrorCode.ARTIFACT_INVALID, error
    assert "'tantivy/extra.store' is not listed in its manifest" in error.message, error.message
    assert not (staging / "tantivy" / "extra.store").exists()


def test_the_manifest_must_come_first(members: list[tuple[str, bytes]], tmp_path: Path) -> None:
    """Every other member is bounded by the manifest's entry for it: one before the manifest would be bounded only
    by the 64 GiB last resort."""
    error, staging = _refused(tmp_path, [members[1], members[0], *members[2:]])
    assert error.error is ErrorCode.ARTIFACT_INVALID, error
    assert f"{members[1][0]!r} comes before manifest.json" in error.message, error.message
    assert _written(staging) == 0


def _with_manifest(members: list[tuple[str, bytes]], change: Callable[[dict[str, object]], object]
                   ) -> Iterator[tuple[str, bytes | int]]:
    manifest = json.loads(members[0][1])
    change(manifest)
    yield "manifest.json", json.dumps(manifest).encode()
    yield from members[1:]


def test_a_manifest_without_part_sizes_stops_the_unpack_at_once(members: list[tuple[str, bytes]],
                                                               tmp_path: Path) -> None:
    error, staging = _refused(tmp_path, list(_with_manifest(members, lambda m: m.pop("parts"))))
    assert error.error is ErrorCode.ARTIFACT_INVALID and "lists no parts" in error.message, error
    assert not (staging / "index.db").exists()

