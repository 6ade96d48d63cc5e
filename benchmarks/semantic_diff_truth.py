"""semantic_diff against Python's ``ast`` on real releases: click 8.2.0 -> 8.3.1 and attrs 24.3.0 -> 25.4.0.

Each pair is committed into a temp git repository (old sdist, then the new one on top) and indexed;
``semantic_diff(base=old commit, target=new commit)`` is compared with the truth from ``ast`` over every
``.py`` file of both commits: functions, methods and classes added, removed, and (functions/methods) with
a changed parameter list (``ast.unparse`` of the arguments differs). A rename counts as the removal of the
old name plus the addition of the new one, for everything nested in it too. A file git sees as renamed is
compared with its old self on both sides. Repeated qualified names in one file pair up in file order.
Targets: precision and recall >= 99 %; click cold <= 2 s, with cached blob facts <= 200 ms.

Cold = a fresh service (empty blob-facts cache) on a warm index, enrichment and test lookup included, as
the tool runs in the server ("new service" = a restart: memory caches empty, blob facts read from
``.codeplane/semantic_diff.db``). The service runs in this process, so its CPU time is reported too: wall time
on a shared machine moves with the load average (printed at the end). Baselines in the same run:
``git diff --stat`` of the pair (what the line diff costs) and the ast truth itself.
Run: ``uv run python benchmarks/semantic_diff_truth.py``.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import p50, sdist, table, timed
from codeplane.analysis import SemanticDiffService
from codeplane.core.artifacts import ArtifactStore
from codeplane.core.config import CodePlaneConfig
from codeplane.core.layout import RepoLayout
from codeplane.index.service import IndexService
from codeplane.index.structural.indexer import StructuralIndexer
from codeplane.testing import ImpactIndex, TestingService
from codeplane.testing.discovery import indexed_paths

PAIRS = (("click", "8.2.0", "8.3.1"), ("attrs", "24.3.0", "25.4.0"))
KINDS = ("function", "method", "class")
Key = tuple[str, str, str, int]  # path, qualified name, "class"|"function", occurrence


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def load(root: Path, source: Path) -> None:
    for child in root.iterdir():
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(source, root, dirs_exist_ok=True)
    (root / ".gitignore").write_text(".codeplane/\n")


def build_repo(name: str, old: str, new: str) -> tuple[Path, str, str]:
    root = Path(tempfile.mkdtemp(prefix=f"semdiff-{name}-")) / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    commits = []
    for version in (old, new):
        load(root, sdist(name, version))
        git(root, "add", "-A")
        git(root, "commit", "-qm", f"{name} {version}")
        commits.append(git(root, "rev-parse", "HEAD").strip())
    return root, commits[0], commits[1]


# -- truth ---------------------------------------------------------------------------------------------------
def ast_defs(text: str) -> dict[tuple[str, str, int], str | None] | None:
    """(qualified name, class|function, occurrence) -> parameter list (None for classes); None if unparsable."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    out: dict[tuple[str, str, int], str | None] = {}
    seen: Counter[tuple[str, str]] = Counter()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualified = f"{prefix}.{child.name}" if prefix else child.name
                kind = "class" if isinstance(child, ast.ClassDef) else "function"
                n = seen[(qualified, kind)]
                seen[(qualified, kind)] += 1
                out[(qualified, kind, n)] = None if kind == "class" else ast.unparse(child.args)  # type: ignore[union-attr]
                visit(child, qualified)
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def blobs(root: Path, commit: str) -> dict[str, str]:
    listing = git(root, "ls-tree", "-r", "--name-only", commit).split("\n")
    return {p: git(root, "show", f"{commit}:{p}") for p in listing if p.endswith(".py")}


def file_pairs(root: Path, base: str, target: str, old_files: dict[str, str],
               new_files: dict[str, str]) -> list[tuple[str | None, str | None]]:
    """(old path, new path) per .py file; a file git sees as renamed is compared with its old self."""
    renamed: dict[str, str] = {}
    for line in git(root, "diff", "--name-status", "-M", base, target).splitlines():
        fields = line.split("\t")
        if fields[0].startswith("R") and fields[2].endswith(".py"):
            renamed[fields[2]] = fields[1]
    moved_from = set(renamed.values())
    out: list[tuple[str | None, str | None]] = []
    for path in sorted(set(old_files) | set(new_files)):
        if path in renamed:
            out.append((renamed[path], path))
        elif path in moved_from and path not in new_files:
            continue
        else:
            out.append((path if path in old_files else None, path if path in new_files else None))
    return out


