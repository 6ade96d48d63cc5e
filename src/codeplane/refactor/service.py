"""The refactor service (spec §8, §23.7): preview → inspect → apply/cancel for rename, move and delete.

Planning reads one consistent snapshot of the index and the files on disk and writes nothing (§8.2).
Applying goes through the mutation engine in one atomic batch, every edit pinned to the SHA-256 the
preview saw (D7); a file changed since the preview fails the whole batch with 5002 and the list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path

from codeplane.core.clock import now_ms
from codeplane.core.config import RefactorConfig
from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.logging import get_logger
from codeplane.index.service import IndexService
from codeplane.mutation import MutationEngine, git_index
from codeplane.refactor import attributes, goembed
from codeplane.refactor.apply import Applier
from codeplane.refactor.assemble import Draft, build_option
from codeplane.refactor.batch import read_sources
from codeplane.refactor.collisions import find_collisions
from codeplane.refactor.decisions import symbol_ref
from codeplane.refactor.docowners import other_owner
from codeplane.refactor.excluded import ExcludedFiles, excluded_mentions
from codeplane.refactor.facts import Def, FactReader, Ref
from codeplane.refactor.goexport import check_export
from codeplane.refactor.gopackage import GoPackageTarget, package_names
from codeplane.refactor.impact import ImpactPlanner
from codeplane.refactor.indexview import facts_source, lexical_paths
from codeplane.refactor.inspect import inspect_plan
from codeplane.refactor.jsshorthand import MEMBER_KINDS, split_shorthands
from codeplane.refactor.jsxprops import typed_components
from codeplane.refactor.localnames import local_binding, plan_local
from codeplane.refactor.members import ClassGraph, MemberFamily, overridden_root, owner_names
from codeplane.refactor.models import (
    CERTAINTY_RANK,
    ApplyOutcome,
    Certainty,
    Coverage,
    FileMove,
    ImpactReport,
    InspectPage,
    RefactorPreview,
)
from codeplane.refactor.move import moved_dirs, moved_files, moved_modules, plan_move
from codeplane.refactor.movedocs import file_move_names, move_coverage, sweep_move_docs, symbol_move_names
from codeplane.refactor.phpnames import checked_new_name
from codeplane.refactor.plans import Plan, PlanOption, PlanStore
from codeplane.refactor.preview import OptionReport, decision_preview, needs_judgment, single_preview
from codeplane.refactor.pyattrstrings import module_attribute_strings
from codeplane.refactor.pyparams import parameter_keywords
from codeplane.refactor.rename import plan_structural, reexports, require_keys
from codeplane.refactor.spans import SourceText
from codeplane.refactor.sweep import SweepInput, sweep
from codeplane.repo.ignore import IgnoreRules

log = get_logger(__name__)

_LIMIT = 100_000
#: Places of unapplied doc edits an ``apply: true`` answer lists.
_DOCS_LISTED = 10

#: A consistent read snapshot of the structural index.
FactSource = Callable[[], AbstractContextManager[FactReader]]
#: Files holding ``name`` as a whole identifier (complete), and whether the search was truncated.
LexicalPaths = Callable[[str], tuple[set[str], bool]]
TestsFor = Callable[[Sequence[str]], list[str]]


class RefactorService:
    """Plans and applies refactors. Thread-safe: plans live in a locked store, planning is read-only."""

    def __init__(self, root: Path, config: RefactorConfig, *, facts: FactSource, lexical_paths: LexicalPaths,
                 applier: Applier, ignore_rules: Callable[[], IgnoreRules], tests_for: TestsFor | None = None,
                 clock: Callable[[], int] = now_ms, max_batch_files: int | None = None) -> None:
        self.root = root
        self.config = config
        self._facts = facts
        self._lexical_paths = lexical_paths
        self._applier = applier
        self._ignore_rules = ignore_rules
        self._tests_for = tests_for
        self._excluded = ExcludedFiles(root)
        self._max_batch_files = max_batch_files
        self.plans = PlanStore(config.plan_ttl_sec, clock=clock)

    @classmethod
    def for_repository(cls, root: Path, config: RefactorConfig, index: IndexService, mutation: MutationEngine, *,
                       tests_for: TestsFor | None = None) -> RefactorService:
        """The service over a running index and the mutation engine (the server's wiring)."""
        applier = Applier(root, mutation.apply, can_git_mv=git_index.can_record_move,
                          record_git_move=git_index.record_move)
        return cls(root, config, facts=facts_source(index), lexical_paths=lexical_paths(index), applier=applier,
                   ignore_rules=lambda: index.ignore_rules, tests_for=tests_for,
                   max_batch_files=mutation.config.max_batch_files)

    def _batch_warnings(self, option: PlanOption) -> list[str]:
        """A plan the mutation engine cannot take in one batch is said so up front, not at apply time."""
        files = len({e.path for e in option.all_edits()} | {m.to_path for m in option.moves} | set(option.deletes))
        if self._max_batch_files is not None and files > self._max_batch_files:
            return [f"this plan touches {files} files; mutation.max_batch_files is {self._max_batch_files}, so apply "
                    "will be refused — raise that limit to apply it as one atomic batch"]
        return []

    # -- reading -------------------------------------------------------------------------------------
    def _read(self, paths: Iterable[str]) -> tuple[dict[str, SourceText], dict[str, str]]:
        return read_sources(self.root, paths)

    def _check_enabled(self) -> None:
        if not self.config.enabled:
            raise CodePlaneError(ErrorCode.REFACTOR_UNSUPPORTED, "the refactor engine is disabled (refactor.enabled)",
                                 details={"config": "refactor.enabled"})

    # -- rename ----------------------------------------------------------------------------------------
    def rename(self, symbol: str | None, new_name: str, *, path: str | None = None, line: int | None = None,
               column: int | None = None) -> RefactorPreview:
        """Preview renaming one definition. Ambiguous targets answer ``needs_decision`` (§8.5a)."""
        from codeplane.refactor.targets import parse_position, resolve_targets

        self._check_enabled()
        with self._facts() as reader:
            try:
                targets, total = resolve_targets(reader, symbol, path=path, line=line, column=column, rename=True)
            except CodePlaneError as exc:
                position = parse_position(symbol, path, line, column)
                local = local_binding(reader, *position) if exc.error is ErrorCode.SYMBOL_NOT_FOUND and position \
                    else None
                if local is None:
                    raise
                return self._rename_local(reader, local[0], local[1], checked_new_name(local[0], new_name))
        for target in targets:
            new_name = checked_new_name(target, new_name)
        if any(t.name == new_name for t in targets):
            raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"the symbol is already named {new_name!r}",
                                 details={"field": "new_name"})
        # Lexical search opens its own read transaction, so it runs between the two fact snapshots.
        found = self._lexical_paths(targets[0].name)
        with self._facts() as reader:
            current = [reader.get_def(t.def_uid) or attributes.current(reader, t) for t in targets]
            if any(c is None for c in current):
                raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "the index changed while planning; retry",
                                     details={"symbol": symbol}, retryable=True)
            for target in targets:
                check_export(reader, target, new_name)
            reports = [self._rename_option(reader, t, new_name, f"c{i + 1}", found) for i, t in enumerate(targets)]
        return self._store_rename(targets, reports, new_name, total)

    def _rename_option(self, reader: FactReader, target: Def, new_name: str, candidate_id: str,
                       lexical: tuple[set[str], bool]) -> OptionReport:
        graph = ClassGraph(reader, self.root)
        asked, root = target, overridden_root(graph, target)
        target = root or target
        structural = plan_structural(reader, graph, target, new_name)
        draft = structural.draft
        planned = draft.planned_positions()
        draft.code += [(e, "high") for e in require_keys(reader, graph, target, new_name, lexical[0])
                       if (e.path, e.line, e.column) not in planned]
        binders = {target.path} | {e.path for e, _ in draft.code if e.reason == "import"}
        draft.code += [(e, "medium") for e in module_attribute_strings(
            reader, graph, target, new_name, lexical[0], binds=lambda path: reexports(reader, path, binders, 0))
            if (e.path, e.line, e.column) not in planned]
        draft.symbol = symbol_ref(asked)
        _with_embedded_fields(reader, graph, target, new_name, draft)
        if root is not None:
            draft.warnings.append(f"{asked.qualified_name} overrides {root.qualified_name}: renamed with it and "
                                  "every override of it (renaming one alone breaks the override)")
        draft.warnings += _go_interfaces(reader, target)
        if target.path.endswith(".java") and target.parent_uid is None and \
                target.path.rsplit("/", 1)[-1] == f"{target.name}.java":
            moved = f"{target.path[:-len(target.name) - 5]}{new_name}.java"
            # javac: "class X is public, should be declared in a file named X.java".
            draft.warnings.append(f"{target.path} is named after the class: Java needs it at {moved} after the "
                                  f"rename (refactor_move from_path={target.path!r}, to_path={moved!r})")
        found, truncated = lexical
        planned_paths = {e.path for e, _ in draft.code}
        paths = sorted(found | planned_paths)
        sources, hashes = self._read(paths)
        structural_paths = frozenset(f.path for f in reader.files() if f.structural)
        coverage = sweep(draft, SweepInput(
            name=target.name, new_name=new_name, sources=sources,
            refs=reader.refs_named(target.name, paths, _LIMIT), dynamic=reader.dynamic_sites(paths, _LIMIT),
            structural_paths=structural_paths, docs=self.config.doc_sweep, truncated=truncated,
            key_owners=_key_owners(structural.family),
            typed_component=typed_components(reader, graph.text, _key_owners(structural.family)),
            this_classes=frozenset(
                (c.path, c.name_line, c.name) for c in structural.family.classes.values()) if structural.family
            else frozenset(),
            member_owner=_member_owner(target), member_twins=_member_twins(reader, target),
            go_package=_go_package(reader, target, paths), qualified_name=target.qualified_name,
            python_member_scope=_python_member_scope(reader, target),
            member_classes=frozenset(c.name for c in structural.family.classes.values()) if structural.family
            else frozenset(),
            other_owner=other_owner(reader, target, member=structural.family is not None, binders=binders),
            other_kind=structural.other_kind,
        ))
        coverage = self._with_excluded(draft, coverage, target.name, new_name)
        _split_shorthands(draft, sources, target, new_name, structural.family)
        draft.collisions = find_collisions(reader, target, new_name, structural.family, structural.ref_scopes)
        owners = owner_names(structural.family.twins) if structural.family else []
        option = build_option(candidate_id, draft, sources, hashes)
        return OptionReport(option, coverage, list(draft.warnings) + self._batch_warnings(option), owners, paths)

    def _rename_local(self, reader: FactReader, target: Def, group: list[Ref], new_name: str) -> RefactorPreview:
        draft, scopes = plan_local(group, new_name)
        draft.symbol = symbol_ref(target)
        keywords, warnings = parameter_keywords(reader, ClassGraph(reader, self.root), target, group, new_name)
        draft.code += keywords
        draft.warnings += warnings
        sources, hashes = self._read([target.path, *sorted({e.path for e, _ in keywords} - {target.path})])
        coverage = sweep(draft, SweepInput(
            name=target.name, new_name=new_name, sources={target.path: sources[target.path]},
            refs=reader.refs_named(target.name, [target.path], _LIMIT),
            dynamic=reader.dynamic_sites([target.path], _LIMIT), structural_paths=frozenset([target.path]),
            docs=self.config.doc_sweep))
        _split_shorthands(draft, sources, target, new_name)
        draft.collisions = find_collisions(reader, target, new_name, None, scopes)
        option = build_option("c1", draft, sources, hashes)
        rid = self.plans.new_id()
        created, expires, expires_at = self.plans.window()
        preview = single_preview(rid, "rename", OptionReport(option, coverage, list(draft.warnings)),
                                 expires_at=expires_at,
                                 docs=self.config.doc_sweep, symbol=draft.symbol, new_name=new_name)
        self.plans.put(Plan(rid, "rename", created, expires, (option,), preview))
        return preview

    def _with_excluded(self, draft: Draft, coverage: Coverage, name: str, new_name: str) -> Coverage:
        tree = self._excluded.tree(self._ignore_rules())
        edits, files = excluded_mentions(self.root, tree, name, new_name)
        draft.code += [(e, "low") for e in edits]
        by_reason = dict(coverage.by_reason)
        if edits:
            by_reason["excluded_path"] = len(edits)
        return coverage.model_copy(update={
            "lexical_occurrences": coverage.lexical_occurrences + len(edits),
            "low_candidates": coverage.low_candidates + len(edits), "by_reason": by_reason,
            "excluded_files_with_hits": files, "pruned_dirs": list(tree.pruned_dirs),
            "truncated": coverage.truncated or tree.truncated,
        })

    def _store_rename(self, targets: Sequence[Def], reports: Sequence[OptionReport], new_name: str,
                      total: int) -> RefactorPreview:
        rid = self.plans.new_id()
        created, expires, expires_at = self.plans.window()
        if len(reports) == 1:
            preview = single_preview(rid, "rename", reports[0], expires_at=expires_at, docs=self.config.doc_sweep,
                                     symbol=symbol_ref(targets[0]), new_name=new_name)
        else:
            lines = [self._def_line(d) for d in targets]
            preview = decision_preview(rid, reports, targets, lines, expires_at=expires_at, new_name=new_name,
                                       total_matches=total)
        uids = {f"c{i + 1}": t.def_uid for i, t in enumerate(targets)}

        def replan(candidate_id: str) -> PlanOption:
            found = self._lexical_paths(targets[0].name)
            with self._facts() as reader:
                target = reader.get_def(uids[candidate_id])
                if target is None:
                    raise CodePlaneError(ErrorCode.MUTATION_PRECONDITION_FAILED,
                                         "the chosen definition no longer exists; preview again",
                                         details={"candidate_id": candidate_id, "reason": "definition gone"})
                return self._rename_option(reader, target, new_name, candidate_id, found).option

        self.plans.put(Plan(rid, "rename", created, expires, tuple(r.option for r in reports), preview,
                            replan if len(reports) > 1 else None))
        return preview

    def _def_line(self, d: Def) -> str:
        sources, _ = self._read([d.path])
        src = sources.get(d.path)
        return src.snippet(d.name_line) if src else ""

    # -- move ------------------------------------------------------------------------------------------
    def move(self, from_path: str, to_path: str) -> RefactorPreview:
        """Preview moving a file (or a directory of files) and rewriting the imports that name it."""
        self._check_enabled()
        with self._facts() as reader:
            universe = {f.path: f for f in reader.files()}
        moved = moved_files(self.root, universe, from_path, to_path)
        searched: dict[str, set[str]] = {}

        def candidates(word: str) -> set[str]:
            if word not in searched:  # the doc sweep asks for the planner's words again
                searched[word] = self._lexical_paths(word)[0]
            return searched[word]

        draft, sources, hashes = plan_move(universe, moved, self._read, candidates)
        names = file_move_names(moved_modules(universe, moved), moved,
                                moved_dirs(self.root, moved, from_path, to_path))
        mentions = sweep_move_docs(draft, names, {p for w in sorted(names.words()) for p in candidates(w)},
                                   read=self._read, docs=self.config.doc_sweep, sources=sources, hashes=hashes)
        option = build_option("c1", draft, sources, hashes)
        coverage = move_coverage(draft, len(sources), mentions, self.config.doc_sweep)
        rid = self.plans.new_id()
        created, expires, expires_at = self.plans.window()
        first_from, first_to = sorted(moved.items())[0]
        move = FileMove(from_path=from_path.rstrip("/"), to_path=to_path.rstrip("/")) if len(moved) > 1 \
            else FileMove(from_path=first_from, to_path=first_to)
        report = OptionReport(option, coverage, list(draft.warnings) + self._batch_warnings(option), [],
                              sorted(sources))
        preview = single_preview(rid, "move", report, expires_at=expires_at, docs=self.config.doc_sweep, move=move)
        self.plans.put(Plan(rid, "move", created, expires, (option,), preview))
        return preview

    def move_symbol(self, symbol: str, to_path: str, *, keep_reexport: bool = False,
                    from_path: str | None = None) -> RefactorPreview:
        """Preview moving one Python definition (qualified name, def_uid or path:line[:col]; ``from_path``: the
        file defining it) into the module at ``to_path`` (created when missing) and rewriting every importer
        (:mod:`symbolmove`)."""
        from codeplane.refactor.jsimports import is_js
        from codeplane.refactor.jssymbolmove import plan_js_move
        from codeplane.refactor.symbolmove import SymbolMovePlanner, check_target
        from codeplane.refactor.targets import resolve_targets

        self._check_enabled()
        with self._facts() as reader:
            targets, total = resolve_targets(reader, symbol, path=from_path)
            if total > 1:
                raise CodePlaneError(
                    ErrorCode.INVALID_ARGUMENTS, f"{symbol!r} matches {total} definitions; name one by def_uid",
                    details={"field": "symbol", "candidates": [
                        {"def_uid": d.def_uid, "qualified_name": d.qualified_name, "path": d.path,
                         "line": d.name_line} for d in targets]})
            target = targets[0]
            universe = {f.path: f for f in reader.files()}
        dest = check_target(self.root, universe, target, to_path)

        def candidates(word: str) -> set[str]:
            return self._lexical_paths(word)[0]

        # Lexical search opens its own read transaction: collect it before the planning snapshot. Files
        # spelling the old module's name are read too (``from old import *`` does not spell the symbol).
        stem = target.path.rsplit("/", 1)[-1].split(".")[0]
        if stem in ("__init__", "index"):
            stem = target.path.rsplit("/", 2)[-2] if target.path.count("/") else stem
        found = candidates(target.name) | (candidates(stem) if stem.isidentifier() else set())
        with self._facts() as reader:
            if reader.get_def(target.def_uid) is None:
                raise CodePlaneError(ErrorCode.INDEX_NOT_READY, "the index changed while planning; retry",
                                     details={"symbol": symbol}, retryable=True)
            modules: tuple[str | None, str | None] = (None, None)
            if is_js(target.path):
                draft, sources, hashes, creates = plan_js_move(
                    target, dest, universe, self._read, found, keep_reexport=keep_reexport,
                    dest_exists=(self.root / dest).exists())
            else:
                planner = SymbolMovePlanner(reader, universe, target, dest, read=self._read,
                                            candidates=lambda _: found, keep_reexport=keep_reexport,
                                            dest_exists=(self.root / dest).exists())
                draft, sources, hashes, creates = planner.plan()
                modules = (planner.move.old_module, planner.move.new_module)
        draft.symbol = symbol_ref(target)
        draft.creates = creates
        mentions = sweep_move_docs(draft, symbol_move_names(target.name, target.path, dest, *modules), found,
                                   read=self._read, docs=self.config.doc_sweep, sources=sources, hashes=hashes)
        option = build_option("c1", draft, sources, hashes)
        coverage = move_coverage(draft, len(sources), mentions, self.config.doc_sweep)
        rid = self.plans.new_id()
        created, expires, expires_at = self.plans.window()
        report = OptionReport(option, coverage, list(draft.warnings) + self._batch_warnings(option), [],
                              sorted(sources))
        preview = single_preview(rid, "move", report, expires_at=expires_at, docs=self.config.doc_sweep,
                                 symbol=draft.symbol, move=FileMove(from_path=target.path, to_path=dest))
        self.plans.put(Plan(rid, "move", created, expires, (option,), preview))
        return preview

    # -- impact / delete -------------------------------------------------------------------------------
    def impact(self, target: str, *, path: str | None = None, line: int | None = None, column: int | None = None,
               limit: int = 100, cursor: str | None = None) -> ImpactReport:
        """References to a symbol or file with tiers, importers, affected tests, and a deletion plan."""
        self._check_enabled()
        with self._facts() as reader:
            subject = ImpactPlanner.subject(reader, target, path=path, line=line, column=column)
        word = subject.word()
        found = self._lexical_paths(word) if word else (set(), False)
        with self._facts() as reader:
            planner = ImpactPlanner(self.root, reader, found[0], self._read, self._tests_for)
            report, option = planner.impact(subject, limit=limit, cursor=cursor)
        if option is None:
            return report
        # The same deletion asked again (another page, the same call repeated) names the plan made the first
        # time: a new id per call left one open plan per page (178 after a few runs) and changed the answer.
        same = self.plans.same_open("delete", option)
        if same is not None:
            return report.model_copy(update={"delete_refactor_id": same.refactor_id})
        rid = self.plans.new_id()
        created, expires, expires_at = self.plans.window()
        preview = single_preview(rid, "delete", OptionReport(option, None), expires_at=expires_at,
                                 docs=self.config.doc_sweep, symbol=report.symbol)
        # The deletion's plan carries the impact's warnings (references that remain), for its apply to say again.
        preview = preview.model_copy(update={"warnings": [*preview.warnings, *report.warnings]})
        self.plans.put(Plan(rid, "delete", created, expires, (option,), preview))
        return report.model_copy(update={"delete_refactor_id": rid})

    # -- plan operations --------------------------------------------------------------------------------
    def inspect(self, refactor_id: str, *, candidate_id: str | None = None,
                certainties: Sequence[Certainty] = ("medium", "low"), kinds: Sequence[str] = ("code", "doc"),
                cursor: str | None = None, limit: int = 50, context_lines: int = 2) -> InspectPage:
        plan = self.plans.get(refactor_id)
        return inspect_plan(self.root, plan, candidate_id=candidate_id, certainties=certainties, kinds=kinds,
                            cursor=cursor, limit=limit, context_lines=context_lines)

    def preview_of(self, refactor_id: str) -> RefactorPreview:
        return self.plans.get(refactor_id).preview

    def apply(self, refactor_id: str, *, candidate_id: str | None = None, include: Sequence[str] = (),
              exclude: Sequence[str] = (), min_certainty: Certainty = "medium", apply_docs: bool | None = None,
              accept_collisions: bool = False) -> ApplyOutcome:
        """Apply the plan's edits (default: high + medium, docs per config) in one atomic batch."""
        plan = self.plans.get(refactor_id)
        option = plan.option(candidate_id)
        if plan.replan is not None:
            self._revalidate(plan, option)
        docs = self.config.doc_sweep
        outcome = self._applier.apply(
            refactor_id, option, include=include, exclude=exclude, min_certainty=min_certainty,
            apply_docs=docs.enabled and (docs.auto_apply if apply_docs is None else apply_docs),
            doc_min=docs.min_confidence, accept_collisions=accept_collisions)
        self.plans.close(refactor_id, "applied")
        # What the preview warned of holds for what was written (a deletion whose references remain): said again.
        said = [w for w in plan.preview.warnings if w not in outcome.warnings]
        return outcome.model_copy(update={"warnings": [*said, *outcome.warnings]}) if said else outcome

    def apply_when_certain(self, preview: RefactorPreview) -> ApplyOutcome | str:
        """Apply a preview just made, exactly as ``apply`` with its defaults, when nothing in it needs the agent's
        judgment (every edit high-certainty, no decision, collision or warning); otherwise say why and leave the
        plan pending for ``apply``."""
        reason = needs_judgment(preview)
        if reason is not None:
            return reason
        option = self.plans.get(preview.refactor_id).option(None)
        outcome = self.apply(preview.refactor_id)
        docs = self.config.doc_sweep
        return outcome if docs.auto_apply or not docs.enabled else _docs_left(outcome, option, docs.min_confidence)

    def _revalidate(self, plan: Plan, option: PlanOption) -> None:
        """Decision commit (§8.5a): re-plan the chosen candidate now; any shift refuses the commit."""
        assert plan.replan is not None
        fresh = plan.replan(option.candidate_id)
        if fresh.signature() != option.signature():
            raise CodePlaneError(
                ErrorCode.MUTATION_PRECONDITION_FAILED,
                "the plan for this candidate changed since the preview; nothing was applied — preview again",
                details={"refactor_id": plan.refactor_id, "candidate_id": option.candidate_id,
                         "reason": "state shifted", "previewed_edits": len(option.edits),
                         "current_edits": len(fresh.edits)},
            )

    def cancel(self, refactor_id: str) -> Plan:
        return self.plans.close(refactor_id, "cancelled")

    def status(self) -> dict[str, object]:
        return {"enabled": self.config.enabled, "open_plans": self.plans.open_count(),
                "plan_ttl_sec": self.config.plan_ttl_sec}


