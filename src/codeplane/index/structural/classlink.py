"""The pass the class-based cross-file linkers (``javalink``, ``cslink``, ``phplink``) share: it walks one file's
references in source order, following what each receiver evaluates to (a type, a value of a declared type, a
package), and rewrites their tiers (``Updates``). Types and member lookup are in ``classhierarchy``, the index
rows the pass reads in ``classfacts``.

A type name left unsettled only because a supertype outside the repository could declare a member type of that
name keeps the one candidate the rest of the lookup finds as an ANCHORED target (``ClassLinker.candidate``):
probable, not proven.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from codeplane.index.structural import schema
from codeplane.index.structural.chase import Chaser
from codeplane.index.structural.classfacts import DeclaredTypes, Ref
from codeplane.index.structural.classhierarchy import UNSETTLED, Hierarchy
from codeplane.index.structural.facts import ANCHORED, CERTAIN, PROVEN, STRONG, UNCERTAIN


class Updates:
    """Tier rewrites of one pass: STRONG where a linker found the definition, else the same-file tier (or, for a
    reference through an import that the generic surfaces resolve, their answer)."""

    def __init__(self, fresh: set[int]) -> None:
        self.rows: list[tuple[str, str | None, str, int]] = []
        self.moved: set[tuple[str, str]] = set()
        self._fresh = fresh

    def settle(self, file_id: int, ref: Ref, found: str | None, fallback: str | None = None, *,
               anchored: str | None = None) -> None:
        new: tuple[str, str | None, str]
        if found is not None and found != UNSETTLED:
            new = (STRONG, found, CERTAIN)
        elif fallback is not None:
            new = (STRONG, fallback, CERTAIN)
        elif anchored is not None and ref.local_tier != PROVEN:
            new = (ANCHORED, anchored, UNCERTAIN)  # the one candidate, not proven
        else:
            new = (ref.local_tier, ref.local_target, CERTAIN if ref.local_tier == PROVEN else UNCERTAIN)
        if new != (ref.tier, ref.target, ref.certainty):
            self.rows.append((*new, ref.ref_id))
            if ref.member and file_id not in self._fresh:
                self.moved.add((ref.token, ref.shape or ""))

    def write(self, conn: sqlite3.Connection) -> tuple[int, set[tuple[str, str]]]:
        schema.update_links(conn, self.rows)
        return len(self.rows), self.moved


#: What a receiver evaluates to: ("type" | "value" | "package", a type uid or a package/namespace name).
Value = tuple[str, str]


class ClassLinker:
    """The pass over one file's references shared by the class-based linkers. A language supplies ``h``,
    ``declared``, its package (or namespace) names and the top-level types in each, and three hooks: names in
    import statements, plain names and members. ``gap`` is the width of the member operator (``.``, ``->``)."""

    gap = 1
    h: Hierarchy
    declared: DeclaredTypes
    packages: set[str]
    top: dict[tuple[str, str], list[str]]

    def statements(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> set[int]:
        """Settle the references inside import statements; returns their ids."""
        return set()

    def plain(self, file_id: int, ref: Ref) -> str | None:
        raise NotImplementedError

    def member(self, file_id: int, ref: Ref, receiver: Value | None) -> str | None:
        raise NotImplementedError

    def operator_width(self, ref: Ref) -> int:
        """Characters between a member and the end of its receiver (PHP's ``K::$n`` has ``::$``)."""
        return self.gap

    def candidate(self, file_id: int, ref: Ref) -> str | None:
        """For a name left unsettled: the type it denotes unless a supertype from outside the repository declares
        a member type of that name (kept ANCHORED with this target; never STRONG)."""
        return None

    def link_file(self, file_id: int, refs: list[Ref], chaser: Chaser, updates: Updates) -> None:
        sites: dict[int, list[Ref]] = defaultdict(list)
        for r in refs:
            if r.role == "DEFINITION" and r.bind is not None and not r.member:
                sites[r.bind].append(r)
        values: dict[tuple[int, int], Value] = {}
        done = self.statements(file_id, refs, chaser, updates)
        for r in refs:
            if r.role == "DEFINITION" or r.ref_id in done:
                continue
            if not r.member and r.local_tier == PROVEN and r.via is None:
                declared = self.declared.of_sites(file_id, sites[r.bind]) if r.bind in sites else \
                    self.declared.of_def(r.local_target) if r.local_target else None
                if declared is not None:
                    values[(r.line, r.end_col)] = ("value", declared)
                continue
            receiver = values.get((r.line, r.col - self.operator_width(r))) if r.member else None
            found = self.member(file_id, r, receiver) if r.member else self.plain(file_id, r)
            if found is not None and found != UNSETTLED:
                if found in self.h.types:
                    values[(r.line, r.end_col)] = ("type", found)
                else:
                    declared = self.declared.of_def(found)
                    if declared is not None:
                        values[(r.line, r.end_col)] = ("value", declared)
            elif found is None:
                package = f"{receiver[1]}.{r.token}" if receiver is not None and receiver[0] == "package" else \
                    r.token if not r.member else None
                if package is not None and any(p == package or p.startswith(package + ".") for p in self.packages):
                    values[(r.line, r.end_col)] = ("package", package)
            anchored = self.candidate(file_id, r) if found == UNSETTLED else None
            updates.settle(file_id, r, found, chaser.via(r.via) if r.via else None, anchored=anchored)

    def in_package(self, package: str, name: str) -> str | None:
        """``pkg.Name`` written out: the one top-level type ``Name`` of that package or namespace."""
        top = self.top.get((package, name), [])
        return (top[0] if len(top) == 1 else UNSETTLED) if top else None
