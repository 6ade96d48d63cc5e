"""QA46 F2: list answers (tags, branches, stashes, recovery points) were cut into parts by the size of their JSON
record (40-digit ids, tagger emails and times), not of their text: 600 tags took 15 calls of about 6 KB where
``git tag -n1`` is one. Parts are now sized by the rendered text, so each part but the last fills the text
budget, none passes the limit, and following the cursors still lists every item once."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codeplane.server.tools.paging import PAGE_BYTES, TEXT_LIMIT
from tests.builders import follow_parts, git, make_repo, mcp_client, running_server

pytestmark = pytest.mark.anyio

_COUNT = 600


def _many_refs(repo: Path) -> str:
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    message = "Release {:04d} of the product.\n"
    stream = "".join(f"tag release-{i:04d}\nfrom {head}\ntagger Release Bot <release-bot@example.org> "
                     f"{1_700_000_000 + i} +0000\ndata {len(message.format(i))}\n{message.format(i)}\n"
                     for i in range(_COUNT))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=stream.encode(), check=True)
    refs = "".join(f"create refs/heads/feature/topic-{i:04d} {head}\n" for i in range(_COUNT))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=refs.encode(), check=True)
    return head


def _sizes(parts: list[tuple[dict[str, object], str]]) -> list[int]:
    return [len(text.encode()) for _, text in parts]


async def test_tag_and_branch_parts_are_filled_by_their_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    _many_refs(repo)
    with running_server(repo) as server:
        async with mcp_client(server) as client:
            tags = await follow_parts(client, "git_inspect", {"action": "tags"})
            branches = await follow_parts(client, "git_branch", {})
    expected_tags = git(repo, "tag", "-l").stdout.split()
    assert [t["name"] for result, _ in tags for t in result["tags"]] == expected_tags
    expected_branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").stdout.split()
    assert sorted(b["name"] for result, _ in branches for b in result["branches"]) == \
        sorted(expected_branches)
    for parts in (tags, branches):
        sizes = _sizes(parts)
        assert len(parts) > 1 and max(sizes) <= TEXT_LIMIT, sizes
        # Every part but the last holds as much as fits: within one line of the page budget.
        assert all(size > PAGE_BYTES - 200 for size in sizes[:-1]), sizes
        # As few calls as the text needs.
        assert len(parts) == -(-sum(sizes) // PAGE_BYTES) or len(parts) <= sum(sizes) // (PAGE_BYTES - 200) + 1
