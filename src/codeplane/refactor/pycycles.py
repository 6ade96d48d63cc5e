"""Import cycles a Python symbol move creates among the importers it rewrites (README: ``refactor_move`` refuses a
move that makes two modules import each other at import time, 4009).

The old ↔ new pair is checked while the destination is planned (:mod:`symbolmove`). An importer is checked here,
on the text the plan leaves it: moving ``click.utils.echo`` into ``termui.py`` rewrote ``exceptions.py``'s
``from .utils import echo`` into ``from .termui import echo`` while ``termui.py`` imports ``.exceptions`` at
module level, and ``import click`` failed on the partially initialised module. A rewritten importer that newly
imports the destination at module level while the destination (as the plan leaves it) imports that importer at
module level is refused; one the destination reaches only through other modules gets a warning, as the planner's
other indirect cycles do. Imports under ``TYPE_CHECKING`` or inside functions run no module code: not cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.refactor.models import Certainty
from codeplane.refactor.pybindings import ImportSpec, module_bindings, parse_python
from codeplane.refactor.pymodules import PyModules, is_python
from codeplane.refactor.spans import SourceText, SpanEdit


def edited_text(src: SourceText, edits: Sequence[SpanEdit]) -> str | None:
    """``src``'s text with ``edits`` made (``None`` when two of them overlap: the plan is refused elsewhere)."""
    text = src.text
    last = len(text) + 1
    for edit in sorted(edits, key=lambda e: (e.line, e.column, e.end_line, e.end_column), reverse=True):
        start, end = src.offset(edit.line, edit.column), src.offset(edit.end_line, edit.end_column)
        if end > last:
            return None
        text = text[:start] + edit.new_text + text[end:]
        last = start
    return text


def runtime_imports(mods: PyModules, path: str, text: str, target: Callable[[ImportSpec], str | None]
                    ) -> dict[str, int]:
    """The repository files ``path`` imports as it loads (module level, not under ``TYPE_CHECKING``), each with
    the line of its first such import."""
    root = parse_python(text.encode("utf-8"))
    found: dict[str, int] = {}
    if root is None:
        return found
    for bindings in module_bindings(mods, path, root).values():
        for b in bindings:
            resolved = target(b.spec) if b.kind == "import" and b.spec is not None and not b.type_checking else None
            if resolved is not None:
                line = b.statement.start_point[0] + 1
                found[resolved] = min(line, found.get(resolved, line))
    return found


def check_importer_cycles(mods: PyModules, edits: Sequence[tuple[SpanEdit, Certainty]],
                          sources: Mapping[str, SourceText], *, old_path: str, dest: str, symbol: str,
                          target: Callable[[ImportSpec], str | None], reaches: Callable[[str, str], bool]
                          ) -> list[str]:
    """4009 when a rewritten importer and the destination would import each other at module level; the warnings
    for an importer the destination reaches through other modules. Only the edits a default apply makes count."""
    by_path: dict[str, list[SpanEdit]] = {}
    for edit, certainty in edits:
        if certainty != "low" and is_python(edit.path) and not edit.path.endswith(".pyi"):
            by_path.setdefault(edit.path, []).append(edit)
    dest_text = edited_text(sources.get(dest) or SourceText(dest, ""), by_path.get(dest, []))
    dest_imports = runtime_imports(mods, dest, dest_text, target) if dest_text is not None else {}
    warnings: list[str] = []
    for path in sorted(by_path):
        src = sources.get(path)
        if path in (old_path, dest) or src is None:
            continue
        after = edited_text(src, by_path[path])
        if after is None or dest in runtime_imports(mods, path, src.text, target):
            continue  # the importer imported the destination already: no cycle is new
        line = runtime_imports(mods, path, after, target).get(dest)
        if line is None:
            continue
        if path in dest_imports:
            raise CodePlaneError(
                ErrorCode.REFACTOR_CIRCULAR_IMPORT,
                f"moving {symbol} would make {path} import {dest} (line {line}), which imports {path} at import "
                f"time ({dest}:{dest_imports[path]}); pick another destination, or import it inside the functions "
                f"of {path} that use it first",
                details={"symbol": symbol, "reason": "circular import", "via": path, "line": line})
        if reaches(dest, path):
            warnings.append(f"circular-import risk: {path} will import {dest}, which imports {path} through other "
                            "modules")
    return warnings