def truth(root: Path, base: str, target: str) -> tuple[set[Key], set[Key], set[Key], set[str]]:
    old_files, new_files = blobs(root, base), blobs(root, target)
    added: set[Key] = set()
    removed: set[Key] = set()
    params: set[Key] = set()
    skipped: set[str] = set()
    for old_path, new_path in file_pairs(root, base, target, old_files, new_files):
        old = ast_defs(old_files[old_path]) if old_path else {}
        new = ast_defs(new_files[new_path]) if new_path else {}
        if old is None or new is None:
            skipped.update(p for p in (old_path, new_path) if p)
            continue
        for key in new.keys() - old.keys():
            added.add((new_path, *key))  # type: ignore[arg-type]
        for key in old.keys() - new.keys():
            removed.add((old_path, *key))  # type: ignore[arg-type]
        for key in old.keys() & new.keys():
            if old[key] != new[key]:
                params.add((new_path, *key))  # type: ignore[arg-type]
    return added, removed, params, skipped


# -- semantic_diff -------------------------------------------------------------------------------------------
def ours(changes: list, skipped: set[str]) -> tuple[set[Key], set[Key], set[Key]]:  # type: ignore[type-arg]
    """The same three sets from semantic_diff's changes. A rename is the removal of the old name and the
    addition of the new one, for the renamed definition and everything nested in it (their qualified
    names changed too, though semantic_diff matches them up and reports them only if they changed)."""
    added: set[Key] = set()
    removed: set[Key] = set()
    params: set[Key] = set()
    renamed_under: list[tuple[str, str]] = []  # (new path, new lexical path + ".")
    for c in changes:
        if c.kind not in KINDS or c.path in skipped or not c.path.endswith(".py"):
            continue
        kind = "class" if c.kind == "class" else "function"
        old_path = c.old_path or c.path
        if c.change in ("added", "renamed") and c.new is not None:
            added.add((c.path, c.new.lexical_path, kind, occurrence(c.new.lexical_path, kind, c.new.start_line,
                                                                    c.path, "new")))
        if c.change in ("removed", "renamed") and c.old is not None:
            removed.add((old_path, c.old.lexical_path, kind, occurrence(c.old.lexical_path, kind, c.old.start_line,
                                                                        old_path, "old")))
        if c.change == "renamed" and c.old is not None and c.new is not None:
            renamed_under.append((c.path, c.new.lexical_path + "."))
            for side, path, prefix, into in (("old", old_path, c.old.lexical_path + ".", removed),
                                             ("new", c.path, c.new.lexical_path + ".", added)):
                for (lexical, member_kind), lines in _OCCURRENCES.get((side, path), {}).items():
                    if lexical.startswith(prefix):
                        into.update((path, lexical, member_kind, i) for i in range(len(lines)))
    for c in changes:
        if c.change == "signature_changed" and "parameters_changed" in c.delta_tags and c.new is not None \
                and c.kind in KINDS and c.path not in skipped and c.path.endswith(".py") \
                and not any(c.path == p and c.new.lexical_path.startswith(pre) for p, pre in renamed_under):
            kind = "class" if c.kind == "class" else "function"
            params.add((c.path, c.new.lexical_path, kind, occurrence(c.new.lexical_path, kind, c.new.start_line,
                                                                     c.path, "new")))
    return added, removed, params


_OCCURRENCES: dict[tuple[str, str], dict[tuple[str, str], list[int]]] = {}


def occurrence(lexical_path: str, kind: str, line: int, path: str, side: str) -> int:
    """Which repetition of its qualified name in its file a definition is (by start line)."""
    lines = _OCCURRENCES.get((side, path), {}).get((lexical_path, kind), [])
    return lines.index(line) if line in lines else 0


def index_occurrences(service: SemanticDiffService, root: Path, base: str, target: str) -> None:
    """Start lines of every def per (file, lexical path, kind) on both sides, from the cached blob facts."""
    import pygit2

    repo = pygit2.Repository(str(root))
    for side, commit in (("old", base), ("new", target)):
        tree = repo.revparse_single(commit).peel(pygit2.Commit).tree
        for path in blobs(root, commit):
            defs = service.cache.lookup(path, str(tree[path].id))
            if defs is None:
                continue
            by_name: dict[tuple[str, str], list[int]] = {}
            for d in defs.defs:
                if d.kind in KINDS:
                    key = (d.lexical_path, "class" if d.kind == "class" else "function")
                    by_name.setdefault(key, []).append(d.start_line)
            _OCCURRENCES[(side, path)] = {k: sorted(v) for k, v in by_name.items()}


def score(truth_set: set[Key], got: set[Key]) -> tuple[float, float, int, int, int]:
    hit = len(truth_set & got)
    precision = hit / len(got) if got else 1.0
    recall = hit / len(truth_set) if truth_set else 1.0
    return precision * 100, recall * 100, len(truth_set), len(got), hit


def testing_for(root: Path, index: IndexService) -> TestingService:
    config = CodePlaneConfig()
    layout = RepoLayout(root)
    return TestingService(root, config.tests, layout, ArtifactStore(layout.artifacts_dir, 24),
                          impact=ImpactIndex(index.read_connection),
                          files_version=lambda: index.epoch if index.ready else None,
                          files_source=lambda: indexed_paths(index.read_connection))


