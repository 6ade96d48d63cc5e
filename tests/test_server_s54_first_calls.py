"""What the first calls after ``/ready`` used to pay for is done by the warm-up (S54 §2, ``server/first_calls.py``).

A first ``map_repo`` on Django cost ~6x a warm one and a first ``search`` 2-3x: the map's sections were computed by
the first call, the tools' and the SDK's answer models were built inside it, and the ledger's first commit
restarted its WAL (a synced header). Checked in a fresh interpreter (the models are per process), on the real stack
with its lifecycles and its real warm-up thread, before any call: all of it is done, and nothing was recorded.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.builders import make_repo

_PROBE = """
import asyncio, json, sys, threading
from pathlib import Path
from codeplane.server.sdk_import import import_mcp_sdk
import_mcp_sdk()
from codeplane.core.config import load_config
from codeplane.server.app import build_stack
from codeplane.server.boot_index import EarlyIndex
from codeplane.server.services import build_services

root = Path(sys.argv[1])
config = load_config(root)
early = EarlyIndex(root, config)
stack = build_stack(build_services(root, config, "r1", early=early), early)

async def main():
    async with stack.running():
        for thread in threading.enumerate():
            if thread.name == "cpl-warm-up":
                thread.join(120)
        import mcp_types as types
        from codeplane.server.tools.map_repo import MapRepoResult
        from codeplane.server.tools.search import SearchResult
        services = stack.services
        maps = services.structural._maps
        wal = root / ".codeplane" / "ledger.db-wal"
        print(json.dumps({
            "map_epoch_current": maps.epoch == services.index.epoch,
            "map_sections": sorted(maps._per_epoch), "trees": len(maps._trees),
            "models_built": [m.__name__ for m in (MapRepoResult, SearchResult, types.CallToolResult,
                                                   types.TextContent) if m.__pydantic_complete__],
            "wal_started": wal.exists() and wal.stat().st_size > 0,
            "operations": services.tasks.ledger.counts()["operations"],
        }))

asyncio.run(main())
"""


def test_the_warm_up_does_the_first_calls_work_before_any_call_and_records_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "pkg/__init__.py": "from pkg.core import main\n", "pkg/core.py": "import os\n\n\ndef main():\n    return os\n",
        "tests/test_core.py": "from pkg.core import main\n\n\ndef test_main():\n    assert main()\n",
    })
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(repo)], capture_output=True, text=True, timeout=180,
                          check=False, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    state = json.loads(proc.stdout.strip().splitlines()[-1])
    # Was: only the file table was read ([] sections, no tree), the models were built by the first call, and the
    # first call's commit started the WAL.
    assert state["map_epoch_current"], state
    assert {"dependencies", "entry_points", "public_api:"} <= set(state["map_sections"]) and state["trees"], state
    assert state["models_built"] == ["MapRepoResult", "SearchResult", "CallToolResult", "TextContent"], state
    assert state["wal_started"], state
    assert state["operations"] == 0, state  # the warm-up's reads are no calls: no ledger row, no budget
