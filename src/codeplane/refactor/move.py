"""Plan a file or directory move and the import rewrites that keep the code importing it (issue 9 item 4).

Python absolute and relative imports (``pyimports``) and JS/TS specifiers (``jsimports``: relative, ``tsconfig``
aliases, package names and ``#imports`` through ``package.json``, whose paths naming a moved file follow it:
``jsmanifests``) are rewritten at exact spans, in importers and in the moved files themselves; so are the paths
naming a moved file or directory in ``tsconfig*.json``/``jsconfig*.json`` (``references``, ``extends``, ``paths``,
``include``...: ``tsconfigs``), and proposed ``medium`` in Jest/Vitest configs (``runnerconfigs``). Dotted mentions of
the old Python module outside import statements are proposed (:func:`_module_mentions`):
``mock.patch("pkg.old.f")`` ``medium``, ``pkg.old.f`` through ``import pkg`` ``high``, docs and other text
``low``; so are the packaging entry points naming it (``pyproject.toml``, ``setup.cfg``:
:func:`_packaging_mentions`). Other languages' imports are not rewritten; the preview says so. Moving one symbol
between files is :mod:`symbolmove`'s.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from codeplane.core.errors import CodePlaneError, ErrorCode
from codeplane.core.paths import resolve_in_repo
from codeplane.index.structural import tspaths
from codeplane.index.structural.jspackages import PACKAGE_JSON
from codeplane.refactor.assemble import Draft
from codeplane.refactor.facts import FileInfo
from codeplane.refactor.jsaliases import TsAliases, config_paths
from codeplane.refactor.jsimports import JsMove, Unreached, is_js, js_move_edits
from codeplane.refactor.jsmanifests import Files, manifest_edits
from codeplane.refactor.jsspecifiers import JsSpecifiers, manifest_paths, resolution_paths
from codeplane.refactor.lexical import classify, line_starts
from codeplane.refactor.models import Certainty, FileMove
from codeplane.refactor.pybindings import module_bindings, parse_python
from codeplane.refactor.pyimports import PyMove, python_move_edits, unresolved_relative_imports
from codeplane.refactor.pymodules import PyModules, is_python
from codeplane.refactor.runnerconfigs import is_runner_config, runner_edits
from codeplane.refactor.spans import SourceText, SpanEdit
from codeplane.refactor.tsconfigs import config_edits

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


#: What may follow a module's dotted name inside a string naming one of its attributes: ``"pkg.old.f"``, or an
#: entry point's object reference ``"pkg.old:main"`` (``setup.py``'s ``entry_points``).
_ATTRIBUTE_PATH = re.compile(r"(?:\.[A-Za-z_]\w*)*(?::[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?")
#: Packaging files whose entry points name modules (``[project.scripts]``, ``[options.entry_points]``).
_PACKAGING = ("pyproject.toml", "setup.cfg")
#: An entry point's object reference after the module: ``:main``, ``:cli.run``.
_ENTRY_OBJECT = re.compile(r"(?:\.[A-Za-z_]\w*)*:[A-Za-z_]")
#: The start of an entry point string before its module: ``"flask = ``.
_ENTRY_NAME = re.compile(r"['\"]\s*[\w.\-]+\s*=\s*$")


def _dotted_path_string(text: str, start: int, end: int) -> bool:
    """The string literal around ``text[start:end]`` is exactly the module's dotted name or a dotted path inside it
    (``mock.patch("requests.help.idna")``, ``importlib.import_module("pkg.old")``): it names the moved module."""
    quote = text[start - 1] if start else ""
    if quote not in ("'", '"'):
        return False
    rest = _ATTRIBUTE_PATH.match(text, end)
    return rest is not None and text[rest.end():rest.end() + 1] == quote


def _imported_roots(mods: PyModules, src: SourceText) -> set[str]:
    """Names the file binds only by plain ``import a.b`` statements (no alias): ``a.b.c`` in its code is a module
    attribute chain, which the move renames as a symbol move does."""
    root = parse_python(src.data)
    if root is None:
        return set()
    return {name for name, found in module_bindings(mods, src.path, root).items()
            if all(b.kind == "import" and b.spec is not None and b.spec.name is None and not b.spec.alias
                   for b in found)}


def _module_mentions(src: SourceText, pattern: re.Pattern[str], old_new: Mapping[str, str],
                     taken: set[tuple[int, int]], roots: set[str]) -> list[tuple[SpanEdit, Certainty]]:
    """Mentions of a moved module outside import statements: a string that is exactly a dotted path into it is
    ``medium`` (as a rename's and a symbol move's are), a code chain through a plain ``import`` of its package
    ``high``, anything else ``low``."""
    found = [(m.start(), m.group()) for m in pattern.finditer(src.text)]
    if not found:
        return []
    starts = line_starts(src.text)
    contexts = classify(src.text, src.path, [off for off, _ in found])
    out: list[tuple[SpanEdit, Certainty]] = []
    line_idx = 0
    for (off, dotted), context in zip(found, contexts, strict=True):
        while line_idx + 1 < len(starts) and starts[line_idx + 1] <= off:
            line_idx += 1
        line, col = line_idx + 1, off - starts[line_idx]
        if (line, col) in taken:
            continue
        reason = {"code": "module_reference", "string": "string"}.get(context, "comment")
        certainty: Certainty = "low"
        if context == "string" and _dotted_path_string(src.text, off, off + len(dotted)):
            reason, certainty = "dotted_path_string", "medium"
        elif context == "string" and _ENTRY_OBJECT.match(src.text, off + len(dotted)) and \
                _ENTRY_NAME.search(src.text, max(0, off - 80), off):
            reason, certainty = "entry_point", "medium"  # setup.py's ``"flask = flask.cli:main"``
        elif context == "code" and dotted.split(".")[0] in roots:
            certainty = "high"
        out.append((SpanEdit(src.path, line, col, line, col + len(dotted), dotted, old_new[dotted], reason),
                    certainty))
    return out


def _packaging_mentions(src: SourceText, pattern: re.Pattern[str], old_new: Mapping[str, str]
                        ) -> list[tuple[SpanEdit, Certainty]]:
    """A moved module named in ``pyproject.toml`` or ``setup.cfg``: an entry point (``flask = "flask.cli:main"``)
    is ``medium`` (the console script fails to load once installed otherwise; no test of the suite sees it), any
    other mention ``low``."""
    out: list[tuple[SpanEdit, Certainty]] = []
    for match in pattern.finditer(src.text):
        dotted = match.group()
        line, col = src.position(match.start())
        entry = _ENTRY_OBJECT.match(src.text, match.end()) is not None
        out.append((SpanEdit(src.path, line, col, line, col + len(dotted), dotted, old_new[dotted],
                             "entry_point" if entry else "packaging"), "medium" if entry else "low"))
    return out


def plan_move(universe: Mapping[str, FileInfo], moved: dict[str, str], read: Reader,
              candidates: Candidates) -> tuple[Draft, dict[str, SourceText], dict[str, str]]:
    """Edits (high for resolved imports, the module's other mentions as :func:`_module_mentions` judges them) plus
    the moves themselves."""
    draft = Draft()
    draft.moves = [FileMove(from_path=a, to_path=b) for a, b in sorted(moved.items())]
    paths: set[str] = set(moved)
    js_moved = {a: b for a, b in moved.items() if is_js(a)}
    resolution: dict[str, SourceText] = {}
    resolution_hashes: dict[str, str] = {}
    before = JsSpecifiers()
    if js_moved:
        resolution, resolution_hashes = read(set(resolution_paths(universe)))
        before = JsSpecifiers.of(resolution.values())
    for word in sorted(_stems(moved) | before.importer_words(js_moved)):
        paths |= candidates(word)
    py_paths = sorted(p for p in paths if is_python(p) and p in universe)
    js_paths = sorted(p for p in paths if is_js(p) and p in universe)
    sources, hashes = read(set(py_paths) | set(js_paths) | set(moved))
    edits: list[SpanEdit] = []
    if any(is_python(p) for p in moved):
        pymove = _python_move(universe, moved)
        mods = pymove.mods
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
                draft.code += _module_mentions(src, pattern, old_new, taken, _imported_roots(mods, src))
        packaging, packaging_hashes = read({p for p in universe if posixpath.basename(p) in _PACKAGING})
        sources.update(packaging)
        hashes.update(packaging_hashes)
        for path in sorted(packaging):
            if pattern is not None:
                draft.code += _packaging_mentions(packaging[path], pattern, old_new)
        for path in sorted(pymove.moved):
            if path in sources:
                unresolved_relative_imports(pymove, sources[path], _warner(draft, path))
    # The project configs' paths follow any move (a moved base config too, or a directory holding no JS at all).
    tree = Files(set(universe))
    if not js_moved:
        resolution, resolution_hashes = read(set(config_paths(universe)))
    configs = config_edits({p: s for p, s in resolution.items() if tspaths.is_config_text(p)}, moved, tree)
    draft.warnings += configs.warnings
    edits += configs.edits
    for edit in configs.edits:
        sources.setdefault(edit.path, resolution[edit.path])
        hashes.setdefault(edit.path, resolution_hashes[edit.path])
    if js_moved:
        manifests = {p: resolution[p] for p in manifest_paths(resolution)}
        kept, after_texts = manifest_edits(manifests, moved, tree)
        # Aliases after the move are the edited configs' at their new places (a moved package's own config).
        after = replace(before.moved(after_texts), aliases=TsAliases(tspaths.configs(configs.after)))
        edits += kept
        for edit in kept:
            sources.setdefault(edit.path, resolution[edit.path])
            hashes.setdefault(edit.path, resolution_hashes[edit.path])
        directories = {posixpath.dirname(a): posixpath.dirname(b) for a, b in moved.items()
                       if posixpath.basename(a) == PACKAGE_JSON}
        jsmove = JsMove(frozenset(p for p in universe if is_js(p)), js_moved, before, after, directories)
        unreached: list[Unreached] = []
        for path in js_paths:
            src = sources.get(path)
            if src is not None:
                edits += js_move_edits(jsmove, src, unreached)
        draft.warnings += unreached_warnings(unreached)
    _runner_configs(draft, universe, moved, tree, read=read, sources=sources, hashes=hashes, edits=edits)
    other = sorted({universe[p].language or "unknown" for p in moved
                    if not is_python(p) and not is_js(p) and universe[p].structural})
    if other:
        draft.warnings.append(f"imports in {', '.join(other)} files are not rewritten by refactor_move; "
                              "check references to the moved files")
    draft.code += [(e, "high") for e in edits]
    return draft, sources, hashes


def _runner_configs(draft: Draft, universe: Mapping[str, FileInfo], moved: Mapping[str, str], tree: Files, *,
                    read: Reader, sources: dict[str, SourceText], hashes: dict[str, str], edits: list[SpanEdit]
                    ) -> None:
    """The Jest/Vitest configs' paths naming moved files (``medium``: a string in code is a path only by how the
    runner reads it), after the import edits already planned there (``edits``)."""
    paths = {p for p in universe if is_runner_config(p)}
    if not paths:
        return
    found, found_hashes = read(paths)
    for path, src in sorted(found.items()):
        taken = {(e.line, e.column) for e in edits if e.path == path}
        proposed, warnings = runner_edits(src, moved, tree, taken)
        draft.code += proposed
        draft.warnings += warnings
        if proposed:
            sources.setdefault(path, src)
            hashes.setdefault(path, found_hashes[path])


#: Unreached specifiers a preview lists; the rest are counted, as its other lists are bounded.
MAX_UNREACHED_WARNINGS = 20


def unreached_warnings(unreached: Sequence[Unreached]) -> list[str]:
    """One line per specifier a file move leaves naming nothing (by path and line, bounded)."""
    ordered = sorted(unreached, key=lambda u: (u.path, u.line, u.spec))
    lines = [f"{u.path}:{u.line}: '{u.spec}' not rewritten: no specifier of its kind names {u.new} after the move "
             "(package.json \"exports\"/\"imports\"/\"workspaces\" decide which do)"
             for u in ordered[:MAX_UNREACHED_WARNINGS]]
    if len(ordered) > MAX_UNREACHED_WARNINGS:
        lines.append(f"{len(ordered) - MAX_UNREACHED_WARNINGS} more specifiers naming nothing after the move not "
                     "listed")
    return lines


def _python_move(universe: Mapping[str, FileInfo], moved: Mapping[str, str]) -> PyMove:
    return PyMove(PyModules(p for p in universe if is_python(p)), {a: b for a, b in moved.items() if is_python(a)})


def moved_modules(universe: Mapping[str, FileInfo], moved: Mapping[str, str]) -> dict[str, str]:
    """``old -> new`` dotted name of every moved Python module whose name changes (a package's ``__init__`` names
    the package)."""
    pymove = _python_move(universe, moved)
    names = {pymove.mods.module_of(a): pymove.new_module(a) for a in pymove.moved}
    return {old: new for old, new in names.items() if old and old != new}


def moved_dirs(root: Path, moved: Mapping[str, str], from_path: str, to_path: str) -> dict[str, str]:
    """For a directory move: ``old -> new`` of the directory and of every directory inside it holding a moved file
    (``pkg/sub`` -> ``lib/pkg/sub``); empty for a file move."""
    src = resolve_in_repo(root, from_path).rel
    dst = resolve_in_repo(root, to_path).rel
    if src in moved:
        return {}
    dirs = {src: dst}
    for old in moved:
        parent = posixpath.dirname(old)
        while parent.startswith(src + "/") and parent not in dirs:
            dirs[parent] = dst + parent[len(src):]
            parent = posixpath.dirname(parent)
    return dict(sorted(dirs.items()))


def _warner(draft: Draft, path: str) -> Callable[[int, str], None]:
    def warn(line: int, text: str) -> None:
        draft.warnings.append(f"{path}:{line}: relative import {text!r} does not resolve to a repository file; "
                              "not rewritten")
    return warn


def moved_sources(moves: Sequence[FileMove]) -> set[str]:
    return {m.from_path for m in moves}