def _docs_left(outcome: ApplyOutcome, option: PlanOption, floor: Certainty) -> ApplyOutcome:
    """``apply: true`` wrote the code but, with ``doc_sweep.auto_apply`` off, not the doc edits ``apply_docs`` would
    have: the answer says where the docs are left stale (by place: the applied plan takes no more ids)."""
    left = [e for e in option.doc_edits if CERTAINTY_RANK[e.certainty] >= CERTAINTY_RANK[floor]]
    if not left:
        return outcome
    where = ", ".join(f"{e.path}:{e.line}" for e in left[:_DOCS_LISTED])
    more = f" (+{len(left) - _DOCS_LISTED} more)" if len(left) > _DOCS_LISTED else ""
    return outcome.model_copy(update={"warnings": [
        *outcome.warnings, f"{len(left)} doc edits not applied (refactor.doc_sweep.auto_apply is off): {where}{more}"]})


def _split_shorthands(draft: Draft, sources: dict[str, SourceText], target: Def, new_name: str,
                      family: MemberFamily | None = None) -> None:
    """``{ merge }`` keeps the half the rename is not about (:mod:`jsshorthand`); the preview says so."""
    # An attribute a method assigns (``this.closed = true``, a ``variable`` of its class) is a member too: its key
    # is what ``const { closed } = this`` reads.
    member = target.kind in MEMBER_KINDS or family is not None
    kept = split_shorthands(draft, sources, member=member)
    if kept and not member:
        draft.warnings.append(
            f"{kept} shorthand key(s) kept: {{ {target.name} }} becomes {{ {target.name}: {new_name} }}, so what "
            f"reads the key (an importer's .{target.name}) is unchanged")


