"""The documentation sweep of a move (spec §8.3, §8.11): the names a file or symbol move changes, in the docs.

A move changes dotted module names (``pkg.core`` -> ``pkg.calc``; for a symbol move ``pkg.core.add`` ->
``pkg.calc.add``) and repository paths (``pkg/core.py`` -> ``pkg/calc.py``). Each mention in a documentation file
(``refactor.doc_sweep.scan_extensions``) becomes a doc edit weighed as the rename sweep weighs its mentions: inside
a code block or inline code ``high``; in prose ``medium`` for a dotted name or a path (distinctive by construction),
``low`` for a plain word. They are kept apart from code edits, applied per ``refactor.doc_sweep`` exactly as a
rename's (``apply_docs``, ``auto_apply``, ``min_confidence``), and counted in the coverage, so "covers N/M" never
reads complete while the docs still name the old place.

Precision: a dotted name matches whole (``pkg.core`` is not in ``pkg.core2``, ``mypkg.core`` or ``pkg.core-x``); a
path matches whole segments, read from the repository root or, for a relative link (``../pkg/core.py``), from the
document's directory, and only when it names a moved file or a directory of them. A symbol move leaves its module
and file where they are, so a mention of the module alone or of the file counts only on a line that names the symbol:
``from pkg.core import add`` importing it alone keeps the full weight, the module beside other names a step lower
(the line may be about the module's other names), the file ``low``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from codeplane.core.config import DocSweepConfig
from codeplane.refactor.assemble import Draft
from codeplane.refactor.docsweep import code_block_lines, in_backticks, is_distinctive, is_doc_file
from codeplane.refactor.models import Certainty, Coverage
from codeplane.refactor.spans import SourceText, SpanEdit

#: Reads files by repository path: ``(sources, sha256 by path)``.
Reader = Callable[[Iterable[str]], tuple[dict[str, SourceText], dict[str, str]]]

#: The reason of every move doc edit, as the rename sweep's mentions in documentation files.
REASON = "doc_file"
#: A run of the characters a path is written with (no spaces, quotes, backticks, brackets, ``#`` or ``:``).
_PATH_TOKEN = re.compile(r"[\w.\-/]+")
_WORD = re.compile(r"[A-Za-z_]\w*")
#: A dotted name followed by one of these is a file name (``core.py``, ``pkg.core.md``), which the path scan weighs.
_FILE_SUFFIX = r"(?!\.(?:py|pyi|pyc|pyx|md|rst|txt|adoc|cfg|toml|ini|json|ya?ml|html?|js|ts)\b)"
_LOWER: dict[Certainty, Certainty] = {"high": "medium", "medium": "low", "low": "low"}


@dataclass(frozen=True)
class MovedNames:
    """What a move changes that prose may spell: dotted module names and repository paths, ``old -> new``."""

    modules: Mapping[str, str] = field(default_factory=dict)
    #: Moved files and, for a directory move, the directories holding them.
    paths: Mapping[str, str] = field(default_factory=dict)
    #: A symbol move: the moved name, and its old and new module (``None`` outside Python). The module and the file
    #: stay; their mentions count only on a line that names the symbol.
    symbol: str | None = None
    old_module: str | None = None
    new_module: str | None = None

    def words(self) -> set[str]:
        """Identifiers that a mention of any of these names holds (for the lexical search of candidate files)."""
        if self.symbol is not None:
            return {self.symbol}
        found: set[str] = set()
        for path in self.paths:
            base = posixpath.basename(path)
            match = _WORD.search(base.split(".")[0] or base)
            if match:
                found.add(match.group())
        found |= {module.rsplit(".", 1)[-1] for module in self.modules}
        return found


def file_move_names(modules: Mapping[str, str], moved: Mapping[str, str], dirs: Mapping[str, str]) -> MovedNames:
    """A file or directory move's names (``modules``: :func:`move.moved_modules`; ``dirs``: :func:`move.moved_dirs`)."""
    return MovedNames(modules=dict(modules), paths={**moved, **dirs})


def symbol_move_names(name: str, old_path: str, dest: str, old_module: str | None,
                      new_module: str | None) -> MovedNames:
    modules = {f"{old_module}.{name}": f"{new_module}.{name}"} if old_module and new_module else {}
    return MovedNames(modules=modules, paths={old_path: dest}, symbol=name, old_module=old_module,
                      new_module=new_module)


def _weight(line: str, column: int, text: str, fenced: bool) -> Certainty:
    """The rename sweep's rule for a mention, where a dotted name or a path is distinctive by construction."""
    if fenced or in_backticks(line, column):
        return "high"
    dotted = re.match(r"\.\w", line[column + len(text):column + len(text) + 2]) is not None
    return "medium" if "." in text or "/" in text or dotted or is_distinctive(text) else "low"


def _lookup(path: str, paths: Mapping[str, str]) -> str | None:
    norm = posixpath.normpath(path)
    return None if norm in (".", "..") or norm.startswith("../") else paths.get(norm)


def _moved_path(token: str, doc_dir: str | None, paths: Mapping[str, str]) -> str | None:
    """The new spelling of ``token`` when it is the path of a moved file or directory: from the root (``pkg/core.py``,
    ``/pkg/core.py``), else from the document's directory (``../pkg/core.py``; ``doc_dir`` ``None``: not tried)."""
    trailing = "/" if token.endswith("/") and token.strip("/") else ""
    if token.startswith("/"):
        new = _lookup(token.lstrip("/"), paths)
        return f"/{new}{trailing}" if new is not None else None
    if not token.startswith(("./", "../")):
        new = _lookup(token, paths)
        if new is not None:
            return new + trailing
    if doc_dir is None:
        return None
    new = _lookup(posixpath.join(doc_dir, token), paths)
    if new is None:
        return None
    spelled = posixpath.relpath(new, doc_dir or ".")
    return ("./" if token.startswith("./") and not spelled.startswith("../") else "") + spelled + trailing


