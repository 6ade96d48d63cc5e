"""Text renderings of test discovery and impact answers (issue 16): what a next ``run_test_targets`` needs.

A target list is its ids (what ``targets=`` takes) with their estimated seconds, the command said once per
group of targets run alike (``<target>`` standing for the id) instead of once per target. An impact selection
is a head line (tier, counts, what changed), then the test files grouped by the reasons they were selected
(most files share them: a conftest or a package import), their selected cases after them; what could not be
followed (unresolved files and imports, module-level fallbacks, modules no test imports) on a line each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from codeplane.repo.universe import quoted_path
from codeplane.server.answers import in_repo
from codeplane.server.tools.git_render import path_text
from codeplane.server.tools.tests_models import ImpactCaseModel, ImpactMatchModel, ImpactModel, TargetModel

if TYPE_CHECKING:
    from codeplane.server.tools.tests import DiscoverResult, InspectResult

#: Names listed on one line of the text at most; the rest are counted (the record has them all).
_NAMES_SHOWN = 20
#: Module-level fallbacks the text explains, at most: each is a line of ~400 bytes (its chain from the test
#: to the change), and the selection they caused is listed above them anyway.
_FALLBACKS_SHOWN = 3


def _names(names: Sequence[str], total: int | None = None) -> str:
    shown = " ".join(names[:_NAMES_SHOWN])
    more = (total if total is not None else len(names)) - min(len(names), _NAMES_SHOWN)
    return shown + (f" (+{more} more)" if more > 0 else "")


def _shown(names: Sequence[str]) -> list[str]:
    """Modules, definitions and test ids as a line shows them: each holds a file's path (``a/b.py::f``), quoted
    as that path is when it holds a control character (a newline read as a line of its own)."""
    return [path_text(name) for name in names]


def _template(target: TargetModel, root: str) -> str:
    """The command with the target (or the run of its selected ``target::case`` ids) as ``<target>``, a program
    inside the repository ``root`` relative to the target's cwd (``.venv/bin/python``, not the whole path)."""
    parts: list[str] = []
    for part in target.cmd:
        mine = part == target.target_id or part.startswith(f"{target.target_id}::")
        if not (mine and parts and parts[-1] == "<target>"):
            parts.append("<target>" if mine else in_repo(part, root, target.cwd))
    return " ".join(parts)


def _case(case: ImpactCaseModel, usual: str) -> str:
    """``test_x``, its confidence when not its file's (``test_y (low)``), ``(coverage)`` when that selected it."""
    marks: list[str] = [case.confidence] if case.confidence != usual else []
    marks += ["coverage"] if case.source == "coverage" else []
    return case.case + (f" ({', '.join(marks)})" if marks else "")


#: A test file's own reasons, and its cases' chains to the changed code (inspect), the text shows at most;
#: the chains of one file mostly run the same way (a test runner's entry point), the record has them all.
_REASONS_SHOWN = 2
_CHAINS_SHOWN = 1


def _chain_line(case: str, chain: list[str], said: list[list[str]]) -> str:
    """``case → a → b → changed``; the part a chain shares with one said above as ``…`` (every click test reached
    ``utils.py`` through the same seven calls from ``BaseCommand.main``: ~250 bytes a file, the same each time)."""
    shared = max((_common_tail(chain, other) for other in said), default=0)
    said.append(chain)
    if shared >= 2:
        # The first shared step stays (where this chain joins the one above; a chain equal to one above keeps
        # its first step), and the chain's own elision mark is not said again before the "…" of the tail.
        kept = chain[:max(len(chain) - shared + 1, 1)]
        while kept and kept[-1] == "…":
            kept.pop()
        return f"  {' → '.join([case, *map(path_text, kept)])} → … (as above)"
    return f"  {case} → {' → '.join(map(path_text, chain))}"


