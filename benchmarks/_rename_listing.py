""""No silent misses" (issue 20), checked from outside the planner for the in-process rename benchmarks.

Before apply, every whole-word occurrence of the old name in the copy's text files (found here with a regex,
independently of the index) must sit on a line where the plan lists at least as many edits of any certainty
(code or doc): an occurrence on a line with fewer is *unlisted*. After apply, the occurrences left in the tree
must be exactly the listed edits that were not applied (``low`` candidates, doc edits not auto-applied): any
surplus is a reference *left* behind that the plan never mentioned.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from codeplane.refactor.apply import select_edits
from codeplane.refactor.models import PlannedEdit
from codeplane.refactor.service import RefactorService


def occurrences(root: Path, name: str) -> Counter[tuple[str, int]]:
    """``(path, line) -> count`` of whole-word ``name`` in git's tracked and untracked text files."""
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=root, capture_output=True,
                            text=True, check=True).stdout.splitlines()
    found: Counter[tuple[str, int]] = Counter()
    for rel in listed:
        if rel.startswith(".codeplane/"):  # the index's own state, not the project's text
            continue
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except (OSError, IsADirectoryError):
            continue
        if "\0" in text or name not in text:
            continue
        for number, line in enumerate(text.split("\n"), 1):
            hits = len(word.findall(line))
            if hits:
                found[(rel, number)] = hits
    return found


def _per_line(edits: Iterable[PlannedEdit], name: str) -> Counter[tuple[str, int]]:
    return Counter((e.path, e.line) for e in edits if name in e.old_text)


def unlisted(service: RefactorService, refactor_id: str, candidate_id: str | None, root: Path, name: str, *,
             apply_docs: bool | None = None,
             kept_in_plan: Sequence[str] = ()) -> tuple[int, list[str], Counter[tuple[str, int]]]:
    """Call before apply: (occurrences of ``name``, the lines holding one the plan does not list, and per line
    the listed edits the default apply leaves in place). ``kept_in_plan``: the preview's ``coverage.kept`` and
    ``coverage.set_aside`` (occurrences of other symbols, by position)."""
    option = service.plans.get(refactor_id).option(candidate_id)
    listed = _per_line(option.all_edits(), name)
    # Uses of a name an aliased import keeps (``use m::New as Old``) and other symbols' occurrences the plan
    # names as such: in the plan, as they are.
    unchanged: Counter[tuple[str, int]] = Counter()
    for position in kept_in_plan:
        path, line, _ = position.rsplit(":", 2)
        unchanged[(path, int(line))] += 1
    listed.update(unchanged)
    found = occurrences(root, name)
    missing = sorted(f"{path}:{line}" for (path, line), n in found.items() if n > listed[(path, line)])
    docs = service.config.doc_sweep
    code, doc = select_edits(option, include=(), exclude=(), min_certainty="medium",
                             apply_docs=docs.enabled and (docs.auto_apply if apply_docs is None else apply_docs),
                             doc_min=docs.min_confidence)
    applied = {e.edit_id for e in (*code, *doc)}
    kept = _per_line([e for e in option.all_edits() if e.edit_id not in applied], name) + unchanged
    # An applied edit that writes the old name back (``New as Old``) leaves it on its line by design.
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    kept.update(Counter({(e.path, e.line): len(word.findall(e.new_text)) for e in option.all_edits()
                         if e.edit_id in applied and word.search(e.new_text)}))
    return sum(found.values()), missing, kept


def left(root: Path, name: str, kept: Counter[tuple[str, int]]) -> list[str]:
    """Call after apply (renames keep line numbers): lines with more occurrences of ``name`` than the plan
    listed and did not apply — references left behind that the plan never mentioned."""
    return sorted(f"{path}:{line}" for (path, line), n in occurrences(root, name).items() if n > kept[(path, line)])