def run_pair(name: str, old: str, new: str) -> tuple[list[list[object]], list[list[object]], dict[str, list]]:  # type: ignore[type-arg]
    root, base, target = build_repo(name, old, new)
    layout = RepoLayout(root)
    index = IndexService(root, layout, CodePlaneConfig().index.model_copy(update={"watch": False}))
    index.register_indexer(StructuralIndexer())
    index.start()
    assert index.wait_ready(600)
    testing = testing_for(root, index)
    try:
        cold: list[float] = []
        warm: list[float] = []
        cold_cpu: list[float] = []
        warm_cpu: list[float] = []
        service = SemanticDiffService(root, index, tests_for=testing.tests_for)
        service.diff(base, target, limit=100)  # warms the testing service's discovery, not measured
        for _ in range(3):
            service = SemanticDiffService(root, index, tests_for=testing.tests_for)
            cpu = time.process_time()
            cold += timed(lambda s=service: s.diff(base, target, limit=100), 1)  # type: ignore[misc]
            cold_cpu.append((time.process_time() - cpu) * 1000)
            cpu = time.process_time()
            warm += timed(lambda s=service: s.diff(base, target, limit=100), 5)  # type: ignore[misc]
            warm_cpu.append((time.process_time() - cpu) * 1000 / 5)
        db = root.parent / "semantic_diff.db"
        SemanticDiffService(root, index, tests_for=testing.tests_for, cache_db=db).diff(base, target, limit=100)
        restart: list[float] = []
        for _ in range(3):
            fresh = SemanticDiffService(root, index, tests_for=testing.tests_for, cache_db=db)
            restart += timed(lambda s=fresh: s.diff(base, target, limit=100), 1)  # type: ignore[misc]
        bare = SemanticDiffService(root)
        bare_cold = timed(lambda: bare.diff(base, target, limit=100), 1)[0]
        page = service.diff(base, target, limit=100)
        report = page.report
        began = time.perf_counter()
        t_added, t_removed, t_params, skipped = truth(root, base, target)
        truth_ms = (time.perf_counter() - began) * 1000
        git_ms = p50(timed(lambda: git(root, "diff", "--stat", base, target), 3))
        index_occurrences(service, root, base, target)
        g_added, g_removed, g_params = ours(report.changes, skipped)
        rows = []
        misses: dict[str, list] = {}  # type: ignore[type-arg]
        for label, want, got in (("added", t_added, g_added), ("removed", t_removed, g_removed),
                                 ("parameters changed", t_params, g_params)):
            precision, recall, n_truth, n_got, hit = score(want, got)
            rows.append([f"{name} {old}->{new}", label, n_truth, n_got, hit, precision, recall])
            misses[f"{name} {label} missed"] = sorted(want - got)[:10]
            misses[f"{name} {label} extra"] = sorted(got - want)[:10]
        all_truth = {("+", *k) for k in t_added} | {("-", *k) for k in t_removed} | {("~", *k) for k in t_params}
        all_got = {("+", *k) for k in g_added} | {("-", *k) for k in g_removed} | {("~", *k) for k in g_params}
        precision, recall, n_truth, n_got, hit = score(all_truth, all_got)  # type: ignore[arg-type]
        rows.append([f"{name} {old}->{new}", "all", n_truth, n_got, hit, precision, recall])
        timing = [[f"{name} {old}->{new}", report.files_analyzed, len(report.changes), p50(cold), p50(cold_cpu),
                   p50(warm), p50(warm_cpu), p50(restart), bare_cold, git_ms, truth_ms, len(skipped)]]
        return rows, timing, misses
    finally:
        testing.close()
        index.stop()
        shutil.rmtree(root.parent, ignore_errors=True)


def main() -> None:
    accuracy: list[list[object]] = []
    timing: list[list[object]] = []
    misses: dict[str, list] = {}  # type: ignore[type-arg]
    for name, old, new in PAIRS:
        rows, times, missed = run_pair(name, old, new)
        accuracy += rows
        timing += times
        misses.update(missed)
    table("semantic_diff vs ast (functions, methods, classes)",
          ["pair", "change", "truth", "reported", "matched", "precision %", "recall %"], accuracy)
    table("semantic_diff time (ms)",
          ["pair", "files changed", "changes", "cold p50", "cold CPU p50", "cached blob facts p50",
           "cached CPU p50", "new service, facts in semantic_diff.db p50", "cold, no index (no enrichment)",
           "baseline: git diff --stat", "baseline: ast truth",
           "files ast cannot parse (excluded)"], timing)
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    for label, items in misses.items():
        if items:
            print(f"{label}: {items}")


if __name__ == "__main__":
    main()