def _with_embedded_fields(reader: FactReader, graph: ClassGraph, target: Def, new_name: str, draft: Draft) -> None:
    """A Go type's embedded fields (``struct { cart.Cart }``) are named by it: each is renamed with the type, with
    the uses the index resolved to it (``goembed.py``). A use it could not resolve is left to the sweep, which
    proposes it: another embedding's plan must not propose a use the index resolved to this one."""
    for embedded in goembed.embedded_fields(reader, graph.text, target):
        planned = draft.planned_positions()
        for edit, certainty in plan_structural(reader, graph, embedded, new_name).draft.code:
            if certainty == "low" or (edit.path, edit.line, edit.column) in planned:
                continue
            at_definition = (edit.path, edit.line, edit.column) == (embedded.path, embedded.name_line,
                                                                    embedded.name_column)
            draft.code.append((replace(edit, reason="embedded_field") if at_definition else edit, certainty))


def _go_package(reader: FactReader, target: Def, paths: Sequence[str]) -> GoPackageTarget | None:
    """For a Go package-level definition: what its sweep needs to set aside ``x.Name`` of other values."""
    if not target.path.endswith(".go") or target.parent_uid is not None or target.kind in MEMBER_KINDS:
        return None
    package_dir = target.path.rpartition("/")[0]
    return GoPackageTarget(target.def_uid, package_dir, {
        path: package_names(reader.imports_in_file(path, _LIMIT), package_dir) for path in paths
        if path.endswith(".go")})


