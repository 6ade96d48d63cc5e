"""The ledger's last committed row, kept beside it, so rows lost with ``ledger.db-wal`` are noticed.

``ledger.db`` runs in WAL mode with ``synchronous=NORMAL`` (``schema.configure``): a commit lands in
``ledger.db-wal`` and reaches the main file only at a checkpoint. After an unclean stop (kill -9, a crash) the next
open replays the WAL and nothing is lost, unless the WAL is gone (deleted, or left out of a copy or backup): the
ledger then opens as it was at its last checkpoint, its newest committed rows missing, and its chain still
verifies (a shorter chain is a valid one). Those rows cannot be recovered; this module makes sure it is said.

Every commit that moves the chain's head also overwrites ``.codeplane/ledger.head`` in place: one fixed-size line
(the ledger's id, the last ``op_id``, its row hash, a CRC-32 of the three), one ``pwrite`` on a descriptor kept
open. No rename and no fsync: it costs a few microseconds beside the commit's ~50, and it is exactly as durable as
the WAL (both sit in the page cache, which a killed process does not lose). At open, a head that names this ledger
and an ``op_id`` past the ledger's last means rows were committed and are gone: the ledger records how many (a
``ledger.missing-<UTC>-lost.json`` record, reported by ``cpl status``, ``/status``, ``describe`` and
``cpl doctor`` until acknowledged, as a deleted ledger is, and a ``ledger.missing`` row in the chain). A head that
is torn (a crash mid-write on power loss), unreadable or of another ledger proves nothing and is ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

from codeplane.core.atomic import write_atomic
from codeplane.core.clock import iso_utc, now_ms
from codeplane.core.logging import get_logger
from codeplane.tasks.quarantine import Quarantined

log = get_logger(__name__)

HEAD_FILE = "ledger.head"
#: The prefix ``quarantine.quarantined`` lists, so ``cpl doctor`` and the status report a loss as a deleted ledger.
_RECORD_PREFIX = "ledger.missing-"
#: ``<ledger id> <op_id, 20 digits> <row hash>``, then `` <CRC-32 of that, 8 hex digits>\n``: one fixed width, so
#: each write overwrites the whole previous line.
_BODY = b"%s %020d %s"


@dataclass(frozen=True)
class Head:
    """The last row a commit left in the ledger ``ledger_id``."""

    ledger_id: str
    op_id: int
    row_hash: str


@dataclass(frozen=True)
class Lost:
    """Rows the ledger committed and no longer holds: ``first_op_id`` … ``last_op_id``."""

    first_op_id: int
    last_op_id: int
    last_hash: str

    @property
    def count(self) -> int:
        return self.last_op_id - self.first_op_id + 1


def _line(ledger_id: bytes, op_id: int, row_hash: bytes) -> bytes:
    body = _BODY % (ledger_id, op_id, row_hash)
    return b"%s %08x\n" % (body, zlib.crc32(body))


def read_head(state_dir: Path) -> Head | None:
    """The head ``ledger.head`` holds, or ``None`` (none, unreadable, or torn: its CRC does not match)."""
    try:
        data = (state_dir / HEAD_FILE).read_bytes()
        fields = data.split()
        ledger_id, op_id, row_hash = fields[0], int(fields[1]), fields[2]
        if len(fields) != 4 or data != _line(ledger_id, op_id, row_hash):
            return None
        return Head(ledger_id.decode("ascii"), op_id, row_hash.decode("ascii"))
    except (OSError, ValueError, IndexError):  # UnicodeDecodeError is a ValueError
        return None


def lost_rows(head: Head | None, ledger_id: str, last_op_id: int) -> Lost | None:
    """The rows ``head`` says ledger ``ledger_id`` committed past its ``last_op_id`` now, or ``None``."""
    if head is None or head.ledger_id != ledger_id or head.op_id <= last_op_id:
        return None
    return Lost(last_op_id + 1, head.op_id, head.row_hash)


def record_lost(state_dir: Path, lost: Lost, ledger_id: str) -> Quarantined:
    """Write ``ledger.missing-<UTC>-lost.json``: reported (``cpl status``, ``/status``, ``cpl doctor``) until
    ``cpl doctor --ack-quarantine``, as a deleted ledger is."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = state_dir / f"{_RECORD_PREFIX}{stamp}-lost.json"
    n = 2
    while target.exists():
        target = state_dir / f"{_RECORD_PREFIX}{stamp}-lost-{n}.json"
        n += 1
    ops = f"op_id {lost.first_op_id}" if lost.count == 1 else f"op_id {lost.first_op_id}-{lost.last_op_id}"
    reason = (f"ledger.db (ledger {ledger_id}) lost its last {lost.count} committed "
              f"entr{'y' if lost.count == 1 else 'ies'} ({ops}, last row hash {lost.last_hash[:12]}): its "
              "ledger.db-wal was lost after an unclean stop; they cannot be recovered")
    record = Quarantined(target.name, "", 0, reason, iso_utc(now_ms()), missing=True)
    write_atomic(target, (json.dumps(asdict(record), indent=2, sort_keys=True) + "\n").encode())
    return record


class HeadMark:
    """The writer of ``ledger.head``; one per :class:`~codeplane.tasks.ledger.Ledger`, under its lock."""

    def __init__(self, state_dir: Path) -> None:
        self._path = state_dir / HEAD_FILE
        self._fd: int | None = None
        self._failed = False

    def write(self, ledger_id: str, op_id: int, row_hash: str) -> None:
        """Overwrite the head with the row ``op_id`` of ledger ``ledger_id``. Never raises: a head that cannot be
        written only weakens the check at the next open (logged once); it must not fail a commit that happened."""
        try:
            os.pwrite(self.open(), _line(ledger_id.encode(), op_id, row_hash.encode()), 0)
        except OSError as exc:
            self.close()
            if not self._failed:
                self._failed = True
                log.warning("ledger.head cannot be written; a lost ledger.db-wal would go unnoticed",
                            path=str(self._path), error=str(exc))

    def open(self) -> int:
        """The file's descriptor, opened at the ledger's open so the first commit does not pay for it. Never
        truncated: every line has the same width, and a head emptied before this process's first commit would
        forget the rows an earlier one left in a WAL not yet checkpointed. Raises ``OSError``."""
        if self._fd is None:
            self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
