"""Previewed plans kept in memory between preview and apply/cancel (spec §8.5, §23.7).

A plan lives ``refactor.plan_ttl_sec``; after that ``get`` answers 4005 (expired), and an id that was never
issued — or was cancelled or applied — answers 4004 with the reason. Plans are never persisted: a restart
forgets them, which is safe because apply re-checks every file hash anyway.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from codeplane.core.clock import iso_utc, now_ms
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.models import Collision, FileMove, Operation, PlannedEdit, RefactorPreview, SymbolRef

#: Closed plans remembered so a late call learns *why* the id is gone (bounded).
_TOMBSTONES = 1024


@dataclass(frozen=True)
class PlanOption:
    """One applicable reading of the request: a single one for a clear target, several for a decision."""

    candidate_id: str
    symbol: SymbolRef | None
    #: Code edits and lexical candidates, sorted by (path, line, column); ``doc_edits`` kept apart (§8.11).
    edits: tuple[PlannedEdit, ...]
    doc_edits: tuple[PlannedEdit, ...] = ()
    #: ``(path, sha256)`` for every file the option reads or writes, sorted.
    file_hashes: tuple[tuple[str, str], ...] = ()
    moves: tuple[FileMove, ...] = ()
    deletes: tuple[str, ...] = ()
    #: Clashes with existing bindings; apply refuses (4007) unless the caller accepts them.
    collisions: tuple[Collision, ...] = ()
    #: Files the option creates (content = its edits applied to an empty text); 5005 if one appeared since.
    creates: tuple[str, ...] = ()

    def all_edits(self) -> tuple[PlannedEdit, ...]:
        return self.edits + self.doc_edits

    def edit_by_id(self) -> dict[str, PlannedEdit]:
        return {e.edit_id: e for e in self.all_edits()}

    def signature(self) -> tuple[object, ...]:
        """What must still hold at commit time for this option to be applied as previewed."""
        return (
            tuple((e.path, e.line, e.column, e.old_text, e.new_text, e.certainty) for e in self.edits),
            self.moves, self.deletes, self.creates,
        )


#: Recomputes an option from the current index (two-phase commit re-validation, §8.5a).
Replanner = Callable[[str], PlanOption]


@dataclass(frozen=True)
class Plan:
    refactor_id: str
    operation: Operation
    created_ms: int
    expires_ms: int
    options: tuple[PlanOption, ...]
    preview: RefactorPreview
    replan: Replanner | None = field(default=None, compare=False)

    @property
    def needs_decision(self) -> bool:
        return len(self.options) > 1

    def option(self, candidate_id: str | None) -> PlanOption:
        """The chosen option; with several and no choice, 1003 naming the candidates."""
        if candidate_id is None:
            if len(self.options) == 1:
                return self.options[0]
            raise CodePlaneError(
                ErrorCode.INVALID_ARGUMENTS,
                "this plan needs a decision: pass candidate_id (one of the preview's candidates)",
                details={"field": "candidate_id", "candidates": [o.candidate_id for o in self.options]},
            )
        for option in self.options:
            if option.candidate_id == candidate_id:
                return option
        raise CodePlaneError(
            ErrorCode.INVALID_ARGUMENTS, f"no candidate {candidate_id!r} in plan {self.refactor_id}",
            details={"field": "candidate_id", "candidates": [o.candidate_id for o in self.options]},
        )


class PlanStore:
    """Thread-safe, bounded map of open plans with TTL and tombstones for closed ids."""

    def __init__(self, ttl_sec: int, *, max_plans: int = 256, clock: Callable[[], int] = now_ms) -> None:
        self._ttl_ms = ttl_sec * 1000
        self._max = max_plans
        self._clock = clock
        self._lock = threading.Lock()
        self._plans: OrderedDict[str, Plan] = OrderedDict()
        self._closed: OrderedDict[str, str] = OrderedDict()
        self._counter = itertools.count(1)
        # A per-process prefix keeps ids from one server run from matching plans of the next.
        self._prefix = secrets.token_hex(3)

    def new_id(self) -> str:
        return f"rf_{self._prefix}{next(self._counter):05d}"

    def window(self) -> tuple[int, int, str]:
        """``(created_ms, expires_ms, expires_at)`` for a plan made now."""
        created = self._clock()
        expires = created + self._ttl_ms
        return created, expires, iso_utc(expires)

    def put(self, plan: Plan) -> None:
        with self._lock:
            self._sweep()
            self._plans[plan.refactor_id] = plan
            while len(self._plans) > self._max:
                old_id, _ = self._plans.popitem(last=False)
                self._close(old_id, "evicted")

    def same_open(self, operation: Operation, option: PlanOption) -> Plan | None:
        """An open plan of ``operation`` with exactly this one option (same edits, same file hashes), if any."""
        with self._lock:
            self._sweep()
            return next((plan for plan in reversed(self._plans.values())
                         if plan.operation == operation and plan.options == (option,)), None)

    def get(self, refactor_id: str) -> Plan:
        """The open plan; 4005 if it expired, 4004 if unknown, cancelled or already applied."""
        with self._lock:
            self._sweep()
            plan = self._plans.get(refactor_id)
            if plan is not None:
                return plan
            raise self._gone(refactor_id)

    def close(self, refactor_id: str, state: str) -> Plan:
        """Remove an open plan (``cancelled`` or ``applied``); raises like :meth:`get` if not open."""
        with self._lock:
            self._sweep()
            plan = self._plans.pop(refactor_id, None)
            if plan is None:
                raise self._gone(refactor_id)
            self._close(refactor_id, state)
            return plan

    def open_count(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._plans)

    def _sweep(self) -> None:
        now = self._clock()
        for rid in [rid for rid, p in self._plans.items() if p.expires_ms <= now]:
            del self._plans[rid]
            self._close(rid, "expired")

    def _close(self, refactor_id: str, state: str) -> None:
        self._closed[refactor_id] = state
        while len(self._closed) > _TOMBSTONES:
            self._closed.popitem(last=False)

    def _gone(self, refactor_id: str) -> CodePlaneError:
        state = self._closed.get(refactor_id)
        if state in ("expired", "evicted"):
            return CodePlaneError(
                ErrorCode.REFACTOR_EXPIRED,
                f"refactor plan {refactor_id} {state}; preview it again",
                details={"refactor_id": refactor_id, "state": state, "ttl_sec": self._ttl_ms // 1000},
            )
        message = (f"refactor plan {refactor_id} was already {state}" if state
                   else f"no refactor plan {refactor_id}")
        return CodePlaneError(ErrorCode.REFACTOR_NOT_FOUND, message,
                              details={"refactor_id": refactor_id, "state": state or "unknown"})