def _go_interfaces(reader: FactReader, target: Def) -> list[str]:
    """Go interfaces of the repository that require a method of the renamed one's name: a type satisfies them
    implicitly, so renaming its method may stop it doing so (``*cart.Cart does not implement Summer``), and
    nothing in the code names the link. Said, never guessed at: the interface's own method is another symbol."""
    if target.language != "go" or target.kind != "method" or target.qualified_name.count(".") < 2:
        return []
    owners = [owner for d in reader.defs_named(target.name, _LIMIT) if d.language == "go" and d.parent_uid
              and d.parent_uid != target.parent_uid  # its own interface: implementations go with it (goimpls)
              and (owner := reader.get_def(d.parent_uid)) is not None and owner.kind == "interface"]
    return [f"{target.qualified_name} may satisfy {o.qualified_name} ({o.path}:{o.name_line}), which requires "
            f"{target.name}: a type that satisfies it stops doing so after the rename" for o in owners[:5]]


def _python_member_scope(reader: FactReader, target: Def) -> Callable[[int], str | None] | None:
    """For a member of a Python class: the kind of a scope, by id (``sweep.SweepInput.python_member_scope``)."""
    owner = reader.get_def(target.parent_uid) if target.parent_uid is not None else None
    if not target.path.endswith((".py", ".pyi")) or owner is None or owner.kind != "class":
        return None
    kinds: dict[int, str | None] = {}

    def kind(scope_id: int) -> str | None:
        if scope_id not in kinds:
            scope = reader.scope(scope_id)
            kinds[scope_id] = scope.kind if scope is not None else None
        return kinds[scope_id]
    return kind


def _member_owner(target: Def) -> str | None:
    """``Version`` for a Rust method or field ``src/lib.Version.parse`` (its lexical owner type)."""
    parts = target.qualified_name.split(".")
    return parts[-2] if target.path.endswith(".rs") and target.kind in ("method", "field") and len(parts) >= 2 \
        else None


def _member_twins(reader: FactReader, target: Def) -> bool:
    """Another Rust type declares a method or field of the renamed member's name."""
    owner = _member_owner(target)
    return owner is not None and any(
        d.def_uid != target.def_uid and d.path.endswith(".rs") and d.kind in ("method", "field")
        and d.qualified_name.split(".")[-2:-1] != [owner] for d in reader.defs_named(target.name, _LIMIT))


def _key_owners(family: MemberFamily | None) -> frozenset[str]:
    """Family class names that type object-literal keys of the renamed member (none used by an outside twin)."""
    if family is None:
        return frozenset()
    return frozenset(c.name for c in family.classes.values()) - {t.name for t in family.twins}
