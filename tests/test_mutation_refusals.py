"""Issue 16: a refused edit (5002) carries what redoing it needs — the file's current hash and the current text
where the edit was aimed — so the agent retries without reading the file again. Engine-level cases on a
real git repository, then the whole loop through the real server and the official client."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeplane.core.config import MutationConfig
from codeplane.core.errors import CodePlaneError
from codeplane.core.hashing import sha256_bytes
from codeplane.mutation import Edit, MutationEngine, ReplaceText, UpdateSpan
from codeplane.mutation.refusals import MAX_SHOWN_BYTES, MAX_SHOWN_LINES
from tests.builders import answer_text, call, envelope, make_repo, mcp_client, running_server

SRC = ("import os\n\n\n"
       "def load(path, mode='r'):\n"
       "    with open(path, mode) as f:\n"
       "        return f.read()\n\n\n"
       "def save(path, text):\n"
       "    with open(path, 'w') as f:\n"
       "        f.write(text)\n")


def _refused(root: Path, edit: Edit) -> CodePlaneError:
    engine = MutationEngine(root, MutationConfig())
    before = (root / "m.py").read_bytes()
    with pytest.raises(CodePlaneError) as info:
        engine.apply([edit])
    assert info.value.code == 5002, info.value.to_payload()
    assert (root / "m.py").read_bytes() == before, "a refused edit writes nothing"
    return info.value


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """The repository and the hash the agent read; then someone else edits the file."""
    root = make_repo(tmp_path / "repo", {"m.py": SRC})
    read_sha = sha256_bytes(SRC.encode())
    (root / "m.py").write_text("# a header someone added\n" + SRC.replace("mode='r'", "mode='rb'"))
    return root, read_sha


def test_a_stale_span_edit_shows_the_span_as_it_is_now_and_the_current_hash(repo: tuple[Path, str]) -> None:
    root, read_sha = repo
    err = _refused(root, UpdateSpan(path="m.py", start_line=4, end_line=4, new_content="def load(path):\n",
                                    expected_file_sha256=read_sha[:16]))
    assert err.details["actual_file_sha256"] == sha256_bytes((root / "m.py").read_bytes())
    # No expected_content: the lines the span names now (shifted by the header: the agent sees it is not its line).
    assert err.details["current"] == [{"line": 4, "text": ""}]
    err = _refused(root, UpdateSpan(path="m.py", start_line=4, end_line=4, new_content="def load(path):\n",
                                    expected_content="def load(path, mode='r'):", expected_file_sha256=read_sha))
    assert [c["line"] for c in err.details["current"]] == [1, 2, 3, 4, 5, 6, 7], "the span with context"
    assert {"line": 5, "text": "def load(path, mode='rb'):"} in err.details["current"]


def test_expected_content_still_there_is_shown_where_it_moved(repo: tuple[Path, str]) -> None:
    root, read_sha = repo
    err = _refused(root, UpdateSpan(path="m.py", start_line=9, end_line=10, new_content="def store(path, text):\n",
                                    expected_content="def save(path, text):\n    with open(path, 'w') as f:\n",
                                    expected_file_sha256=read_sha))
    assert err.details["current"] == [{"line": 10, "text": "def save(path, text):"},
                                      {"line": 11, "text": "    with open(path, 'w') as f:"}]


def test_old_text_gone_shows_the_lines_most_like_it(repo: tuple[Path, str]) -> None:
    root, _ = repo
    err = _refused(root, ReplaceText(path="m.py", old_text="def load(path, mode='r'):\n    with open(path, mode) as f:",
                                     new_text="def load(path):\n    with open(path) as f:"))
    assert err.details["reason"] == "old_text was not found"
    assert err.details["current"] == [{"line": 5, "text": "def load(path, mode='rb'):"},
                                      {"line": 6, "text": "    with open(path, mode) as f:"}]
    assert err.details["actual_file_sha256"] == sha256_bytes((root / "m.py").read_bytes())
    nothing_alike = _refused(root, ReplaceText(path="m.py", old_text="completely unrelated words", new_text="x"))
    assert "current" not in nothing_alike.details and nothing_alike.details["actual_file_sha256"]


def test_a_stale_hash_with_old_text_still_present_shows_its_lines(repo: tuple[Path, str]) -> None:
    root, read_sha = repo
    err = _refused(root, ReplaceText(path="m.py", old_text="f.write(text)", new_text="f.write(text or '')",
                                     expected_file_sha256=read_sha))
    assert err.details["current"] == [{"line": 12, "text": "        f.write(text)"}]


def test_the_shown_text_is_bounded_and_names_the_rest(tmp_path: Path) -> None:
    body = "".join(f"value_{i} = {'x' * 60!r}\n" for i in range(200))
    root = make_repo(tmp_path / "repo", {"m.py": body})
    read_sha = sha256_bytes(body.encode())
    (root / "m.py").write_text("# changed\n" + body)
    err = _refused(root, UpdateSpan(path="m.py", start_line=1, end_line=150, new_content="",
                                    expected_file_sha256=read_sha))
    shown = err.details["current"]
    assert 1 <= len(shown) <= MAX_SHOWN_LINES
    assert sum(len(c["text"]) for c in shown) <= MAX_SHOWN_BYTES
    assert err.details["more_lines"] == f"{shown[-1]['line'] + 1}-150"


@pytest.mark.anyio
async def test_the_refusal_text_carries_the_retry_so_no_re_read_is_needed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"m.py": SRC})
    with running_server(root) as server:
        async with mcp_client(server) as client:
            read = await call(client, "read_source", {"targets": [{"path": "m.py", "start_line": 4, "end_line": 4}]})
            (root / "m.py").write_text(SRC.replace("def load(path, mode='r'):", "def load(path, mode='r'):  # io"))
            edit = {"path": "m.py", "action": "update", "start_line": 4, "end_line": 4,
                    "new_content": "def load(path: str, mode: str = 'r') -> str:\n",
                    "expected_file_sha256": read["files"][0]["file_sha256"]}
            res = await client.call_tool("write_source", {"edits": [edit]})
            assert res.is_error
            text = answer_text(res)
            details = envelope(res)["error"]["details"]
            now = sha256_bytes((root / "m.py").read_bytes())
            assert text.startswith("error 5002 MUTATION_PRECONDITION_FAILED: m.py changed since it was read")
            assert f"actual_file_sha256={now[:12]}\n" in text
            assert text.endswith("\n4:def load(path, mode='r'):  # io"), text
            assert details["current"] == [{"line": 4, "text": "def load(path, mode='r'):  # io"}]
            # Everything the retry needs came from the text: the line as it is now and the short hash.
            retry = text.split("actual_file_sha256=")[1].split()[0]
            done = await call(client, "write_source", {"edits": [{
                **edit, "new_content": "def load(path: str, mode: str = 'r') -> str:  # io\n",
                "expected_file_sha256": retry}]})
            assert done["applied"]
    assert "def load(path: str, mode: str = 'r') -> str:  # io\n" in (root / "m.py").read_text()