def _common_tail(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _match_lines(match: ImpactMatchModel, said: list[list[str]] | None = None) -> list[str]:
    """A file selected by cases: its own reasons (not the per-case chains, said under the cases), the cases
    by name, and the first case's chain from the test to the changed code (``said``: the chains shown above)."""
    own = [r for r in match.reasons if not r.startswith(f"{match.test_file}::")]
    lines = [f"{match.confidence} {quoted_path(match.test_file)}"
             + (f": {'; '.join(own[:_REASONS_SHOWN])}" if own else "")
             + (f" (+{len(own) - _REASONS_SHOWN} more reasons)" if len(own) > _REASONS_SHOWN else "")]
    lines.append(f"  {len(match.cases)} case(s): {_names([_case(c, match.confidence) for c in match.cases])}")
    for case in [c for c in match.cases if c.chain][:_CHAINS_SHOWN]:
        chain = case.chain[1:] if case.chain[0] == f"{match.test_file}::{case.case}" else case.chain
        lines.append(_chain_line(case.case, list(chain), said if said is not None else []))
    return lines


def render_targets(targets: Sequence[TargetModel], *, case_names: bool = True, root: str = "") -> list[str]:
    """Targets grouped by how they run (runner, language, kind, cwd, command): a group's line, then its ids;
    a target running selected cases with their names, or their count (``case_names=False``: a selection's cases
    are named by inspect_affected_tests, with why each was selected). ``root``: the repository's, whose programs
    the commands name relative to their cwd."""
    groups: dict[tuple[str, str, str, str, str], list[TargetModel]] = {}
    for target in targets:
        key = (target.runner, target.lang, target.kind, target.cwd, _template(target, root))
        groups.setdefault(key, []).append(target)
    lines: list[str] = []
    for (runner, lang, kind, cwd, template), members in groups.items():
        # A runner named for its language (go) says it once: "go go unit" read as a stutter.
        how = runner if lang == runner else f"{runner} {lang}"
        lines.append(f"{how} {kind} (cwd {quoted_path(cwd)}): {template}")
        for t in members:
            cases = (_names(t.cases) if case_names else f"{len(t.cases)} case(s)") if t.cases else ""
            lines.append(f"  {quoted_path(t.target_id)} ~{t.estimated_cost:.1f}s" + (f": {cases}" if cases else ""))
    return lines


def _noun(impact: ImpactModel) -> str:
    """What the matches are: test files, Go test packages (``cmp/cmpopts``: "4 test files" named four directories),
    or both."""
    kinds = {"." in m.test_file.rsplit("/", 1)[-1] for m in impact.matches}
    return "test packages" if kinds == {False} else "test targets" if len(kinds) > 1 else "test files"


def _impact_head(impact: ImpactModel) -> str:
    """``impact partial: 19 test files (0 high, 19 low) for <changed definitions>``."""
    changed, changed_total = ((impact.changed_symbols, impact.changed_symbols_total) if impact.changed_symbols
                              else (impact.changed_modules, impact.changed_modules_total))
    return (f"impact {impact.confidence}: {impact.matches_total} {_noun(impact)} ({impact.high} high, "
            f"{impact.low} low)" + (f" for {_names(_shown(changed), changed_total or None)}" if changed else ""))


def render_impact(impact: ImpactModel, *, paged: bool = False) -> list[str]:
    """The impact's lines; ``paged``: its matches are one page of them (the caller says where the next starts)."""
    lines = [_impact_head(impact)]
    # Files selected whole mostly share their reasons (a conftest, a package import): said once per group.
    by_reasons: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    said: list[list[str]] = []
    for match in impact.matches:
        if match.cases:
            lines += _match_lines(match, said)
        else:
            by_reasons.setdefault((match.confidence, tuple(match.reasons)), []).append(match.test_file)
    for (confidence, reasons), files in by_reasons.items():
        lines.append(f"{confidence}, {'; '.join(reasons) or 'no reason given'}:")
        lines += [f"  {quoted_path(f)}" for f in files]
    if impact.matches_total > len(impact.matches) and not paged:
        lines.append(f"… {impact.matches_total - len(impact.matches)} more test files in the record")
    if impact.unresolved_files:
        unresolved = [quoted_path(f) for f in impact.unresolved_files]
        lines.append(f"unresolved files: {_names(unresolved, impact.unresolved_files_total or None)}")
    if impact.unresolved_imports:
        lines.append(f"unresolved imports: {_names(impact.unresolved_imports)}")
    if impact.null_literal_imports:
        lines.append(f"dynamic imports in tests: {impact.null_literal_imports}")
    lines += [f"module level: {f}" for f in impact.fallbacks[:_FALLBACKS_SHOWN]]
    fallbacks = impact.fallbacks_total or len(impact.fallbacks)
    if fallbacks > _FALLBACKS_SHOWN:
        lines.append(f"… {fallbacks - _FALLBACKS_SHOWN} more module-level fallbacks")
    if impact.uncovered_total:
        lines.append(f"imported by no test: {_names(_shown(impact.uncovered_modules), impact.uncovered_total)}")
    if impact.source_dirs:
        lines.append(f"source dirs: {' '.join(quoted_path(d) for d in impact.source_dirs)}")
    cov = impact.coverage
    if cov is not None:
        told = ", ".join(f"{n} {what}" for what, n in (("confirmed", cov.confirmed), ("added", cov.added),
                                                        ("dropped", cov.dropped_total), ("stale", cov.stale_tests),
                                                        ("kept after the change", cov.after_change),
                                                        ("unrecorded", cov.unrecorded)) if n)
        lines.append(f"coverage evidence: {'narrowed' if cov.narrowed else 'not narrowed'}"
                     + (f" ({cov.note})" if cov.note else "") + (f"; {told}" if told else ""))
        if cov.dropped:
            lines.append(f"  dropped: {_names(_shown(cov.dropped), cov.dropped_total)}")
        lines += [f"  stale: {s}" for s in cov.stale]
    if impact.agentic_hint:
        lines.append(f"hint: {impact.agentic_hint}")
    return lines


def render_discover(result: DiscoverResult) -> str:
    told = f"{result.total} targets" + (f" of {result.discovered_total}" if result.total != result.discovered_total
                                        else "")
    if result.runners:
        told += f" ({', '.join(result.runners)})"
    if result.next_cursor:
        told += f"; next cursor: {result.next_cursor}"
    lines = [told, *render_targets(result.targets, case_names=result.impact is None, root=result._root)]
    lines += [f"missing runner {m.runner} for {quoted_path(m.project)}: {m.hint}" for m in result.missing_runners]
    if result.impact is not None:
        # The targets are what a run takes; why each was selected (its files again, the chains, the fallbacks:
        # 9.9 KB for one click module) is inspect_affected_tests' answer. The record keeps the selection.
        lines.append(f"{_impact_head(result.impact)}; why: inspect_affected_tests")
    elif result.agentic_hint:
        lines.append(f"hint: {result.agentic_hint}")
    return "\n".join(lines)


def render_inspect(result: InspectResult) -> str:
    lines = render_impact(result.impact, paged=True)
    if result.next_cursor:
        lines[0] += f"; {len(result.impact.matches)} shown, next cursor: {result.next_cursor}"
    return "\n".join(lines)