def _imports_only(line: str, column: int, end: int, name: str) -> bool | None:
    """For ``from <module> import ...`` with the module at ``column:end``: whether it imports ``name`` alone (with or
    without an alias); ``None`` when the mention is no such import."""
    rest = re.match(r"\s+import\s+(.*)", line[end:])
    if rest is None or re.search(r"(?<![\w.])from\s+$", line[:column]) is None:
        return None
    names = rest.group(1).split("#")[0].strip().strip("`").strip().strip("()").strip()
    return [p.split()[0] for p in names.split(",") if p.strip()] == [name]


def _dotted_pattern(names: Iterable[str], *, whole: bool) -> re.Pattern[str] | None:
    """Whole dotted names, longest first (``pkg.core.add`` is one mention, not one of ``pkg.core`` too). ``whole``:
    not followed by ``.attr`` either (a symbol move's module alone: ``pkg.core.other`` is no mention of it)."""
    ordered = sorted(set(names), key=lambda n: (-len(n), n))
    if not ordered:
        return None
    after = r"(?![\w\-/])" + (r"(?!\.\w)" if whole else _FILE_SUFFIX)
    return re.compile(r"(?<![\w.\-/])(?:" + "|".join(re.escape(n) for n in ordered) + ")" + after)


def move_doc_edits(src: SourceText, moved: MovedNames, *, relative: bool = True) -> list[tuple[SpanEdit, Certainty]]:
    """The doc edits of one documentation file (``relative``: read relative links from its directory; off for a
    document the move itself relocates)."""
    text = src.text
    fenced = code_block_lines(text)
    symbol = re.compile(rf"(?<![\w]){re.escape(moved.symbol)}(?!\w)") if moved.symbol else None
    doc_dir = posixpath.dirname(src.path) if relative else None
    out: list[tuple[SpanEdit, Certainty]] = []
    spans: list[tuple[int, int]] = []

    def add(offset: int, old: str, new: str, certainty: Certainty | None = None) -> None:
        line, col = src.position(offset)
        weight = certainty or _weight(src.line_text(line), col, old, line in fenced)
        out.append((SpanEdit(src.path, line, col, line, col + len(old), old, new, REASON), weight))
        spans.append((offset, offset + len(old)))

    def names_symbol(offset: int, length: int) -> bool:
        line, col = src.position(offset)
        text_of_line = src.line_text(line)
        return symbol is not None and any(not (col <= m.start() < col + length) for m in symbol.finditer(text_of_line))

    for match in _PATH_TOKEN.finditer(text):
        token = match.group().rstrip(".")
        if not token or ("/" not in token and "." not in token):
            continue
        new = _moved_path(token, doc_dir, moved.paths)
        if new is None or new == token:
            continue
        if symbol is None:
            add(match.start(), token, new)
        elif names_symbol(match.start(), len(token)):
            add(match.start(), token, new, "low")  # the file stays: the line may be about its other names
    for pattern, whole in ((_dotted_pattern(moved.modules, whole=False), False),
                           (_dotted_pattern([moved.old_module] if symbol and moved.old_module else [], whole=True),
                            True)):
        for match in pattern.finditer(text) if pattern is not None else ():
            start, dotted = match.start(), match.group()
            if any(s <= start < e for s, e in spans):
                continue
            if not whole:
                add(start, dotted, moved.modules[dotted])
                continue
            if moved.symbol is None or moved.new_module is None:
                continue
            line, col = src.position(start)
            alone = _imports_only(src.line_text(line), col, col + len(dotted), moved.symbol)
            if alone:
                add(start, dotted, moved.new_module)
            elif names_symbol(start, len(dotted)):
                weight = _weight(src.line_text(line), col, dotted, line in fenced)
                add(start, dotted, moved.new_module, "low" if alone is False else _LOWER[weight])
    return sorted(out)


def sweep_move_docs(draft: Draft, moved: MovedNames, candidates: Iterable[str], *, read: Reader, docs: DocSweepConfig,
                    sources: dict[str, SourceText], hashes: dict[str, str]) -> int:
    """Add the doc edits of the documentation files among ``candidates`` to ``draft``: as doc edits, or as ``low``
    code candidates when the doc sweep is off (as the rename sweep does). Their sources and hashes join ``sources``
    and ``hashes`` (the plan pins every edited file). Returns how many mentions were found."""
    paths = sorted(p for p in set(candidates) if is_doc_file(p, docs))
    if not paths or not (moved.modules or moved.paths):
        return 0
    read_sources, read_hashes = read(paths)
    sources.update(read_sources)
    hashes.update(read_hashes)
    found = 0
    for path in paths:
        src = read_sources.get(path)
        if src is None:
            continue
        edits = move_doc_edits(src, moved, relative=path not in moved.paths)
        found += len(edits)
        if docs.enabled:
            draft.docs += edits
        else:
            draft.code += [(edit, "low") for edit, _ in edits]
    return found


def move_coverage(draft: Draft, files_scanned: int, doc_mentions: int, docs: DocSweepConfig) -> Coverage:
    """A move's coverage: its code edits are its plan; the doc mentions are counted beside them (``doc_file``), as a
    rename's are, so the plan reads complete only when the docs name nothing the move changes."""
    code = len(draft.code) - (0 if docs.enabled else doc_mentions)
    return Coverage(files_scanned=files_scanned, lexical_occurrences=code + doc_mentions, in_plan=code,
                    low_candidates=sum(1 for _, c in draft.code if c == "low"),
                    by_reason={REASON: doc_mentions} if doc_mentions else {})
