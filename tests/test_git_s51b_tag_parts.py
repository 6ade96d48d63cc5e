"""QA42 §6: ``git_inspect tags`` listed at most ``limit`` tags (500 by default, 2000 at most) with no cursor to the
rest, and its last part did not say any were left: a repository's 2,001st tag was out of reach. Every tag is now
listed, in parts of at most ``limit`` tags whose text fits, the cursor going on to the last one."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.builders import follow_parts, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_TAGS = 2100


async def _parts(client: Any, args: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    return await follow_parts(client, "git_inspect", args)


async def test_every_tag_is_reached_by_following_the_cursor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    git(repo, "tag", "-a", "v-annotated", "-m", "release notes")
    refs = "".join(f"create refs/tags/build-{i:05d} {head}\n" for i in range(_TAGS - 1))
    # The builders' ``git`` takes no input; update-ref reads the tags from stdin (2,099 in one call).
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=refs.encode(), check=True)
    expected = git(repo, "tag", "-l").stdout.split()
    assert len(expected) == _TAGS
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            answers = {limit: await _parts(client, {"action": "tags", **({"limit": limit} if limit else {})})
                       for limit in (None, 2000, 7)}
    for limit, parts in answers.items():
        names = [t["name"] for result, _ in parts for t in result["tags"]]
        assert names == expected, (limit, len(names))  # all of them, in git's order, each once
        assert {result["tags_total"] for result, _ in parts} == {_TAGS}
        assert all(len(result["tags"]) <= (limit or 500) for result, _ in parts)
        # Each part's text names its tags and says where it is; the last has no cursor.
        for i, (result, text) in enumerate(parts, 1):
            assert text.startswith(f"part={i} parts={len(parts)} ") and all(t["name"] in text for t in result["tags"])
            assert (result.get("next_cursor") is None) == (i == len(parts))
            if result.get("next_cursor"):
                assert result["next_cursor"] in text
    annotated = next(t for result, _ in answers[None] for t in result["tags"] if t["name"] == "v-annotated")
    assert annotated["annotated"] and annotated["target"] == head
    assert len(answers[7]) >= _TAGS // 7
