"""Plan a file or directory move and the import rewrites that keep the code importing it (issue 9 item 4).

Python absolute and relative imports (``pyimports``) and JS/TS relative specifiers (``jsimports``) are
rewritten at exact spans, in importers and in the moved files themselves. Dotted mentions of the old
Python module outside import statements (``mock.patch("pkg.old.f")``, docs) are listed as ``low``
candidates. Other languages' imports are not rewritten; the preview says so. Moving a symbol between
files is not supported (deferred).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import FileInfo
from codeplane.refactor.jsaliases import TsAliases, config_paths
from codeplane.refactor.jsimports import JsMove, is_js, js_move_edits
from codeplane.refactor.lexical import classify, line_starts
from codeplane.refactor.models import FileMove
from codeplane.refactor.pyimports import PyMove, python_move_edits, unresolved_relative_imports
from codeplane.refactor.pymodules import PyModules, is_python
from codeplane.refactor.spans import SourceText, SpanEdit

_WORD = re.compile(r"[A-Za-z0-9_]+")

#: Reads files by repository path: ``(sources, sha256 by path)``.
Reader = Callable[[Iterable[str]], tuple[dict[str, SourceText], dict[str, str]]]
#: Files whose text holds an identifier (complete lexical candidate set).
Candidates = Callable[[str], set[str]]


def moved_files(root: Path, universe: Mapping[str, FileInfo], from_path: str, to_path: str) -> dict[str, str]:
    """``old -> new`` for every universe file the move relocates; 5001/5004/5005 on bad paths."""
    src = resolve_in_repo(root, from_path).rel
    dst = resolve_in_repo(root, to_path).rel
    if not src or not dst:
        raise CodePlaneError(ErrorCode.MUTATION_SCOPE_VIOLATION, "the repository root cannot be moved",
                             details={"from_path": from_path, "to_path": to_path})
    if src == dst or dst.startswith(src + "/"):
        raise CodePlaneError(ErrorCode.INVALID_ARGUMENTS, f"cannot move {src!r} onto or into itself",
                             details={"from_path": src, "to_path": dst})
    if (root / dst).exists():
        raise CodePlaneError(ErrorCode.FILE_EXISTS, f"{dst} already exists", details={"path": dst})
    if src in universe:
        return {src: dst}
    inside = {p: dst + p[len(src):] for p in universe if p.startswith(src + "/")}
    if not inside:
        raise CodePlaneError(ErrorCode.FILE_NOT_FOUND, f"{src} is not a file or directory CodePlane indexes",
                             details={"path": src})
    return dict(sorted(inside.items()))


def _stems(paths: Iterable[str]) -> set[str]:
    words: set[str] = set()
    for path in paths:
        base = posixpath.basename(path)
        stem = base.split(".")[0] or base
        if stem in ("__init__", "index"):
            stem = posixpath.basename(posixpath.dirname(path)) or stem
        match = _WORD.search(stem)
        if match:
            words.add(match.group())
    return words


def _mention_pattern(old_new: Mapping[str, str]) -> re.Pattern[str] | None:
    """One pattern for every moved module's dotted name, longest first (``pkg.utils.timezone`` is one mention, not
    also one of ``pkg.utils``): a package move has a hundred modules, and a pattern each over every candidate file
    took a minute on Django's ``django/utils``."""
    names = sorted((old for old, new in old_new.items() if old and old != new), key=lambda n: (-len(n), n))
    if not names:
        return None
    return re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(n) for n in names) + r")(?!\w)")


def _module_mentions(src: SourceText, pattern: re.Pattern[str], old_new: Mapping[str, str],
                     taken: set[tuple[int, int]]) -> list[SpanEdit]:
    found = [(m.start(), m.group()) for m in pattern.finditer(src.text)]
    if not found:
        return []
    starts = line_starts(src.text)
    contexts = classify(src.text, src.path, [off for off, _ in found])
    out: list[SpanEdit] = []
    line_idx = 0
    for (off, dotted), context in zip(found, contexts, strict=True):
        while line_idx + 1 < len(starts) and starts[line_idx + 1] <= off:
            line_idx += 1
        line, col = line_idx + 1, off - starts[line_idx]
        if (line, col) in taken:
            continue
        reason = {"code": "module_reference", "string": "string"}.get(context, "comment")
        out.append(SpanEdit(src.path, line, col, line, col + len(dotted), dotted, old_new[dotted], reason))
    return out


def plan_move(universe: Mapping[str, FileInfo], moved: dict[str, str], read: Reader,
              candidates: Candidates) -> tuple[Draft, dict[str, SourceText], dict[str, str]]:
    """Edits (high for resolved imports, low for other mentions) plus the moves themselves."""
    draft = Draft()
    draft.moves = [FileMove(from_path=a, to_path=b) for a, b in sorted(moved.items())]
    paths: set[str] = set(moved)
    for word in sorted(_stems(moved)):
        paths |= candidates(word)
    py_paths = sorted(p for p in paths if is_python(p) and p in universe)
    js_paths = sorted(p for p in paths if is_js(p) and p in universe)
    sources, hashes = read(set(py_paths) | set(js_paths) | set(moved))
    edits: list[SpanEdit] = []
    if any(is_python(p) for p in moved):
        mods = PyModules(p for p in universe if is_python(p))
        pymove = PyMove(mods, {a: b for a, b in moved.items() if is_python(a)})
        old_new = {mods.module_of(a): pymove.new_module(a) for a in pymove.moved}
        pattern = _mention_pattern(old_new)
        for path in py_paths:
            src = sources.get(path)
            if src is None:
                continue
            found = python_move_edits(pymove, src)
            edits += found
            taken = {(e.line, e.column) for e in found}
            if pattern is not None:
                draft.code += [(m, "low") for m in _module_mentions(src, pattern, old_new, taken)]
        for path in sorted(pymove.moved):
            if path in sources:
                unresolved_relative_imports(pymove, sources[path], _warner(draft, path))
    if any(is_js(p) for p in moved):
        configs, _ = read(set(config_paths(universe)))
        jsmove = JsMove(frozenset(p for p in universe if is_js(p)), {a: b for a, b in moved.items() if is_js(a)},
                        TsAliases.of(configs.values()))
        for path in js_paths:
            src = sources.get(path)
            if src is not None:
                edits += js_move_edits(jsmove, src)
    other = sorted({universe[p].language or "unknown" for p in moved
                    if not is_python(p) and not is_js(p) and universe[p].structural})
    if other:
        draft.warnings.append(f"imports in {', '.join(other)} files are not rewritten by refactor_move; "
                              "check references to the moved files")
    draft.code += [(e, "high") for e in edits]
    return draft, sources, hashes


def _warner(draft: Draft, path: str) -> Callable[[int, str], None]:
    def warn(line: int, text: str) -> None:
        draft.warnings.append(f"{path}:{line}: relative import {text!r} does not resolve to a repository file; "
                              "not rewritten")
    return warn


def moved_sources(moves: Sequence[FileMove]) -> set[str]:
    return {m.from_path for m in moves}
