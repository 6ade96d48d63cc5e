"""Fault injection (DECISIONS D8): SIGKILL at random points of a large batch, restart, and the batch is
entirely old or entirely new, with no journal or temp file left.

The debug hook ``CODEPLANE_DEBUG_MUTATION_PAUSE_MS`` stretches the window between replaces so the kills
land inside the batch; each kill waits for the batch's journal directory to appear, then a random delay.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import anyio

from codeplane.core.config import MutationConfig
from codeplane.mutation import PAUSE_ENV, CreateFile, DeleteFile, Edit, MutationEngine, ReplaceText
from tests.builders import ServerHandle, call, cpl_env, make_repo, mcp_client, start_server

FILES = 24
PAUSE_MS = 15


def content(gen: int, i: int) -> str:
    return f"# file {i}\nvalue = 'gen{gen}'\n" + "".join(f"line {k}\n" for k in range(i % 5))


def make_batch_repo(root: Path) -> Path:
    return make_repo(root, {f"pkg/m{i:02}.py": content(0, i) for i in range(FILES)})


def batch_args(gen: int) -> dict[str, object]:
    return {"edits": [{"path": f"pkg/m{i:02}.py", "action": "update", "old_text": f"'gen{gen - 1}'",
                       "new_text": f"'gen{gen}'"} for i in range(FILES)]
            + [{"path": f"pkg/new_gen{gen}.py", "action": "create", "content": f"GEN = {gen}\n"},
               {"path": f"pkg/new_gen{gen - 1}.py", "action": "delete"} if gen > 1 else
               {"path": "pkg/extra/deep.py", "action": "create", "content": "DEEP = 1\n"}]}


def generation_on_disk(root: Path) -> int:
    """The one generation every file is at; fails if the batch is half applied or debris remains."""
    gens = set()
    for i in range(FILES):
        text = (root / f"pkg/m{i:02}.py").read_text()
        gen = int(text.split("'gen", 1)[1].split("'", 1)[0])
        assert text == content(gen, i), f"m{i:02}.py is neither old nor new: {text!r}"
        gens.add(gen)
    assert len(gens) == 1, f"batch half applied: generations {sorted(gens)}"
    gen = gens.pop()
    created = sorted(p.name for p in (root / "pkg").glob("new_gen*.py"))
    assert created == ([f"new_gen{gen}.py"] if gen > 0 else []), created
    assert (root / "pkg/extra").exists() == (gen >= 1)
    journal = root / ".codeplane/journal"
    assert not journal.exists() or not list(journal.iterdir()), list(journal.iterdir())
    debris = [p for p in root.rglob("*") if p.name.endswith((".cpl-tmp", ".cpl-restore"))]
    assert not debris, debris
    return gen


def wait_for_journal(root: Path, timeout: float = 30.0) -> None:
    journal = root / ".codeplane/journal"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if journal.is_dir() and any(journal.iterdir()):
            return
        time.sleep(0.001)
    raise AssertionError("the batch never started")


async def _write(server: ServerHandle, gen: int) -> None:
    """Move every file from generation ``gen - 1`` to ``gen`` in one batch."""
    async with mcp_client(server) as client:
        await call(client, "write_source", batch_args(gen))


def _write_until_killed(server: ServerHandle, gen: int) -> None:
    try:
        anyio.run(_write, server, gen)
    except BaseException:  # noqa: BLE001 - the server is killed under this call on purpose
        return


def test_sigkill_of_the_server_mid_batch_leaves_all_old_or_all_new(tmp_path: Path) -> None:
    """One kill of the real server at a random point (each costs a server start; the forked-writer test
    below covers many more points of the same protocol)."""
    repo = make_batch_repo(tmp_path / "repo")
    env = cpl_env({PAUSE_ENV: str(PAUSE_MS)})
    window = (FILES + 3) * PAUSE_MS / 1000
    server = start_server(repo, env=env)
    try:
        writer = threading.Thread(target=_write_until_killed, args=(server, 1))
        writer.start()
        wait_for_journal(repo)
        time.sleep(random.Random(20261123).uniform(0, window))
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        writer.join(timeout=30)
        server = start_server(repo, env=env)
        server.wait_serving()  # startup recovery is the first step of the boot; tools are held until it ends
        assert generation_on_disk(repo) in (0, 1)
    finally:
        server.stop()


def engine_batch(gen: int) -> list[Edit]:
    """The same batch as :func:`batch_args`, as engine edits."""
    edits: list[Edit] = [ReplaceText(path=f"pkg/m{i:02}.py", old_text=f"'gen{gen - 1}'", new_text=f"'gen{gen}'")
                         for i in range(FILES)]
    edits.append(CreateFile(path=f"pkg/new_gen{gen}.py", content=f"GEN = {gen}\n"))
    edits.append(DeleteFile(path=f"pkg/new_gen{gen - 1}.py") if gen > 1 else
                 CreateFile(path="pkg/extra/deep.py", content="DEEP = 1\n"))
    return edits


def test_sigkill_of_a_writer_process_at_many_points_is_always_recoverable(tmp_path: Path) -> None:
    """The same property at more kill points: the engine runs in a forked child (no server start)."""
    repo = make_batch_repo(tmp_path / "repo")
    rng = random.Random(7)
    window = (FILES + 3) * 5 / 1000
    gen = 0
    results = []
    for attempt in range(10):
        pid = os.fork()
        if pid == 0:  # child: apply the batch slowly; the parent kills it somewhere inside
            try:
                MutationEngine(repo, MutationConfig(), environ={PAUSE_ENV: "5"}).apply(engine_batch(gen + 1))
            finally:
                os._exit(0)
        wait_for_journal(repo)
        time.sleep(rng.uniform(0, window) if attempt else 0.0)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        MutationEngine(repo, MutationConfig()).recover()
        found = generation_on_disk(repo)
        assert found in (gen, gen + 1)
        results.append(found == gen + 1)
        gen = found
    assert not all(results), "no kill landed inside a batch; the pause hook is not working"


def killed_mid_batch(repo: Path) -> Path:
    """Kill a writer process (SIGKILL) inside batch 1 of ``make_batch_repo``'s files: a few files replaced, most not.
    Returns the journal the crash left."""
    (repo / ".codeplane").mkdir()
    pid = os.fork()
    if pid == 0:
        try:
            MutationEngine(repo, MutationConfig(), environ={PAUSE_ENV: "15"}).apply(engine_batch(1))
        finally:
            os._exit(0)
    wait_for_journal(repo)
    time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    [journal] = [p for p in (repo / ".codeplane/journal").iterdir() if p.is_dir()]
    return journal


def test_cpl_clear_after_a_crash_mid_batch_rolls_the_batch_back_first(tmp_path: Path) -> None:
    """``cpl clear`` after a writer died mid-batch removed the journal with the rest of ``.codeplane``: the work
    tree kept the half-applied batch (and its temporary files) for good, and nothing said so."""
    import json

    from tests.builders import cpl

    repo = make_batch_repo(tmp_path / "repo")
    killed_mid_batch(repo)
    doctor = cpl("doctor", "--json", cwd=repo)  # no server: a batch of any age was left by a crash
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "no unfinished write batch")
    assert doctor.returncode == 1 and not check["ok"], check
    cleared = cpl("clear", "--json", cwd=repo)
    assert cleared.returncode == 0, cleared.stdout + cleared.stderr
    assert json.loads(cleared.stdout)["rolled_back"], cleared.stdout
    assert not (repo / ".codeplane").exists()
    (repo / ".codeplane").mkdir()  # generation_on_disk looks for a journal there
    assert generation_on_disk(repo) == 0
